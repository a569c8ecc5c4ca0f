//! The stdio entry points a program calls itself, matched on `fileno(fp)`: fwrite,
//! fputs, fflush and their `_unlocked` forms (which gnulib-based programs such as
//! coreutils call instead) — the `write` family; fclose is with the close hooks. The writes stdio
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

/// The body of the fwrite hooks: short:N / torn:N write the whole items that fit in N
/// bytes.
///
/// # Safety
/// As `fwrite(3)`; `f` is the original named `name`.
unsafe fn fwrite_like(
    name: &'static str,
    f: unsafe extern "C" fn(*const c_void, usize, usize, *mut c_void) -> usize,
    ptr: *const c_void,
    size: usize,
    nmemb: usize,
    fp: *mut c_void,
) -> usize {
    let total = size.saturating_mul(nmemb);
    // SAFETY: the caller's guarantees (a live stream, `ptr` readable for the items).
    unsafe {
        let mut c = Call::new(Op::Write, name, Target::Fd(stream_fd(fp))).stdio(fp, 0);
        let r = run(&mut c, total, nmemb as i64, |lim| {
            let items = if lim >= total || size == 0 {
                nmemb
            } else {
                lim / size
            };
            f(ptr, size, items, fp) as i64
        });
        if r == 0 && total > 0 && c.rule > 0 {
            mark_error(fp);
        }
        r.max(0) as usize
    }
}

/// The body of the fputs hooks. fputs cannot report a short write: short:N writes N
/// bytes (through `write_n`) and returns N.
///
/// # Safety
/// As `fputs(3)`; `f` is the original named `name`, `write_n` the matching fwrite.
unsafe fn fputs_like(
    name: &'static str,
    f: unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int,
    write_n: Option<unsafe extern "C" fn(*const c_void, usize, usize, *mut c_void) -> usize>,
    s: *const c_char,
    fp: *mut c_void,
) -> c_int {
    // SAFETY: the caller's guarantees (`s` NUL-terminated, a live stream).
    unsafe {
        let len = if s.is_null() {
            0
        } else {
            CStr::from_ptr(s).to_bytes().len()
        };
        let mut c = Call::new(Op::Write, name, Target::Fd(stream_fd(fp))).stdio(fp, -1);
        let r = run(
            &mut c,
            len,
            len.min(c_int::MAX as usize) as i64,
            |lim| match write_n {
                Some(w) if lim < len => w(s.cast(), 1, lim, fp) as i64,
                _ => i64::from(f(s, fp)),
            },
        );
        if r < 0 && c.rule > 0 {
            mark_error(fp);
        }
        r.clamp(-1, i64::from(c_int::MAX)) as c_int
    }
}

/// The body of the fflush hooks.
///
/// # Safety
/// As `fflush(3)`; `f` is the original named `name`.
unsafe fn fflush_like(
    name: &'static str,
    f: unsafe extern "C" fn(*mut c_void) -> c_int,
    fp: *mut c_void,
) -> c_int {
    // SAFETY: the caller's guarantee (null or a live stream).
    unsafe {
        let mut c = Call::new(Op::Write, name, Target::Fd(stream_fd(fp))).stdio(fp, -1);
        let r = run(&mut c, 0, 0, |_| i64::from(f(fp)));
        if r < 0 && c.rule > 0 {
            mark_error(fp);
        }
        r as c_int
    }
}

fn real_fwrite() -> Option<crate::real::ty::Fwrite> {
    real!(Fwrite)
}

fn real_fwrite_unlocked() -> Option<crate::real::ty::FwriteUnlocked> {
    real!(FwriteUnlocked)
}

hook! {
    fn fwrite(ptr: *const c_void, size: usize, nmemb: usize, fp: *mut c_void) -> usize;
    real Fwrite;
    missing { set_errno(ENOSYS); 0 };
    op Op::Write;
    |f| { fwrite_like("fwrite", f, ptr, size, nmemb, fp) }
}

hook! {
    fn fwrite_unlocked(ptr: *const c_void, size: usize, nmemb: usize, fp: *mut c_void) -> usize;
    real FwriteUnlocked;
    missing { set_errno(ENOSYS); 0 };
    op Op::Write;
    |f| { fwrite_like("fwrite_unlocked", f, ptr, size, nmemb, fp) }
}

hook! {
    fn fputs(s: *const c_char, fp: *mut c_void) -> c_int;
    real Fputs;
    op Op::Write;
    |f| { fputs_like("fputs", f, real_fwrite(), s, fp) }
}

hook! {
    fn fputs_unlocked(s: *const c_char, fp: *mut c_void) -> c_int;
    real FputsUnlocked;
    op Op::Write;
    |f| { fputs_like("fputs_unlocked", f, real_fwrite_unlocked(), s, fp) }
}

hook! {
    fn fflush(fp: *mut c_void) -> c_int;
    real Fflush;
    op Op::Write;
    |f| { fflush_like("fflush", f, fp) }
}

hook! {
    fn fflush_unlocked(fp: *mut c_void) -> c_int;
    real FflushUnlocked;
    op Op::Write;
    |f| { fflush_like("fflush_unlocked", f, fp) }
}
