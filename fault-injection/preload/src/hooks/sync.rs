//! fd calls with no byte count: the `fsync` family (fsync, fdatasync, sync_file_range,
//! syncfs), `ftruncate` (ftruncate, ftruncate64) and `fallocate` (fallocate,
//! fallocate64, posix_fallocate, posix_fallocate64).

use core::ffi::{c_int, c_uint};

use plan::Op;
use vxfault_plan as plan;

use crate::call::{run, Call, Detail, Target};
use crate::sys::{errno, set_errno, ENOSYS};

/// Defines hooks `fn NAME(fd, ARGS) -> c_int` of family OP whose original is `R::REAL`.
macro_rules! fd_hooks {
    ($($sym:ident = $real:ident, $op:expr, ($($a:ident: $t:ty),*) $(=> $detail:expr)?;)*) => {$(
        hook! {
            fn $sym(fd: c_int $(, $a: $t)*) -> c_int;
            real $real;
            op $op;
            |f| {
                let mut c = Call::new($op, stringify!($sym), Target::Fd(fd));
                $(c = c.with_detail($detail);)?
                run(&mut c, 0, 0, |_| i64::from(f(fd $(, $a)*))) as c_int
            }
        }
    )*};
}

fd_hooks! {
    fsync = Fsync, Op::Fsync, ();
    fdatasync = Fdatasync, Op::Fsync, ();
    sync_file_range = SyncFileRange, Op::Fsync, (off: i64, n: i64, flags: c_uint);
    syncfs = Syncfs, Op::Fsync, ();
    ftruncate = Ftruncate, Op::Ftruncate, (len: i64)
        => Detail::Range { mode: None, off: 0, len };
    ftruncate64 = Ftruncate64, Op::Ftruncate, (len: i64)
        => Detail::Range { mode: None, off: 0, len };
    fallocate = Fallocate, Op::Fallocate, (mode: c_int, off: i64, len: i64)
        => Detail::Range { mode: Some(mode), off, len };
    fallocate64 = Fallocate64, Op::Fallocate, (mode: c_int, off: i64, len: i64)
        => Detail::Range { mode: Some(mode), off, len };
}

/// posix_fallocate returns the error number instead of setting errno; the hook keeps
/// that convention (and the caller's errno).
///
/// # Safety
/// `f` is the original named `name`, called with the caller's arguments.
unsafe fn posix_fallocate_like(
    name: &'static str,
    f: unsafe extern "C" fn(c_int, i64, i64) -> c_int,
    fd: c_int,
    off: i64,
    len: i64,
) -> c_int {
    let mut c = Call::new(Op::Fallocate, name, Target::Fd(fd)).with_detail(Detail::Range {
        mode: Some(0),
        off,
        len,
    });
    let entry = c.entry_errno;
    // SAFETY: the caller's guarantee.
    let r = unsafe {
        run(&mut c, 0, 0, |_| {
            let e = f(fd, off, len);
            if e == 0 {
                0
            } else {
                set_errno(e);
                -1
            }
        })
    };
    let e = if r < 0 { errno() } else { 0 };
    set_errno(entry);
    e
}

hook! {
    fn posix_fallocate(fd: c_int, off: i64, len: i64) -> c_int;
    real PosixFallocate;
    missing ENOSYS;
    op Op::Fallocate;
    |f| { posix_fallocate_like("posix_fallocate", f, fd, off, len) }
}

hook! {
    fn posix_fallocate64(fd: c_int, off: i64, len: i64) -> c_int;
    real PosixFallocate64;
    missing ENOSYS;
    op Op::Fallocate;
    |f| { posix_fallocate_like("posix_fallocate64", f, fd, off, len) }
}
