//! The runtime's typed errors and its event log. Neither ever carries a blob, a
//! ref, terminal text or a path: events name a node, a fixed code and, for a
//! finished node, `sanitize_output_for_event` of its output.

use std::fmt;

use crate::runstore::{Output, RunStoreError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RuntimeError {
    /// A node the graph does not have.
    UnknownNode,
    /// `session: persist` inside a fan-out branch (ADR-089: persist is illegal there).
    FanOutPersist,
    /// The command does not fit the run's status (answer without a pause, …).
    RunState(&'static str),
    /// A run-store call the command itself needs (load_run of answer/resume/fork).
    RunStore(RunStoreError),
}

impl RuntimeError {
    pub fn code(&self) -> &'static str {
        match self {
            RuntimeError::UnknownNode => "invalid_request.node",
            RuntimeError::FanOutPersist => "invalid_graph.fan_out_persist",
            RuntimeError::RunState(_) => "conflict.run_state",
            RuntimeError::RunStore(e) => e.code.as_str(),
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            RuntimeError::UnknownNode => "the graph has no such node",
            RuntimeError::FanOutPersist => "session persist is illegal in a fan-out branch",
            RuntimeError::RunState(r) => r,
            RuntimeError::RunStore(e) => e.reason,
        }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.reason())
    }
}

impl std::error::Error for RuntimeError {}

impl From<RunStoreError> for RuntimeError {
    fn from(e: RunStoreError) -> Self {
        RuntimeError::RunStore(e)
    }
}

/// Warnings (the seed's "warn + fresh" and best-effort failures), fixed codes.
pub mod warn {
    pub const NO_STORE: &str = "persist.no_store";
    pub const NO_CAPABILITY: &str = "persist.no_capability";
    pub const PAUSE_NO_REF: &str = "persist.pause_no_ref";
    pub const PAUSE_GET_FAILED: &str = "persist.pause_get_failed";
    pub const PAUSE_UNPACK_FAILED: &str = "persist.pause_unpack_failed";
    pub const PAUSE_NO_BLOB: &str = "persist.pause_no_blob";
    pub const PAUSE_PUT_FAILED: &str = "persist.pause_put_failed";
    pub const PAUSE_RUN_FAILED: &str = "persist.pause_run_failed";
    pub const SLOT_GET_FAILED: &str = "persist.slot_get_failed";
    pub const SLOT_UNPACK_FAILED: &str = "persist.slot_unpack_failed";
    pub const SLOT_UNUSABLE: &str = "persist.slot_unusable";
    pub const SLOT_PACK_FAILED: &str = "persist.slot_pack_failed";
    pub const SLOT_PUT_FAILED: &str = "persist.slot_put_failed";
    pub const CHECKPOINT_FAILED: &str = "persist.checkpoint_failed";
    pub const FAIL_RESUMABLE_FAILED: &str = "persist.fail_run_resumable_failed";
    pub const FAIL_RUN_FAILED: &str = "persist.fail_run_failed";
    pub const DELETE_FAILED: &str = "persist.delete_failed";
    pub const INBOUND_NOT_STRING: &str = "persist.inbound_not_string";
    pub const PROVENANCE_NONE: &str = "persist.provenance_none";
    pub const PROVENANCE_MANY: &str = "persist.provenance_many";
    pub const SOURCE_SLOT_GET_FAILED: &str = "persist.source_slot_get_failed";
    pub const SOURCE_SLOT_UNPACK_FAILED: &str = "persist.source_slot_unpack_failed";
    pub const NO_SESSION: &str = "persist.has_session_false";
    pub const EXECUTE_FAILED: &str = "persist.execute_failed";
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// Resolution chose a session: `code` says which rule (`pause`, `own_slot`,
    /// `source_slot`, `has_session`) or `fresh`.
    Session,
    Warn,
    NodeCompleted,
    Paused,
    EdgeSelected,
    FailStop,
    Failed,
    Restored,
    Rewound,
    Forked,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Session => "session",
            EventKind::Warn => "warn",
            EventKind::NodeCompleted => "node_completed",
            EventKind::Paused => "paused",
            EventKind::EdgeSelected => "edge_selected",
            EventKind::FailStop => "fail_stop",
            EventKind::Failed => "failed",
            EventKind::Restored => "restored",
            EventKind::Rewound => "rewound",
            EventKind::Forked => "forked",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub kind: EventKind,
    pub node: Option<String>,
    pub code: Option<&'static str>,
    /// Already sanitized (no blob, no ref).
    pub output: Option<Output>,
}
