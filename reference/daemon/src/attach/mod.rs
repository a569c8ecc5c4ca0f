//! `pane.attach`: each pane's output as a binary stream with absolute byte offsets,
//! resumable within a shared ring. See `docs/spec/attach.md`. `interactive` is the
//! CLI's `vxref pane attach`, on the terminal `terminal` sets up.

pub mod client;
pub mod feed;
pub mod frame;
pub mod interactive;
pub mod ring;
pub mod stream;
pub mod terminal;
