//! The reactor side of recovery: capture at one turn, the recovery verbs, periodic
//! ticks, the final clean checkpoint and reload's retention hand-off. Restore's
//! prepare-then-commit is in `restore.rs`; disk work is the worker's
//! (`crate::recovery`).

use super::dispatch::Reply;
use super::params::Params;
use super::{Caller, Outcome, State};
use crate::config::Config;
use crate::emulator::Emulator;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::PaneId;
use crate::recovery::{self, Archive, ArchiveText, Job};
use crate::topology::float::{FloatSpec, Length};
use crate::topology::tree::{Axis, Entry, Tree};
use crate::topology::{Layer, PaneState};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};
use vx_format as fmt;
use vx_format::{Checkpoint, Shutdown, Text, Timestamp};

/// Recovery state the reactor owns.
pub struct RecoveryState {
    pub jobs: std::sync::mpsc::Sender<Job>,
    /// A product mutation, restore or explicit checkpoint happened (RFC §3): before
    /// that, nothing is written automatically, not even at shutdown.
    pub activated: bool,
    /// Topology, lifecycle or input changed since the last capture.
    pub dirty: bool,
    /// Publish jobs handed to the worker and not yet finished.
    pub writes: usize,
    pub explicit_in_flight: bool,
    /// A periodic tick arrived while a write was in flight: one capture follows it.
    pub tick_pending: bool,
    pub next_tick: Instant,
    pub archives: HashMap<PaneId, Archive>,
    /// Restores committed by this daemon start (doctor: `cleanup_unverified`).
    pub restores: u64,
    /// The code of the last `config.reload` refused before the worker (doctor).
    pub last_reload_error: Option<crate::errors::ErrorCode>,
}

impl RecoveryState {
    pub fn new(jobs: std::sync::mpsc::Sender<Job>, interval_ms: u64) -> Self {
        RecoveryState {
            jobs,
            activated: false,
            dirty: false,
            writes: 0,
            explicit_in_flight: false,
            tick_pending: false,
            next_tick: Instant::now() + Duration::from_millis(interval_ms),
            archives: HashMap::new(),
            restores: 0,
            last_reload_error: None,
        }
    }
}

pub(super) fn now() -> Timestamp {
    vx_store::clock::now()
}

/// The `checkpoint` param (present: the shape check requires it).
fn checkpoint_param(p: &Params<'_>) -> String {
    p.opt_str("checkpoint").unwrap_or_default().to_string()
}

pub(super) fn plain(result: ApiResult<Value>) -> Outcome {
    Outcome::reply(result)
}

fn to_format_spec(spec: &FloatSpec, z: u64) -> fmt::FloatSpec {
    let extent = |l: Length| match l {
        Length::Cells(n) => fmt::Extent::Cells(n),
        Length::Percent(p) => fmt::Extent::Percent(p),
    };
    fmt::FloatSpec {
        preset: spec.preset.clone(),
        width: spec.width.map(extent),
        height: spec.height.map(extent),
        anchor: spec.anchor.as_deref().and_then(fmt::Anchor::parse),
        x: spec.x.and_then(|x| i16::try_from(x).ok()),
        y: spec.y.and_then(|y| i16::try_from(y).ok()),
        min_cols: spec.min_cols,
        min_rows: spec.min_rows,
        border: spec.border.as_deref().and_then(fmt::Border::parse),
        title: spec.title.clone(),
        z,
    }
}

/// Preorder nodes of a live tree, as the durable model holds them.
pub(super) fn tree_nodes(tree: &Tree) -> Vec<fmt::Node> {
    tree.entries()
        .iter()
        .enumerate()
        .map(|(i, e)| match *e {
            Entry::Pane(p) => fmt::Node::Pane { pane: p.0 },
            Entry::Split {
                axis,
                ratio,
                second,
            } => fmt::Node::Split {
                axis: match axis {
                    Axis::Cols => fmt::Axis::Cols,
                    Axis::Rows => fmt::Axis::Rows,
                },
                first: i + 1,
                second,
                ratio,
            },
        })
        .collect()
}

impl State {
    /// One consistent view at this turn (RFC §3): topology, lifecycle and, with
    /// `.plain`, bounded primary-screen text. An allowlist: the model has no field
    /// for argv, env, cwd, PIDs, principals or tokens.
    pub(super) fn capture(&self, at: Timestamp, shutdown: Shutdown) -> Checkpoint {
        let rc = &self.config.recovery;
        let text_on = recovery::text_enabled(rc);
        let text_age_ms = (rc.text_max_age_seconds as i64).saturating_mul(1000);
        let sessions = self
            .topology
            .sessions
            .values()
            .map(|s| fmt::Session {
                id: s.id.0,
                name: s.name.clone(),
            })
            .collect();
        let windows = self
            .topology
            .windows
            .values()
            .map(|w| {
                let nodes = w.tree.as_ref().map(tree_nodes).unwrap_or_default();
                fmt::Window {
                    id: w.id.0,
                    session: w.session.0,
                    name: w.name.clone(),
                    revision: w.revision,
                    nodes,
                }
            })
            .collect();
        let panes = self
            .topology
            .panes
            .values()
            .map(|p| {
                let archive = self.recovery.archives.get(&p.id);
                let state = match &p.state {
                    PaneState::Running => fmt::PaneState::Running,
                    PaneState::Exited { exit_code, signal } => fmt::PaneState::Exited {
                        exit: exit_code
                            .and_then(|c| u8::try_from(c).ok())
                            .map(fmt::Exit::Code)
                            .or_else(|| signal.clone().map(fmt::Exit::Signal)),
                    },
                };
                let float = match &p.layer {
                    Layer::Float { spec, z, .. } => Some(to_format_spec(spec, *z)),
                    Layer::Tiled => None,
                };
                let live_text = |saved_at: Timestamp, expires_at: Timestamp| match self
                    .screens
                    .get(&p.id)
                    .and_then(|e| e.lock().ok())
                {
                    Some(e) => recovery::bounded_text(
                        e.capture(),
                        p.rows,
                        rc.text_max_rows,
                        rc.text_max_bytes,
                        saved_at,
                        expires_at,
                    ),
                    None => Text::Omitted,
                };
                let text = match archive.map(|a| a.text) {
                    Some(ArchiveText::Expired) => Text::Expired,
                    Some(ArchiveText::Omitted) => Text::Omitted,
                    // Archived text keeps its original lifetime; past it, it is gone.
                    Some(ArchiveText::Plain {
                        saved_at,
                        expires_at,
                    }) => {
                        if at < saved_at || at >= expires_at {
                            Text::Expired
                        } else if text_on {
                            live_text(saved_at, expires_at)
                        } else {
                            Text::Omitted
                        }
                    }
                    None if text_on => live_text(at, Timestamp(at.0.saturating_add(text_age_ms))),
                    None => Text::Omitted,
                };
                fmt::Pane {
                    id: p.id.0,
                    window: p.window.0,
                    session: p.session.0,
                    cols: p.cols,
                    rows: p.rows,
                    state,
                    previous_state: archive.map(|a| a.process_state),
                    float,
                    tags: p
                        .tags
                        .iter()
                        .map(|(k, v)| fmt::Tag {
                            key: k.clone(),
                            value: v.clone(),
                        })
                        .collect(),
                    text,
                }
            })
            .collect();
        Checkpoint {
            // The store sets id, generation, socket and uid when it publishes.
            checkpoint: String::new(),
            generation: 0,
            socket: String::new(),
            uid: 0,
            captured_at: at,
            shutdown,
            sessions,
            windows,
            panes,
        }
    }

    /// Captures now and hands the write to the worker.
    fn start_write(
        &mut self,
        shutdown: Shutdown,
        reply: Option<oneshot::Sender<Outcome>>,
        done: Option<oneshot::Sender<bool>>,
    ) {
        let checkpoint = Box::new(self.capture(now(), shutdown));
        self.recovery.dirty = false;
        self.recovery.writes += 1;
        if reply.is_some() {
            self.recovery.explicit_in_flight = true;
        }
        let job = Job::Publish {
            checkpoint,
            reply,
            done,
        };
        if self.recovery.jobs.send(job).is_err() {
            // The worker is gone; the job's senders were dropped with it.
            self.recovery.writes -= 1;
            self.recovery.explicit_in_flight = false;
        }
    }

    /// Whether a periodic capture would write anything new: topology or lifecycle
    /// changed, or (with text on) the screens may have.
    fn worth_writing(&self) -> bool {
        self.recovery.dirty || recovery::text_enabled(&self.config.recovery)
    }

    /// Archived plain text past its original expiry (or behind a backward clock) is
    /// discarded from the live archive too: its screen becomes blank and its
    /// `text_state` expired (RFC §4: never extended past `expires_at`).
    pub(super) fn expire_archive_text(&mut self, at: Timestamp) {
        let history_rows = self.config.panes.history_rows as usize;
        for (id, archive) in &mut self.recovery.archives {
            let ArchiveText::Plain {
                saved_at,
                expires_at,
            } = archive.text
            else {
                continue;
            };
            if at >= saved_at && at < expires_at {
                continue;
            }
            archive.text = ArchiveText::Expired;
            if let Some(p) = self.topology.panes.get(id) {
                let blank = Emulator::literal(p.cols, p.rows, history_rows, &[], &[]).0;
                self.screens.insert(*id, Arc::new(Mutex::new(blank)));
            }
        }
    }

    pub(super) fn on_tick(&mut self) {
        self.expire_archive_text(now());
        let rc = &self.config.recovery;
        self.recovery.next_tick = Instant::now() + Duration::from_millis(rc.interval_ms);
        if !rc.enabled || !self.recovery.activated || self.stopping {
            return;
        }
        if self.recovery.writes > 0 {
            self.recovery.tick_pending = true;
        } else if self.worth_writing() {
            self.start_write(Shutdown::Open, None, None);
        }
    }

    pub(super) fn on_published(&mut self, explicit: bool) {
        self.recovery.writes = self.recovery.writes.saturating_sub(1);
        if explicit {
            self.recovery.explicit_in_flight = false;
        }
        if self.recovery.tick_pending && self.recovery.writes == 0 {
            self.recovery.tick_pending = false;
            if self.config.recovery.enabled && !self.stopping && self.worth_writing() {
                self.start_write(Shutdown::Open, None, None);
            }
        }
    }

    /// After every child is reaped: the `shutdown="clean"` checkpoint, unless
    /// recovery is off or this daemon never became active (RFC §3). `done` gets
    /// whether it is durable (true when nothing had to be written).
    pub(super) fn final_checkpoint(&mut self, done: oneshot::Sender<bool>) {
        if !self.config.recovery.enabled || !self.recovery.activated {
            let _ = done.send(true);
            return;
        }
        self.start_write(Shutdown::Clean, None, Some(done));
    }

    pub(super) fn note_mutation(&mut self) {
        self.recovery.activated = true;
        self.recovery.dirty = true;
    }

    /// `recovery.checkpoint`: capture in this turn, publish on the worker.
    pub(super) fn recovery_checkpoint(&mut self, reply: Reply) {
        if !self.config.recovery.enabled {
            let _ = reply.send(plain(Err(recovery::disabled())));
            return;
        }
        if self.recovery.explicit_in_flight {
            let _ = reply.send(plain(Err(ApiError::new(
                ErrorCode::RecoveryBusy,
                "a checkpoint write is already in flight",
            ))));
            return;
        }
        self.recovery.activated = true;
        self.start_write(Shutdown::Open, Some(reply), None);
    }

    pub(super) fn recovery_list(&mut self, reply: Reply) {
        self.send_job(Job::List { reply });
    }

    pub(super) fn recovery_inspect(&mut self, p: &Params<'_>, reply: Reply) {
        let id = checkpoint_param(p);
        self.send_job(Job::Inspect { id, reply });
    }

    pub(super) fn recovery_forget(&mut self, p: &Params<'_>, reply: Reply) {
        let id = checkpoint_param(p);
        self.send_job(Job::Forget { id, reply });
    }

    /// `recovery.restore`, phase one: the checks that need no disk, then the worker
    /// loads the file; the commit is a later turn (`restore.rs`).
    pub(super) fn recovery_restore(&mut self, caller: &Caller, p: &Params<'_>, reply: Reply) {
        let id = checkpoint_param(p);
        if let Err(e) = self.restore_allowed(&id) {
            let _ = reply.send(plain(Err(e)));
            return;
        }
        self.send_job(Job::Load {
            id,
            principal: caller.principal.id.clone(),
            reply,
        });
    }

    pub(super) fn doctor(&mut self, reply: Reply) {
        let facts = Box::new(self.doctor_facts());
        self.send_job(Job::Doctor { facts, reply });
    }

    /// A send failure drops the job and its reply: the client sees shutdown.
    fn send_job(&self, job: Job) {
        let _ = self.recovery.jobs.send(job);
    }

    /// Reload (RFC §2), one path for `config.reload` and the file watcher: validate
    /// in this turn with no side effect, clean up retention on the worker, then
    /// activate in a later turn ([`Msg::ReloadCleaned`](super::Msg)).
    pub(super) fn start_reload(&mut self, reply: oneshot::Sender<Outcome>) {
        match self.reload_prepare() {
            Ok((config, purge_text)) => {
                let _ = self.recovery.jobs.send(Job::Reload {
                    config: Box::new(config),
                    purge_text,
                    reply,
                });
            }
            Err(e) => {
                self.recovery.last_reload_error = Some(e.code);
                let _ = reply.send(plain(Err(e)));
            }
        }
    }

    /// Reload, phase one (RFC §2): read and validate the file, with no side effect.
    fn reload_prepare(&self) -> ApiResult<(Config, bool)> {
        let path = self
            .identity
            .config_path
            .clone()
            .ok_or_else(|| crate::config::LoadError::Io.to_api())?;
        let (_, config) = crate::config::load(&path).map_err(|e| e.to_api())?;
        let purge = self.config.recovery.terminal_text
            == crate::config::schema::TerminalText::Plain
            && config.recovery.terminal_text == crate::config::schema::TerminalText::Off;
        Ok((config, purge))
    }

    /// Reload, activation: the worker's retention cleanup succeeded; nothing here fails.
    pub(super) fn reload_activate(&mut self, config: Config) -> Value {
        self.recovery.last_reload_error = None;
        self.registry.unknown_read = config.unknown_read;
        if config.recovery.interval_ms != self.config.recovery.interval_ms {
            self.recovery.next_tick =
                Instant::now() + Duration::from_millis(config.recovery.interval_ms);
        }
        self.config = config;
        self.emit("config.reloaded", crate::auth::Resource::Server, json!({}));
        json!({})
    }

    /// Doctor's reactor-side facts at this turn. The config file is re-read and
    /// validated like `config.check` (no side effect); only its error code is kept.
    fn doctor_facts(&self) -> crate::doctor::ReactorFacts {
        use crate::doctor::ConfigFile;
        let config_file = match &self.identity.config_path {
            None => ConfigFile::NoPath,
            Some(path) => match crate::config::load(path) {
                Ok(_) => ConfigFile::Valid,
                Err(e) => ConfigFile::Invalid(e.to_api().code),
            },
        };
        let archives = &self.recovery.archives;
        crate::doctor::ReactorFacts {
            recovery: self.config.recovery.clone(),
            config_file,
            last_reload_error: self.recovery.last_reload_error,
            archives: archives.len() as u64,
            cut_rows: archives.values().map(|a| a.cut_rows).sum(),
            unknown_presets: archives.values().filter(|a| a.unknown_preset).count() as u64,
            restores: self.recovery.restores,
        }
    }

    /// The `recovery` object of an archive, for pane.list and pane.capture.
    pub(super) fn archive_json(&self, pane: PaneId) -> Option<Value> {
        self.recovery.archives.get(&pane).map(Archive::to_json)
    }
}

#[cfg(test)]
mod tests {
    use super::super::restore::{build_tree, from_format_spec};
    use super::*;
    use crate::ids::{SessionId, WindowId};
    use crate::topology::Pane;
    use std::collections::BTreeMap;
    use vx_format::PreviousState;

    #[test]
    fn tree_nodes_round_trip_through_build_tree() {
        let mut tree = Tree::leaf(PaneId(0));
        tree.split_leaf(PaneId(0), PaneId(1), Axis::Cols, Some(6250), false);
        tree.split_leaf(PaneId(1), PaneId(2), Axis::Rows, None, false);
        let nodes = tree_nodes(&tree);
        assert_eq!(
            nodes[0],
            fmt::Node::Split {
                axis: fmt::Axis::Cols,
                first: 1,
                second: 2,
                ratio: Some(6250)
            }
        );
        assert_eq!(tree.depth(), 3);
        let ids: BTreeMap<u64, PaneId> = (0..3).map(|n| (n, PaneId(n + 10))).collect();
        let mut rebuilt = build_tree(&nodes, &ids).unwrap();
        for n in 0..3 {
            rebuilt.replace_leaf(PaneId(n + 10), PaneId(n));
        }
        assert_eq!(rebuilt, tree);
        let sizes: HashMap<PaneId, (u16, u16)> = [
            (PaneId(0), (50, 24)),
            (PaneId(1), (29, 12)),
            (PaneId(2), (29, 11)),
        ]
        .into();
        let size = |p| {
            sizes
                .get(&p)
                .map_or((1, 1), |(c, r)| (u32::from(*c), u32::from(*r)))
        };
        assert_eq!(tree.area_holding(size), (80, 24));
    }

    fn live_pane(state: &mut State, window: WindowId, session: SessionId, argv0: &str) -> PaneId {
        let id = state.topology.allocate_pane().unwrap();
        let pane = Pane {
            id,
            window,
            session,
            cols: 10,
            rows: 2,
            layer: Layer::Tiled,
            state: PaneState::Running,
            argv0: Some(argv0.into()),
            tags: [("owner".to_string(), "venomx".to_string())].into(),
            principal: Some("t7".into()),
        };
        if state.topology.windows[&window].tree.is_none() {
            state.topology.insert_root(pane);
        } else {
            let first = state.topology.panes.keys().next().copied().unwrap();
            state
                .topology
                .insert_split(first, pane, Axis::Cols, Some(2500), false);
        }
        state
            .screens
            .insert(id, Arc::new(Mutex::new(Emulator::new(10, 2, 100))));
        id
    }

    #[test]
    fn capture_is_an_allowlist_with_bounded_primary_screen_text() {
        let mut state = super::super::test_state();
        state.config.recovery.terminal_text = crate::config::schema::TerminalText::Plain;
        state.config.recovery.text_max_rows = 4;
        state.config.recovery.text_max_bytes = 1000;
        state.config.recovery.text_max_age_seconds = 60;
        let s = state.topology.create_session("work".into()).unwrap();
        let w = state.topology.create_window(s, "w".into(), 41, 2).unwrap();
        let a = live_pane(&mut state, w, s, "SECRET-ARGV0");
        let b = live_pane(&mut state, w, s, "sh");
        {
            let mut e = state.screens[&a].lock().unwrap();
            e.feed(b"h1\r\nh2\r\nh3\r\ns1\r\ns2");
            e.feed(b"\x1b[?1049hALT");
        }
        state.topology.panes.get_mut(&b).unwrap().state = PaneState::Exited {
            exit_code: None,
            signal: Some("SIGKILL".into()),
        };
        state.recovery.archives.insert(
            b,
            Archive {
                checkpoint: "c01234567-89ab-4cde-8fab-0123456789ab".into(),
                previous_pane: "p40".into(),
                process_state: PreviousState::Interrupted,
                text: ArchiveText::Expired,
                cut_rows: 0,
                unknown_preset: false,
            },
        );
        let at = Timestamp(1_800_000_000_000);
        let cp = state.capture(at, Shutdown::Open);
        assert_eq!(
            cp.sessions,
            vec![fmt::Session {
                id: 0,
                name: "work".into()
            }]
        );
        assert_eq!(
            cp.windows[0].nodes[0],
            fmt::Node::Split {
                axis: fmt::Axis::Cols,
                first: 1,
                second: 2,
                ratio: Some(2500)
            }
        );
        let pa = &cp.panes[0];
        assert_eq!(pa.state, fmt::PaneState::Running);
        assert_eq!(
            pa.tags,
            vec![fmt::Tag {
                key: "owner".into(),
                value: "venomx".into()
            }]
        );
        let Text::Plain(t) = &pa.text else {
            panic!("plain text expected")
        };
        assert_eq!(
            t.screen,
            vec!["s1", "s2"],
            "primary screen, not the alternate one"
        );
        assert_eq!(
            t.history,
            vec!["h2", "h3"],
            "4 rows in all: oldest history dropped"
        );
        assert_eq!((t.saved_at, t.expires_at), (at, Timestamp(at.0 + 60_000)));
        let pb = &cp.panes[1];
        assert_eq!(
            pb.state,
            fmt::PaneState::Exited {
                exit: Some(fmt::Exit::Signal("SIGKILL".into()))
            }
        );
        assert_eq!(pb.previous_state, Some(PreviousState::Interrupted));
        assert_eq!(pb.text, Text::Expired);
        // The writer accepts it, and nothing outside the allowlist is in the file.
        let mut cp = cp;
        cp.checkpoint = "c01234567-89ab-4cde-8fab-0123456789ab".into();
        cp.generation = 1;
        cp.socket = "/run/test.sock".into();
        let bytes =
            String::from_utf8(vx_format::write(&cp, fmt::Format::CURRENT).unwrap()).unwrap();
        for leak in ["SECRET-ARGV0", "t7", "ALT", "venomx/test"] {
            assert!(!bytes.contains(leak), "{leak}");
        }
        // A clean checkpoint with a running pane is refused by the writer.
        cp.shutdown = Shutdown::Clean;
        assert!(vx_format::write(&cp, fmt::Format::CURRENT).is_err());
    }

    #[test]
    fn float_specs_convert_both_ways() {
        let spec = FloatSpec {
            preset: Some("venom.settings".into()),
            width: Some(Length::Percent(60)),
            height: Some(Length::Cells(12)),
            anchor: Some("bottom_right".into()),
            x: Some(-1),
            y: Some(4096),
            min_cols: Some(3),
            min_rows: None,
            border: Some("single".into()),
            title: Some("build log".into()),
        };
        let f = to_format_spec(&spec, 7);
        assert_eq!(f.z, 7);
        assert_eq!(from_format_spec(&f), spec);
    }
}
