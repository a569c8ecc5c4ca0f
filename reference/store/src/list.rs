//! `recovery.list`, `recovery.inspect` and the load behind `recovery.restore`
//! (RFC §3, §6): statuses, the RFC's sort order, counts without terminal content,
//! and a validated checkpoint for restore.

use std::fmt;

use vx_format::ids::is_checkpoint_id;
use vx_format::{Checkpoint, Format, Shutdown, Text, Timestamp};

use crate::config::{checkpoint_age, text_available, Age};
use crate::error::{ErrorCode, Result, StoreError};
use crate::names::final_name;
use crate::safe_fs::Opened;
use crate::scan::Scan;
use crate::store::Store;
use crate::verdicts::Verdict;

/// RFC §6's `recovery.list` status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    Valid,
    Corrupt,
    Incompatible,
    Expired,
    Unsafe,
    Future,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Valid => "valid",
            Status::Corrupt => "corrupt",
            Status::Incompatible => "incompatible",
            Status::Expired => "expired",
            Status::Unsafe => "unsafe",
            Status::Future => "future",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of `recovery.list`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListEntry {
    pub checkpoint: String,
    pub status: Status,
    /// Present only when the file was safely decoded.
    pub generation: Option<u64>,
    /// Why the status is not `valid`: a rule id, an unsafe-object kind or an errno
    /// name, never content. Not part of the RFC's closed list shape; for tools and
    /// doctor.
    pub reason: Option<String>,
}

/// A listing plus what the directory holds besides final files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// In RFC §6 order: decodable generations ascending (id breaks ties), then the
    /// rest by id.
    pub entries: Vec<ListEntry>,
    pub temp_files: usize,
    /// Names that are neither final nor temporary files (for tools only).
    pub other_names: Vec<String>,
}

/// `recovery.inspect`'s result: counts only, no names or terminal content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inspection {
    pub checkpoint: String,
    pub generation: u64,
    pub shutdown: Shutdown,
    pub format: Format,
    pub sessions: u64,
    pub windows: u64,
    pub panes: u64,
    /// Panes whose plain text a restore at this time would hydrate.
    pub text_panes: u64,
    /// Panes whose text is stored as expired, or is plain but would be expired at
    /// restore (age, backward clock, or current config `.off`).
    pub expired_text_panes: u64,
}

/// A validated checkpoint ready for restore.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    pub format: Format,
    /// Text that is not available now has been replaced by `Text::Expired`: its
    /// contents are discarded here, before the daemon sees them.
    pub checkpoint: Checkpoint,
}

/// The status of one scanned entry at `now`.
fn entry_status(
    scan: &Scan,
    index: usize,
    now: Timestamp,
    max_age_seconds: u64,
) -> (Status, Option<String>) {
    let entry = &scan.finals[index];
    match &entry.verdict {
        Verdict::Unsafe(reason) => (Status::Unsafe, Some(reason.as_str().to_owned())),
        Verdict::Unreadable(errno) => (
            Status::Unsafe,
            Some(format!("read failed: {}", errno.desc())),
        ),
        Verdict::Failed { code, reason } => {
            let status = if code.list_status() == "corrupt" {
                Status::Corrupt
            } else {
                Status::Incompatible
            };
            (status, Some(reason.clone()))
        }
        Verdict::Decoded(summary) => {
            if scan.is_duplicate_generation(&entry.id, summary.generation) {
                return (Status::Corrupt, Some("duplicate generation".to_owned()));
            }
            match checkpoint_age(summary.captured_at, now, max_age_seconds) {
                Age::Current => (Status::Valid, None),
                Age::Expired => (
                    Status::Expired,
                    Some("older than max_age_seconds".to_owned()),
                ),
                Age::Future => (
                    Status::Future,
                    Some("captured_at is later than now".to_owned()),
                ),
            }
        }
    }
}

/// Sorts rows in RFC §6 order.
pub fn sort_entries(entries: &mut [ListEntry]) {
    entries.sort_by(|a, b| match (a.generation, b.generation) {
        (Some(x), Some(y)) => x.cmp(&y).then_with(|| a.checkpoint.cmp(&b.checkpoint)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.checkpoint.cmp(&b.checkpoint),
    });
}

impl Store {
    /// `recovery.list`: every final file with its status at `now`.
    ///
    /// Duplicate generations are listed, both as `corrupt` with their generation
    /// (they are decoded, and refused for restore). Temporary files are never listed.
    pub fn list(&mut self, now: Timestamp) -> Result<Listing> {
        let scan = self.scan()?;
        let max_age = self.config.max_age_seconds;
        let mut entries: Vec<ListEntry> = (0..scan.finals.len())
            .map(|i| {
                let (status, reason) = entry_status(&scan, i, now, max_age);
                ListEntry {
                    checkpoint: scan.finals[i].id.clone(),
                    status,
                    generation: scan.finals[i].summary().map(|s| s.generation),
                    reason,
                }
            })
            .collect();
        sort_entries(&mut entries);
        Ok(Listing {
            entries,
            temp_files: scan.temps.len(),
            other_names: scan.others,
        })
    }

    /// `recovery.inspect`: counts of a valid checkpoint (valid topology whose text
    /// expired included).
    pub fn inspect(&mut self, id: &str, now: Timestamp) -> Result<Inspection> {
        let loaded = self.load(id, now)?;
        let cp = &loaded.checkpoint;
        let text_panes = cp.panes.iter().filter(|p| p.text.is_plain()).count();
        let expired_text_panes = cp
            .panes
            .iter()
            .filter(|p| matches!(p.text, Text::Expired))
            .count();
        Ok(Inspection {
            checkpoint: cp.checkpoint.clone(),
            generation: cp.generation,
            shutdown: cp.shutdown,
            format: loaded.format,
            sessions: cp.sessions.len() as u64,
            windows: cp.windows.len() as u64,
            panes: cp.panes.len() as u64,
            text_panes: text_panes as u64,
            expired_text_panes: expired_text_panes as u64,
        })
    }

    /// The checkpoint for `recovery.restore`, read fresh from a checked handle and
    /// refused unless valid now: malformed id → `invalid_params.checkpoint` (never a
    /// path), absent → `not_found.checkpoint`, unsafe or unreadable →
    /// `unavailable.recovery_io`, reader failure → its code, another file with the same
    /// generation → `conflict.checkpoint_corrupt`, expired or future →
    /// `conflict.checkpoint_expired`. Never falls back to another checkpoint.
    pub fn load(&mut self, id: &str, now: Timestamp) -> Result<Loaded> {
        if !is_checkpoint_id(id) {
            return Err(StoreError::invalid_id());
        }
        let scan = self.scan()?;
        let name = final_name(id);
        let file = match self.dir.open_file(&name, self.uid)? {
            Opened::Missing => return Err(StoreError::not_found()),
            Opened::Unsafe(reason) => {
                return Err(StoreError::io(format!("unsafe checkpoint file: {reason}")))
            }
            Opened::File(file) => file,
        };
        let decoded = self
            .decode(&name, &file)
            .map_err(|e| e.into_store_error())?;
        let mut cp = decoded.checkpoint;
        if scan.is_duplicate_generation(id, cp.generation) {
            return Err(StoreError::new(
                ErrorCode::CheckpointCorrupt,
                "another checkpoint has the same generation",
            ));
        }
        match checkpoint_age(cp.captured_at, now, self.config.max_age_seconds) {
            Age::Current => {}
            Age::Expired => {
                return Err(StoreError::new(
                    ErrorCode::CheckpointExpired,
                    "checkpoint is older than max_age_seconds",
                ))
            }
            Age::Future => {
                return Err(StoreError::new(
                    ErrorCode::CheckpointExpired,
                    "checkpoint is captured later than now",
                ))
            }
        }
        for pane in &mut cp.panes {
            if let Text::Plain(text) = &pane.text {
                if !text_available(text, &self.config, now) {
                    pane.text = Text::Expired;
                }
            }
        }
        Ok(Loaded {
            format: decoded.format,
            checkpoint: cp,
        })
    }

    /// Counts for doctor: how many files of each status, and the bytes of all final
    /// files that could be stat'ed safely.
    pub fn summary(&mut self, now: Timestamp) -> Result<StoreSummary> {
        let listing = self.list(now)?;
        let mut summary = StoreSummary {
            temp_files: listing.temp_files as u64,
            ..Default::default()
        };
        for entry in &listing.entries {
            match entry.status {
                Status::Valid => summary.valid += 1,
                Status::Corrupt => summary.corrupt += 1,
                Status::Incompatible => summary.incompatible += 1,
                Status::Expired => summary.expired += 1,
                Status::Unsafe => summary.unsafe_entries += 1,
                Status::Future => summary.future += 1,
            }
            if entry.status != Status::Unsafe {
                if let Ok(Some(st)) = self.dir.stat_entry(&final_name(&entry.checkpoint)) {
                    summary.bytes += st.st_size.max(0) as u64;
                }
            }
        }
        Ok(summary)
    }
}

/// Doctor's retained/invalid/expired counts and bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreSummary {
    pub valid: u64,
    pub corrupt: u64,
    pub incompatible: u64,
    pub expired: u64,
    pub future: u64,
    pub unsafe_entries: u64,
    pub temp_files: u64,
    pub bytes: u64,
}
