//! `vx-persist`: ADR-089 session persist (issue 17).
//!
//! - [`blob`]: the packed session blob, strict reader and canonical writer (pure).
//! - [`layout`]: which files under a backend's root are a session's
//!   (`persist/layouts.toml`), the auth-file denylist.
//! - [`packer`]: pack a session from a root, unpack a blob into one, HasSession.
//! - [`store`]: the blob store (`FsStore`); [`s3`]: `S3Store`; [`store_spec`]: `fs:`/`s3:`.
//!
//! Every system call goes through glibc (nix), so `libvxfault.so` can fail it.
//! Limits are in [`limits`]; errors carry the codes and rule ids of
//! docs/spec/persist-blob.md and never content, paths or ids.

pub mod blob;
pub mod check;
pub mod error;
mod fs;
pub mod header;
pub mod layout;
pub mod limits;
pub mod negative;
pub mod packer;
pub mod s3;
pub mod store;
pub mod store_lines;
pub mod store_spec;
pub mod store_suite;
#[cfg(feature = "testing")]
pub mod testing;
pub mod unpack;
mod unpack_defects;

pub use error::{BlobError, BlobRule, ErrorCode, PersistError, Result};
pub use header::SessionHeader;
pub use layout::{FileKind, Layouts};
pub use packer::SessionPacker;
pub use s3::S3Store;
pub use store::{BackendSessionStore, FsStore, StateRef};
pub use unpack::UnpackStep;
pub mod drive;
pub mod memory;
pub mod runstore;
pub mod runtime;
