//! The stdio entry points a program calls itself, matched on `fileno(fp)`: fwrite,
//! fputs, fflush and their `_unlocked` forms (which gnulib-based programs such as
//! coreutils call instead) — the `write` family; fclose is with the close hooks.
//!
//! glibc writes a stream's buffer (a line flush, a full buffer, `printf`, fclose, the
//! flush at `exit`) through `_IO_file_write`, called from its file vtable, never
//! through the PLT. [`vxfault_hook_file_write`] replaces that vtable slot, so each of those
//! writes is a write-family call — traced, recorded, under the plan — as the system
//! call it makes is under seccomp. A write made inside a hooked stdio call (whose
//! call the plan already decided) is traced and recorded but not counted again.

use core::ffi::{c_char, c_int, c_void, CStr};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use plan::Op;
use vxfault_plan as plan;

use crate::call::{run, run_traced, Bytes, Call, Target};
use crate::real::real;
use crate::sys::{
    dlsym, fileno, mprotect, set_errno, sysconf, ENOSYS, PROT_READ, PROT_WRITE, RTLD_NEXT,
    SC_PAGESIZE,
};

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

/// Per fd number below 1024: bytes a hooked stdio call (fwrite, fputs) accepted under
/// the plan that glibc has not written yet. Its later write of them is traced and
/// recorded but not decided again, so one stdio call is one decision (as it is one
/// or more system calls under seccomp, decided there instead).
static DECIDED: [AtomicU64; 1024] = [const { AtomicU64::new(0) }; 1024];

fn decided_slot(fd: c_int) -> Option<&'static AtomicU64> {
    usize::try_from(fd).ok().and_then(|i| DECIDED.get(i))
}

fn decided_add(fd: c_int, n: u64) {
    if let Some(d) = decided_slot(fd) {
        d.fetch_add(n, Ordering::Relaxed);
    }
}

/// Takes up to `n` decided bytes of `fd`; whether all `n` were.
fn decided_take(fd: c_int, n: u64) -> bool {
    let Some(d) = decided_slot(fd) else {
        return false;
    };
    let mut cur = d.load(Ordering::Relaxed);
    loop {
        let take = cur.min(n);
        match d.compare_exchange_weak(cur, cur - take, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return take == n,
            Err(now) => cur = now,
        }
    }
}

/// Forgets `fd`'s decided bytes (its stream is closed).
pub fn decided_clear(fd: c_int) {
    if let Some(d) = decided_slot(fd) {
        d.store(0, Ordering::Relaxed);
    }
}

/// `_IO_file_write(FILE *, const void *, ssize_t) -> ssize_t`.
type FileWrite = unsafe extern "C" fn(*mut c_void, *const c_void, isize) -> isize;

/// The original `__write` of glibc's `_IO_file_jumps` (0: not replaced).
static ORIG_FILE_WRITE: AtomicUsize = AtomicUsize::new(0);

/// Index of `__write` in glibc's `struct _IO_jump_t` (two size_t, then finish,
/// overflow, underflow, uflow, pbackfail, xsputn, xsgetn, seekoff, seekpos, setbuf,
/// sync, doallocate, read, write).
const JUMP_WRITE: usize = 15;

/// Replaces the `__write` slot of glibc's `_IO_file_jumps` with [`file_write`], once,
/// at load. Only when the slot holds the exported `_IO_file_write` (so the table's
/// layout is the one above); the page is made writable for the store and read-only
/// again. Whether the slot is ours.
#[no_mangle]
pub extern "C" fn vxfault_hook_file_write() -> bool {
    // SAFETY: dlsym with NUL-terminated names; the results are checked before use.
    let (jumps, orig) = unsafe {
        (
            dlsym(RTLD_NEXT, c"_IO_file_jumps".as_ptr()),
            dlsym(RTLD_NEXT, c"_IO_file_write".as_ptr()),
        )
    };
    if jumps.is_null() || orig.is_null() {
        return false;
    }
    // SAFETY: `_IO_file_jumps` is an array of pointers at least JUMP_WRITE+1 long.
    let slot = unsafe { jumps.cast::<usize>().add(JUMP_WRITE) };
    // SAFETY: reading a pointer-sized, aligned word of libc's table.
    if unsafe { slot.read_volatile() } != orig as usize {
        return false;
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { sysconf(SC_PAGESIZE) }.max(4096) as usize;
    let start = (slot as usize) & !(page - 1);
    // SAFETY: the page holding libc's vtable (mapped); only the protection changes,
    // and only for the one store below, made before the program's `main`.
    unsafe {
        if mprotect(start as *mut c_void, page, PROT_READ | PROT_WRITE) != 0 {
            return false;
        }
        ORIG_FILE_WRITE.store(orig as usize, Ordering::Release);
        slot.write_volatile(file_write as FileWrite as usize);
        mprotect(start as *mut c_void, page, PROT_READ);
    }
    true
}

/// glibc's `_IO_file_write`, through the vtable slot [`vxfault_hook_file_write`] took.
///
/// # Safety
/// Called by glibc only, with a live FILE and `n` readable bytes at `buf`.
unsafe extern "C" fn file_write(fp: *mut c_void, buf: *const c_void, n: isize) -> isize {
    let raw = ORIG_FILE_WRITE.load(Ordering::Acquire);
    // SAFETY: set before the slot pointed here, to glibc's `_IO_file_write`.
    let orig: FileWrite = unsafe { core::mem::transmute::<usize, FileWrite>(raw) };
    if n <= 0 || !crate::gate::active(Op::Write) {
        // SAFETY: the caller's arguments, unchanged.
        return unsafe { orig(fp, buf, n) };
    }
    // SAFETY: a live stream (the caller's guarantee).
    let fd = unsafe { fileno(fp) };
    let mut c =
        Call::new(Op::Write, "_IO_file_write", Target::Fd(fd)).with_bytes(Bytes::Buf(buf), None);
    let len = n as usize;
    let guard = crate::state::Guard::enter();
    if guard.is_none() || decided_take(fd, len as u64) {
        // Inside a hooked stdio call (or a signal handler in a hook), or bytes an
        // earlier fwrite/fputs accepted: traced and recorded, decided already.
        // SAFETY: the closure makes the caller's call with at most its length.
        return unsafe { run_traced(&mut c, len, |lim| orig(fp, buf, lim as isize) as i64) }
            as isize;
    }
    // SAFETY: an fd call; the closure makes the caller's call with at most its length.
    let r = unsafe {
        run(&mut c, len, n as i64, |lim| {
            orig(fp, buf, lim as isize) as i64
        })
    };
    if r < 0 {
        // As `_IO_file_write` fails: the error flag set, the count written (none).
        // SAFETY: a live stream.
        unsafe { mark_error(fp) };
        return 0;
    }
    r as isize
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
        let fd = stream_fd(fp);
        let mut c = Call::new(Op::Write, name, Target::Fd(fd)).stdio(fp, 0);
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
        // The items the real call took (also under `after:ERRNO`, which reports 0).
        let took = c.real_result.unwrap_or(r).max(0) as u64;
        decided_add(fd, took.saturating_mul(size as u64));
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
        let fd = stream_fd(fp);
        let mut c = Call::new(Op::Write, name, Target::Fd(fd)).stdio(fp, -1);
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
        if c.real_result.unwrap_or(r) >= 0 {
            // fputs returns a non-negative number, not a count: what it was given.
            decided_add(fd, len as u64);
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
