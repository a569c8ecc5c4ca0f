//! `pane.attach`: each pane's output as a binary stream with absolute byte offsets,
//! resumable within a shared ring. See `docs/spec/attach.md`.

pub mod client;
pub mod feed;
pub mod frame;
pub mod ring;
pub mod stream;
