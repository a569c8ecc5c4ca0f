//! RFC §5's per-archive recovery metadata, kept beside a restored pane.

use std::sync::Arc;
use vx_format::{PreviousState, Timestamp};

/// An archive's `text_state`, with the original timestamps of plain text (RFC §4:
/// recheckpointing never renews them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveText {
    Omitted,
    Expired,
    Plain {
        saved_at: Timestamp,
        expires_at: Timestamp,
    },
}

/// RFC §5's per-archive recovery metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// Shared by every archive of one restore (one allocation, not one per pane).
    pub checkpoint: Arc<str>,
    pub previous_pane: String,
    pub process_state: PreviousState,
    pub text: ArchiveText,
    pub cut_rows: u64,
    /// A float whose saved preset the restoring daemon did not know (it fell back
    /// to `.floats.default`). Reported by doctor only; not part of the wire object.
    pub unknown_preset: bool,
}

/// RFC §5's closed `recovery` object of pane.list and pane.capture.
impl serde::Serialize for Archive {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("checkpoint", &*self.checkpoint)?;
        m.serialize_entry("cut_rows", &self.cut_rows)?;
        m.serialize_entry("previous_pane", &self.previous_pane)?;
        let process_state = match self.process_state {
            PreviousState::Exited => "exited",
            PreviousState::Interrupted => "interrupted",
        };
        m.serialize_entry("process_state", process_state)?;
        let text_state = match self.text {
            ArchiveText::Omitted => "omitted",
            ArchiveText::Expired => "expired",
            ArchiveText::Plain { .. } => "plain",
        };
        m.serialize_entry("text_state", text_state)?;
        m.end()
    }
}
