//! The `write` family: write, pwrite, pwrite64, writev, pwritev, pwritev64, pwritev2,
//! and the copies into a file: copy_file_range, sendfile, sendfile64, splice (the last
//! three only when the destination is a regular file). stdio is in `stdio.rs`.

use core::ffi::{c_int, c_uint, c_void};

use plan::Op;
use vxfault_plan as plan;

use crate::call::{iov_total, run, with_iov, Bytes, Call, Target};
use crate::paths::file_type;
use crate::sys::{IoVec, S_IFREG};

hook! {
    fn write(fd: c_int, buf: *const c_void, n: usize) -> isize;
    real Write;
    op Op::Write;
    |f| {
        let mut c = Call::new(Op::Write, "write", Target::Fd(fd)).with_bytes(Bytes::Buf(buf), None);
        run(&mut c, n, n as i64, |lim| f(fd, buf, lim) as i64) as isize
    }
}

/// `pwrite`-shaped hooks (a buffer and an offset).
macro_rules! pwrite_hooks {
    ($($sym:ident = $real:ident;)*) => {$(
        hook! {
            fn $sym(fd: c_int, buf: *const c_void, n: usize, off: i64) -> isize;
            real $real;
            op Op::Write;
            |f| {
                let mut c = Call::new(Op::Write, stringify!($sym), Target::Fd(fd))
                    .with_bytes(Bytes::Buf(buf), Some(off));
                run(&mut c, n, n as i64, |lim| f(fd, buf, lim, off) as i64) as isize
            }
        }
    )*};
}

pwrite_hooks! {
    pwrite = Pwrite;
    pwrite64 = Pwrite64;
}

hook! {
    fn writev(fd: c_int, iov: *const IoVec, cnt: c_int) -> isize;
    real Writev;
    op Op::Write;
    |f| {
        let total = iov_total(iov, cnt);
        let mut c = Call::new(Op::Write, "writev", Target::Fd(fd))
            .with_bytes(Bytes::Iov(iov, cnt), None);
        run(&mut c, total, total as i64, |lim| {
            with_iov(iov, cnt, total, lim, |v, k| f(fd, v, k) as i64)
        }) as isize
    }
}

/// `pwritev`-shaped hooks (an iovec array and an offset).
macro_rules! pwritev_hooks {
    ($($sym:ident = $real:ident;)*) => {$(
        hook! {
            fn $sym(fd: c_int, iov: *const IoVec, cnt: c_int, off: i64) -> isize;
            real $real;
            op Op::Write;
            |f| {
                let total = iov_total(iov, cnt);
                let mut c = Call::new(Op::Write, stringify!($sym), Target::Fd(fd))
                    .with_bytes(Bytes::Iov(iov, cnt), Some(off));
                run(&mut c, total, total as i64, |lim| {
                    with_iov(iov, cnt, total, lim, |v, k| f(fd, v, k, off) as i64)
                }) as isize
            }
        }
    )*};
}

pwritev_hooks! {
    pwritev = Pwritev;
    pwritev64 = Pwritev64;
}

hook! {
    fn pwritev2(fd: c_int, iov: *const IoVec, cnt: c_int, off: i64, flags: c_int) -> isize;
    real Pwritev2;
    op Op::Write;
    |f| {
        let total = iov_total(iov, cnt);
        // An offset of -1 means the fd's position.
        let at = (off != -1).then_some(off);
        let mut c = Call::new(Op::Write, "pwritev2", Target::Fd(fd))
            .with_bytes(Bytes::Iov(iov, cnt), at);
        run(&mut c, total, total as i64, |lim| {
            with_iov(iov, cnt, total, lim, |v, k| f(fd, v, k, off, flags) as i64)
        }) as isize
    }
}

hook! {
    fn copy_file_range(
        fd_in: c_int,
        off_in: *mut i64,
        fd_out: c_int,
        off_out: *mut i64,
        len: usize,
        flags: c_uint,
    ) -> isize;
    real CopyFileRange;
    op Op::Write;
    |f| {
        let mut c = Call::new(Op::Write, "copy_file_range", Target::Fd(fd_out));
        run(&mut c, len, len as i64, |lim| {
            f(fd_in, off_in, fd_out, off_out, lim, flags) as i64
        }) as isize
    }
}

/// Whether `fd` is a regular file: sendfile and splice are writes only into files
/// (into a pipe or socket they are not an injection point).
fn into_file(fd: c_int) -> bool {
    file_type(fd) == Some(S_IFREG)
}

/// The sendfile hooks: writes only into a regular file.
macro_rules! sendfile_hooks {
    ($($sym:ident = $real:ident;)*) => {$(
        hook! {
            fn $sym(out: c_int, inp: c_int, off: *mut i64, n: usize) -> isize;
            real $real;
            op Op::Write;
            |f| {
                if !into_file(out) {
                    return f(out, inp, off, n);
                }
                let mut c = Call::new(Op::Write, stringify!($sym), Target::Fd(out));
                run(&mut c, n, n as i64, |lim| f(out, inp, off, lim) as i64) as isize
            }
        }
    )*};
}

sendfile_hooks! {
    sendfile = Sendfile;
    sendfile64 = Sendfile64;
}

hook! {
    fn splice(
        fd_in: c_int,
        off_in: *mut i64,
        fd_out: c_int,
        off_out: *mut i64,
        len: usize,
        flags: c_uint,
    ) -> isize;
    real Splice;
    op Op::Write;
    |f| {
        if !into_file(fd_out) {
            return f(fd_in, off_in, fd_out, off_out, len, flags);
        }
        let mut c = Call::new(Op::Write, "splice", Target::Fd(fd_out));
        run(&mut c, len, len as i64, |lim| {
            f(fd_in, off_in, fd_out, off_out, lim, flags) as i64
        }) as isize
    }
}
