//! The agent-restore suite's steps.

mod offline;
