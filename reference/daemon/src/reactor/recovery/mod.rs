//! Recovery (RFC §2–§8), in one place. The reactor side holds [`RecoveryState`] and
//! answers the RFC §6 verbs (one function each, below) in its turns; disk work is the
//! worker's. Code map:
//!
//! - `worker.rs`: the store thread, its [`Job`]s and its own [`WorkerEvent`]s back;
//!   startup's store open ([`open_at_startup`]).
//! - `capture.rs`: one consistent view at one turn.
//! - `durable.rs`: the live ↔ durable mapping, both directions side by side.
//! - `restore.rs`: restore's prepare (ids, windows, panes, events), then commit.
//! - `text.rs`: RFC §4's text bounds, per pane and per file.
//! - `archive.rs`: RFC §5's per-archive metadata.
//!
//! Invariants: the reactor never waits on the disk; at most one write is in flight;
//! nothing is written before the first product mutation, restore or explicit
//! checkpoint (RFC §3); a checkpoint id is checked once, when the verb's params are
//! read ([`CheckpointId`]); the last reload failure is recorded once, here.

mod archive;
#[cfg(test)]
mod bounds_tests;
mod capture;
mod durable;
mod id_map;
mod restore;
mod text;
mod worker;

pub use archive::{Archive, ArchiveText};
pub use restore::RestoreEvent;
pub use worker::{
    open_at_startup, start_worker, CheckpointId, Job, StoreInit, WorkerEvent, FINAL_DEADLINE,
};

use super::config_io::ConfigJob;
use super::params::Params;
use super::{Caller, Outcome, Reply, State};
use crate::config::Config;
use crate::emulator::Emulator;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::PaneId;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};
use vx_format::{Checkpoint, Shutdown, Timestamp};

/// Recovery state the reactor owns.
pub struct RecoveryState {
    pub jobs: std::sync::mpsc::Sender<Job>,
    /// The worker's event queue, for continuations that run on other threads (a
    /// refused reload read by the config worker).
    pub events: tokio::sync::mpsc::Sender<WorkerEvent>,
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
    /// The code of the last failed reload (refused in the turn or by the worker's
    /// retention cleanup), cleared by a successful one (doctor).
    pub last_reload_error: Option<ErrorCode>,
    /// The last checkpoint the worker wrote, handed back without its text: the
    /// next capture overwrites it in place rather than allocating every record.
    pub spent: Option<Box<Checkpoint>>,
}

impl RecoveryState {
    pub fn new(
        jobs: std::sync::mpsc::Sender<Job>,
        events: tokio::sync::mpsc::Sender<WorkerEvent>,
        interval_ms: u64,
    ) -> Self {
        RecoveryState {
            jobs,
            events,
            activated: false,
            dirty: false,
            writes: 0,
            explicit_in_flight: false,
            tick_pending: false,
            next_tick: Instant::now() + Duration::from_millis(interval_ms),
            archives: HashMap::new(),
            restores: 0,
            last_reload_error: None,
            spent: None,
        }
    }
}

pub(super) fn now() -> Timestamp {
    vx_store::clock::now()
}

/// The `checkpoint` param (present: the shape check requires it), checked once.
fn checkpoint_param(p: &Params<'_>) -> ApiResult<CheckpointId> {
    CheckpointId::parse(p.opt_str("checkpoint").unwrap_or_default())
}

impl State {
    /// What the worker reports, in a turn of its own.
    pub(super) fn on_worker(&mut self, event: WorkerEvent) {
        match event {
            WorkerEvent::Published { explicit } => self.on_published(explicit),
            WorkerEvent::Spent(checkpoint) => self.recovery.spent = Some(checkpoint),
            WorkerEvent::Loaded {
                loaded,
                principal,
                reply,
            } => {
                let result = self.restore_loaded(*loaded, &principal);
                let result = result.map(crate::stream::Answer::Encoded);
                let _ = reply.send(Outcome::answer(result));
            }
            WorkerEvent::ReloadCleaned { config, reply } => {
                let _ = reply.send(Outcome::reply(Ok(self.reload_activate(*config))));
            }
            WorkerEvent::ReloadFailed { error, reply } => {
                self.recovery.last_reload_error = Some(error.code);
                let _ = reply.send(Outcome::reply(Err(error)));
            }
        }
    }

    /// Captures now and hands the write to the worker.
    fn start_write(
        &mut self,
        shutdown: Shutdown,
        reply: Option<oneshot::Sender<Outcome>>,
        done: Option<oneshot::Sender<bool>>,
    ) {
        let spent = self.recovery.spent.take();
        let (checkpoint, fresh) = self.capture_for_write(now(), shutdown, spent);
        self.recovery.dirty = false;
        self.recovery.writes += 1;
        if reply.is_some() {
            self.recovery.explicit_in_flight = true;
        }
        let job = Job::Publish {
            checkpoint,
            fresh,
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
        self.recovery.dirty || self.config.recovery.text_enabled()
    }

    /// Archived plain text past its original expiry (or behind a backward clock) is
    /// discarded from the live archive too: its screen becomes blank and its
    /// `text_state` expired (RFC §4: never extended past `expires_at`).
    pub(in crate::reactor) fn expire_archive_text(&mut self, at: Timestamp) {
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

    pub(in crate::reactor) fn on_tick(&mut self) {
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

    pub(in crate::reactor) fn on_published(&mut self, explicit: bool) {
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
    pub(in crate::reactor) fn final_checkpoint(&mut self, done: oneshot::Sender<bool>) {
        if !self.config.recovery.enabled || !self.recovery.activated {
            let _ = done.send(true);
            return;
        }
        self.start_write(Shutdown::Clean, None, Some(done));
    }

    pub(in crate::reactor) fn note_mutation(&mut self) {
        if !self.recovery.activated && crate::variant::tick_at_activation() {
            self.recovery.next_tick = Instant::now();
        }
        self.recovery.activated = true;
        self.recovery.dirty = true;
    }

    /// `recovery.checkpoint`: capture in this turn, publish on the worker.
    pub(in crate::reactor) fn recovery_checkpoint(&mut self, reply: Reply) {
        if !self.config.recovery.enabled {
            let _ = reply.send(Outcome::reply(Err(ApiError::code(
                ErrorCode::RecoveryDisabled,
            ))));
            return;
        }
        if self.recovery.explicit_in_flight {
            let _ = reply.send(Outcome::reply(Err(ApiError::new(
                ErrorCode::RecoveryBusy,
                "a checkpoint write is already in flight",
            ))));
            return;
        }
        self.recovery.activated = true;
        self.start_write(Shutdown::Open, Some(reply), None);
    }

    pub(in crate::reactor) fn recovery_list(&mut self, reply: Reply) {
        self.send_job(Job::List { reply });
    }

    pub(in crate::reactor) fn recovery_inspect(&mut self, p: &Params<'_>, reply: Reply) {
        match checkpoint_param(p) {
            Ok(id) => self.send_job(Job::Inspect { id, reply }),
            Err(e) => drop(reply.send(Outcome::reply(Err(e)))),
        }
    }

    pub(in crate::reactor) fn recovery_forget(&mut self, p: &Params<'_>, reply: Reply) {
        match checkpoint_param(p) {
            Ok(id) => self.send_job(Job::Forget { id, reply }),
            Err(e) => drop(reply.send(Outcome::reply(Err(e)))),
        }
    }

    /// `recovery.restore`, phase one: the checks that need no disk, then the worker
    /// loads the file; the commit is a later turn (`restore.rs`).
    pub(in crate::reactor) fn recovery_restore(
        &mut self,
        caller: &Caller,
        p: &Params<'_>,
        reply: Reply,
    ) {
        let id = match checkpoint_param(p).and_then(|id| self.restore_allowed().map(|()| id)) {
            Ok(id) => id,
            Err(e) => {
                let _ = reply.send(Outcome::reply(Err(e)));
                return;
            }
        };
        self.send_job(Job::Load {
            id,
            principal: caller.principal.id.clone(),
            reply,
        });
    }

    /// `doctor`: the reactor's facts, then the config worker re-reads the file, then
    /// the recovery worker adds the store's and answers.
    pub(in crate::reactor) fn doctor(&mut self, reply: Reply) {
        let mut facts = Box::new(self.doctor_facts());
        let jobs = self.recovery.jobs.clone();
        let then = move |config_file| {
            facts.config_file = config_file;
            let _ = jobs.send(Job::Doctor { facts, reply });
        };
        let _ = self.config_jobs.send(ConfigJob::Doctor {
            path: self.identity.config_path.clone(),
            then: Box::new(then),
        });
    }

    /// A send failure drops the job and its reply: the client sees shutdown.
    fn send_job(&self, job: Job) {
        let _ = self.recovery.jobs.send(job);
    }

    /// Reload (RFC §2), one path for `config.reload` and the file watcher: the
    /// config worker reads and validates the file with no side effect, the recovery
    /// worker cleans up retention, then a later turn activates
    /// ([`WorkerEvent::ReloadCleaned`]) or records the refusal
    /// ([`WorkerEvent::ReloadFailed`]).
    pub(in crate::reactor) fn start_reload(&mut self, reply: Reply) {
        use crate::config::schema::TerminalText;
        let text_was = self.config.recovery.terminal_text;
        let (jobs, events) = (self.recovery.jobs.clone(), self.recovery.events.clone());
        let then = move |read: ApiResult<Config>| match read {
            Ok(config) => {
                let purge_text = text_was == TerminalText::Plain
                    && config.recovery.terminal_text == TerminalText::Off;
                let config = Box::new(config);
                let _ = jobs.send(Job::Reload {
                    config,
                    purge_text,
                    reply,
                });
            }
            Err(error) => {
                let _ = events.blocking_send(WorkerEvent::ReloadFailed { error, reply });
            }
        };
        // A send failure drops the reply: the client sees shutdown.
        let _ = self.config_jobs.send(ConfigJob::Reload {
            path: self.identity.config_path.clone(),
            then: Box::new(then),
        });
    }

    /// Reload, activation: the worker's retention cleanup succeeded; nothing here fails.
    pub(in crate::reactor) fn reload_activate(&mut self, config: Config) -> Value {
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

    /// Doctor's reactor-side facts at this turn (the config file's state is the
    /// config worker's to fill in).
    fn doctor_facts(&self) -> crate::doctor::ReactorFacts {
        let archives = &self.recovery.archives;
        crate::doctor::ReactorFacts {
            recovery: self.config.recovery.clone(),
            config_file: crate::doctor::ConfigFile::NoPath,
            last_reload_error: self.recovery.last_reload_error,
            archives: archives.len() as u64,
            cut_rows: archives.values().map(|a| a.cut_rows).sum(),
            unknown_presets: archives.values().filter(|a| a.unknown_preset).count() as u64,
            restores: self.recovery.restores,
        }
    }

    /// A restored archive's metadata: the `recovery` object of pane.list and
    /// pane.capture.
    pub(in crate::reactor) fn archive(&self, pane: PaneId) -> Option<&Archive> {
        self.recovery.archives.get(&pane)
    }

    pub(in crate::reactor) fn archive_json(&self, pane: PaneId) -> Option<Value> {
        self.archive(pane).map(crate::topology::json::to_value)
    }
}
