//! The open store: the held directory handle, its identity, the failure seam and the
//! state doctor reports. Operations live in their own files by flow (scan, list and
//! inspect, publish, forget, retention).

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::Mode;
use vx_format::Timestamp;

use crate::config::StoreConfig;
use crate::error::{ErrorCode, Result, StoreError};
use crate::io::{Io, SysIo};
use crate::location::{StoreLocation, STORE_SUBDIRS};
use crate::safe_fs::{DirHandle, DirRule, DIR_MODE};
use crate::verdicts::CacheEntry;

/// What doctor reports about writes and cleanups (RFC §3, §6 "Doctor").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Health {
    /// When the last publish was attempted (the caller's "now").
    pub last_attempt: Option<Timestamp>,
    /// When a publish last completed its directory fsync.
    pub last_success: Option<Timestamp>,
    /// The error of the last publish, cleared by a success.
    pub last_error: Option<StoreError>,
    /// The error of the last prune, purge or temp cleanup, cleared by a clean one.
    pub last_cleanup_error: Option<StoreError>,
}

/// An open checkpoint store.
///
/// Opened once (the daemon does it at startup, after taking the socket lock) and kept:
/// the directory handle is held for the store's lifetime, so a later rename or
/// symlink swap of any path component cannot redirect it.
pub struct Store {
    pub(crate) dir: DirHandle,
    pub(crate) uid: u64,
    /// The socket checkpoints must name; `None` for an offline view that checks
    /// neither socket nor uid inside the files.
    pub(crate) socket: Option<String>,
    pub(crate) config: StoreConfig,
    pub(crate) io: Box<dyn Io>,
    /// Verdicts of final files by id, reused while the file's fingerprint is unchanged.
    pub(crate) cache: HashMap<String, CacheEntry>,
    /// Checkpoints renamed into place whose directory fsync failed: they must not
    /// displace a durable one in count pruning until a later directory fsync succeeds.
    pub(crate) unconfirmed: HashSet<String>,
    pub(crate) health: Health,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("uid", &self.uid)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Store {
    /// Opens the daemon's store for `location`, creating missing directories 0700.
    ///
    /// The state home itself (`$XDG_STATE_HOME` or `$HOME/.local/state`) is the
    /// user's own directory: it is created if missing (0700) and may be reached
    /// through symlinks. Below it, `venomx/` must be an owned directory nobody else
    /// can write, and `recovery/` and the store directory must be owned by `uid` with
    /// no group or other bits; each is opened no-follow relative to its parent's handle.
    pub fn open(location: &StoreLocation, uid: u64, config: StoreConfig) -> Result<Store> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(&location.state_home)
            .map_err(|_| StoreError::io("cannot create the state home directory"))?;
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        let home = openat(None, &location.state_home, flags, Mode::empty())
            .map_err(|e| StoreError::os("open of the state home directory", e))?;
        let home = DirHandle::from_raw(home);
        let venomx = home.open_subdir(STORE_SUBDIRS[0], uid, DirRule::OwnedNotWritable, true)?;
        let recovery = venomx.open_subdir(STORE_SUBDIRS[1], uid, DirRule::Private, true)?;
        let dir = recovery.open_subdir(&location.key, uid, DirRule::Private, true)?;
        Ok(Store::with_dir(
            dir,
            uid,
            Some(location.socket.clone()),
            config,
        ))
    }

    /// Opens an existing store directory by path, for offline tools such as
    /// `vxcert store list`. Nothing is created. The directory must be owned by `uid`
    /// with no group or other bits, and is not followed if it is a symlink. With
    /// `socket`, files must name that socket and `uid`; without, neither is checked.
    pub fn open_dir(
        path: &Path,
        uid: u64,
        socket: Option<String>,
        config: StoreConfig,
    ) -> Result<Store> {
        let dir = DirHandle::open_private(path, uid)?;
        Ok(Store::with_dir(dir, uid, socket, config))
    }

    fn with_dir(dir: DirHandle, uid: u64, socket: Option<String>, config: StoreConfig) -> Store {
        Store {
            dir,
            uid,
            socket,
            config,
            io: Box::new(SysIo),
            cache: HashMap::new(),
            unconfirmed: HashSet::new(),
            health: Health::default(),
        }
    }

    /// Replaces the mutating calls (the failure seam for tests).
    pub fn with_io(mut self, io: Box<dyn Io>) -> Store {
        self.io = io;
        self
    }

    /// Replaces the mutating calls of an open store, keeping its state.
    pub fn set_io(&mut self, io: Box<dyn Io>) {
        self.io = io;
    }

    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// Activates a new config. A reload first runs [`Store::prune_with`] and, for
    /// `.plain` → `.off`, [`Store::purge_text`] under the new config, and calls this
    /// only when they succeeded (RFC §2: activation has no fallible work left).
    pub fn set_config(&mut self, config: StoreConfig) {
        self.config = config;
    }

    pub fn uid(&self) -> u64 {
        self.uid
    }

    pub fn socket(&self) -> Option<&str> {
        self.socket.as_deref()
    }

    pub fn health(&self) -> &Health {
        &self.health
    }

    /// The held directory still is a private directory owned by the store's uid
    /// (doctor's "store safety"). Checks the handle, never a path.
    pub fn check_dir(&self) -> Result<()> {
        crate::safe_fs::check_dir(&self.dir.stat()?, self.uid, DirRule::Private)
            .map_err(|reason| StoreError::io(format!("unsafe store directory: {reason}")))
    }

    pub(crate) fn record_attempt(&mut self, now: Timestamp) {
        self.health.last_attempt = Some(now);
    }

    pub(crate) fn record_publish<T>(&mut self, now: Timestamp, result: &Result<T>) {
        match result {
            Ok(_) => {
                self.health.last_success = Some(now);
                self.health.last_error = None;
            }
            Err(e) => self.health.last_error = Some(e.clone()),
        }
    }

    pub(crate) fn record_cleanup(&mut self, error: Option<&StoreError>) {
        self.health.last_cleanup_error = error.cloned();
    }

    /// The directory fsync every mutation ends with. A success makes every earlier
    /// rename durable too, so unconfirmed checkpoints become ordinary ones.
    pub(crate) fn sync_dir(&mut self) -> Result<()> {
        let fd = self.dir.fd();
        match crate::io::retry_eintr(|| self.io.fsync_dir(fd)) {
            Ok(()) => {
                self.unconfirmed.clear();
                Ok(())
            }
            Err(e) => Err(StoreError::os(crate::io::Step::FsyncDir.describe(), e)),
        }
    }
}

/// Error codes are what doctor shows for the last failures.
impl Health {
    pub fn last_error_code(&self) -> Option<ErrorCode> {
        self.last_error.as_ref().map(|e| e.code)
    }
}

#[cfg(test)]
mod tests {
    /// The daemon moves its store to a recovery worker thread.
    #[test]
    fn store_is_send() {
        fn assert_send<T: Send>() {}
        assert_send::<super::Store>();
    }
}
