//! `vx-store`: the recovery RFC's checkpoint store (§2, §3, §6).
//!
//! A private directory per socket, written only by atomic publish, read only through
//! held directory handles and checked file handles. The daemon opens it once at
//! startup and keeps it; offline tools open an existing directory read-only.
//!
//! ```no_run
//! use vx_store::{Store, StoreConfig, StoreLocation};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let location = StoreLocation::from_env(std::path::Path::new("/run/user/1000/venomx.sock"))?;
//! let uid = vx_store::current_uid();
//! let mut store = Store::open(&location, uid, StoreConfig::default())?;
//! store.remove_temp_files()?;
//! let now = vx_store::clock::now();
//! for entry in store.list(now)?.entries {
//!     println!("{} {} {:?}", entry.checkpoint, entry.status, entry.generation);
//! }
//! # Ok(()) }
//! ```
//!
//! Every system call goes through glibc (nix), so `libvxfault.so` can fail it. The
//! mutating calls also go through the [`io::Io`] trait, the in-process failure seam.

pub mod clock;
pub mod config;
pub mod error;
mod forget;
pub mod io;
mod list;
pub mod location;
pub mod names;
mod publish;
mod retention;
pub mod safe_fs;
mod scan;
mod store;
mod verdicts;

pub use config::{checkpoint_age, text_available, Age, StoreConfig, TextMode};
pub use error::{ErrorCode, Result, StoreError};
pub use list::{sort_entries, Inspection, ListEntry, Listing, Loaded, Status, StoreSummary};
pub use location::{resolve_socket_path, socket_key, state_home, StoreLocation};
pub use publish::{Allocation, Published};
pub use retention::{prune_plan, Cleanup, CleanupError};
pub use safe_fs::UnsafeReason;
pub use scan::{Scan, ScannedEntry};
pub use store::{Health, Store};
pub use verdicts::{Summary, Verdict};

/// The effective uid of this process: the owner every store object must have.
pub fn current_uid() -> u64 {
    u64::from(nix::unistd::geteuid().as_raw())
}
