//! Held directory handles under a backend's root: every access is an `*at` call
//! relative to a handle, no component is ever followed as a symlink, and files are
//! judged (regular, one link) on the handle that is read. All calls go through glibc
//! (nix), so `libvxfault.so` sees them.
//!
//! vx-store's `safe_fs` handles check a private store (owner, no group/other bits);
//! a CLI's config dir is neither, so this keeps only the no-follow discipline and
//! reuses vx-store's fsync retry.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{open, openat, renameat, AtFlags, OFlag};
use nix::libc;
use nix::sys::stat::{fstat, fstatat, mkdirat, FileStat, Mode};
use nix::unistd::{unlinkat, UnlinkatFlags};
use vx_store::safe_fs::fsync_retrying;

use crate::error::{ErrorCode, PersistError, Result};
use crate::limits::{DIR_MODE, FILE_MODE};

const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// [`DIR_FLAGS`], or without `O_NOFOLLOW` under the negative control that follows
/// destination links (never in the reference).
fn dir_flags() -> OFlag {
    if crate::negative::active(crate::negative::Defect::FollowDestinationSymlink) {
        DIR_FLAGS.difference(OFlag::O_NOFOLLOW)
    } else {
        DIR_FLAGS
    }
}

/// What an entry is, judged without following it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EntryType {
    Regular {
        links: u64,
    },
    Directory,
    Symlink,
    /// FIFO, socket or device.
    Special,
}

pub(crate) fn entry_type(st: &FileStat) -> EntryType {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => EntryType::Regular { links: st.st_nlink },
        libc::S_IFDIR => EntryType::Directory,
        libc::S_IFLNK => EntryType::Symlink,
        _ => EntryType::Special,
    }
}

/// Opening a file to read: never through a final symlink, never blocking on a FIFO
/// or becoming a controlling terminal.
pub(crate) const READ_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_NONBLOCK)
    .union(OFlag::O_NOCTTY)
    .union(OFlag::O_CLOEXEC);

pub(crate) fn owned(fd: RawFd) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful open and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

pub(crate) fn unsafe_entry(reason: &'static str) -> PersistError {
    PersistError::rule(ErrorCode::SessionUnsafe, "pack.unsafe", reason)
}

#[derive(Debug)]
pub(crate) struct Dir {
    fd: OwnedFd,
}

impl Dir {
    fn raw(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Opens a root by path, its last component never followed. `create` makes a
    /// missing root (0700) whose parent exists. `None` when it is missing.
    pub(crate) fn open_root(path: &Path, create: bool) -> Result<Option<Dir>> {
        match open(path, dir_flags(), Mode::empty()) {
            Ok(fd) => Ok(Some(Dir { fd: owned(fd) })),
            Err(Errno::ENOENT) if create => {
                match nix::unistd::mkdir(path, Mode::from_bits_truncate(DIR_MODE)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(PersistError::os("mkdir of the root", e)),
                }
                Dir::open_root(path, false)
            }
            Err(Errno::ENOENT) => Ok(None),
            Err(Errno::ELOOP) => Err(PersistError::new(
                ErrorCode::PersistIo,
                "root is a symbolic link",
            )),
            Err(Errno::ENOTDIR) => Err(PersistError::new(
                ErrorCode::PersistIo,
                "root is not a directory",
            )),
            Err(e) => Err(PersistError::os("open of the root", e)),
        }
    }

    pub(crate) fn stat_entry(&self, name: &str) -> Result<Option<FileStat>> {
        match fstatat(Some(self.raw()), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(PersistError::os("stat of an entry under the root", e)),
        }
    }

    /// Opens an existing subdirectory without following it; a symlink or a
    /// non-directory in its place is `pack.unsafe`.
    pub(crate) fn open_child(&self, name: &str) -> Result<Option<Dir>> {
        match openat(Some(self.raw()), name, dir_flags(), Mode::empty()) {
            Ok(fd) => Ok(Some(Dir { fd: owned(fd) })),
            Err(Errno::ENOENT) => Ok(None),
            Err(Errno::ELOOP) => Err(unsafe_entry(
                "a directory of the session is a symbolic link",
            )),
            Err(Errno::ENOTDIR) => Err(unsafe_entry(
                "a directory of the session is not a directory",
            )),
            Err(e) => Err(PersistError::os("open of a directory under the root", e)),
        }
    }

    /// Opens `name`, creating it 0700 (and syncing this directory) when missing.
    pub(crate) fn open_or_make_child(&self, name: &str) -> Result<Dir> {
        if let Some(dir) = self.open_child(name)? {
            return Ok(dir);
        }
        match mkdirat(Some(self.raw()), name, Mode::from_bits_truncate(DIR_MODE)) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(e) => return Err(PersistError::os("mkdir under the root", e)),
        }
        self.fsync()?;
        self.open_child(name)?.ok_or(PersistError::new(
            ErrorCode::PersistIo,
            "a directory vanished after mkdir",
        ))
    }

    /// Entry names that are UTF-8, except `.` and `..` (a non-UTF-8 name is never a
    /// session file: layouts are UTF-8).
    pub(crate) fn names(&self) -> Result<Vec<String>> {
        let mut dir = nix::dir::Dir::openat(
            Some(self.raw()),
            ".",
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| PersistError::os("open of a directory for reading", e))?;
        let mut names = Vec::new();
        for entry in dir.iter() {
            let entry = entry.map_err(|e| PersistError::os("readdir under the root", e))?;
            if let Ok(name) = entry.file_name().to_str() {
                if name != "." && name != ".." {
                    names.push(name.to_owned());
                }
            }
        }
        names.sort();
        Ok(names)
    }

    /// Reads a session file: opened no-follow and non-blocking (a FIFO swapped in
    /// never blocks), judged regular with one link on the handle, at most `cap + 1`
    /// bytes read so a file over the cap is refused, never truncated.
    pub(crate) fn read_file(
        &self,
        name: &str,
        cap: u64,
        over: fn() -> PersistError,
    ) -> Result<Vec<u8>> {
        let fd = match openat(Some(self.raw()), name, READ_FLAGS, Mode::empty()) {
            Ok(fd) => owned(fd),
            Err(Errno::ELOOP) => return Err(unsafe_entry("a session file is a symbolic link")),
            Err(Errno::ENXIO) => return Err(unsafe_entry("a session file is a socket")),
            Err(e) => return Err(PersistError::os("open of a session file", e)),
        };
        let st =
            fstat(fd.as_raw_fd()).map_err(|e| PersistError::os("fstat of a session file", e))?;
        check_session_file(&st)?;
        if st.st_size.max(0) as u64 > cap {
            return Err(over());
        }
        let buf = read_capped(fd, st, cap)?;
        if buf.len() as u64 > cap {
            return Err(over());
        }
        Ok(buf)
    }

    /// Creates a new file `O_EXCL|O_NOFOLLOW`, mode 0600.
    pub(crate) fn create_exclusive(&self, name: &str) -> Result<OwnedFd> {
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        openat(
            Some(self.raw()),
            name,
            flags,
            Mode::from_bits_truncate(FILE_MODE),
        )
        .map(owned)
        .map_err(|e| PersistError::os("exclusive create of a file", e))
    }

    pub(crate) fn rename_to(&self, name: &str, to: &Dir, to_name: &str) -> Result<()> {
        retry(|| renameat(Some(self.raw()), name, Some(to.raw()), to_name))
            .map_err(|e| PersistError::os("rename into place", e))
    }

    pub(crate) fn unlink(&self, name: &str, dir: bool) -> Result<()> {
        let flag = if dir {
            UnlinkatFlags::RemoveDir
        } else {
            UnlinkatFlags::NoRemoveDir
        };
        match retry(|| unlinkat(Some(self.raw()), name, flag)) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(e) => Err(PersistError::os("unlink under the root", e)),
        }
    }

    pub(crate) fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    pub(crate) fn stat(&self) -> Result<FileStat> {
        fstat(self.raw()).map_err(|e| PersistError::os("fstat of a directory", e))
    }

    pub(crate) fn fsync(&self) -> Result<()> {
        if crate::negative::active(crate::negative::Defect::NoFsync) {
            return Ok(());
        }
        fsync_retrying(self.fd.as_fd()).map_err(|e| PersistError::os("fsync of a directory", e))
    }
}

/// Reads at most `cap + 1` bytes from an opened, already judged file (vx-store's
/// bounded reader), so growth past the cap shows instead of being cut off.
pub(crate) fn read_capped(fd: OwnedFd, stat: FileStat, cap: u64) -> Result<Vec<u8>> {
    vx_store::safe_fs::CheckedFile { fd, stat }
        .read_all(cap)
        .map_err(|_| PersistError::new(ErrorCode::PersistIo, "read of a file failed"))
}

pub(crate) fn over_cap() -> PersistError {
    PersistError::rule(
        ErrorCode::SessionSize,
        "pack.caps",
        "session exceeds a cap (never truncated)",
    )
}

/// A session file is a regular file with exactly one link.
pub(crate) fn check_session_file(st: &FileStat) -> Result<()> {
    match entry_type(st) {
        EntryType::Regular { links: 1 } => Ok(()),
        EntryType::Regular { .. } => Err(unsafe_entry("a session file is a hard link")),
        EntryType::Directory => Err(unsafe_entry("a session file is a directory")),
        EntryType::Symlink => Err(unsafe_entry("a session file is a symbolic link")),
        EntryType::Special => Err(unsafe_entry("a session file is a FIFO, socket or device")),
    }
}

pub(crate) fn retry<T>(mut f: impl FnMut() -> nix::Result<T>) -> nix::Result<T> {
    loop {
        match f() {
            Err(Errno::EINTR) => continue,
            other => return other,
        }
    }
}

/// Writes all of `bytes`, fsyncs and closes the file; a write making no progress is
/// an error, never a silent truncation.
pub(crate) fn write_sync_close(fd: OwnedFd, bytes: &[u8]) -> Result<()> {
    write_all(&fd, bytes)?;
    sync_close(fd)
}

/// Writes all of `bytes` and asks the kernel to start writing them back now, so the
/// fsync that follows (after the other members are written) mostly finds them on disk
/// already. A file system without the call (ENOSYS, EINVAL) only loses the overlap;
/// any other error (EIO) fails the write, as its fsync would.
pub(crate) fn write_start_writeback(fd: &OwnedFd, bytes: &[u8]) -> Result<()> {
    write_all(fd, bytes)?;
    if crate::negative::active(crate::negative::Defect::NoFsync) {
        return Ok(());
    }
    // SAFETY: `fd` is an open descriptor owned by the caller for the whole call, and
    // sync_file_range reads no memory of ours.
    let rc = unsafe { libc::sync_file_range(fd.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
    match Errno::result(rc) {
        Ok(_) | Err(Errno::ENOSYS | Errno::EINVAL | Errno::ESPIPE) => Ok(()),
        Err(e) => Err(PersistError::os("writeback of a file", e)),
    }
}

/// fsync, then close (both errors reported).
pub(crate) fn sync_close(fd: OwnedFd) -> Result<()> {
    if !crate::negative::active(crate::negative::Defect::NoFsync) {
        fsync_retrying(fd.as_fd()).map_err(|e| PersistError::os("fsync of a file", e))?;
    }
    let raw = std::os::fd::IntoRawFd::into_raw_fd(fd);
    nix::unistd::close(raw).map_err(|e| PersistError::os("close of a file", e))
}

fn write_all(fd: &OwnedFd, bytes: &[u8]) -> Result<()> {
    let mut offset = 0;
    while offset < bytes.len() {
        match nix::unistd::write(fd.as_fd(), &bytes[offset..]) {
            Ok(0) => return Err(PersistError::os("write of a file", Errno::EIO)),
            Ok(n) => offset += n,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(PersistError::os("write of a file", e)),
        }
    }
    Ok(())
}
