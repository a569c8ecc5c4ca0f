//! The calls that change the store, behind one trait: the failure seam. `SysIo` makes
//! the real glibc calls; tests substitute an implementation that fails at a chosen
//! step, so every publish, prune and forget step can be failed in-process. (The
//! `libvxfault.so` injector fails the same calls from outside the process.)

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd};

use nix::errno::Errno;
use nix::fcntl::{openat, renameat2, AtFlags, OFlag, RenameFlags};
use nix::sys::stat::Mode;
use nix::unistd::{linkat, unlinkat, UnlinkatFlags};

/// One fallible step of a store mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// Exclusive creation of the `.tmp-<uuid>` file.
    CreateTemp,
    /// One `write` call (a publish makes as many as the kernel needs).
    Write,
    /// fsync of the temporary file.
    FsyncFile,
    /// close of the temporary file.
    Close,
    /// The no-replace rename of the temporary file to its final name.
    Rename,
    /// fsync of the store directory.
    FsyncDir,
    /// unlink of a store entry (failed temp file, forget, prune, purge, cleanup).
    Unlink,
}

impl Step {
    pub const ALL: [Step; 7] = [
        Step::CreateTemp,
        Step::Write,
        Step::FsyncFile,
        Step::Close,
        Step::Rename,
        Step::FsyncDir,
        Step::Unlink,
    ];

    /// A content-free description for error reasons.
    pub fn describe(self) -> &'static str {
        match self {
            Step::CreateTemp => "create of the temporary file",
            Step::Write => "write of the temporary file",
            Step::FsyncFile => "fsync of the temporary file",
            Step::Close => "close of the temporary file",
            Step::Rename => "rename to the final name",
            Step::FsyncDir => "fsync of the store directory",
            Step::Unlink => "unlink of a store entry",
        }
    }
}

/// The store's mutating calls. Each returns the OS result unchanged; retrying EINTR
/// and continuing short writes is the caller's job, so a test can return them.
pub trait Io: Send {
    /// `openat(dir, name, O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode)`.
    fn create_exclusive(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &str,
        mode: u32,
    ) -> nix::Result<OwnedFd>;
    fn write(&mut self, fd: BorrowedFd<'_>, buf: &[u8]) -> nix::Result<usize>;
    fn fsync_file(&mut self, fd: BorrowedFd<'_>) -> nix::Result<()>;
    /// close(2) with its error reported (dropping an `OwnedFd` ignores it).
    fn close(&mut self, fd: OwnedFd) -> nix::Result<()>;
    /// Renames `from` to `to` in `dir`, failing with `EEXIST` if `to` exists.
    fn rename_noreplace(&mut self, dir: BorrowedFd<'_>, from: &str, to: &str) -> nix::Result<()>;
    fn fsync_dir(&mut self, dir: BorrowedFd<'_>) -> nix::Result<()>;
    fn unlink(&mut self, dir: BorrowedFd<'_>, name: &str) -> nix::Result<()>;
}

/// The real calls, all through glibc.
#[derive(Clone, Copy, Debug, Default)]
pub struct SysIo;

impl Io for SysIo {
    fn create_exclusive(
        &mut self,
        dir: BorrowedFd<'_>,
        name: &str,
        mode: u32,
    ) -> nix::Result<OwnedFd> {
        let flags =
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(
            Some(dir.as_raw_fd()),
            name,
            flags,
            Mode::from_bits_truncate(mode),
        )?;
        // SAFETY: a fresh descriptor from a successful open, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    fn write(&mut self, fd: BorrowedFd<'_>, buf: &[u8]) -> nix::Result<usize> {
        nix::unistd::write(fd, buf)
    }

    fn fsync_file(&mut self, fd: BorrowedFd<'_>) -> nix::Result<()> {
        nix::unistd::fsync(fd.as_raw_fd())
    }

    fn close(&mut self, fd: OwnedFd) -> nix::Result<()> {
        // Even a failed close(2) releases the descriptor on Linux; never retry it.
        nix::unistd::close(fd.into_raw_fd())
    }

    fn rename_noreplace(&mut self, dir: BorrowedFd<'_>, from: &str, to: &str) -> nix::Result<()> {
        let raw = Some(dir.as_raw_fd());
        match renameat2(raw, from, raw, to, RenameFlags::RENAME_NOREPLACE) {
            // The filesystem or kernel lacks RENAME_NOREPLACE: link(2) never replaces
            // either. The final name briefly has two links; a reader meanwhile sees it
            // as unsafe, never as a different checkpoint.
            Err(Errno::EINVAL | Errno::ENOSYS) => {
                linkat(raw, from, raw, to, AtFlags::empty())?;
                unlinkat(raw, from, UnlinkatFlags::NoRemoveDir)
            }
            other => other,
        }
    }

    fn fsync_dir(&mut self, dir: BorrowedFd<'_>) -> nix::Result<()> {
        nix::unistd::fsync(dir.as_raw_fd())
    }

    fn unlink(&mut self, dir: BorrowedFd<'_>, name: &str) -> nix::Result<()> {
        unlinkat(Some(dir.as_raw_fd()), name, UnlinkatFlags::NoRemoveDir)
    }
}

/// Repeats a call interrupted by a signal (EINTR); any other result is final.
pub fn retry_eintr<T>(mut call: impl FnMut() -> nix::Result<T>) -> nix::Result<T> {
    loop {
        match call() {
            Err(Errno::EINTR) => continue,
            other => return other,
        }
    }
}
