//! One intercepted call: what it acts on, the decision (`plan::decide`) and the action.

use core::ffi::{c_int, c_void};
use core::sync::atomic::Ordering;

use plan::decide::{decide, CallSite};
use plan::{Action, Op};
use vxfault_plan as plan;

use crate::paths::{abs_path, fd_path, Paths, NO_PATHS};
use crate::real::real;
use crate::state::{shm, state, ProcessCounts, State, STREAM};
use crate::sys::{_exit, errno, kill, nanosleep, pid, set_errno, IoVec, Timespec, EINTR, SIGKILL};
use crate::trace::action_text;

pub use crate::site::{Bytes, Call, Detail, Target};

impl Call {
    #[inline(always)]
    pub fn new(op: Op, name: &'static str, target: Target) -> Call {
        let fd = match target {
            Target::Fd(fd) => fd,
            _ => -1,
        };
        Call {
            op,
            name,
            target,
            target2: Target::None,
            fd,
            has_path2: false,
            rule: 0,
            hit: 0,
            entry_errno: errno(),
            detail: Detail::for_op(op),
            real_result: None,
            fail: -1,
            stream: core::ptr::null_mut(),
            bytes: Bytes::None,
            at: None,
        }
    }

    /// A write's bytes and its explicit offset (`None`: the fd's position).
    pub fn with_bytes(mut self, bytes: Bytes, at: Option<i64>) -> Call {
        self.bytes = bytes;
        self.at = at;
        self
    }

    /// The second path of rename and link calls.
    pub fn with_second(mut self, t: Target) -> Call {
        self.target2 = t;
        self.has_path2 = true;
        self
    }

    pub fn with_detail(mut self, d: Detail) -> Call {
        self.detail = d;
        self
    }

    /// A stdio call on `fp`, which returns `fail` on error.
    pub fn stdio(mut self, fp: *mut c_void, fail: i64) -> Call {
        self.stream = fp;
        self.fail = fail;
        self
    }
}

/// # Safety
/// The target's pointers are null or NUL-terminated strings.
unsafe fn resolve_target(t: &Target, out: &mut crate::paths::PathBuf) {
    match *t {
        Target::None => out.clear(),
        Target::Fd(fd) => fd_path(fd, out),
        // SAFETY: the caller's guarantee.
        Target::At(dirfd, p) => unsafe { abs_path(dirfd, p, out) },
        // SAFETY: the caller's guarantee.
        Target::Raw(p) => unsafe { out.set_cstr(p) },
    }
}

/// Runs a call under the plan.
///
/// `len` is the byte count of a write (for `short`, `torn` and `lie`); `real(limit)`
/// does the call for real with at most `limit` bytes and returns its raw result (the
/// failure value with errno set on failure). `lie` is the success value for `lie`.
///
/// # Safety
/// The call's targets hold pointers that are null or NUL-terminated strings, and
/// `real` is sound to call (it makes the intercepted call with the caller's arguments).
#[inline(never)]
pub unsafe fn run(c: &mut Call, len: usize, lie: i64, real: impl FnMut(usize) -> i64) -> i64 {
    let Some(st) = state() else {
        let mut real = real;
        return real(len);
    };
    if st.needs_path.get(c.op as usize).copied().unwrap_or(true) {
        Paths::with_stack(|paths| {
            // SAFETY: the caller's guarantee about the targets.
            unsafe {
                resolve_target(&c.target, &mut paths.p1);
                if c.has_path2 {
                    resolve_target(&c.target2, &mut paths.p2);
                }
            }
            set_errno(c.entry_errno);
            act(st, c, paths, len, lie, real)
        })
    } else {
        act(st, c, &NO_PATHS, len, lie, real)
    }
}

/// Makes a call the plan has already decided for (a write glibc makes inside a hooked
/// stdio call): traced (action `stdio`) and recorded when tracing, never counted or
/// matched again.
///
/// # Safety
/// As [`run`].
pub unsafe fn run_traced(c: &mut Call, len: usize, mut real: impl FnMut(usize) -> i64) -> i64 {
    let Some(st) = state().filter(|st| st.tracing) else {
        return real(len);
    };
    Paths::with_stack(|paths| {
        // SAFETY: the caller's guarantee about the targets.
        unsafe { resolve_target(&c.target, &mut paths.p1) };
        set_errno(c.entry_errno);
        let r = real(len);
        let e = if r == c.fail { errno() } else { 0 };
        c.trace(st, paths, Some(r), e, b"stdio");
        set_errno(if r == c.fail { e } else { c.entry_errno });
        r
    })
}

/// Counts the call, and does what the first firing rule says (or the call itself).
#[inline(always)]
fn act(
    st: &State,
    c: &mut Call,
    paths: &Paths,
    len: usize,
    lie: i64,
    mut real: impl FnMut(usize) -> i64,
) -> i64 {
    let seen = shm(plan::SHM_SEEN + c.op as usize);
    if seen.load(Ordering::Relaxed) == 0 {
        seen.store(1, Ordering::Relaxed);
    }
    let site = CallSite {
        op: c.op,
        path: paths.p1.as_bytes(),
        path2: c.has_path2.then(|| paths.p2.as_bytes()),
    };
    let stream = STREAM.load(Ordering::Relaxed);
    let decision = decide(st.plan.rules(), &site, &ProcessCounts, st.seed, stream);
    set_errno(c.entry_errno);
    let Some(d) = decision else {
        if !st.tracing {
            return real(len);
        }
        let r = real(len);
        let e = if r == c.fail { errno() } else { 0 };
        c.trace(st, paths, Some(r), e, b"pass");
        return r;
    };
    c.rule = d.rule + 1;
    c.hit = d.ordinal;
    let mut abuf = [0u8; 32];
    let an = action_text(d.action, &mut abuf);
    let atext = &abuf[..an];
    // Does the call for real, traces it and leaves the call's own errno. `flush`: a
    // stdio call's stream is flushed before the line, so the line of the call that
    // kills stays the last one (the flush's writes are lines of their own).
    let mut done = |c: &Call, limit: usize, flush: bool| -> i64 {
        let r = real(limit);
        let e = if r == c.fail { errno() } else { 0 };
        if flush {
            flush_stream(c);
        }
        c.trace(st, paths, Some(r), e, atext);
        set_errno(if r == c.fail { e } else { c.entry_errno });
        r
    };
    match d.action {
        Action::Errno(e) => {
            c.trace(st, paths, Some(c.fail), e, atext);
            set_errno(e);
            c.fail
        }
        Action::Short(n) => done(c, len.min(n as usize), false),
        Action::Torn(n) => {
            done(c, len.min(n as usize), true);
            die()
        }
        Action::Crash => {
            c.trace(st, paths, None, 0, atext);
            die()
        }
        Action::CrashAfter => {
            done(c, len, true);
            die()
        }
        Action::Delay(ms) => {
            sleep_ms(ms);
            set_errno(c.entry_errno);
            done(c, len, false)
        }
        Action::Lie => {
            c.trace(st, paths, Some(lie), 0, atext);
            set_errno(c.entry_errno);
            lie
        }
        Action::After(e) => {
            let r = real(len);
            if c.op == Op::Open && r >= 0 {
                // The file was opened (and created); the caller, told it failed, has
                // no fd to close: close it so the error leaks nothing.
                if let Some(close) = real!(Close) {
                    // SAFETY: `r` is the fd the real open just returned to us.
                    unsafe { close(r as c_int) };
                }
            }
            c.real_result = Some(r);
            c.trace(st, paths, Some(c.fail), e, atext);
            set_errno(e);
            c.fail
        }
    }
}

/// Before a stdio call's process is killed: push what the call accepted into the file
/// (stdio buffers it; SIGKILL would lose it and `torn`/`crash-after` would look like
/// `crash`).
fn flush_stream(c: &Call) {
    if c.stream.is_null() {
        return;
    }
    if let Some(flush) = real!(Fflush) {
        // SAFETY: `stream` is the FILE the program passed to the hooked stdio call.
        unsafe { flush(c.stream) };
    }
}

/// SIGKILL the whole process (every thread); `_exit(137)` in case it returns.
pub fn die() -> ! {
    // SAFETY: kill and _exit have no preconditions.
    unsafe {
        kill(pid(), SIGKILL);
        _exit(137)
    }
}

fn sleep_ms(ms: u64) {
    let mut req = Timespec {
        tv_sec: (ms / 1000) as i64,
        tv_nsec: ((ms % 1000) * 1_000_000) as i64,
    };
    let mut rem = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: both pointers are to live locals.
    while unsafe { nanosleep(&req, &mut rem) } != 0 && errno() == EINTR {
        req = Timespec {
            tv_sec: rem.tv_sec,
            tv_nsec: rem.tv_nsec,
        };
    }
}

/// Total bytes of an iovec array (saturating).
///
/// # Safety
/// `iov` is null or points to `cnt` readable iovecs.
pub unsafe fn iov_total(iov: *const IoVec, cnt: c_int) -> usize {
    if iov.is_null() || cnt <= 0 {
        return 0;
    }
    // SAFETY: the caller's guarantee.
    let v = unsafe { core::slice::from_raw_parts(iov, cnt as usize) };
    v.iter().fold(0usize, |t, e| t.saturating_add(e.len))
}

const IOV_CAP: usize = 64;

/// Does a vectored write of at most `limit` bytes: the first entries of `iov` covering
/// `limit` bytes (the last one cut, at most 64 entries) are copied on the stack.
///
/// # Safety
/// As [`iov_total`].
pub unsafe fn with_iov(
    iov: *const IoVec,
    cnt: c_int,
    total: usize,
    limit: usize,
    f: impl FnOnce(*const IoVec, c_int) -> i64,
) -> i64 {
    if limit >= total || iov.is_null() || cnt <= 0 {
        return f(iov, cnt);
    }
    let mut cut = [IoVec {
        base: core::ptr::null_mut(),
        len: 0,
    }; IOV_CAP];
    // SAFETY: the caller's guarantee.
    let v = unsafe { core::slice::from_raw_parts(iov, cnt as usize) };
    let mut left = limit;
    let mut n = 0usize;
    for e in v {
        if left == 0 || n == IOV_CAP {
            break;
        }
        let mut e = *e;
        e.len = e.len.min(left);
        left -= e.len;
        cut[n] = e;
        n += 1;
    }
    f(cut.as_ptr(), n as c_int)
}
