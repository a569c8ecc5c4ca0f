//! Safe access to the private store: held directory handles, no-follow `*at` calls,
//! and checks of type, owner, mode, link count and size on the opened handle.
//!
//! Every call goes through glibc (nix), so an `LD_PRELOAD` fault injector sees it.
//! Nothing here chmods, chowns or otherwise "repairs" what it finds.

use std::ffi::OsStr;
use std::fmt;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::libc;
use nix::sys::stat::{fstat, fstatat, mkdirat, FileStat, Mode};

use crate::error::{Result, StoreError};

/// Mode of every directory the store creates.
pub const DIR_MODE: u32 = 0o700;
/// Mode of every file the store creates.
pub const FILE_MODE: u32 = 0o600;
/// Group and other permission bits: any of them makes a store object unsafe.
const GROUP_OTHER_BITS: u32 = 0o077;
/// Group/other write: lets someone else swap our subdirectory.
const GROUP_OTHER_WRITE: u32 = 0o022;

/// Why a filesystem object is not a safe store object. Closed and content-free, so
/// it can go into diagnostics and doctor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnsafeReason {
    Symlink,
    /// A regular file with more than one link.
    HardLink,
    Fifo,
    Socket,
    Directory,
    Device,
    /// A directory where the store expects a regular file, or the reverse.
    WrongType,
    OtherOwner,
    /// Group or other permission bits set.
    PermissiveMode,
    /// The object refused to open for a reason other than absence.
    Unopenable,
}

impl UnsafeReason {
    pub fn as_str(self) -> &'static str {
        match self {
            UnsafeReason::Symlink => "symbolic link",
            UnsafeReason::HardLink => "hard link (link count is not 1)",
            UnsafeReason::Fifo => "FIFO",
            UnsafeReason::Socket => "socket",
            UnsafeReason::Directory => "directory in a file's place",
            UnsafeReason::Device => "device node",
            UnsafeReason::WrongType => "not a directory",
            UnsafeReason::OtherOwner => "owned by another user",
            UnsafeReason::PermissiveMode => "group or other permission bits set",
            UnsafeReason::Unopenable => "cannot be opened",
        }
    }
}

impl fmt::Display for UnsafeReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn file_type_reason(mode: u32) -> Option<UnsafeReason> {
    match mode & libc::S_IFMT {
        libc::S_IFREG => None,
        libc::S_IFLNK => Some(UnsafeReason::Symlink),
        libc::S_IFIFO => Some(UnsafeReason::Fifo),
        libc::S_IFSOCK => Some(UnsafeReason::Socket),
        libc::S_IFDIR => Some(UnsafeReason::Directory),
        _ => Some(UnsafeReason::Device),
    }
}

/// The checks of a store file: regular, owned by `uid`, one link, no group/other bits.
pub fn check_file(st: &FileStat, uid: u64) -> std::result::Result<(), UnsafeReason> {
    if let Some(reason) = file_type_reason(st.st_mode) {
        return Err(reason);
    }
    if u64::from(st.st_uid) != uid {
        return Err(UnsafeReason::OtherOwner);
    }
    if st.st_nlink != 1 {
        return Err(UnsafeReason::HardLink);
    }
    if st.st_mode & GROUP_OTHER_BITS != 0 {
        return Err(UnsafeReason::PermissiveMode);
    }
    Ok(())
}

/// How strictly a directory of the chain is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirRule {
    /// `recovery/` and the store itself: owner and no group/other bits at all.
    Private,
    /// `venomx/`, which other venomx state may share: owner and no group/other write,
    /// so nobody else can replace the private directory inside it.
    OwnedNotWritable,
}

pub fn check_dir(st: &FileStat, uid: u64, rule: DirRule) -> std::result::Result<(), UnsafeReason> {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFDIR => {}
        libc::S_IFLNK => return Err(UnsafeReason::Symlink),
        _ => return Err(UnsafeReason::WrongType),
    }
    if u64::from(st.st_uid) != uid {
        return Err(UnsafeReason::OtherOwner);
    }
    let forbidden = match rule {
        DirRule::Private => GROUP_OTHER_BITS,
        DirRule::OwnedNotWritable => GROUP_OTHER_WRITE,
    };
    if st.st_mode & forbidden != 0 {
        return Err(UnsafeReason::PermissiveMode);
    }
    Ok(())
}

/// What identifies one version of a directory entry: the inode and its change times.
/// ctime moves on every content, mode, owner and link-count change, so an unchanged
/// fingerprint means an unchanged file (for a cache of verdicts, never for a read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

impl Fingerprint {
    pub fn of(st: &FileStat) -> Self {
        Fingerprint {
            dev: st.st_dev,
            ino: st.st_ino,
            size: st.st_size.max(0) as u64,
            mtime: (st.st_mtime, st.st_mtime_nsec),
            ctime: (st.st_ctime, st.st_ctime_nsec),
        }
    }
}

/// A held directory handle. Every store access is relative to one of these.
#[derive(Debug)]
pub struct DirHandle {
    fd: OwnedFd,
}

impl DirHandle {
    /// Wraps a directory descriptor this process just opened.
    pub(crate) fn from_raw(fd: i32) -> DirHandle {
        DirHandle { fd: owned(fd) }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    fn raw(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// The directory's current stat, through the handle.
    pub fn stat(&self) -> Result<FileStat> {
        fstat(self.raw()).map_err(|e| StoreError::os("fstat of the store directory", e))
    }

    /// Opens an existing directory by absolute path, the last component not followed,
    /// and checks it is a private directory owned by `uid`.
    pub fn open_private(path: &Path, uid: u64) -> Result<DirHandle> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let handle = match openat(None, path, flags, Mode::empty()) {
            Ok(fd) => DirHandle { fd: owned(fd) },
            Err(Errno::ENOENT) => return Err(StoreError::io("store directory does not exist")),
            Err(Errno::ELOOP) => return Err(unsafe_dir(UnsafeReason::Symlink)),
            Err(Errno::ENOTDIR) => return Err(unsafe_dir(UnsafeReason::WrongType)),
            Err(e) => return Err(StoreError::os("open of the store directory", e)),
        };
        check_dir(&handle.stat()?, uid, DirRule::Private).map_err(unsafe_dir)?;
        Ok(handle)
    }

    /// Opens (creating 0700 when missing) `name` inside this directory, never
    /// following a symlink, and checks it by `rule` on the opened handle.
    pub fn open_subdir(
        &self,
        name: &str,
        uid: u64,
        rule: DirRule,
        create: bool,
    ) -> Result<DirHandle> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = match openat(Some(self.raw()), name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) if create => {
                match mkdirat(Some(self.raw()), name, Mode::from_bits_truncate(DIR_MODE)) {
                    // Another process of the same user created it first: check it as found.
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(StoreError::os("mkdir of a store directory", e)),
                }
                // The new entry must survive a crash before anything is written under it.
                fsync_retrying(self.fd()).map_err(|e| StoreError::os("fsync after mkdir", e))?;
                match openat(Some(self.raw()), name, flags, Mode::empty()) {
                    Ok(fd) => fd,
                    Err(e) => return Err(open_dir_error(e)),
                }
            }
            Err(e) => return Err(open_dir_error(e)),
        };
        let handle = DirHandle { fd: owned(fd) };
        check_dir(&handle.stat()?, uid, rule).map_err(unsafe_dir)?;
        Ok(handle)
    }

    /// The entry names in this directory, except `.` and `..`. Reads through a fresh
    /// open of `.` relative to the handle, so the held handle's offset is untouched.
    pub fn names(&self) -> Result<Vec<Vec<u8>>> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
        // O_NOATIME: under relatime every scan after a publish would dirty the
        // directory's inode, adding it to the journal commit of the next directory
        // fsync. Only the owner may ask for it; anyone else reads as before.
        let mut dir = match nix::dir::Dir::openat(
            Some(self.raw()),
            ".",
            flags | OFlag::O_NOATIME,
            Mode::empty(),
        ) {
            Err(Errno::EPERM) => nix::dir::Dir::openat(Some(self.raw()), ".", flags, Mode::empty()),
            other => other,
        }
        .map_err(|e| StoreError::os("open of the store directory for reading", e))?;
        let mut names = Vec::new();
        for entry in dir.iter() {
            let entry = entry.map_err(|e| StoreError::os("readdir of the store directory", e))?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(name.to_vec());
            }
        }
        Ok(names)
    }

    /// lstat-like stat of an entry, not following a symlink. `None` when absent.
    pub fn stat_entry(&self, name: &str) -> Result<Option<FileStat>> {
        match fstatat(Some(self.raw()), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(StoreError::os("stat of a store entry", e)),
        }
    }

    /// Opens a store file for reading and checks it on the opened handle.
    ///
    /// The entry is first stat'ed without following, so a FIFO, socket or device is
    /// never opened at all; the open itself is no-follow and non-blocking in case the
    /// entry was swapped in between, and the handle is checked again.
    pub fn open_file(&self, name: &str, uid: u64) -> Result<Opened> {
        let Some(st) = self.stat_entry(name)? else {
            return Ok(Opened::Missing);
        };
        if let Err(reason) = check_file(&st, uid) {
            return Ok(Opened::Unsafe(reason));
        }
        let flags = OFlag::O_RDONLY
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_NOCTTY
            | OFlag::O_CLOEXEC;
        let fd = match openat(Some(self.raw()), name, flags, Mode::empty()) {
            Ok(fd) => owned(fd),
            Err(Errno::ENOENT) => return Ok(Opened::Missing),
            Err(Errno::ELOOP) => return Ok(Opened::Unsafe(UnsafeReason::Symlink)),
            Err(Errno::ENXIO) => return Ok(Opened::Unsafe(UnsafeReason::Socket)),
            Err(Errno::EACCES | Errno::EPERM) => {
                return Ok(Opened::Unsafe(UnsafeReason::Unopenable))
            }
            Err(e) => return Err(StoreError::os("open of a checkpoint file", e)),
        };
        let st =
            fstat(fd.as_raw_fd()).map_err(|e| StoreError::os("fstat of a checkpoint file", e))?;
        if let Err(reason) = check_file(&st, uid) {
            return Ok(Opened::Unsafe(reason));
        }
        Ok(Opened::File(CheckedFile { fd, stat: st }))
    }
}

fn unsafe_dir(reason: UnsafeReason) -> StoreError {
    StoreError::io(format!("unsafe store directory: {reason}"))
}

fn open_dir_error(errno: Errno) -> StoreError {
    match errno {
        Errno::ELOOP => unsafe_dir(UnsafeReason::Symlink),
        Errno::ENOTDIR => unsafe_dir(UnsafeReason::WrongType),
        e => StoreError::os("open of a store directory", e),
    }
}

fn owned(fd: i32) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful open and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// fsync through glibc, retrying an interrupted call.
pub fn fsync_retrying(fd: BorrowedFd<'_>) -> nix::Result<()> {
    loop {
        match nix::unistd::fsync(fd.as_raw_fd()) {
            Err(Errno::EINTR) => continue,
            other => return other,
        }
    }
}

/// The result of opening a store file.
#[derive(Debug)]
pub enum Opened {
    Missing,
    Unsafe(UnsafeReason),
    File(CheckedFile),
}

/// An opened store file that passed the checks; its `stat` is the handle's own.
#[derive(Debug)]
pub struct CheckedFile {
    pub fd: OwnedFd,
    pub stat: FileStat,
}

impl CheckedFile {
    pub fn size(&self) -> u64 {
        self.stat.st_size.max(0) as u64
    }

    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of(&self.stat)
    }

    /// Reads the whole file from this handle. At most `limit + 1` bytes are read, so
    /// a file that grew past the limit since fstat shows as too long, never as a
    /// silent truncation.
    pub fn read_all(&self, limit: u64) -> Result<Vec<u8>> {
        let cap = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
        let mut buf = Vec::with_capacity(usize::try_from(self.size()).unwrap_or(0).min(cap));
        let mut chunk = [0u8; 64 * 1024];
        while buf.len() < cap {
            let want = chunk.len().min(cap - buf.len());
            match nix::unistd::read(self.fd.as_raw_fd(), &mut chunk[..want]) {
                Ok(0) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(StoreError::os("read of a checkpoint file", e)),
            }
        }
        Ok(buf)
    }
}

/// A name read from the directory as UTF-8, when it is.
pub fn utf8_name(name: &[u8]) -> Option<&str> {
    std::str::from_utf8(name).ok()
}

/// A printable form of a raw name for diagnostics of tools (never for wire errors).
pub fn display_name(name: &[u8]) -> String {
    OsStr::from_bytes(name).to_string_lossy().into_owned()
}
