//! The session-persist suite's steps.

mod packer;
mod store;
mod unpack;
