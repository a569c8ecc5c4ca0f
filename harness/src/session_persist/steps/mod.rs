//! The session-persist suite's steps.

mod packer;
mod runtime_then;
mod runtime_when;
mod store;
mod unpack;
