//! `close` and `fclose` (the `close` family), and the calls that close, duplicate or
//! reopen fds without being injection points — dup, dup2, dup3, close_range,
//! closefrom, closedir, fopen, fopen64, freopen, freopen64 — hooked only to keep the
//! fd cache true.

use core::ffi::{c_char, c_int, c_uint, c_void};
use core::sync::atomic::Ordering;

use plan::Op;
use vxfault_plan as plan;

use crate::call::{run, Call, Target};
use crate::gate::active;
use crate::paths::{cache_clear, cache_clear_range, cache_on, cache_opened};
use crate::real::{enosys, enosys_ptr, real};
use crate::state::{Guard, TRACE_FD};
use crate::sys::{dirfd, errno, fileno, set_errno};

/// Whether `fd` is the trace's own fd, which a program closing every fd (daemonising)
/// must not take from us: such a close is refused with success.
pub fn is_trace_fd(fd: c_int) -> bool {
    fd >= 0 && fd == TRACE_FD.load(Ordering::Relaxed)
}

/// `close(2)`.
///
/// # Safety
/// As `close(2)`.
#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    let Some(f) = real!(Close) else {
        return enosys();
    };
    if !active(Op::Close) {
        // SAFETY: the caller's argument, unchanged.
        return unsafe { f(fd) };
    }
    if is_trace_fd(fd) {
        return 0;
    }
    cache_clear(fd);
    let r = match Guard::enter() {
        // SAFETY: as above.
        None => unsafe { f(fd) },
        Some(_g) => {
            let mut c = Call::new(Op::Close, "close", Target::Fd(fd));
            // SAFETY: an fd call (no path pointers); the closure makes the caller's call.
            unsafe { run(&mut c, 0, 0, |_| i64::from(f(fd))) as c_int }
        }
    };
    cache_clear(fd);
    r
}

/// `fclose(3)`: a `close` family call on `fileno(fp)`.
///
/// # Safety
/// As `fclose(3)`: `fp` is a live stream (or null, which glibc rejects).
#[no_mangle]
pub unsafe extern "C" fn fclose(fp: *mut c_void) -> c_int {
    let Some(f) = real!(Fclose) else {
        return enosys();
    };
    let inject = active(Op::Close);
    if fp.is_null() || (!cache_on() && !inject) {
        // SAFETY: the caller's argument, unchanged.
        return unsafe { f(fp) };
    }
    // SAFETY: `fp` is a live stream (the caller's guarantee).
    let fd = unsafe { fileno(fp) };
    cache_clear(fd);
    let r = match (inject, Guard::enter()) {
        (true, Some(_g)) => {
            let mut c = Call::new(Op::Close, "fclose", Target::Fd(fd)).stdio(fp, -1);
            // SAFETY: an fd call; the closure makes the caller's call.
            unsafe { run(&mut c, 0, 0, |_| i64::from(f(fp))) as c_int }
        }
        // SAFETY: the caller's argument, unchanged.
        _ => unsafe { f(fp) },
    };
    cache_clear(fd);
    super::decided_clear(fd);
    r
}

/// `dup(2)`.
///
/// # Safety
/// As `dup(2)`.
#[no_mangle]
pub unsafe extern "C" fn dup(old: c_int) -> c_int {
    let Some(f) = real!(Dup) else {
        return enosys();
    };
    // SAFETY: the caller's argument, unchanged.
    let r = unsafe { f(old) };
    // The new number may have been closed behind our back (raw close, freopen):
    // whatever its slot says is not this fd.
    if cache_on() && r >= 0 {
        cache_clear(r);
    }
    r
}

/// `dup2(2)`.
///
/// # Safety
/// As `dup2(2)`.
#[no_mangle]
pub unsafe extern "C" fn dup2(old: c_int, new: c_int) -> c_int {
    let Some(f) = real!(Dup2) else {
        return enosys();
    };
    if !cache_on() || old == new {
        // SAFETY: the caller's arguments, unchanged.
        return unsafe { f(old, new) };
    }
    cache_clear(new);
    // SAFETY: as above.
    let r = unsafe { f(old, new) };
    cache_clear(new);
    r
}

/// `dup3(2)`.
///
/// # Safety
/// As `dup3(2)`.
#[no_mangle]
pub unsafe extern "C" fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int {
    let Some(f) = real!(Dup3) else {
        return enosys();
    };
    if !cache_on() {
        // SAFETY: the caller's arguments, unchanged.
        return unsafe { f(old, new, flags) };
    }
    cache_clear(new);
    // SAFETY: as above.
    let r = unsafe { f(old, new, flags) };
    cache_clear(new);
    r
}

/// `close_range(2)`.
///
/// # Safety
/// As `close_range(2)`.
#[no_mangle]
pub unsafe extern "C" fn close_range(first: c_uint, last: c_uint, flags: c_int) -> c_int {
    let Some(f) = real!(CloseRange) else {
        return enosys();
    };
    const CLOSE_RANGE_CLOEXEC: c_int = 4;
    // SAFETY: the caller's arguments, unchanged.
    let r = unsafe { f(first, last, flags) };
    if cache_on() && flags & CLOSE_RANGE_CLOEXEC == 0 {
        let saved = errno();
        cache_clear_range(first, last);
        set_errno(saved);
    }
    r
}

/// `closefrom(3)`.
///
/// # Safety
/// As `closefrom(3)`.
#[no_mangle]
pub unsafe extern "C" fn closefrom(low: c_int) {
    let Some(f) = real!(Closefrom) else { return };
    // SAFETY: the caller's argument, unchanged.
    unsafe { f(low) };
    if cache_on() && low >= 0 {
        cache_clear_range(low as c_uint, c_uint::MAX);
    }
}

/// `closedir(3)`.
///
/// # Safety
/// As `closedir(3)`: `dir` is a live directory stream.
#[no_mangle]
pub unsafe extern "C" fn closedir(dir: *mut c_void) -> c_int {
    let Some(f) = real!(Closedir) else {
        return enosys();
    };
    if !cache_on() || dir.is_null() {
        // SAFETY: the caller's argument, unchanged.
        return unsafe { f(dir) };
    }
    // SAFETY: a live directory stream (the caller's guarantee).
    let fd = unsafe { dirfd(dir) };
    cache_clear(fd);
    // SAFETY: the caller's argument, unchanged.
    let r = unsafe { f(dir) };
    cache_clear(fd);
    r
}

/// After a stdio open handed out `fp`: its fd's slot gets the new path (fopen's open
/// is glibc-internal, so the open hooks did not see it).
///
/// # Safety
/// `fp` is null or a live stream.
unsafe fn refresh_stream(fp: *mut c_void) -> *mut c_void {
    if cache_on() && !fp.is_null() {
        // SAFETY: the caller's guarantee.
        let fd = unsafe { fileno(fp) };
        cache_clear(fd);
        cache_opened(fd);
    }
    fp
}

/// `fopen(3)`.
///
/// # Safety
/// As `fopen(3)`.
#[no_mangle]
pub unsafe extern "C" fn fopen(path: *const c_char, mode: *const c_char) -> *mut c_void {
    let Some(f) = real!(Fopen) else {
        return enosys_ptr();
    };
    // SAFETY: the caller's arguments, unchanged; the result is null or a live stream.
    unsafe { refresh_stream(f(path, mode)) }
}

/// `fopen64(3)`.
///
/// # Safety
/// As `fopen(3)`.
#[no_mangle]
pub unsafe extern "C" fn fopen64(path: *const c_char, mode: *const c_char) -> *mut c_void {
    let Some(f) = real!(Fopen64) else {
        return enosys_ptr();
    };
    // SAFETY: as in `fopen`.
    unsafe { refresh_stream(f(path, mode)) }
}

/// freopen closes the stream's fd and opens (or dup3s onto the same number) inside
/// glibc, where no hook sees it: clear the old number before and refill the new one
/// after.
///
/// # Safety
/// `fp` is null or a live stream; `call` is the caller's freopen.
unsafe fn around_freopen(fp: *mut c_void, call: impl FnOnce() -> *mut c_void) -> *mut c_void {
    if !cache_on() || fp.is_null() {
        return call();
    }
    // SAFETY: the caller's guarantee.
    let old = unsafe { fileno(fp) };
    cache_clear(old);
    let r = call();
    let saved = errno();
    cache_clear(old);
    // SAFETY: freopen returns null or the (live) stream.
    unsafe { refresh_stream(r) };
    set_errno(saved);
    r
}

/// `freopen(3)`.
///
/// # Safety
/// As `freopen(3)`.
#[no_mangle]
pub unsafe extern "C" fn freopen(
    path: *const c_char,
    mode: *const c_char,
    fp: *mut c_void,
) -> *mut c_void {
    let Some(f) = real!(Freopen) else {
        return enosys_ptr();
    };
    // SAFETY: the caller's arguments, unchanged.
    unsafe { around_freopen(fp, || f(path, mode, fp)) }
}

/// `freopen64(3)`.
///
/// # Safety
/// As `freopen(3)`.
#[no_mangle]
pub unsafe extern "C" fn freopen64(
    path: *const c_char,
    mode: *const c_char,
    fp: *mut c_void,
) -> *mut c_void {
    let Some(f) = real!(Freopen64) else {
        return enosys_ptr();
    };
    // SAFETY: as in `freopen`.
    unsafe { around_freopen(fp, || f(path, mode, fp)) }
}
