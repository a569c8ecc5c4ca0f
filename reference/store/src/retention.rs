//! Retention (RFC §2, §3): pruning by age and count, the `.plain` → `.off` text purge,
//! and startup removal of temporary files.
//!
//! Only safe, owned, regular files are ever deleted, one name at a time with
//! unlinkat: never a directory, never recursively. Unsafe entries become diagnostics.
//! Each batch of deletions ends with one directory fsync. Every failure is returned
//! (and kept for doctor), never swallowed.

use std::fmt;

use vx_format::Timestamp;

use crate::config::{checkpoint_age, Age, StoreConfig};
use crate::error::{Result, StoreError};
use crate::forget::same_object;
use crate::io::{retry_eintr, Step};
use crate::names::final_name;
use crate::safe_fs::{check_file, Fingerprint, UnsafeReason};
use crate::scan::Scan;
use crate::store::Store;
use crate::verdicts::Verdict;

/// What a cleanup deleted, and what it found but would not touch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cleanup {
    /// Checkpoint ids (or temporary file names) deleted.
    pub deleted: Vec<String>,
    /// Entries left alone because they are unsafe (diagnostics, not failures, except
    /// for the text purge, where any of them makes the purge fail).
    pub unsafe_entries: Vec<(String, UnsafeReason)>,
}

/// A cleanup that did not fully succeed: what it deleted before failing, what it
/// could not delete, and the first error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CleanupError {
    pub deleted: Vec<String>,
    /// Ids or names that should have been deleted and were not.
    pub not_deleted: Vec<String>,
    pub error: StoreError,
}

impl fmt::Display for CleanupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} deleted, {} not deleted)",
            self.error,
            self.deleted.len(),
            self.not_deleted.len()
        )
    }
}

impl std::error::Error for CleanupError {}

impl From<StoreError> for CleanupError {
    fn from(error: StoreError) -> Self {
        CleanupError {
            deleted: Vec::new(),
            not_deleted: Vec::new(),
            error,
        }
    }
}

/// One entry scheduled for deletion, with the identity it was judged by.
struct Doomed {
    name: String,
    label: String,
    fingerprint: Option<Fingerprint>,
}

/// The ids retention deletes under `cfg` at `now`: every expired checkpoint, and
/// every current one older than the newest `max_checkpoints` durable ones.
///
/// Only safely decoded, non-duplicate files take part; corrupt, incompatible, unsafe
/// and future-dated files are never pruned (they are evidence, or unavailable until
/// forgotten). A checkpoint whose publish failed at the directory fsync
/// (`unconfirmed`) never takes a slot from a durable one: count pruning counts
/// durable checkpoints only, so the last durable checkpoint survives a failed write.
pub fn prune_plan(
    scan: &Scan,
    cfg: &StoreConfig,
    now: Timestamp,
    unconfirmed: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let mut doomed = Vec::new();
    let mut current: Vec<(u64, &str)> = Vec::new();
    for entry in &scan.finals {
        let Some(summary) = entry.summary() else {
            continue;
        };
        match checkpoint_age(summary.captured_at, now, cfg.max_age_seconds) {
            Age::Expired => doomed.push(entry.id.clone()),
            Age::Future => {}
            Age::Current if scan.is_duplicate_generation(&entry.id, summary.generation) => {}
            Age::Current => current.push((summary.generation, &entry.id)),
        }
    }
    // Newest first by RFC §3's order: generation, then id.
    current.sort_by(|a, b| b.cmp(a));
    let keep = usize::try_from(cfg.max_checkpoints).unwrap_or(usize::MAX);
    let durable: Vec<&(u64, &str)> = current.iter().filter(|(_, id)| !unconfirmed(id)).collect();
    if let Some(&&oldest_kept) = durable.get(keep.saturating_sub(1)).filter(|_| keep > 0) {
        doomed.extend(
            current
                .iter()
                .filter(|e| **e < oldest_kept)
                .map(|(_, id)| id.to_string()),
        );
    }
    doomed.sort();
    doomed
}

impl Store {
    /// Prunes under the active config.
    pub fn prune(&mut self, now: Timestamp) -> std::result::Result<Cleanup, CleanupError> {
        let cfg = self.config;
        self.prune_with(&cfg, now)
    }

    /// Prunes under `cfg` (a reload prunes under the new config before activating it).
    pub fn prune_with(
        &mut self,
        cfg: &StoreConfig,
        now: Timestamp,
    ) -> std::result::Result<Cleanup, CleanupError> {
        let result = self.prune_inner(cfg, now);
        self.record_cleanup(result.as_ref().err().map(|e| &e.error));
        result
    }

    fn prune_inner(
        &mut self,
        cfg: &StoreConfig,
        now: Timestamp,
    ) -> std::result::Result<Cleanup, CleanupError> {
        let scan = self.scan()?;
        let unconfirmed = self.unconfirmed.clone();
        let ids = prune_plan(&scan, cfg, now, &|id| unconfirmed.contains(id));
        let doomed = ids.iter().map(|id| doomed_final(&scan, id)).collect();
        let deleted = self.delete_batch(doomed)?;
        Ok(Cleanup {
            deleted,
            unsafe_entries: unsafe_finals(&scan),
        })
    }

    /// The `.plain` → `.off` purge: deletes every checkpoint that holds terminal text,
    /// or fails and says which it could not delete.
    ///
    /// Deleted: decoded checkpoints with any `plain` pane (whatever their age), every
    /// final file that cannot be decoded (corrupt or incompatible: it cannot be shown
    /// to hold no text), and every safe temporary file (an interrupted write may hold
    /// text). Unsafe or unreadable entries cannot be checked or safely deleted, so
    /// they make the purge fail, named in `not_deleted`.
    pub fn purge_text(&mut self) -> std::result::Result<Cleanup, CleanupError> {
        let result = self.purge_inner();
        self.record_cleanup(result.as_ref().err().map(|e| &e.error));
        result
    }

    fn purge_inner(&mut self) -> std::result::Result<Cleanup, CleanupError> {
        let scan = self.scan()?;
        let mut doomed = Vec::new();
        let mut refused = Vec::new();
        for entry in &scan.finals {
            match &entry.verdict {
                Verdict::Decoded(s) if !s.has_text => {}
                Verdict::Decoded(_) | Verdict::Failed { .. } => {
                    doomed.push(doomed_final(&scan, &entry.id))
                }
                Verdict::Unsafe(_) | Verdict::Unreadable(_) => refused.push(entry.id.clone()),
            }
        }
        let mut unsafe_temps = Vec::new();
        for name in &scan.temps {
            match self.dir.stat_entry(name)? {
                None => {}
                Some(st) => match check_file(&st, self.uid) {
                    Ok(()) => doomed.push(Doomed {
                        name: name.clone(),
                        label: name.clone(),
                        fingerprint: Some(Fingerprint::of(&st)),
                    }),
                    Err(reason) => {
                        refused.push(name.clone());
                        unsafe_temps.push((name.clone(), reason));
                    }
                },
            }
        }
        let deleted = match self.delete_batch(doomed) {
            Ok(deleted) => deleted,
            Err(mut e) => {
                e.not_deleted.extend(refused);
                return Err(e);
            }
        };
        if !refused.is_empty() {
            return Err(CleanupError {
                deleted,
                not_deleted: refused,
                error: StoreError::io(
                    "unsafe or unreadable entries may hold terminal text and were not deleted",
                ),
            });
        }
        let mut unsafe_entries = unsafe_finals(&scan);
        unsafe_entries.extend(unsafe_temps);
        Ok(Cleanup {
            deleted,
            unsafe_entries,
        })
    }

    /// Startup cleanup (RFC §3, lock holder only): removes safe, owned, regular
    /// temporary files. Unsafe entries are reported as diagnostics and left alone.
    pub fn remove_temp_files(&mut self) -> std::result::Result<Cleanup, CleanupError> {
        let result = self.remove_temp_inner();
        self.record_cleanup(result.as_ref().err().map(|e| &e.error));
        result
    }

    fn remove_temp_inner(&mut self) -> std::result::Result<Cleanup, CleanupError> {
        let scan = self.scan()?;
        let mut doomed = Vec::new();
        let mut unsafe_entries = Vec::new();
        for name in &scan.temps {
            let Some(st) = self.dir.stat_entry(name)? else {
                continue;
            };
            match check_file(&st, self.uid) {
                Ok(()) => doomed.push(Doomed {
                    name: name.clone(),
                    label: name.clone(),
                    fingerprint: Some(Fingerprint::of(&st)),
                }),
                Err(reason) => unsafe_entries.push((name.clone(), reason)),
            }
        }
        let deleted = self.delete_batch(doomed)?;
        Ok(Cleanup {
            deleted,
            unsafe_entries,
        })
    }

    /// Deletes each entry after re-checking that its name still refers to the same
    /// safe object, then fsyncs the directory once. Continues past a failed entry so
    /// one bad file does not shield the rest, and reports every failure.
    fn delete_batch(
        &mut self,
        doomed: Vec<Doomed>,
    ) -> std::result::Result<Vec<String>, CleanupError> {
        let mut deleted = Vec::new();
        let mut not_deleted = Vec::new();
        let mut first_error: Option<StoreError> = None;
        for item in doomed {
            match self.delete_one(&item) {
                Ok(true) => deleted.push(item.label),
                Ok(false) => {} // vanished meanwhile: nothing left to delete
                Err(e) => {
                    first_error.get_or_insert(e);
                    not_deleted.push(item.label);
                }
            }
        }
        if !deleted.is_empty() {
            if let Err(e) = self.sync_dir() {
                // The deletions happened but may not be durable: report them all.
                return Err(CleanupError {
                    deleted,
                    not_deleted,
                    error: first_error.unwrap_or(e),
                });
            }
        }
        match first_error {
            Some(error) => Err(CleanupError {
                deleted,
                not_deleted,
                error,
            }),
            None => Ok(deleted),
        }
    }

    /// `Ok(false)` when the entry is already gone.
    fn delete_one(&mut self, item: &Doomed) -> Result<bool> {
        let Some(st) = self.dir.stat_entry(&item.name)? else {
            return Ok(false);
        };
        check_file(&st, self.uid)
            .map_err(|reason| StoreError::io(format!("unsafe entry not deleted: {reason}")))?;
        if let Some(judged) = &item.fingerprint {
            if !same_object(judged, &Fingerprint::of(&st)) {
                return Err(StoreError::io(
                    "entry changed since it was checked; not deleted",
                ));
            }
        }
        let dir = self.dir.fd();
        match retry_eintr(|| self.io.unlink(dir, &item.name)) {
            Ok(()) => {}
            Err(nix::errno::Errno::ENOENT) => return Ok(false),
            Err(e) => return Err(StoreError::os(Step::Unlink.describe(), e)),
        }
        self.cache.remove(&item.label);
        self.unconfirmed.remove(&item.label);
        Ok(true)
    }
}

fn doomed_final(scan: &Scan, id: &str) -> Doomed {
    let fingerprint = scan
        .finals
        .iter()
        .find(|e| e.id == id)
        .and_then(|e| e.fingerprint);
    Doomed {
        name: final_name(id),
        label: id.to_owned(),
        fingerprint,
    }
}

fn unsafe_finals(scan: &Scan) -> Vec<(String, UnsafeReason)> {
    scan.finals
        .iter()
        .filter_map(|e| match e.verdict {
            Verdict::Unsafe(reason) => Some((e.id.clone(), reason)),
            _ => None,
        })
        .collect()
}
