//! The session-persist suite's steps.

mod caps;
mod checker;
mod decoys;
mod hostile;
mod packer;
mod runtime_then;
mod runtime_when;
mod store;
mod unpack;
