//! The per-key single-writer lock (docs/spec/single-writer.md "The lock").
//!
//! `<lock_dir>/<physical>.lock`, mode 0600, held with `flock(LOCK_EX|LOCK_NB)` for
//! the life of the agent: the launcher passes the descriptor to the master and then
//! [`SessionLock::transfer`]s (closes without `LOCK_UN`), so the flock lives on the
//! shared open file description until the master's last copy closes. Every call goes
//! through glibc (nix) so the fault injector sees it.

use std::ffi::OsStr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{openat, FlockArg, OFlag};
use nix::sys::stat::{fstat, Mode};
use vx_store::safe_fs::{check_dir, DirRule};
use vx_store::UnsafeReason;

use crate::error::{BrokerError, Result, Rule};
use crate::key::SessionKey;
use crate::limits::{FLOCK_EINTR_RETRIES, LOCK_DIR_MODE, LOCK_FILE_MODE};

/// The environment variable naming the lock directory.
pub const LOCK_DIR_ENV: &str = "VXBROKER_LOCK_DIR";

/// The lock directory: `--lock-dir`, else `$VXBROKER_LOCK_DIR`, else
/// `$XDG_STATE_HOME/venomx/broker/locks` (XDG fallback `$HOME/.local/state`). Empty
/// values count as unset; a relative path is refused rather than resolved against
/// whatever the working directory happens to be.
pub fn resolve_lock_dir(
    flag: Option<&OsStr>,
    env: Option<&OsStr>,
    xdg_state_home: Option<&OsStr>,
    home: Option<&OsStr>,
) -> Result<PathBuf> {
    let chosen = flag.or(env).filter(|v| !v.is_empty());
    let path = match chosen {
        Some(p) => PathBuf::from(p),
        None => vx_store::state_home(xdg_state_home, home)
            .map_err(|_| BrokerError::new(Rule::LockDirUnset))?
            .join("venomx")
            .join("broker")
            .join("locks"),
    };
    if !path.is_absolute() {
        return Err(Rule::LockDirRelative.into());
    }
    Ok(path)
}

/// [`resolve_lock_dir`] from this process's environment.
pub fn lock_dir_from_env(flag: Option<&Path>) -> Result<PathBuf> {
    resolve_lock_dir(
        flag.map(Path::as_os_str),
        std::env::var_os(LOCK_DIR_ENV).as_deref(),
        std::env::var_os("XDG_STATE_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

fn owned(fd: i32) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful open and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn dir_rule(reason: UnsafeReason) -> Rule {
    match reason {
        UnsafeReason::Symlink => Rule::LockDirSymlink,
        UnsafeReason::OtherOwner => Rule::LockDirForeignOwner,
        UnsafeReason::PermissiveMode => Rule::LockDirWritable,
        UnsafeReason::WrongType | UnsafeReason::Directory => Rule::LockDirNotDir,
        _ => Rule::LockDirIo,
    }
}

/// A held handle on a checked lock directory; every lock file is opened relative to
/// it, so the directory checked is the directory used.
#[derive(Debug)]
pub struct LockDir {
    fd: OwnedFd,
    uid: u64,
}

/// The outcome of one acquire.
#[derive(Debug)]
pub enum Acquired {
    /// This process is now the key's sole writer.
    Won(SessionLock),
    /// Another open file description holds it: BUSY, launch nothing.
    Held,
}

impl LockDir {
    /// Opens `path` (creating it, and missing parents, 0700), refusing a symlink in
    /// its place, a non-directory, a directory owned by another uid than `uid`, or one
    /// that group or other may write (a writable shared directory lets anyone hold
    /// every key, or swap lock files under a holder).
    pub fn open(path: &Path, uid: u64) -> Result<LockDir> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let open = || openat(None, path, flags, Mode::empty());
        let fd = match open() {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(LOCK_DIR_MODE)
                    .create(path)
                    .map_err(|_| BrokerError::new(Rule::LockDirIo))?;
                open().map_err(|e| open_error(path, e))?
            }
            Err(e) => return Err(open_error(path, e)),
        };
        let fd = owned(fd);
        let st = fstat(fd.as_raw_fd()).map_err(|_| BrokerError::new(Rule::LockDirIo))?;
        check_dir(&st, uid, DirRule::OwnedNotWritable)
            .map_err(|r| BrokerError::new(dir_rule(r)))?;
        Ok(LockDir { fd, uid })
    }

    /// Tries to become `key`'s sole writer, without blocking.
    pub fn acquire(&self, key: &SessionKey) -> Result<Acquired> {
        let name = format!("{}.lock", key.lock_stem());
        let flags = OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
        let flags = if crate::negative::is(crate::negative::Defect::InheritLock) {
            flags - OFlag::O_CLOEXEC
        } else {
            flags
        };
        let fd = openat(
            Some(self.fd.as_raw_fd()),
            name.as_str(),
            flags,
            Mode::from_bits_truncate(LOCK_FILE_MODE),
        )
        .map_err(|_| BrokerError::new(Rule::LockOpen))?;
        let fd = owned(fd);
        let st = fstat(fd.as_raw_fd()).map_err(|_| BrokerError::new(Rule::LockOpen))?;
        if st.st_mode & nix::libc::S_IFMT != nix::libc::S_IFREG || u64::from(st.st_uid) != self.uid
        {
            return Err(Rule::LockFileUnsafe.into());
        }
        let mut retries = 0;
        loop {
            match flock(fd.as_fd(), FlockArg::LockExclusiveNonblock) {
                Ok(()) => return Ok(Acquired::Won(SessionLock { fd })),
                Err(Errno::EWOULDBLOCK) => return Ok(Acquired::Held),
                Err(Errno::EINTR) if retries < FLOCK_EINTR_RETRIES => retries += 1,
                Err(Errno::EINTR) => return Err(Rule::LockInterrupted.into()),
                // EACCES included: flock(2) never means "held" by it (the peer
                // reads it as held, which would turn an I/O fault into BUSY forever).
                Err(_) => return Err(Rule::LockFlock.into()),
            }
        }
    }

    /// Whether someone holds `key` (acquires and releases; never during an open in
    /// flight of the same key, or it would race that open).
    pub fn is_held(&self, key: &SessionKey) -> Result<bool> {
        match self.acquire(key)? {
            Acquired::Won(lock) => {
                lock.release()?;
                Ok(false)
            }
            Acquired::Held => Ok(true),
        }
    }
}

/// O_DIRECTORY wins over O_NOFOLLOW, so a symlink in the last component fails as
/// ENOTDIR; lstat tells the two apart.
fn open_error(path: &Path, e: Errno) -> BrokerError {
    let is_symlink = || {
        nix::sys::stat::lstat(path)
            .is_ok_and(|st| st.st_mode & nix::libc::S_IFMT == nix::libc::S_IFLNK)
    };
    BrokerError::new(match e {
        Errno::ELOOP => Rule::LockDirSymlink,
        Errno::ENOTDIR if is_symlink() => Rule::LockDirSymlink,
        Errno::ENOTDIR => Rule::LockDirNotDir,
        _ => Rule::LockDirIo,
    })
}

/// `flock` on a descriptor. nix's `Flock` wrapper unlocks on drop, which is exactly
/// what the handoff must never do, so the plain call is used.
fn flock(fd: BorrowedFd<'_>, arg: FlockArg) -> nix::Result<()> {
    #[allow(deprecated)]
    nix::fcntl::flock(fd.as_raw_fd(), arg)
}

/// The master's inherited lock descriptor number (`master --lock-fd 3`).
pub const MASTER_LOCK_FD: i32 = 3;

/// Between fork and exec: puts the lock's open description at descriptor 3 without
/// close-on-exec, so the exec'd master inherits it. When `fd` already is 3, `dup2`
/// onto itself would keep close-on-exec (and the master would start without its
/// lock), so the flag is cleared instead. Only async-signal-safe calls (`dup2`,
/// `fcntl`), for `CommandExt::pre_exec`.
pub fn inherit_at_master_fd(fd: std::os::fd::RawFd) -> std::io::Result<()> {
    if fd == MASTER_LOCK_FD {
        nix::fcntl::fcntl(
            MASTER_LOCK_FD,
            nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
        )
        .map_err(std::io::Error::from)?;
    } else {
        nix::unistd::dup2(fd, MASTER_LOCK_FD).map_err(std::io::Error::from)?;
    }
    Ok(())
}

/// A won lock. Dropping it is [`SessionLock::transfer`]: the descriptor closes
/// without `LOCK_UN`, so the flock stays with any process that inherited it and is
/// freed at once when none did (a launch that failed before the master existed).
#[derive(Debug)]
pub struct SessionLock {
    fd: OwnedFd,
}

impl SessionLock {
    /// The descriptor to hand to the master (it is close-on-exec here; the spawner
    /// duplicates it into the child).
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// After the master inherited the descriptor: close ours, never `LOCK_UN`
    /// (`LOCK_UN` would unlock the shared open file description, the master's too).
    pub fn transfer(self) {
        drop(self.fd);
    }

    /// Only where no master serves the key: the lost race (a master appeared
    /// between probe and acquire) and a launch that failed before its master was
    /// ready. Unlock, then close.
    pub fn release(self) -> Result<()> {
        let unlocked = flock(self.fd.as_fd(), FlockArg::Unlock);
        drop(self.fd);
        unlocked.map_err(|_| BrokerError::new(Rule::LockFlock))
    }
}
