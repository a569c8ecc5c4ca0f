//! The `open` family: open, open64, openat, openat64, the fortified `__open*_2` forms,
//! creat, creat64. The fd an open returns is cached with its path.

use core::ffi::{c_char, c_int, c_uint};

use plan::Op;
use vxfault_plan as plan;

use crate::call::{run, Call, Detail, Target};
use crate::paths::cache_opened;
use crate::sys::{AT_FDCWD, O_CREAT, O_TRUNC, O_WRONLY};

/// The slow path of every open hook.
///
/// # Safety
/// `path` is null or NUL-terminated; `real` makes the intercepted open.
unsafe fn open_like(
    name: &'static str,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
    real: impl FnMut(usize) -> i64,
) -> c_int {
    let mut c =
        Call::new(Op::Open, name, Target::At(dirfd, path)).with_detail(Detail::open(flags, mode));
    // SAFETY: the caller's guarantees.
    let fd = unsafe { run(&mut c, 0, 0, real) } as c_int;
    cache_opened(fd);
    fd
}

hook! {
    fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
    real Open;
    op Op::Open;
    |f| { open_like("open", AT_FDCWD, path, flags, mode, |_| i64::from(f(path, flags, mode))) }
}

hook! {
    fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
    real Open64;
    op Op::Open;
    |f| { open_like("open64", AT_FDCWD, path, flags, mode, |_| i64::from(f(path, flags, mode))) }
}

hook! {
    fn openat(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
    real Openat;
    op Op::Open;
    |f| {
        open_like("openat", dirfd, path, flags, mode, |_| {
            i64::from(f(dirfd, path, flags, mode))
        })
    }
}

hook! {
    fn openat64(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
    real Openat64;
    op Op::Open;
    |f| {
        open_like("openat64", dirfd, path, flags, mode, |_| {
            i64::from(f(dirfd, path, flags, mode))
        })
    }
}

hook! {
    fn __open_2(path: *const c_char, flags: c_int) -> c_int;
    real Open2;
    op Op::Open;
    |f| { open_like("__open_2", AT_FDCWD, path, flags, 0, |_| i64::from(f(path, flags))) }
}

hook! {
    fn __open64_2(path: *const c_char, flags: c_int) -> c_int;
    real Open64_2;
    op Op::Open;
    |f| { open_like("__open64_2", AT_FDCWD, path, flags, 0, |_| i64::from(f(path, flags))) }
}

hook! {
    fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
    real Openat2;
    op Op::Open;
    |f| { open_like("__openat_2", dirfd, path, flags, 0, |_| i64::from(f(dirfd, path, flags))) }
}

hook! {
    fn __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
    real Openat64_2;
    op Op::Open;
    |f| {
        open_like("__openat64_2", dirfd, path, flags, 0, |_| {
            i64::from(f(dirfd, path, flags))
        })
    }
}

/// creat's flags, for the trace.
const CREAT_FLAGS: c_int = O_CREAT | O_WRONLY | O_TRUNC;

hook! {
    fn creat(path: *const c_char, mode: c_uint) -> c_int;
    real Creat;
    op Op::Open;
    |f| { open_like("creat", AT_FDCWD, path, CREAT_FLAGS, mode, |_| i64::from(f(path, mode))) }
}

hook! {
    fn creat64(path: *const c_char, mode: c_uint) -> c_int;
    real Creat64;
    op Op::Open;
    |f| { open_like("creat64", AT_FDCWD, path, CREAT_FLAGS, mode, |_| i64::from(f(path, mode))) }
}
