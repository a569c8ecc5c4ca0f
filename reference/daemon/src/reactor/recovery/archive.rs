//! RFC §5's per-archive recovery metadata, kept beside a restored pane.

use serde_json::{json, Value};
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
    pub checkpoint: String,
    pub previous_pane: String,
    pub process_state: PreviousState,
    pub text: ArchiveText,
    pub cut_rows: u64,
    /// A float whose saved preset the restoring daemon did not know (it fell back
    /// to `.floats.default`). Reported by doctor only; not part of the wire object.
    pub unknown_preset: bool,
}

impl Archive {
    /// The closed `recovery` object of pane.list and pane.capture.
    pub fn to_json(&self) -> Value {
        json!({
            "checkpoint": self.checkpoint,
            "previous_pane": self.previous_pane,
            "process_state": match self.process_state {
                PreviousState::Exited => "exited",
                PreviousState::Interrupted => "interrupted",
            },
            "text_state": match self.text {
                ArchiveText::Omitted => "omitted",
                ArchiveText::Expired => "expired",
                ArchiveText::Plain { .. } => "plain",
            },
            "cut_rows": self.cut_rows,
        })
    }
}
