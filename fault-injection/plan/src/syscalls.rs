//! The system calls of each plan family: the one table the seccomp backend builds its
//! filter from and decodes notifications with (and that docs/fault-injection.md
//! lists). Names, not numbers: the filter library resolves a name for the machine's
//! architecture, so one table serves x86_64 and aarch64 (where the legacy `open`,
//! `rename`, `unlink`, … do not exist and are skipped).

use crate::attrs::Times;
use crate::Op;

/// How a call's arguments are laid out (argument indices are 0-based).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Args {
    /// `fd, buf, len` (write) or `fd, buf, len, off` (pwrite64).
    Buf { off: bool },
    /// `fd, iov, cnt` (writev) or `fd, iov, cnt, off_lo, …` (pwritev, pwritev2).
    Iov { off: bool },
    /// `fd_in, off_in*, fd_out, off_out*, len, flags`: copy_file_range and splice; the
    /// call acts on `fd_out`.
    Range,
    /// `out_fd, in_fd, off*, count`.
    Sendfile,
    /// A path (from `dirfd` when `at`), then flags and mode where the call has them:
    /// `open(path, flags, mode)`, `openat(dirfd, path, flags, mode)`,
    /// `creat(path, mode)`.
    Open { at: bool, creat: bool },
    /// `openat2(dirfd, path, struct open_how *, size)`.
    Openat2,
    /// The call acts on the fd in argument 0 (close, fsync, flock, ftruncate, …).
    Fd,
    /// `fcntl(fd, cmd, arg)`: only the lock commands are in the family.
    FcntlLock,
    /// `close_range(first, last, flags)`.
    CloseRange,
    /// One path: `call(path, …)` or `call(dirfd, path, …)`.
    Path { at: bool },
    /// `unlinkat(dirfd, path, flags)`: `unlink` without `AT_REMOVEDIR`, `rmdir` with.
    Unlinkat,
    /// Two paths: `call(old, new)` or `call(olddir, old, newdir, new, …)`.
    Path2 { at: bool },
    /// `symlink(target, path)` / `symlinkat(target, dirfd, path)`: the target as
    /// written, the new name resolved.
    Symlink { at: bool },
    /// A timestamp call: `call(path, times)` or `call(dirfd, path, times, …)`; with
    /// `at`, a null path acts on `dirfd` itself (futimens is `utimensat(fd, NULL, …)`).
    Times { at: bool, times: Times },
}

/// One system call of a family.
#[derive(Clone, Copy, Debug)]
pub struct Syscall {
    pub name: &'static str,
    /// The families it belongs to (`unlinkat` is `unlink` or `rmdir` by its flags).
    pub ops: &'static [Op],
    pub args: Args,
}

const fn s(name: &'static str, ops: &'static [Op], args: Args) -> Syscall {
    Syscall { name, ops, args }
}

const WRITE: &[Op] = &[Op::Write];
const OPEN: &[Op] = &[Op::Open];
const CLOSE: &[Op] = &[Op::Close];
const FSYNC: &[Op] = &[Op::Fsync];
const FLOCK: &[Op] = &[Op::Flock];

/// Every system call of the fourteen families.
pub const SYSCALLS: &[Syscall] = &[
    s("write", WRITE, Args::Buf { off: false }),
    s("pwrite64", WRITE, Args::Buf { off: true }),
    s("writev", WRITE, Args::Iov { off: false }),
    s("pwritev", WRITE, Args::Iov { off: true }),
    s("pwritev2", WRITE, Args::Iov { off: true }),
    s("copy_file_range", WRITE, Args::Range),
    s("splice", WRITE, Args::Range),
    s("sendfile", WRITE, Args::Sendfile),
    s(
        "open",
        OPEN,
        Args::Open {
            at: false,
            creat: false,
        },
    ),
    s(
        "creat",
        OPEN,
        Args::Open {
            at: false,
            creat: true,
        },
    ),
    s(
        "openat",
        OPEN,
        Args::Open {
            at: true,
            creat: false,
        },
    ),
    s("openat2", OPEN, Args::Openat2),
    s("close", CLOSE, Args::Fd),
    s("close_range", CLOSE, Args::CloseRange),
    s("fsync", FSYNC, Args::Fd),
    s("fdatasync", FSYNC, Args::Fd),
    s("sync_file_range", FSYNC, Args::Fd),
    s("syncfs", FSYNC, Args::Fd),
    s("flock", FLOCK, Args::Fd),
    s("fcntl", FLOCK, Args::FcntlLock),
    s("ftruncate", &[Op::Ftruncate], Args::Fd),
    s("fallocate", &[Op::Fallocate], Args::Fd),
    s("rename", &[Op::Rename], Args::Path2 { at: false }),
    s("renameat", &[Op::Rename], Args::Path2 { at: true }),
    s("renameat2", &[Op::Rename], Args::Path2 { at: true }),
    s("unlink", &[Op::Unlink], Args::Path { at: false }),
    s("unlinkat", &[Op::Unlink, Op::Rmdir], Args::Unlinkat),
    s("rmdir", &[Op::Rmdir], Args::Path { at: false }),
    s("mkdir", &[Op::Mkdir], Args::Path { at: false }),
    s("mkdirat", &[Op::Mkdir], Args::Path { at: true }),
    s("link", &[Op::Link], Args::Path2 { at: false }),
    s("linkat", &[Op::Link], Args::Path2 { at: true }),
    s("symlink", &[Op::Link], Args::Symlink { at: false }),
    s("symlinkat", &[Op::Link], Args::Symlink { at: true }),
    // A new name that is not a directory, file or symlink (mkfifo is mknodat): the
    // `mkdir` family, as symlinks are `link`'s.
    s("mknod", &[Op::Mkdir], Args::Path { at: false }),
    s("mknodat", &[Op::Mkdir], Args::Path { at: true }),
    s("truncate", &[Op::Ftruncate], Args::Path { at: false }),
    s("chmod", &[Op::Chmod], Args::Path { at: false }),
    s("fchmod", &[Op::Chmod], Args::Fd),
    s("fchmodat", &[Op::Chmod], Args::Path { at: true }),
    s("fchmodat2", &[Op::Chmod], Args::Path { at: true }),
    s(
        "utimensat",
        &[Op::Utimens],
        Args::Times {
            at: true,
            times: Times::Timespec,
        },
    ),
    s(
        "futimesat",
        &[Op::Utimens],
        Args::Times {
            at: true,
            times: Times::Timeval,
        },
    ),
    s(
        "utimes",
        &[Op::Utimens],
        Args::Times {
            at: false,
            times: Times::Timeval,
        },
    ),
    s(
        "utime",
        &[Op::Utimens],
        Args::Times {
            at: false,
            times: Times::Utimbuf,
        },
    ),
];

/// The `fcntl` commands of the `flock` family: F_SETLK, F_SETLKW, F_OFD_SETLK,
/// F_OFD_SETLKW.
pub const FCNTL_LOCK_CMDS: [i32; 4] = [6, 7, 37, 38];
/// `unlinkat`'s flag that makes it an `rmdir`.
pub const AT_REMOVEDIR: i32 = 0x200;

/// The entry named `name`.
pub fn by_name(name: &str) -> Option<&'static Syscall> {
    SYSCALLS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ALL_OPS;

    #[test]
    fn every_family_has_calls_and_names_are_unique() {
        for op in ALL_OPS {
            assert!(
                SYSCALLS.iter().any(|s| s.ops.contains(&op)),
                "{} has no system call",
                op.name()
            );
        }
        for (i, a) in SYSCALLS.iter().enumerate() {
            assert!(
                SYSCALLS[i + 1..].iter().all(|b| b.name != a.name),
                "{} twice",
                a.name
            );
        }
        assert_eq!(by_name("renameat2").unwrap().ops, &[Op::Rename]);
        assert!(by_name("read").is_none());
    }
}
