//! Calls that change what a reader sees of a file other than its bytes and names:
//! new nodes (mknod, mknodat, mkfifo, mkfifoat: the `mkdir` family, as symlinks are
//! `link`'s), truncate on a path (the `ftruncate` family), permission bits (chmod,
//! fchmod, fchmodat, lchmod: `chmod`) and timestamps (utimensat, futimens, utimes,
//! lutimes, futimes, futimesat, utime: `utimens`). glibc makes mkfifo, chmod and the
//! timestamp calls without going through its own exported symbols, so each is hooked
//! by name.

use core::ffi::{c_char, c_int, c_uint, c_void};

use plan::attrs::{mtime_of, times_size, Times, AT_SYMLINK_NOFOLLOW};
use plan::Op;
use vxfault_plan as plan;

use crate::call::{run, Call, Detail, Target};
use crate::sys::AT_FDCWD;

const S_IFIFO: c_uint = 0o010000;

/// The detail of a timestamp call whose times are at `times` in `layout`.
///
/// # Safety
/// `times` is null or points to the readable times argument of that layout (what
/// the call itself reads).
unsafe fn times_detail(times: *const c_void, layout: Times, nofollow: bool) -> Detail {
    let raw = (!times.is_null()).then(|| {
        // SAFETY: the caller's guarantee.
        unsafe { core::slice::from_raw_parts(times.cast::<u8>(), times_size(layout)) }
    });
    Detail::Times {
        mtime: mtime_of(layout, raw),
        nofollow,
    }
}

hook! {
    fn truncate(path: *const c_char, len: i64) -> c_int;
    real Truncate;
    op Op::Ftruncate;
    |f| {
        let mut c = Call::new(Op::Ftruncate, "truncate", Target::At(AT_FDCWD, path))
            .with_detail(Detail::Range { mode: None, off: 0, len });
        run(&mut c, 0, 0, |_| i64::from(f(path, len))) as c_int
    }
}

hook! {
    fn truncate64(path: *const c_char, len: i64) -> c_int;
    real Truncate64;
    op Op::Ftruncate;
    |f| {
        let mut c = Call::new(Op::Ftruncate, "truncate64", Target::At(AT_FDCWD, path))
            .with_detail(Detail::Range { mode: None, off: 0, len });
        run(&mut c, 0, 0, |_| i64::from(f(path, len))) as c_int
    }
}

hook! {
    fn mknod(path: *const c_char, mode: c_uint, dev: u64) -> c_int;
    real Mknod;
    op Op::Mkdir;
    |f| {
        let mut c = Call::new(Op::Mkdir, "mknod", Target::At(AT_FDCWD, path))
            .with_detail(Detail::Node(mode));
        run(&mut c, 0, 0, |_| i64::from(f(path, mode, dev))) as c_int
    }
}

hook! {
    fn mknodat(dirfd: c_int, path: *const c_char, mode: c_uint, dev: u64) -> c_int;
    real Mknodat;
    op Op::Mkdir;
    |f| {
        let mut c = Call::new(Op::Mkdir, "mknodat", Target::At(dirfd, path))
            .with_detail(Detail::Node(mode));
        run(&mut c, 0, 0, |_| i64::from(f(dirfd, path, mode, dev))) as c_int
    }
}

hook! {
    fn mkfifo(path: *const c_char, mode: c_uint) -> c_int;
    real Mkfifo;
    op Op::Mkdir;
    |f| {
        let mut c = Call::new(Op::Mkdir, "mkfifo", Target::At(AT_FDCWD, path))
            .with_detail(Detail::Node(S_IFIFO | (mode & 0o7777)));
        run(&mut c, 0, 0, |_| i64::from(f(path, mode))) as c_int
    }
}

hook! {
    fn mkfifoat(dirfd: c_int, path: *const c_char, mode: c_uint) -> c_int;
    real Mkfifoat;
    op Op::Mkdir;
    |f| {
        let mut c = Call::new(Op::Mkdir, "mkfifoat", Target::At(dirfd, path))
            .with_detail(Detail::Node(S_IFIFO | (mode & 0o7777)));
        run(&mut c, 0, 0, |_| i64::from(f(dirfd, path, mode))) as c_int
    }
}

hook! {
    fn chmod(path: *const c_char, mode: c_uint) -> c_int;
    real Chmod;
    op Op::Chmod;
    |f| {
        let mut c = Call::new(Op::Chmod, "chmod", Target::At(AT_FDCWD, path))
            .with_detail(Detail::Mode(mode & 0o7777));
        run(&mut c, 0, 0, |_| i64::from(f(path, mode))) as c_int
    }
}

hook! {
    fn lchmod(path: *const c_char, mode: c_uint) -> c_int;
    real Lchmod;
    op Op::Chmod;
    |f| {
        let mut c = Call::new(Op::Chmod, "lchmod", Target::At(AT_FDCWD, path))
            .with_detail(Detail::Mode(mode & 0o7777));
        run(&mut c, 0, 0, |_| i64::from(f(path, mode))) as c_int
    }
}

hook! {
    fn fchmod(fd: c_int, mode: c_uint) -> c_int;
    real Fchmod;
    op Op::Chmod;
    |f| {
        let mut c = Call::new(Op::Chmod, "fchmod", Target::Fd(fd))
            .with_detail(Detail::Mode(mode & 0o7777));
        run(&mut c, 0, 0, |_| i64::from(f(fd, mode))) as c_int
    }
}

hook! {
    fn fchmodat(dirfd: c_int, path: *const c_char, mode: c_uint, flags: c_int) -> c_int;
    real Fchmodat;
    op Op::Chmod;
    |f| {
        let mut c = Call::new(Op::Chmod, "fchmodat", Target::At(dirfd, path))
            .with_detail(Detail::Mode(mode & 0o7777));
        run(&mut c, 0, 0, |_| i64::from(f(dirfd, path, mode, flags))) as c_int
    }
}

hook! {
    fn utimensat(dirfd: c_int, path: *const c_char, times: *const c_void, flags: c_int) -> c_int;
    real Utimensat;
    op Op::Utimens;
    |f| {
        let target = if path.is_null() {
            Target::Fd(dirfd)
        } else {
            Target::At(dirfd, path)
        };
        let d = times_detail(times, Times::Timespec, flags & AT_SYMLINK_NOFOLLOW != 0);
        let mut c = Call::new(Op::Utimens, "utimensat", target).with_detail(d);
        run(&mut c, 0, 0, |_| i64::from(f(dirfd, path, times, flags))) as c_int
    }
}

hook! {
    fn futimens(fd: c_int, times: *const c_void) -> c_int;
    real Futimens;
    op Op::Utimens;
    |f| {
        let d = times_detail(times, Times::Timespec, false);
        let mut c = Call::new(Op::Utimens, "futimens", Target::Fd(fd)).with_detail(d);
        run(&mut c, 0, 0, |_| i64::from(f(fd, times))) as c_int
    }
}

hook! {
    fn utimes(path: *const c_char, times: *const c_void) -> c_int;
    real Utimes;
    op Op::Utimens;
    |f| {
        let d = times_detail(times, Times::Timeval, false);
        let mut c = Call::new(Op::Utimens, "utimes", Target::At(AT_FDCWD, path)).with_detail(d);
        run(&mut c, 0, 0, |_| i64::from(f(path, times))) as c_int
    }
}

hook! {
    fn lutimes(path: *const c_char, times: *const c_void) -> c_int;
    real Lutimes;
    op Op::Utimens;
    |f| {
        let d = times_detail(times, Times::Timeval, true);
        let mut c = Call::new(Op::Utimens, "lutimes", Target::At(AT_FDCWD, path)).with_detail(d);
        run(&mut c, 0, 0, |_| i64::from(f(path, times))) as c_int
    }
}

hook! {
    fn futimes(fd: c_int, times: *const c_void) -> c_int;
    real Futimes;
    op Op::Utimens;
    |f| {
        let d = times_detail(times, Times::Timeval, false);
        let mut c = Call::new(Op::Utimens, "futimes", Target::Fd(fd)).with_detail(d);
        run(&mut c, 0, 0, |_| i64::from(f(fd, times))) as c_int
    }
}

hook! {
    fn futimesat(dirfd: c_int, path: *const c_char, times: *const c_void) -> c_int;
    real Futimesat;
    op Op::Utimens;
    |f| {
        let target = if path.is_null() {
            Target::Fd(dirfd)
        } else {
            Target::At(dirfd, path)
        };
        let d = times_detail(times, Times::Timeval, false);
        let mut c = Call::new(Op::Utimens, "futimesat", target).with_detail(d);
        run(&mut c, 0, 0, |_| i64::from(f(dirfd, path, times))) as c_int
    }
}

hook! {
    fn utime(path: *const c_char, times: *const c_void) -> c_int;
    real Utime;
    op Op::Utimens;
    |f| {
        let d = times_detail(times, Times::Utimbuf, false);
        let mut c = Call::new(Op::Utimens, "utime", Target::At(AT_FDCWD, path)).with_detail(d);
        run(&mut c, 0, 0, |_| i64::from(f(path, times))) as c_int
    }
}
