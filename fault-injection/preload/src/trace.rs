//! The trace (`VXFAULT_TRACE`): one JSON line per call or load event, appended with one
//! `write(2)` of the original `write` on an `O_APPEND` fd, so lines from different
//! processes never interleave and a SIGKILL right after a line loses nothing.

use core::ffi::{c_int, c_uint};
use core::sync::atomic::Ordering;

use plan::line::{decimal, Line};
use plan::{names, Action, Op};
use vxfault_plan as plan;

use crate::paths::{file_type, Paths};
use crate::real::real;
use crate::site::{Call, Detail};
use crate::state::{shm, State, STREAM, TRACE_FD};
use crate::sys::{
    errno, nr, pid, set_errno, EBADF, EINTR, F_DUPFD_CLOEXEC, O_APPEND, O_CLOEXEC, O_CREAT,
    O_WRONLY, S_IFDIR,
};

/// Opens the trace file named in `st` and moves its fd out of the way (>= 700).
pub fn open_trace(st: &State) {
    let Some(open) = real!(Open) else { return };
    // SAFETY: trace_path is NUL-terminated (load.rs copies at most CAP-1 bytes).
    let fd = unsafe {
        open(
            st.trace_path.as_ptr().cast(),
            O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
            0o644 as c_uint,
        )
    };
    if fd < 0 {
        shm(plan::SHM_TRACE_ERRORS).fetch_add(1, Ordering::Relaxed);
        return;
    }
    let mut fd_final = fd;
    if let Some(fcntl) = real!(Fcntl) {
        // SAFETY: F_DUPFD_CLOEXEC takes an int; `fd` is ours.
        let high = unsafe { fcntl(fd, F_DUPFD_CLOEXEC, 700 as c_int) };
        if high >= 0 {
            if let Some(close) = real!(Close) {
                // SAFETY: closing our own fd.
                unsafe { close(fd) };
            }
            fd_final = high;
        }
    }
    TRACE_FD.store(fd_final, Ordering::Release);
}

/// Appends one complete line (reopening the file once if the program closed our fd).
pub fn emit(st: &State, bytes: &[u8]) {
    let Some(write) = real!(Write) else { return };
    for attempt in 0..2 {
        let fd = TRACE_FD.load(Ordering::Acquire);
        if fd < 0 && attempt == 0 {
            open_trace(st);
            continue;
        }
        let mut done = 0usize;
        while done < bytes.len() {
            // SAFETY: the pointer and length are a live slice of `bytes`.
            let n = unsafe { write(fd, bytes[done..].as_ptr().cast(), bytes.len() - done) };
            if n < 0 {
                if errno() == EINTR {
                    continue;
                }
                break;
            }
            if n == 0 {
                break;
            }
            done += n as usize;
        }
        if done == bytes.len() {
            return;
        }
        if done == 0 && errno() == EBADF && attempt == 0 {
            TRACE_FD.store(-1, Ordering::Release);
            open_trace(st);
            continue;
        }
        break;
    }
    shm(plan::SHM_TRACE_ERRORS).fetch_add(1, Ordering::Relaxed);
}

fn next_seq() -> u64 {
    shm(plan::SHM_SEQ).fetch_add(1, Ordering::Relaxed) + 1
}

fn gettid() -> i64 {
    match real!(Syscall) {
        // SAFETY: gettid takes no arguments and cannot fail.
        Some(f) => unsafe { f(nr::GETTID) },
        None => -1,
    }
}

/// The fields every line starts with.
fn head(l: &mut Line, op: &[u8], call: &[u8]) {
    l.u64("seq", next_seq());
    l.i64("pid", i64::from(pid()));
    l.i64("tid", gettid());
    l.u64("stream", STREAM.load(Ordering::Relaxed));
    l.str("op", op);
    l.str("call", call);
}

/// A line that is not a call: `loaded` (the load handshake) or `plan-error`.
pub fn trace_event(st: &State, kind: &[u8], path: &[u8], n: i64) {
    if !st.tracing {
        return;
    }
    let mut l = Line::new();
    head(&mut l, kind, b"");
    l.str("path", path);
    l.i64("result", 0);
    l.i64("errno", 0);
    l.str("action", b"none");
    l.i64("rules", n);
    l.bool("shared", crate::state::SHM.load(Ordering::Relaxed) != 0);
    l.str("backend", b"preload");
    l.finish();
    emit(st, l.as_bytes());
}

/// A short action name for the trace (`EIO`, `short:3`, `after:EIO`, …).
pub fn action_text(a: Action, buf: &mut [u8; 32]) -> usize {
    let (prefix, name, n): (&[u8], &[u8], Option<u64>) = match a {
        Action::Errno(e) => (b"", plan::errno_name(e).unwrap_or("errno").as_bytes(), None),
        Action::Short(n) => (b"short:", b"", Some(n)),
        Action::Torn(n) => (b"torn:", b"", Some(n)),
        Action::Crash => (b"crash", b"", None),
        Action::CrashAfter => (b"crash-after", b"", None),
        Action::Delay(n) => (b"delay:", b"", Some(n)),
        Action::Lie => (b"lie", b"", None),
        Action::After(e) => (
            b"after:",
            plan::errno_name(e).unwrap_or("errno").as_bytes(),
            None,
        ),
    };
    let mut len = 0;
    let mut put = |s: &[u8], len: &mut usize| {
        let take = s.len().min(buf.len() - *len);
        buf[*len..*len + take].copy_from_slice(&s[..take]);
        *len += take;
    };
    put(prefix, &mut len);
    put(name, &mut len);
    if let Some(v) = n {
        let mut d = [0u8; 20];
        put(decimal(v, &mut d), &mut len);
    }
    len
}

impl Call {
    /// Writes this call's trace line (if tracing). Leaves errno as it found it.
    pub fn trace(&self, st: &State, paths: &Paths, result: Option<i64>, err: c_int, action: &[u8]) {
        if !st.tracing {
            return;
        }
        let saved = errno();
        let mut l = Line::new();
        head(&mut l, self.op.name().as_bytes(), self.name.as_bytes());
        l.str("path", paths.p1.as_bytes());
        if self.has_path2 {
            l.str("path2", paths.p2.as_bytes());
        }
        let fd = match (self.op, result) {
            (Op::Open, Some(r)) if r >= 0 => r,
            _ => i64::from(self.fd),
        };
        if fd >= 0 {
            l.i64("fd", fd);
        }
        match result {
            Some(r) => l.i64("result", r),
            None => l.null("result"),
        }
        l.i64("errno", i64::from(err));
        match plan::errno_name(err) {
            Some(n) if err != 0 => l.str("errno_name", n.as_bytes()),
            _ => {}
        }
        l.str("action", action);
        if let Some(r) = self.real_result {
            l.i64("real_result", r);
        }
        self.trace_detail(&mut l);
        if st.recording {
            crate::record::fields(self, result, &mut l);
        }
        if self.rule > 0 {
            l.u64("rule", self.rule as u64);
            l.u64("hit", self.hit);
        } else {
            l.null("rule");
        }
        l.finish();
        emit(st, l.as_bytes());
        set_errno(saved);
    }

    /// The call's own fields: `flags`/`mode` (open), `lock` (flock, fcntl locks),
    /// `dir` (an fsync of a directory), `node` (mknod), `mtime` and `nofollow` (a
    /// timestamp call).
    fn trace_detail(&self, l: &mut Line) {
        match self.detail {
            Detail::None => {}
            Detail::Open { flags, mode } => {
                let mut buf = [0u8; 256];
                let n = names::open_flags(flags, &mut buf);
                l.str("flags", &buf[..n]);
                if let Some(m) = mode {
                    l.str("mode", &names::octal4(m));
                }
            }
            Detail::Flock(how) => {
                let mut buf = [0u8; 32];
                let n = names::flock_op(how, &mut buf);
                l.str("lock", &buf[..n]);
            }
            Detail::Fcntl { cmd, kind } => {
                let mut buf = [0u8; 48];
                let n = names::fcntl_lock(cmd, kind, &mut buf);
                l.str("lock", &buf[..n]);
            }
            Detail::Mode(m) => l.str("mode", &names::octal4(m)),
            Detail::Node(m) => {
                l.str("mode", &names::octal4(m));
                l.str("node", plan::attrs::node_kind(m));
            }
            Detail::Times { mtime, nofollow } => {
                if let Some(m) = mtime {
                    let mut buf = [0u8; 32];
                    let n = plan::attrs::mtime_text(m, &mut buf);
                    l.str("mtime", &buf[..n]);
                }
                if nofollow {
                    l.bool("nofollow", true);
                }
            }
            Detail::Sync => {
                if file_type(self.fd) == Some(S_IFDIR) {
                    l.bool("dir", true);
                }
            }
            // Written by `record::fields` only when recording (the trace format of
            // `vxfault run` is unchanged).
            Detail::Range { .. } => {}
        }
    }
}
