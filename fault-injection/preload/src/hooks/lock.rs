//! The `flock` family: flock, and fcntl/fcntl64 with the lock commands. Every other
//! fcntl command is forwarded untouched and untraced (F_DUPFD only refreshes the fd
//! cache).

use core::ffi::{c_int, c_ulong};

use plan::Op;
use vxfault_plan as plan;

use crate::call::{run, Call, Detail, Target};
use crate::gate::active;
use crate::paths::{cache_clear, cache_on};
use crate::real::{enosys, real};
use crate::state::Guard;
use crate::sys::{F_DUPFD, F_DUPFD_CLOEXEC, F_OFD_SETLK, F_OFD_SETLKW, F_SETLK, F_SETLKW};

hook! {
    fn flock(fd: c_int, how: c_int) -> c_int;
    real Flock;
    op Op::Flock;
    |f| {
        let mut c = Call::new(Op::Flock, "flock", Target::Fd(fd)).with_detail(Detail::Flock(how));
        run(&mut c, 0, 0, |_| i64::from(f(fd, how))) as c_int
    }
}

pub fn is_lock_cmd(cmd: c_int) -> bool {
    matches!(cmd, F_SETLK | F_SETLKW | F_OFD_SETLK | F_OFD_SETLKW)
}

/// After `fcntl(F_DUPFD…)` returned `r`: like `dup`, the new number's slot is not this
/// fd's.
fn dupfd_aware(cmd: c_int, r: c_int) -> c_int {
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && r >= 0 && cache_on() {
        cache_clear(r);
    }
    r
}

/// The body of both fcntl hooks.
///
/// # Safety
/// As `fcntl(2)`: `arg` is what `cmd` requires (for a lock command, a `struct flock *`).
unsafe fn fcntl_like(
    name: &'static str,
    f: unsafe extern "C" fn(c_int, c_int, ...) -> c_int,
    fd: c_int,
    cmd: c_int,
    arg: c_ulong,
) -> c_int {
    if !is_lock_cmd(cmd) {
        // SAFETY: the caller's arguments, unchanged.
        return dupfd_aware(cmd, unsafe { f(fd, cmd, arg) });
    }
    if !active(Op::Flock) {
        // SAFETY: as above.
        return unsafe { f(fd, cmd, arg) };
    }
    let Some(_g) = Guard::enter() else {
        // SAFETY: as above.
        return unsafe { f(fd, cmd, arg) };
    };
    // SAFETY: a lock command's argument is a `struct flock *`.
    let detail = unsafe { Detail::fcntl(cmd, arg as usize) };
    let mut c = Call::new(Op::Flock, name, Target::Fd(fd)).with_detail(detail);
    // SAFETY: fd calls have no path pointers; the closure makes the caller's call.
    unsafe { run(&mut c, 0, 0, |_| i64::from(f(fd, cmd, arg))) as c_int }
}

/// `fcntl(2)`. Declared with one fixed `arg`: on x86_64 and aarch64 Linux a variadic
/// caller passes it where a fixed-parameter callee reads it (see docs/fault-injection.md).
///
/// # Safety
/// As `fcntl(2)`.
#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    let Some(f) = real!(Fcntl) else {
        return enosys();
    };
    // SAFETY: the caller's guarantee.
    unsafe { fcntl_like("fcntl", f, fd, cmd, arg) }
}

/// `fcntl64`, as [`fcntl`].
///
/// # Safety
/// As `fcntl(2)`.
#[no_mangle]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    let Some(f) = real!(Fcntl64) else {
        return enosys();
    };
    // SAFETY: the caller's guarantee.
    unsafe { fcntl_like("fcntl64", f, fd, cmd, arg) }
}
