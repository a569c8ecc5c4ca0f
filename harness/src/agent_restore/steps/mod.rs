//! The agent-restore suite's steps: offline checkers, then the server rows by topic.

mod fallback;
mod launch;
mod layout;
mod offline;
mod oneshot;
mod owners;
mod races;
mod records;
mod relay;
mod restore;
mod restore_reply;
mod satellite;
