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

/// `open`-shaped hooks (path, flags, mode).
macro_rules! open_hooks {
    ($($sym:ident = $real:ident;)*) => {$(
        hook! {
            fn $sym(path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
            real $real;
            op Op::Open;
            |f| {
                open_like(stringify!($sym), AT_FDCWD, path, flags, mode, |_| {
                    i64::from(f(path, flags, mode))
                })
            }
        }
    )*};
}

/// `openat`-shaped hooks (dirfd, path, flags, mode).
macro_rules! openat_hooks {
    ($($sym:ident = $real:ident;)*) => {$(
        hook! {
            fn $sym(dirfd: c_int, path: *const c_char, flags: c_int, mode: c_uint) -> c_int;
            real $real;
            op Op::Open;
            |f| {
                open_like(stringify!($sym), dirfd, path, flags, mode, |_| {
                    i64::from(f(dirfd, path, flags, mode))
                })
            }
        }
    )*};
}

/// The fortified `__open*_2` hooks (no mode: they refuse O_CREAT).
macro_rules! open_2_hooks {
    ($($sym:ident = $real:ident;)*) => {$(
        hook! {
            fn $sym(path: *const c_char, flags: c_int) -> c_int;
            real $real;
            op Op::Open;
            |f| { open_like(stringify!($sym), AT_FDCWD, path, flags, 0, |_| i64::from(f(path, flags))) }
        }
    )*};
}

/// The fortified `__openat*_2` hooks.
macro_rules! openat_2_hooks {
    ($($sym:ident = $real:ident;)*) => {$(
        hook! {
            fn $sym(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
            real $real;
            op Op::Open;
            |f| {
                open_like(stringify!($sym), dirfd, path, flags, 0, |_| {
                    i64::from(f(dirfd, path, flags))
                })
            }
        }
    )*};
}

open_hooks! {
    open = Open;
    open64 = Open64;
}

openat_hooks! {
    openat = Openat;
    openat64 = Openat64;
}

open_2_hooks! {
    __open_2 = Open2;
    __open64_2 = Open64_2;
}

openat_2_hooks! {
    __openat_2 = Openat2;
    __openat64_2 = Openat64_2;
}

/// creat's flags, for the trace.
const CREAT_FLAGS: c_int = O_CREAT | O_WRONLY | O_TRUNC;

/// The creat hooks.
macro_rules! creat_hooks {
    ($($sym:ident = $real:ident;)*) => {$(
        hook! {
            fn $sym(path: *const c_char, mode: c_uint) -> c_int;
            real $real;
            op Op::Open;
            |f| {
                open_like(stringify!($sym), AT_FDCWD, path, CREAT_FLAGS, mode, |_| {
                    i64::from(f(path, mode))
                })
            }
        }
    )*};
}

creat_hooks! {
    creat = Creat;
    creat64 = Creat64;
}
