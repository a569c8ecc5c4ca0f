//! The reactor side of recovery: capture at one turn, the recovery verbs, restore's
//! prepare-then-commit, periodic ticks, the final clean checkpoint and reload's
//! retention hand-off. Disk work is the worker's (`crate::recovery`).

use super::params::Params;
use super::{Caller, Outcome, State};
use crate::auth::{Resource, Right};
use crate::config::Config;
use crate::emulator::Emulator;
use crate::errors::{ApiError, ApiResult};
use crate::ids::{PaneId, SessionId, WindowId};
use crate::recovery::{self, Archive, ArchiveText, Job};
use crate::topology::float::{self, FloatSpec, Length};
use crate::topology::tree::{Axis, Node};
use crate::topology::{Layer, Pane, PaneState, Session, Window};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};
use vx_format as fmt;
use vx_format::{Checkpoint, PreviousState, Shutdown, Text, Timestamp};

/// Deepest split tree a restore builds (a whole-file depth bound, RFC §6
/// `unsupported.checkpoint_size`): the tree code is recursive.
pub const MAX_RESTORED_TREE_DEPTH: usize = 256;

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
    pub last_reload_error: Option<String>,
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

/// Verbs whose handler hands work to the recovery worker instead of answering in the
/// turn.
pub fn is_deferred(verb: &str) -> bool {
    verb.starts_with("recovery.") || verb == "config.reload" || verb == "doctor"
}

/// Product mutations that activate checkpointing and make the next tick write.
pub fn is_product_mutation(verb: &str) -> bool {
    ["session.", "window.", "pane."]
        .iter()
        .any(|p| verb.starts_with(p))
}

pub(super) fn now() -> Timestamp {
    vx_store::clock::now()
}

fn plain(result: ApiResult<Value>) -> Outcome {
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

fn from_format_spec(spec: &fmt::FloatSpec) -> FloatSpec {
    let length = |e: fmt::Extent| match e {
        fmt::Extent::Cells(n) => Length::Cells(n),
        fmt::Extent::Percent(p) => Length::Percent(p),
    };
    FloatSpec {
        preset: spec.preset.clone(),
        width: spec.width.map(length),
        height: spec.height.map(length),
        anchor: spec.anchor.map(|a| a.as_str().to_string()),
        x: spec.x.map(i32::from),
        y: spec.y.map(i32::from),
        min_cols: spec.min_cols,
        min_rows: spec.min_rows,
        border: spec.border.map(|b| b.as_str().to_string()),
        title: spec.title.clone(),
    }
}

/// Preorder nodes of a live tree, as the durable model holds them.
fn tree_nodes(node: &Node, out: &mut Vec<fmt::Node>) {
    match node {
        Node::Pane(p) => out.push(fmt::Node::Pane { pane: p.0 }),
        Node::Split {
            axis,
            ratio,
            first,
            second,
        } => {
            let index = out.len();
            out.push(fmt::Node::Split {
                axis: match axis {
                    Axis::Cols => fmt::Axis::Cols,
                    Axis::Rows => fmt::Axis::Rows,
                },
                first: index + 1,
                second: 0,
                ratio: *ratio,
            });
            tree_nodes(first, out);
            let second_index = out.len();
            if let fmt::Node::Split { second: s, .. } = &mut out[index] {
                *s = second_index;
            }
            tree_nodes(second, out);
        }
    }
}

/// The live tree of a restored window (the reader has checked the preorder shape).
fn build_tree(nodes: &[fmt::Node], index: usize, panes: &BTreeMap<u64, PaneId>) -> Option<Node> {
    match nodes.get(index)? {
        fmt::Node::Pane { pane } => Some(Node::Pane(*panes.get(pane)?)),
        fmt::Node::Split {
            axis,
            first,
            second,
            ratio,
        } => Some(Node::Split {
            axis: match axis {
                fmt::Axis::Cols => Axis::Cols,
                fmt::Axis::Rows => Axis::Rows,
            },
            ratio: *ratio,
            first: Box::new(build_tree(nodes, *first, panes)?),
            second: Box::new(build_tree(nodes, *second, panes)?),
        }),
    }
}

/// Depth of a preorder tree without recursion (parents precede their children).
fn preorder_depth(nodes: &[fmt::Node]) -> usize {
    let mut depth = vec![0usize; nodes.len()];
    let mut max = 0;
    for i in 0..nodes.len() {
        if i == 0 {
            depth[0] = 1;
        }
        max = max.max(depth[i]);
        if let fmt::Node::Split { first, second, .. } = nodes[i] {
            let child_depth = depth[i] + 1;
            for child in [first, second] {
                if let Some(d) = depth.get_mut(child) {
                    *d = child_depth;
                }
            }
        }
    }
    max
}

/// The tiled area that holds a restored tree's saved pane sizes (a split adds one
/// separator cell along its axis).
fn tree_area(node: &Node, sizes: &HashMap<PaneId, (u16, u16)>) -> (u32, u32) {
    match node {
        Node::Pane(p) => sizes
            .get(p)
            .map_or((1, 1), |(c, r)| (u32::from(*c), u32::from(*r))),
        Node::Split {
            axis,
            first,
            second,
            ..
        } => {
            let (a, b) = (tree_area(first, sizes), tree_area(second, sizes));
            match axis {
                Axis::Cols => (a.0 + 1 + b.0, a.1.max(b.1)),
                Axis::Rows => (a.0.max(b.0), a.1 + 1 + b.1),
            }
        }
    }
}

/// A prepared restore: every resource built and every ID allocated, nothing visible.
struct Prepared {
    sessions: Vec<Session>,
    windows: Vec<Window>,
    panes: Vec<Pane>,
    screens: Vec<(PaneId, Emulator)>,
    archives: Vec<(PaneId, Archive)>,
    mapping: Value,
    /// RFC §8's events in commit order, published at the commit boundary
    /// (`reactor/events.rs`). Their data is rendered from the committed state in the
    /// same turn, so the records hold only IDs.
    events: Vec<RestoreEvent>,
}

/// One event of a restore's commit (RFC §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreEvent {
    SessionCreated(SessionId),
    WindowCreated(WindowId),
    /// A restored float's carries layer, window, resolved geometry and new z: all in
    /// its pane entity.
    PaneCreated(PaneId),
    /// Known exit code or signal included; interrupted archives have neither.
    PaneExited(PaneId),
    /// `{checkpoint, cleanup_unverified: true}` on `server:root`.
    RecoveryRestored {
        checkpoint: String,
    },
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
                let mut nodes = Vec::new();
                if let Some(t) = &w.tree {
                    tree_nodes(t, &mut nodes);
                }
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

    /// The recovery verbs and `config.reload`: checks in the turn, disk work on the
    /// worker. The dispatch grant (admin on `server:root`) was checked before this.
    pub(super) fn deferred_verb(
        &mut self,
        caller: &Caller,
        name: &str,
        p: &Params<'_>,
        reply: oneshot::Sender<Outcome>,
    ) {
        let job = match name {
            "recovery.checkpoint" => {
                if !self.config.recovery.enabled {
                    let _ = reply.send(plain(Err(recovery::disabled())));
                    return;
                }
                if self.recovery.explicit_in_flight {
                    let _ = reply.send(plain(Err(ApiError::conflict(
                        "recovery_busy",
                        "a checkpoint write is already in flight",
                    ))));
                    return;
                }
                self.recovery.activated = true;
                self.start_write(Shutdown::Open, Some(reply), None);
                return;
            }
            "recovery.list" => Job::List { reply },
            "doctor" => Job::Doctor {
                facts: Box::new(self.doctor_facts()),
                reply,
            },
            "recovery.inspect" | "recovery.forget" | "recovery.restore" => {
                let Ok(id) = p.str("checkpoint") else {
                    let _ = reply.send(plain(Err(ApiError::param(
                        "checkpoint",
                        "required parameter missing",
                    ))));
                    return;
                };
                let id = id.to_string();
                match name {
                    "recovery.inspect" => Job::Inspect { id, reply },
                    "recovery.forget" => Job::Forget { id, reply },
                    _ => {
                        if let Err(e) = self.restore_allowed(&id) {
                            let _ = reply.send(plain(Err(e)));
                            return;
                        }
                        Job::Load {
                            id,
                            principal: caller.principal.id.clone(),
                            reply,
                        }
                    }
                }
            }
            "config.reload" => match self.reload_prepare() {
                Ok((config, purge_text)) => Job::Reload {
                    config: Box::new(config),
                    purge_text,
                    reply,
                },
                Err(e) => {
                    self.recovery.last_reload_error = Some(e.code.clone());
                    let _ = reply.send(plain(Err(e)));
                    return;
                }
            },
            _ => {
                let _ = reply.send(plain(Err(ApiError::new(
                    "invalid_request.unknown_verb",
                    "unknown verb",
                ))));
                return;
            }
        };
        // A send failure drops the job and its reply: the client sees shutdown.
        let _ = self.recovery.jobs.send(job);
    }

    /// Restore's checks that need no disk: id syntax, enabled, empty tree.
    fn restore_allowed(&self, id: &str) -> ApiResult<()> {
        if !vx_format::ids::is_checkpoint_id(id) {
            return Err(ApiError::param("checkpoint", "invalid checkpoint id"));
        }
        if !self.config.recovery.enabled {
            return Err(recovery::disabled());
        }
        if !self.topology.is_empty() {
            return Err(ApiError::conflict(
                "not_empty",
                "restore needs an empty daemon",
            ));
        }
        Ok(())
    }

    /// Phase two of restore, in one turn: recheck, prepare everything, commit.
    pub(super) fn restore_loaded(
        &mut self,
        loaded: recovery::LoadedCheckpoint,
        principal: &str,
    ) -> ApiResult<Value> {
        let Some(principal) = self.registry.get(principal).cloned() else {
            return Err(ApiError::new("denied.token", "token is not valid"));
        };
        let caller = Caller { principal };
        self.require(&caller, Right::Admin, Resource::Server)?;
        if self.stopping {
            return Err(ApiError::shutdown());
        }
        self.restore_allowed(&loaded.checkpoint.checkpoint)?;
        let prepared = self.prepare_restore(&caller, &loaded.checkpoint)?;
        let Prepared {
            sessions,
            windows,
            panes,
            screens,
            archives,
            mapping,
            events,
        } = prepared;
        // Commit: nothing below can fail.
        self.topology.insert_restored(sessions, windows, panes);
        for (id, e) in screens {
            self.screens.insert(id, Arc::new(Mutex::new(e)));
        }
        self.recovery.archives.extend(archives);
        self.recovery.restores += 1;
        self.note_mutation();
        self.publish_restore(events);
        Ok(mapping)
    }

    fn prepare_restore(&mut self, caller: &Caller, cp: &Checkpoint) -> ApiResult<Prepared> {
        let exhausted = || ApiError::new("unavailable.ids", "id counter exhausted");
        for w in &cp.windows {
            if preorder_depth(&w.nodes) > MAX_RESTORED_TREE_DEPTH {
                return Err(ApiError::new(
                    "unsupported.checkpoint_size",
                    "checkpoint exceeds size bounds",
                ));
            }
        }
        // IDs in numeric source order; consumed even if a later step fails.
        let mut smap = BTreeMap::new();
        for s in &cp.sessions {
            smap.insert(
                s.id,
                self.topology.allocate_session().ok_or_else(exhausted)?,
            );
        }
        let mut wmap = BTreeMap::new();
        for w in &cp.windows {
            wmap.insert(w.id, self.topology.allocate_window().ok_or_else(exhausted)?);
        }
        let mut pmap = BTreeMap::new();
        for p in &cp.panes {
            pmap.insert(p.id, self.topology.allocate_pane().ok_or_else(exhausted)?);
        }
        let sid = |n: u64| smap.get(&n).copied().unwrap_or(SessionId(n));
        let wid = |n: u64| wmap.get(&n).copied().unwrap_or(WindowId(n));
        let pid = |n: u64| pmap.get(&n).copied().unwrap_or(PaneId(n));
        let mut events = Vec::new();
        let sessions: Vec<Session> = cp
            .sessions
            .iter()
            .map(|s| Session {
                id: sid(s.id),
                name: s.name.clone(),
            })
            .collect();
        let sizes: HashMap<PaneId, (u16, u16)> = cp
            .panes
            .iter()
            .map(|p| (pid(p.id), (p.cols, p.rows)))
            .collect();
        let defaults = (
            self.config.panes.default_cols,
            self.config.panes.default_rows,
        );
        let mut windows: Vec<Window> = Vec::with_capacity(cp.windows.len());
        for w in &cp.windows {
            let tree = if w.nodes.is_empty() {
                None
            } else {
                Some(build_tree(&w.nodes, 0, &pmap).ok_or_else(|| {
                    ApiError::new("conflict.checkpoint_corrupt", "checkpoint corrupt")
                })?)
            };
            let (cols, rows) = tree.as_ref().map_or(defaults, |t| {
                let (c, r) = tree_area(t, &sizes);
                (c.clamp(1, 65535) as u16, r.clamp(1, 65535) as u16)
            });
            windows.push(Window {
                id: wid(w.id),
                session: sid(w.session),
                name: w.name.clone(),
                revision: 1,
                cols,
                rows,
                tree,
                floats: Vec::new(),
            });
        }
        let areas: HashMap<WindowId, (u16, u16)> =
            windows.iter().map(|w| (w.id, (w.cols, w.rows))).collect();
        // Floats: fresh z above the counter in saved order (z, then source pane id).
        let mut floats: Vec<(u64, u64)> = cp
            .panes
            .iter()
            .filter_map(|p| p.float.as_ref().map(|f| (f.z, p.id)))
            .collect();
        floats.sort_unstable();
        let mut fresh_z = HashMap::new();
        for (_, source) in &floats {
            fresh_z.insert(*source, self.topology.next_z());
        }
        let history_rows = self.config.panes.history_rows as usize;
        let mut panes = Vec::with_capacity(cp.panes.len());
        let mut screens = Vec::with_capacity(cp.panes.len());
        let mut archives = Vec::with_capacity(cp.panes.len());
        let mut exits = Vec::new();
        for p in &cp.panes {
            let id = pid(p.id);
            let window = wid(p.window);
            let (exit_code, signal, known) = match &p.state {
                fmt::PaneState::Running => (None, None, false),
                fmt::PaneState::Exited { exit } => match exit {
                    Some(fmt::Exit::Code(c)) => (Some(i32::from(*c)), None, true),
                    Some(fmt::Exit::Signal(s)) => (None, Some(s.clone()), true),
                    None => (None, None, true),
                },
            };
            let process_state = p.previous_state.unwrap_or(if known {
                PreviousState::Exited
            } else {
                PreviousState::Interrupted
            });
            let (mut cols, mut rows) = (p.cols, p.rows);
            let unknown_preset = p
                .float
                .as_ref()
                .and_then(|f| f.preset.as_ref())
                .is_some_and(|name| !self.config.floats.presets.contains_key(name));
            let layer = match &p.float {
                None => Layer::Tiled,
                Some(f) => {
                    let spec = from_format_spec(f);
                    let area = areas.get(&window).copied().unwrap_or(defaults);
                    let geometry = float::resolve(
                        &super::panes::merged_spec(&self.config, &spec),
                        area.0,
                        area.1,
                    );
                    (cols, rows) = (geometry.cols, geometry.rows);
                    Layer::Float {
                        spec,
                        z: fresh_z.get(&p.id).copied().unwrap_or(0),
                        geometry,
                    }
                }
            };
            let mut tags: BTreeMap<String, String> = p
                .tags
                .iter()
                .map(|t| (t.key.clone(), t.value.clone()))
                .collect();
            if !tags.contains_key("owner") && tags.len() < vx_format::limits::MAX_TAGS {
                tags.insert("owner".into(), caller.principal.namespace.clone());
            }
            // Literal hydration at the saved size, then fitted to the pane's size.
            let (text, emulator, cut_rows) = match &p.text {
                Text::Plain(t) => {
                    let (mut e, cut) =
                        Emulator::literal(p.cols, p.rows, history_rows, &t.screen, &t.history);
                    e.resize(cols, rows);
                    (
                        ArchiveText::Plain {
                            saved_at: t.saved_at,
                            expires_at: t.expires_at,
                        },
                        e,
                        cut,
                    )
                }
                Text::Expired => (
                    ArchiveText::Expired,
                    Emulator::literal(cols, rows, history_rows, &[], &[]).0,
                    0,
                ),
                Text::Omitted => (
                    ArchiveText::Omitted,
                    Emulator::literal(cols, rows, history_rows, &[], &[]).0,
                    0,
                ),
            };
            let record = Pane {
                id,
                window,
                session: sid(p.session),
                cols,
                rows,
                layer,
                state: PaneState::Exited { exit_code, signal },
                argv0: None,
                tags,
                principal: None,
            };
            exits.push(RestoreEvent::PaneExited(id));
            archives.push((
                id,
                Archive {
                    checkpoint: cp.checkpoint.clone(),
                    previous_pane: format!("p{}", p.id),
                    process_state,
                    text,
                    cut_rows,
                    unknown_preset,
                },
            ));
            screens.push((id, emulator));
            panes.push(record);
        }
        for w in &mut windows {
            let mut fl: Vec<(u64, PaneId)> = panes
                .iter()
                .filter(|p| p.window == w.id)
                .filter_map(|p| match &p.layer {
                    Layer::Float { z, .. } => Some((*z, p.id)),
                    Layer::Tiled => None,
                })
                .collect();
            fl.sort_unstable();
            w.floats = fl.into_iter().map(|(_, id)| id).collect();
        }
        events.extend(sessions.iter().map(|s| RestoreEvent::SessionCreated(s.id)));
        events.extend(windows.iter().map(|w| RestoreEvent::WindowCreated(w.id)));
        events.extend(panes.iter().map(|p| RestoreEvent::PaneCreated(p.id)));
        events.extend(exits);
        events.push(RestoreEvent::RecoveryRestored {
            checkpoint: cp.checkpoint.clone(),
        });
        let pairs = |m: Vec<(String, String)>| {
            m.into_iter()
                .map(|(a, b)| json!({"previous": a, "current": b}))
                .collect::<Vec<_>>()
        };
        let mapping = json!({
            "checkpoint": cp.checkpoint,
            "sessions": pairs(smap.iter().map(|(k, v)| (format!("s{k}"), v.to_string())).collect()),
            "windows": pairs(wmap.iter().map(|(k, v)| (format!("w{k}"), v.to_string())).collect()),
            "panes": pairs(pmap.iter().map(|(k, v)| (format!("p{k}"), v.to_string())).collect()),
        });
        Ok(Prepared {
            sessions,
            windows,
            panes,
            screens,
            archives,
            mapping,
            events,
        })
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
            last_reload_error: self.recovery.last_reload_error.clone(),
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
    use super::*;

    #[test]
    fn tree_nodes_round_trip_through_build_tree() {
        let mut tree = Node::Pane(PaneId(0));
        tree.split_leaf(PaneId(0), PaneId(1), Axis::Cols, Some(6250), false);
        tree.split_leaf(PaneId(1), PaneId(2), Axis::Rows, None, false);
        let mut nodes = Vec::new();
        tree_nodes(&tree, &mut nodes);
        assert_eq!(
            nodes[0],
            fmt::Node::Split {
                axis: fmt::Axis::Cols,
                first: 1,
                second: 2,
                ratio: Some(6250)
            }
        );
        assert_eq!(preorder_depth(&nodes), 3);
        let ids: BTreeMap<u64, PaneId> = (0..3).map(|n| (n, PaneId(n + 10))).collect();
        let mut rebuilt = build_tree(&nodes, 0, &ids).unwrap();
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
        assert_eq!(tree_area(&tree, &sizes), (80, 24));
    }

    fn owner(state: &State) -> Caller {
        Caller {
            principal: state.registry.get(crate::auth::OWNER).cloned().unwrap(),
        }
    }

    fn record(id: u64, window: u64, session: u64, state: fmt::PaneState) -> fmt::Pane {
        fmt::Pane {
            id,
            window,
            session,
            cols: 20,
            rows: 5,
            state,
            previous_state: None,
            float: None,
            tags: vec![],
            text: Text::Omitted,
        }
    }

    #[test]
    fn prepare_restore_orders_events_and_maps_ids_without_touching_the_tree() {
        let mut state = super::super::test_state();
        // Consume some numbers and z values first: restore takes the next ones.
        state.topology.allocate_session();
        state.topology.allocate_pane();
        let z0 = state.topology.next_z();
        let mut float = record(9, 3, 5, fmt::PaneState::Running);
        float.float = Some(fmt::FloatSpec {
            z: 40,
            ..Default::default()
        });
        let mut exited = record(
            4,
            3,
            5,
            fmt::PaneState::Exited {
                exit: Some(fmt::Exit::Code(2)),
            },
        );
        exited.previous_state = Some(PreviousState::Interrupted);
        let cp = Checkpoint {
            checkpoint: "c01234567-89ab-4cde-8fab-0123456789ab".into(),
            generation: 1,
            socket: "/s".into(),
            uid: 0,
            captured_at: Timestamp(0),
            shutdown: Shutdown::Open,
            sessions: vec![
                fmt::Session {
                    id: 1,
                    name: "empty".into(),
                },
                fmt::Session {
                    id: 5,
                    name: "work".into(),
                },
            ],
            windows: vec![fmt::Window {
                id: 3,
                session: 5,
                name: "w".into(),
                revision: 9,
                nodes: vec![
                    fmt::Node::Split {
                        axis: fmt::Axis::Cols,
                        first: 1,
                        second: 2,
                        ratio: Some(3000),
                    },
                    fmt::Node::Pane { pane: 2 },
                    fmt::Node::Pane { pane: 4 },
                ],
            }],
            panes: vec![record(2, 3, 5, fmt::PaneState::Running), exited, float],
        };
        let caller = owner(&state);
        let prepared = state.prepare_restore(&caller, &cp).unwrap();
        assert!(
            state.topology.is_empty(),
            "nothing is visible before the commit"
        );
        assert_eq!(
            prepared.events,
            vec![
                RestoreEvent::SessionCreated(SessionId(1)),
                RestoreEvent::SessionCreated(SessionId(2)),
                RestoreEvent::WindowCreated(WindowId(0)),
                RestoreEvent::PaneCreated(PaneId(1)),
                RestoreEvent::PaneCreated(PaneId(2)),
                RestoreEvent::PaneCreated(PaneId(3)),
                RestoreEvent::PaneExited(PaneId(1)),
                RestoreEvent::PaneExited(PaneId(2)),
                RestoreEvent::PaneExited(PaneId(3)),
                RestoreEvent::RecoveryRestored {
                    checkpoint: cp.checkpoint.clone()
                },
            ]
        );
        assert_eq!(
            prepared.mapping["panes"],
            json!([
                {"previous": "p2", "current": "p1"},
                {"previous": "p4", "current": "p2"},
                {"previous": "p9", "current": "p3"},
            ])
        );
        let w = &prepared.windows[0];
        assert_eq!((w.revision, w.cols, w.rows), (1, 41, 5));
        assert_eq!(w.floats, vec![PaneId(3)]);
        assert!(matches!(
            w.tree,
            Some(Node::Split {
                ratio: Some(3000),
                ..
            })
        ));
        let by_id = |id: u64| prepared.panes.iter().find(|p| p.id == PaneId(id)).unwrap();
        assert!(matches!(by_id(3).layer, Layer::Float { z, .. } if z == z0 + 1));
        assert_eq!(
            by_id(2).state,
            PaneState::Exited {
                exit_code: Some(2),
                signal: None
            }
        );
        let archive = |id: u64| {
            &prepared
                .archives
                .iter()
                .find(|a| a.0 == PaneId(id))
                .unwrap()
                .1
        };
        assert_eq!(
            archive(2).process_state,
            PreviousState::Interrupted,
            "previous_state wins"
        );
        assert_eq!(archive(1).process_state, PreviousState::Interrupted);
        assert_eq!(archive(1).previous_pane, "p2");
        assert!(prepared
            .panes
            .iter()
            .all(|p| p.principal.is_none() && p.argv0.is_none()));
        assert!(prepared
            .panes
            .iter()
            .all(|p| p.tags.get("owner").map(String::as_str) == Some("venomx")));
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
