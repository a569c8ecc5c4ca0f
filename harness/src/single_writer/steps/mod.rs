//! The single-writer suite's steps.

mod live_alias;
mod live_claims;
mod live_open;
mod live_stream;
mod offline;
