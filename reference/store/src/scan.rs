//! One pass over the store directory: every final file classified (unsafe, failed to
//! decode, or decoded with its generation), every temporary and stray name counted.
//!
//! Decoding a file means the full strict read of vx-format on bytes read from a handle
//! that passed the safety checks. Verdicts are cached by file fingerprint, so a list
//! or a publish does not re-read unchanged files; inspect, load and restore never use
//! the cache.

use nix::errno::Errno;
use vx_format::ReadContext;

use crate::error::{Result, StoreError};
use crate::names::{classify, final_name, EntryName};
use crate::safe_fs::{check_file, display_name, Fingerprint, Opened};
use crate::store::Store;
use crate::verdicts::{CacheEntry, Summary, Verdict};

/// One final file as scanned.
#[derive(Clone, Debug)]
pub struct ScannedEntry {
    /// The checkpoint id: the file name without `.json`.
    pub id: String,
    pub verdict: Verdict,
    /// The fingerprint of the object the verdict is about (`None` if unsafe before open).
    pub fingerprint: Option<Fingerprint>,
}

impl ScannedEntry {
    pub fn summary(&self) -> Option<&Summary> {
        match &self.verdict {
            Verdict::Decoded(s) => Some(s),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Scan {
    pub finals: Vec<ScannedEntry>,
    /// `.tmp-<uuid>` names: never candidates.
    pub temps: Vec<String>,
    /// Names that are neither (shown lossily, for tools' diagnostics only).
    pub others: Vec<String>,
}

impl Scan {
    /// How many decoded files carry each generation; more than one is a conflict.
    pub fn is_duplicate_generation(&self, id: &str, generation: u64) -> bool {
        self.finals
            .iter()
            .any(|e| e.id != id && e.summary().is_some_and(|s| s.generation == generation))
    }

    /// The largest generation among safely decoded files (any age, duplicates too:
    /// a new checkpoint must never reuse one).
    pub fn max_generation(&self) -> u64 {
        self.finals
            .iter()
            .filter_map(|e| e.summary())
            .map(|s| s.generation)
            .max()
            .unwrap_or(0)
    }
}

impl Store {
    pub(crate) fn read_context<'a>(&'a self, file_name: &'a str) -> ReadContext<'a> {
        ReadContext {
            file_name: Some(file_name),
            socket: self.socket.as_deref(),
            uid: self.socket.as_ref().map(|_| self.uid),
            max_bytes: self.config.max_checkpoint_bytes,
        }
    }

    /// Reads the directory and classifies every entry.
    pub fn scan(&mut self) -> Result<Scan> {
        let mut scan = Scan::default();
        for raw in self.dir.names()? {
            match classify(&raw) {
                EntryName::Final(id) => {
                    if let Some(entry) = self.scan_final(id)? {
                        scan.finals.push(entry);
                    }
                }
                EntryName::Temp(name) => scan.temps.push(name),
                EntryName::Other => scan.others.push(display_name(&raw)),
            }
        }
        self.cache
            .retain(|id, _| scan.finals.iter().any(|e| &e.id == id));
        scan.finals.sort_by(|a, b| a.id.cmp(&b.id));
        scan.temps.sort();
        scan.others.sort();
        Ok(scan)
    }

    /// `None` when the entry vanished between readdir and stat.
    fn scan_final(&mut self, id: String) -> Result<Option<ScannedEntry>> {
        let name = final_name(&id);
        let Some(st) = self.dir.stat_entry(&name)? else {
            return Ok(None);
        };
        if let Err(reason) = check_file(&st, self.uid) {
            return Ok(Some(ScannedEntry {
                id,
                verdict: Verdict::Unsafe(reason),
                fingerprint: None,
            }));
        }
        let fingerprint = Fingerprint::of(&st);
        let max_bytes = self.config.max_checkpoint_bytes;
        if let Some(hit) = self.cache.get(&id) {
            if hit.fingerprint == fingerprint && hit.max_bytes == max_bytes {
                let verdict = hit.verdict.clone();
                return Ok(Some(ScannedEntry {
                    id,
                    verdict,
                    fingerprint: Some(fingerprint),
                }));
            }
        }
        let (verdict, fingerprint) = match self.dir.open_file(&name, self.uid)? {
            Opened::Missing => return Ok(None),
            Opened::Unsafe(reason) => (Verdict::Unsafe(reason), None),
            Opened::File(file) => {
                let verdict = match self.decode(&name, &file) {
                    Ok(decoded) => Verdict::Decoded(Summary {
                        generation: decoded.checkpoint.generation,
                        captured_at: decoded.checkpoint.captured_at,
                        has_text: decoded.checkpoint.panes.iter().any(|p| p.text.is_plain()),
                    }),
                    Err(ReadFailure::Format(e)) => Verdict::Failed {
                        code: e.code(),
                        reason: e.reason(),
                    },
                    Err(ReadFailure::Os(errno)) => Verdict::Unreadable(errno),
                };
                (verdict, Some(file.fingerprint()))
            }
        };
        if let (Some(fp), false) = (
            fingerprint,
            matches!(verdict, Verdict::Unsafe(_) | Verdict::Unreadable(_)),
        ) {
            self.cache.insert(
                id.clone(),
                CacheEntry {
                    fingerprint: fp,
                    max_bytes,
                    verdict: verdict.clone(),
                },
            );
        }
        Ok(Some(ScannedEntry {
            id,
            verdict,
            fingerprint,
        }))
    }

    /// The strict read of one opened, checked file: length from fstat first (before
    /// any allocation), then the bytes of this same handle.
    pub(crate) fn decode(
        &self,
        name: &str,
        file: &crate::safe_fs::CheckedFile,
    ) -> std::result::Result<vx_format::Decoded, ReadFailure> {
        let max_bytes = self.config.max_checkpoint_bytes;
        vx_format::check_length(file.size(), max_bytes).map_err(ReadFailure::Format)?;
        let bytes = file
            .read_all(self.config.max_bytes())
            .map_err(|e| ReadFailure::Os(e.errno.unwrap_or(Errno::EIO)))?;
        vx_format::read(&bytes, &self.read_context(name)).map_err(ReadFailure::Format)
    }

    /// Records a checkpoint this store just wrote, so the next scan need not re-read
    /// it. The fingerprint is taken after the rename (which changes ctime).
    pub(crate) fn remember_published(&mut self, id: &str, summary: Summary) {
        if let Ok(Some(st)) = self.dir.stat_entry(&final_name(id)) {
            let entry = CacheEntry {
                fingerprint: Fingerprint::of(&st),
                max_bytes: self.config.max_checkpoint_bytes,
                verdict: Verdict::Decoded(summary),
            };
            self.cache.insert(id.to_owned(), entry);
        }
    }
}

pub(crate) enum ReadFailure {
    Format(vx_format::FormatError),
    Os(Errno),
}

impl ReadFailure {
    pub(crate) fn into_store_error(self) -> StoreError {
        match self {
            ReadFailure::Format(e) => e.into(),
            ReadFailure::Os(errno) => StoreError::os("read of a checkpoint file", errno),
        }
    }
}
