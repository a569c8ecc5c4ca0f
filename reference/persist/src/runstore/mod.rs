//! `RunStore` (ADR-089): the run's durable checkpoint. Every write publishes the
//! whole `checkpoint.json` atomically, as vx-store publishes checkpoints and
//! `FsStore` publishes blobs: an exclusive 0600 temporary beside the final name, a
//! complete write, fsync, close, a rename over `checkpoint.json`, a directory fsync.
//! A reader sees the old document or the new one, never a mix.
//!
//! The status each write stamps is the method's: `save_checkpoint` (running, or
//! rewound when the caller rewinds), `pause_run` (paused), `fail_run_resumable`,
//! `fail_run` (terminal). The runtime decides what the checkpoint holds.

pub mod checkpoint;

use std::fmt;
use std::path::Path;

use crate::error::PersistError;
use crate::fs::{write_sync_close, Dir};
use crate::limits::MAX_CHECKPOINT_BYTES;
pub use checkpoint::{
    read_checkpoint, valid_graph_id, Checkpoint, NodeSessionSlot, Output, PauseInfo, RunStatus,
    CHECKPOINT_VERSION,
};

pub const CHECKPOINT_FILE: &str = "checkpoint.json";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStoreCode {
    CheckpointCorrupt,
    RunNotFound,
    InvalidRun,
    RunIo,
    /// A failure armed by the drive's `inject` (tests only).
    Injected,
}

impl RunStoreCode {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStoreCode::CheckpointCorrupt => "conflict.checkpoint_corrupt",
            RunStoreCode::RunNotFound => "not_found.run",
            RunStoreCode::InvalidRun => "invalid_params.run",
            RunStoreCode::RunIo => "unavailable.run_io",
            RunStoreCode::Injected => "unavailable.injected",
        }
    }
}

/// A run-store failure: a code, an optional rule id and a fixed reason; an OS error
/// keeps only its errno.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunStoreError {
    pub code: RunStoreCode,
    pub rule: Option<&'static str>,
    pub reason: &'static str,
    pub errno: Option<nix::errno::Errno>,
}

impl RunStoreError {
    pub const fn new(code: RunStoreCode, reason: &'static str) -> Self {
        RunStoreError {
            code,
            rule: None,
            reason,
            errno: None,
        }
    }

    pub const fn rule(code: RunStoreCode, rule: &'static str, reason: &'static str) -> Self {
        RunStoreError {
            code,
            rule: Some(rule),
            reason,
            errno: None,
        }
    }
}

impl From<PersistError> for RunStoreError {
    fn from(e: PersistError) -> Self {
        RunStoreError {
            code: RunStoreCode::RunIo,
            rule: None,
            reason: e.reason,
            errno: e.errno,
        }
    }
}

impl fmt::Display for RunStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Same layout as PersistError's Display (a shared helper is a follow-up: error.rs
        // is being extended in parallel).
        write!(f, "{}", self.code.as_str())?;
        if let Some(rule) = self.rule {
            write!(f, " ({rule})")?;
        }
        write!(f, ": {}", self.reason)?;
        if let Some(errno) = self.errno {
            write!(f, " ({})", errno.desc())?;
        }
        Ok(())
    }
}

impl std::error::Error for RunStoreError {}

pub type RunResult<T> = std::result::Result<T, RunStoreError>;

/// The run store the runtime checkpoints through.
pub trait RunStore {
    /// A running (or, from a rewind, rewound) checkpoint.
    fn save_checkpoint(&self, cp: &Checkpoint) -> RunResult<()>;
    /// The pause checkpoint of an ask_user (holds the pause ref, never the blob).
    fn pause_run(&self, cp: &Checkpoint) -> RunResult<()>;
    /// A fail-stop the run can resume from.
    fn fail_run_resumable(&self, cp: &Checkpoint) -> RunResult<()>;
    /// Terminal failure (still the in-memory state: the old slot is never restored).
    fn fail_run(&self, cp: &Checkpoint) -> RunResult<()>;
    fn load_run(&self, run: &str) -> RunResult<Checkpoint>;
    fn delete_run(&self, run: &str) -> RunResult<()>;
}

/// `checkpoint.json` files under `<root>/<run>/`.
#[derive(Debug)]
pub struct FsRunStore {
    root: Dir,
}

fn check_run(run: &str) -> RunResult<()> {
    if valid_graph_id(run) {
        Ok(())
    } else {
        Err(RunStoreError::new(
            RunStoreCode::InvalidRun,
            "run id is not 1-64 bytes of [A-Za-z0-9_-]",
        ))
    }
}

impl FsRunStore {
    /// Opens (creating 0700 when missing) the run-store root, never through a final
    /// symlink.
    pub fn open(root: &Path) -> RunResult<FsRunStore> {
        let root = Dir::open_root(root, true)?.ok_or(RunStoreError::new(
            RunStoreCode::RunIo,
            "run-store root could not be created",
        ))?;
        Ok(FsRunStore { root })
    }

    fn publish(&self, cp: &Checkpoint, status: RunStatus) -> RunResult<()> {
        check_run(&cp.run)?;
        let mut cp = cp.clone();
        cp.status = status;
        cp.validate()?;
        let bytes = cp.encode();
        if bytes.len() as u64 > MAX_CHECKPOINT_BYTES {
            return Err(RunStoreError::rule(
                RunStoreCode::CheckpointCorrupt,
                "checkpoint.size",
                "the checkpoint would be over its cap",
            ));
        }
        let dir = self.root.open_or_make_child(&cp.run)?;
        let tmp = format!(
            ".tmp-{}",
            vx_store::names::new_uuid_v4()
                .map_err(|_| RunStoreError::new(RunStoreCode::RunIo, "no random temporary name"))?
        );
        let written = dir
            .create_exclusive(&tmp)
            .and_then(|fd| write_sync_close(fd, &bytes));
        if let Err(e) = written.and_then(|()| dir.rename_to(&tmp, &dir, CHECKPOINT_FILE)) {
            let _ = dir.unlink(&tmp, false);
            return Err(e.into());
        }
        dir.fsync()?;
        Ok(())
    }
}

fn too_long() -> PersistError {
    PersistError::new(
        crate::error::ErrorCode::PersistIo,
        "checkpoint.json is over its cap",
    )
}

impl RunStore for FsRunStore {
    fn save_checkpoint(&self, cp: &Checkpoint) -> RunResult<()> {
        self.publish(cp, cp.status.saved())
    }

    fn pause_run(&self, cp: &Checkpoint) -> RunResult<()> {
        if cp.pause.is_none() {
            return Err(RunStoreError::new(
                RunStoreCode::CheckpointCorrupt,
                "a pause checkpoint without a pause",
            ));
        }
        self.publish(cp, RunStatus::Paused)
    }

    fn fail_run_resumable(&self, cp: &Checkpoint) -> RunResult<()> {
        self.publish(cp, RunStatus::FailedResumable)
    }

    fn fail_run(&self, cp: &Checkpoint) -> RunResult<()> {
        self.publish(cp, RunStatus::Failed)
    }

    fn load_run(&self, run: &str) -> RunResult<Checkpoint> {
        check_run(run)?;
        let not_found =
            || RunStoreError::new(RunStoreCode::RunNotFound, "the run has no checkpoint");
        let dir = self.root.open_child(run)?.ok_or_else(not_found)?;
        if dir.stat_entry(CHECKPOINT_FILE)?.is_none() {
            return Err(not_found());
        }
        let bytes = dir.read_file(CHECKPOINT_FILE, MAX_CHECKPOINT_BYTES, too_long)?;
        let cp = read_checkpoint(&bytes)?;
        if cp.run != run {
            return Err(RunStoreError::rule(
                RunStoreCode::CheckpointCorrupt,
                "checkpoint.id",
                "checkpoint.json names another run",
            ));
        }
        Ok(cp)
    }

    fn delete_run(&self, run: &str) -> RunResult<()> {
        check_run(run)?;
        let Some(dir) = self.root.open_child(run)? else {
            return Ok(());
        };
        // The run directory is flat: checkpoint.json and temporaries a crash left.
        for name in dir.names()? {
            dir.unlink(&name, false)?;
        }
        self.root.unlink(run, true)?;
        self.root.fsync()?;
        Ok(())
    }
}
