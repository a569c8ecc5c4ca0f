//! What a scan concludes about each final file of the store, and the cache entry
//! that keeps a conclusion while the file's fingerprint stays the same. Apart from
//! `scan` so that `Store`, which holds the cache, and the scan, which fills it, do not
//! import each other.

use nix::errno::Errno;
use vx_format::{Code, Timestamp};

use crate::safe_fs::{Fingerprint, UnsafeReason};

/// What a safely decoded checkpoint contributes to listing and retention.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    pub generation: u64,
    pub captured_at: Timestamp,
    /// At least one pane holds `plain` text.
    pub has_text: bool,
}

/// The verdict on one final file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// An unsafe filesystem object: never opened or never read.
    Unsafe(UnsafeReason),
    /// Safe, but reading it failed with an OS error.
    Unreadable(Errno),
    /// Safe and read, but the reader refused it; `reason` is the rule, not content.
    Failed {
        code: Code,
        reason: String,
    },
    Decoded(Summary),
}

/// A cached verdict: valid while the file's fingerprint and the configured size
/// bound are those it was reached under.
pub(crate) struct CacheEntry {
    pub(crate) fingerprint: Fingerprint,
    pub(crate) max_bytes: u64,
    pub(crate) verdict: Verdict,
}
