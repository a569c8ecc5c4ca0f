//! The reactor: the one task that owns the resource tree, the principal registry, the
//! effective config and the pane handles. Connection tasks send it requests; each
//! request is authorized and applied in one turn, so no other request ever sees half of
//! a mutation. Pane supervisors report exits to it on a separate channel.

mod agent_verbs;
mod attach;
mod config_io;
mod config_verbs;
#[cfg(test)]
mod created_tests;
mod dispatch;
mod events;
mod grants;
mod pane_layout;
mod pane_program;
mod panes;
pub mod params;
pub mod recovery;
mod topology_verbs;

use crate::auth::{Registry, Resource};
use crate::config::Config;
use crate::emulator::Emulator;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::PaneId;
use crate::manifest::Verb;
use crate::pty::{Control, Exited, PaneHandle};
use crate::topology::{PaneState, Topology};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot, watch};

pub use crate::stream::{Outcome, Reply};

pub enum Msg {
    Request {
        principal: String,
        /// The connection it came on (`server.rs` numbers them).
        conn: u64,
        verb: &'static Verb,
        params: Map<String, Value>,
        reply: oneshot::Sender<Outcome>,
    },
    /// The connection `conn` closed: drop what was bound to it.
    ConnectionClosed { conn: u64 },
    /// Refuse mutations from now on and send SIGTERM to every supervised group.
    BeginShutdown,
    /// SIGKILL every supervised group that is still running.
    KillAll,
    /// On-demand grace ran out. If there is still no session, refuse mutations from now
    /// on and answer true; a session created before this message wins.
    GraceExpired { stop: oneshot::Sender<bool> },
    /// The config file watcher saw the file change: reload it like `config.reload`.
    ConfigFileChanged,
    /// Shutdown reaped every child: write the final clean checkpoint (if any is
    /// due) and report whether it is durable.
    FinalCheckpoint { done: oneshot::Sender<bool> },
}

/// Fixed facts of this daemon start.
pub struct Identity {
    /// `venomx/<uuid>`, fresh per start.
    pub source: String,
    /// Absolute socket path, given to children as `VENOMX_SOCKET`.
    pub socket: String,
    pub config_path: Option<PathBuf>,
    /// `serve --legacy-spawn`: behave as a server without ADR-0068's spawn field and
    /// reserved namespace.
    pub legacy_spawn: bool,
}

pub struct State {
    pub identity: Identity,
    pub topology: Topology,
    pub registry: Registry,
    pub config: Config,
    /// Supervised processes, including those of removed panes that have not exited yet.
    live: HashMap<PaneId, PaneHandle>,
    /// Emulators of every pane in the topology (exited panes keep theirs).
    screens: HashMap<PaneId, Arc<Mutex<Emulator>>>,
    /// `pane.attach` output streams, by pane; an archive's is made on first attach.
    outputs: HashMap<PaneId, Arc<crate::attach::ring::PaneOutput>>,
    /// The config worker (`config_io.rs`): every config file read and write.
    config_jobs: std::sync::mpsc::Sender<config_io::ConfigJob>,
    /// This reactor's queue of attached streams' resize frames.
    resizes: mpsc::WeakSender<crate::attach::stream::Resize>,
    stopping: bool,
    recovery: recovery::RecoveryState,
    exits: mpsc::UnboundedSender<Exited>,
    supervised: watch::Sender<usize>,
    sessions: watch::Sender<usize>,
    events: crate::events::EventLog,
    /// Pane metadata (`meta.*`, agent-session records).
    meta: crate::agent::meta::Metadata,
    /// Unread one-shot `session.created/v1/<token>` results, by connection.
    created: crate::agent::created::CreatedResults,
}

/// Handles for talking to a running reactor.
#[derive(Clone)]
pub struct ReactorHandle {
    pub tx: mpsc::Sender<Msg>,
    /// Number of supervised processes not yet reaped.
    pub supervised: watch::Receiver<usize>,
    /// Number of sessions.
    pub sessions: watch::Receiver<usize>,
}

/// Starts the reactor task.
pub fn start(
    identity: Identity,
    config: Config,
    owner_token: &str,
    store: recovery::StoreInit,
) -> ReactorHandle {
    let (tx, rx) = mpsc::channel(1024);
    let (worker_tx, worker_rx) = mpsc::channel(64);
    let (resize_tx, resize_rx) = mpsc::channel(256);
    let jobs = recovery::start_worker(store, &config.recovery, worker_tx.clone());
    let recovery = recovery::RecoveryState::new(jobs, worker_tx, config.recovery.interval_ms);
    let (exits_tx, exits_rx) = mpsc::unbounded_channel();
    let (supervised_tx, supervised_rx) = watch::channel(0);
    let (sessions_tx, sessions_rx) = watch::channel(0);
    let events = crate::events::EventLog::new(identity.source.clone());
    let state = State {
        identity,
        registry: Registry::new(owner_token, config.unknown_read),
        config,
        topology: Topology::default(),
        live: HashMap::new(),
        screens: HashMap::new(),
        outputs: HashMap::new(),
        resizes: resize_tx.downgrade(),
        config_jobs: config_io::start(),
        stopping: false,
        recovery,
        exits: exits_tx,
        supervised: supervised_tx,
        sessions: sessions_tx,
        events,
        meta: Default::default(),
        created: Default::default(),
    };
    // The reactor holds the only strong resize sender: streams hold weak ones.
    tokio::spawn(run(
        state,
        Queues {
            requests: rx,
            exits: exits_rx,
            worker: worker_rx,
            resizes: resize_rx,
            _resize_tx: resize_tx,
        },
    ));
    ReactorHandle {
        tx,
        supervised: supervised_rx,
        sessions: sessions_rx,
    }
}

/// What the reactor task reads.
struct Queues {
    requests: mpsc::Receiver<Msg>,
    exits: mpsc::UnboundedReceiver<Exited>,
    worker: mpsc::Receiver<recovery::WorkerEvent>,
    resizes: mpsc::Receiver<crate::attach::stream::Resize>,
    _resize_tx: mpsc::Sender<crate::attach::stream::Resize>,
}

async fn run(mut state: State, mut q: Queues) {
    loop {
        tokio::select! {
            biased;
            exit = q.exits.recv() => match exit {
                Some(e) => state.on_exit(e),
                None => break,
            },
            _ = tokio::time::sleep_until(state.recovery.next_tick) => state.on_tick(),
            Some(event) = q.worker.recv() => {
                state.on_worker(event);
                state.publish_sessions();
            }
            Some(r) = q.resizes.recv() => {
                state.attach_resize(r.pane, &r.principal, r.cols, r.rows);
            }
            msg = q.requests.recv() => match msg {
                Some(Msg::Request { principal, conn, verb, params, reply }) => {
                    state.dispatch(&principal, Some(conn), verb, &params, reply);
                    state.publish_sessions();
                }
                Some(Msg::ConnectionClosed { conn }) => state.created.drop_connection(conn),
                Some(Msg::FinalCheckpoint { done }) => state.final_checkpoint(done),
                Some(Msg::ConfigFileChanged) => {
                    if !state.stopping {
                        state.start_reload(oneshot::channel().0);
                    }
                }
                Some(Msg::GraceExpired { stop }) => {
                    let expired = state.topology.sessions.is_empty();
                    if expired {
                        state.stopping = true;
                    }
                    let _ = stop.send(expired);
                }
                Some(Msg::BeginShutdown) => state.begin_shutdown(),
                Some(Msg::KillAll) => state.signal_all(Control::Kill),
                None => break,
            },
        }
    }
}

/// A reactor state with no task around it, for unit tests of turn logic.
#[cfg(test)]
pub(crate) fn test_state() -> State {
    let (jobs, _) = std::sync::mpsc::channel();
    let (exits, _) = mpsc::unbounded_channel();
    let config = Config::default();
    State {
        identity: Identity {
            source: "venomx/test".into(),
            socket: "/run/test.sock".into(),
            config_path: None,
            legacy_spawn: false,
        },
        registry: Registry::new("token", config.unknown_read),
        recovery: recovery::RecoveryState::new(
            jobs,
            mpsc::channel(1).0,
            config.recovery.interval_ms,
        ),
        config,
        topology: Topology::default(),
        live: HashMap::new(),
        screens: HashMap::new(),
        outputs: HashMap::new(),
        resizes: mpsc::channel(1).0.downgrade(),
        config_jobs: std::sync::mpsc::channel().0,
        stopping: false,
        exits,
        supervised: watch::channel(0).0,
        sessions: watch::channel(0).0,
        events: crate::events::EventLog::new("venomx/test".into()),
        meta: Default::default(),
        created: Default::default(),
    }
}

/// Who is asking, resolved for this request.
pub struct Caller {
    pub principal: crate::auth::Principal,
    /// The connection a request came on; `None` for the reactor's own work.
    pub conn: Option<u64>,
}

impl Caller {
    /// A caller of the reactor's own work (no connection).
    pub fn internal(principal: crate::auth::Principal) -> Caller {
        Caller {
            principal,
            conn: None,
        }
    }
}

impl State {
    fn publish_sessions(&self) {
        self.sessions.send_if_modified(|n| {
            let now = self.topology.sessions.len();
            std::mem::replace(n, now) != now
        });
    }

    fn publish_supervised(&self) {
        let _ = self.supervised.send(self.live.len());
    }

    fn on_exit(&mut self, e: Exited) {
        self.live.remove(&e.pane);
        if let Some(p) = self.topology.panes.get_mut(&e.pane) {
            self.recovery.dirty = true;
            p.state = PaneState::Exited {
                exit_code: e.exit_code,
                signal: e.signal,
            };
            self.emit_exited(e.pane);
        }
        self.publish_supervised();
    }

    fn begin_shutdown(&mut self) {
        self.stopping = true;
        self.close_all_outputs(crate::attach::ring::CloseReason::Shutdown);
        self.close_event_streams();
        self.signal_all(Control::Terminate);
    }

    fn signal_all(&self, c: Control) {
        for handle in self.live.values() {
            handle.control(c);
        }
    }

    pub fn can(&self, caller: &Caller, right: crate::auth::Right, resource: Resource) -> bool {
        let ancestry = self.topology.ancestry(resource);
        self.registry
            .allows(&caller.principal, right, resource, &ancestry)
    }

    pub fn require(
        &self,
        caller: &Caller,
        right: crate::auth::Right,
        resource: Resource,
    ) -> ApiResult<()> {
        if self.can(caller, right, resource) {
            Ok(())
        } else {
            Err(denied(caller, right, resource))
        }
    }

    /// Tears down panes removed from the topology: hang up their groups, revoke their
    /// principals, drop their screens.
    fn retire_panes(&mut self, removed: &[(PaneId, Option<String>)]) {
        for (pane, principal) in removed {
            // Streams close before the group is signalled, so no viewer can see the
            // process's EXIT ahead of CLOSE pane_removed.
            self.close_output(*pane, crate::attach::ring::CloseReason::PaneRemoved);
            if let Some(h) = self.live.get(pane) {
                h.control(Control::Remove);
            }
            if let Some(id) = principal {
                self.registry.revoke(id);
            }
            self.screens.remove(pane);
            self.meta.remove_pane(*pane);
            self.recovery.archives.remove(pane);
        }
    }

    fn apply_resizes(&self, resized: &[(PaneId, u16, u16)]) {
        for (pane, cols, rows) in resized {
            if let Some(h) = self.live.get(pane) {
                h.resize(*cols, *rows);
            } else if let Some(e) = self.screens.get(pane) {
                if let Ok(mut e) = e.lock() {
                    e.resize(*cols, *rows);
                }
            }
        }
    }
}

pub fn denied(caller: &Caller, right: crate::auth::Right, resource: Resource) -> ApiError {
    let code = match right {
        crate::auth::Right::Read => ErrorCode::DeniedRead,
        crate::auth::Right::Write => ErrorCode::DeniedWrite,
        crate::auth::Right::Spawn => ErrorCode::DeniedSpawn,
        crate::auth::Right::Admin => ErrorCode::DeniedAdmin,
    };
    ApiError::code(code)
        .with("right", right.as_str())
        .with("resource", resource.to_string())
        .with("principal", caller.principal.id.clone())
}
