//! What a caller knows about where a checkpoint's bytes came from: the reader
//! (`read/`) takes it and the validation (`validate.rs`) checks the payload against
//! it, so it sits below both.

use crate::limits::DEFAULT_MAX_CHECKPOINT_BYTES;

/// What the caller knows about where the bytes came from.
#[derive(Clone, Copy, Debug)]
pub struct ReadContext<'a> {
    /// The file's name; when given it must be the checkpoint id + `.json`.
    pub file_name: Option<&'a str>,
    /// The active store's socket; when given the payload's `socket` must equal it.
    pub socket: Option<&'a str>,
    /// The active store's uid; when given the payload's `uid` must equal it.
    pub uid: Option<u64>,
    /// Configured `max_checkpoint_bytes`; the reader applies `min(this, 64 MiB)`.
    pub max_bytes: u64,
}

impl Default for ReadContext<'_> {
    fn default() -> Self {
        ReadContext {
            file_name: None,
            socket: None,
            uid: None,
            max_bytes: DEFAULT_MAX_CHECKPOINT_BYTES,
        }
    }
}
