//! The stdio entry points a program calls itself, matched on `fileno(fp)`: fwrite,
//! fputs, fflush (`write` family; fclose is with the close hooks). The writes stdio
//! makes inside glibc (printf, buffers flushed at exit) are not seen.

use core::ffi::{c_char, c_int, c_void, CStr};

use plan::Op;
use vxfault_plan as plan;

use crate::call::{run, Call, Target};
use crate::real::real;
use crate::sys::{fileno, set_errno, ENOSYS};

/// glibc's `_IO_ERR_SEEN` in `FILE::_flags` (the first field of the public
/// `struct _IO_FILE`): what makes `ferror()` true after an injected failure.
const IO_ERR_SEEN: c_int = 0x20;

/// # Safety
/// `fp` is null or a live FILE.
unsafe fn mark_error(fp: *mut c_void) {
    if !fp.is_null() {
        let flags = fp.cast::<c_int>();
        // SAFETY: the caller's guarantee; `_flags` is the FILE's first field. The
        // program is inside a stdio call on `fp`, so no other stdio call on it runs
        // unless the program itself races on the stream.
        unsafe { flags.write(flags.read() | IO_ERR_SEEN) };
    }
}

/// # Safety
/// `fp` is null or a live FILE.
pub unsafe fn stream_fd(fp: *mut c_void) -> c_int {
    if fp.is_null() {
        -1
    } else {
        // SAFETY: the caller's guarantee.
        unsafe { fileno(fp) }
    }
}

hook! {
    fn fwrite(ptr: *const c_void, size: usize, nmemb: usize, fp: *mut c_void) -> usize;
    real Fwrite;
    missing { set_errno(ENOSYS); 0 };
    op Op::Write;
    |f| {
        let total = size.saturating_mul(nmemb);
        let mut c = Call::new(Op::Write, "fwrite", Target::Fd(stream_fd(fp))).stdio(fp, 0);
        // short:N / torn:N write the whole items that fit in N bytes.
        let r = run(&mut c, total, nmemb as i64, |lim| {
            let items = if lim >= total || size == 0 { nmemb } else { lim / size };
            f(ptr, size, items, fp) as i64
        });
        if r == 0 && total > 0 && c.rule > 0 {
            mark_error(fp);
        }
        r.max(0) as usize
    }
}

/// The original fwrite (for fputs's `short:N`).
fn real_fwrite() -> Option<crate::real::ty::Fwrite> {
    real!(Fwrite)
}

hook! {
    fn fputs(s: *const c_char, fp: *mut c_void) -> c_int;
    real Fputs;
    op Op::Write;
    |f| {
        let len = if s.is_null() { 0 } else { CStr::from_ptr(s).to_bytes().len() };
        let mut c = Call::new(Op::Write, "fputs", Target::Fd(stream_fd(fp))).stdio(fp, -1);
        let fwrite = real_fwrite();
        // fputs cannot report a short write: short:N writes N bytes and returns N.
        let r = run(&mut c, len, len.min(c_int::MAX as usize) as i64, |lim| match fwrite {
            Some(w) if lim < len => w(s.cast(), 1, lim, fp) as i64,
            _ => i64::from(f(s, fp)),
        });
        if r < 0 && c.rule > 0 {
            mark_error(fp);
        }
        r.clamp(-1, i64::from(c_int::MAX)) as c_int
    }
}

hook! {
    fn fflush(fp: *mut c_void) -> c_int;
    real Fflush;
    op Op::Write;
    |f| {
        let mut c = Call::new(Op::Write, "fflush", Target::Fd(stream_fd(fp))).stdio(fp, -1);
        let r = run(&mut c, 0, 0, |_| i64::from(f(fp)));
        if r < 0 && c.rule > 0 {
            mark_error(fp);
        }
        r as c_int
    }
}
