//! The supervisor: answers every notification of the filtered process tree under the
//! plan. One thread reads notifications in order; a `delay` answers from a thread of
//! its own, so other calls are not held up.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use crate::planlang::decide::{decide, CallSite, Counts};
use crate::planlang::line::Line;
use crate::planlang::syscalls::Syscall;
use crate::planlang::{self, Action, Plan, MAX_RULES, NUM_OPS};
use crate::{Op, Words};

use super::decode::{decode, Call, Detail, Skip};
use super::notif::{self, Notif};
use super::perform::{perform, Done};
use super::target;
use super::trace_words::{action_text, detail};

/// Counts at the end of a run (the seccomp counterpart of the counter file).
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Images started (execs seen).
    pub loaded: u64,
    /// Whether a call of each family was seen.
    pub seen: [bool; NUM_OPS],
    pub matched: Vec<u64>,
    pub fired: Vec<u64>,
    pub trace_errors: u64,
    /// Whether the kernel hands calls and answers over on one CPU
    /// ([`notif::sync_wake_up`], Linux 6.6).
    pub sync_wake_up: bool,
}

/// Where `record` keeps the bytes of writes.
pub struct DataSink {
    pub file: File,
    pub len: u64,
}

struct Proc {
    stream: u64,
    local: [AtomicU64; MAX_RULES],
}

struct Tree<'a> {
    local: &'a [AtomicU64; MAX_RULES],
    matched: &'a [AtomicU64],
    fired: &'a [AtomicU64],
}

impl Counts for Tree<'_> {
    fn local(&self, i: usize) -> &AtomicU64 {
        &self.local[i]
    }
    fn matched(&self, i: usize) -> &AtomicU64 {
        &self.matched[i]
    }
    fn fired(&self, i: usize) -> &AtomicU64 {
        &self.fired[i]
    }
}

/// Everything the supervisor needs; built by the runner.
pub struct Supervisor {
    pub plan: Box<Plan>,
    pub seed: u64,
    pub calls: HashMap<i32, Option<&'static Syscall>>,
    pub trace: Option<File>,
    pub data: Option<DataSink>,
    /// The tree's counts, in the counter file's layout: the file itself when the
    /// runner gave one (read while the tree runs), else words of our own.
    words: Words,
    procs: HashMap<u32, Proc>,
    tgids: HashMap<u32, u32>,
    streams: u64,
    seq: u64,
    stats: Stats,
    needs_path: [bool; NUM_OPS],
    /// Trace lines not yet written (see [`Supervisor::emit`]).
    pending: Vec<u8>,
    /// The threads that hold a `crash-after` lock until the kill: joined before
    /// [`Supervisor::run`] returns, so that when the runner sees the run end, the
    /// supervisor's copy of the locked fd is gone and the lock went with the process.
    lockers: Vec<std::thread::JoinHandle<()>>,
}

/// How long the supervisor waits for the next notification before it writes the
/// trace lines it holds.
const IDLE: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 1_000_000,
};

/// At most this much of the trace is held back.
const PENDING_MAX: usize = 64 * 1024;

impl Supervisor {
    pub fn new(
        plan: Box<Plan>,
        seed: u64,
        calls: HashMap<i32, Option<&'static Syscall>>,
        trace: Option<File>,
        data: Option<DataSink>,
        words: Words,
    ) -> Supervisor {
        let mut needs_path = [trace.is_some(); NUM_OPS];
        for r in plan.rules() {
            needs_path[r.op as usize] |= r.needs_path;
        }
        Supervisor {
            plan,
            seed,
            calls,
            trace,
            data,
            words,
            procs: HashMap::new(),
            tgids: HashMap::new(),
            streams: 0,
            seq: 0,
            stats: Stats::default(),
            needs_path,
            pending: Vec::new(),
            lockers: Vec::new(),
        }
    }

    /// Answers notifications on `listener` until no process uses the filter any more.
    pub fn run(mut self, listener: OwnedFd) -> Stats {
        let listener = Arc::new(listener);
        self.stats.sync_wake_up = notif::sync_wake_up(listener.as_fd());
        loop {
            let mut fds = [PollFd::new(&*listener, PollFlags::IN)];
            let wait = (!self.pending.is_empty()).then_some(&IDLE);
            match poll(&mut fds, wait) {
                Ok(0) => {
                    // Idle for a moment: the lines held back go out now.
                    self.flush();
                    continue;
                }
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => break,
            }
            let ev = fds[0].revents();
            if !ev.contains(PollFlags::IN) {
                // HUP: every process under the filter has exited.
                break;
            }
            match notif::recv(listener.as_fd()) {
                Ok(Some(n)) => self.handle(&listener, n),
                Ok(None) => {}
                Err(_) => break,
            }
        }
        self.flush();
        for locker in self.lockers.drain(..) {
            let _ = locker.join();
        }
        let n = self.plan.rules().len();
        let load = |first: usize| -> Vec<u64> {
            self.words.rules(first)[..n]
                .iter()
                .map(|a| a.load(Ordering::Relaxed))
                .collect()
        };
        self.stats.matched = load(planlang::SHM_MATCHED);
        self.stats.fired = load(planlang::SHM_FIRED);
        let all = self.words.all();
        self.stats.loaded = all[planlang::SHM_LOADED].load(Ordering::Relaxed);
        self.stats.trace_errors = all[planlang::SHM_TRACE_ERRORS].load(Ordering::Relaxed);
        for (op, seen) in self.stats.seen.iter_mut().enumerate() {
            *seen = all[planlang::SHM_SEEN + op].load(Ordering::Relaxed) != 0;
        }
        self.stats
    }

    fn tgid(&mut self, tid: u32) -> u32 {
        if let Some(&t) = self.tgids.get(&tid) {
            return t;
        }
        let t = target::tgid(tid).unwrap_or(tid);
        self.tgids.insert(tid, t);
        t
    }

    /// The process's counters; a process seen for the first time (a fork's child)
    /// starts from zero with a stream of its own.
    fn proc(&mut self, tgid: u32) -> &Proc {
        let streams = &mut self.streams;
        self.procs.entry(tgid).or_insert_with(|| {
            *streams += 1;
            Proc {
                stream: *streams,
                local: std::array::from_fn(|_| AtomicU64::new(0)),
            }
        })
    }

    fn handle(&mut self, listener: &Arc<OwnedFd>, n: Notif) {
        let fd = listener.as_fd();
        let Some(&entry) = self.calls.get(&n.data.nr) else {
            let _ = notif::allow(fd, n.id);
            return;
        };
        let tgid = self.tgid(n.pid);
        let Some(sys) = entry else {
            self.exec(&n, tgid);
            let _ = notif::allow(fd, n.id);
            return;
        };
        let paths = self.needs_path.iter().any(|&b| b);
        let c = match decode(&n, sys, paths, self.data.is_some()) {
            Ok(c) => c,
            Err(Skip::Untraced) | Err(Skip::Unreadable) => {
                let _ = notif::allow(fd, n.id);
                return;
            }
        };
        // What was read belongs to this call only if it is still waiting (a call of
        // which nothing was read needs no check: an answer to a call that is gone
        // fails harmlessly).
        if c.read && !notif::valid(fd, n.id) {
            return;
        }
        self.words.all()[planlang::SHM_SEEN + c.op as usize].store(1, Ordering::Relaxed);
        let site = CallSite {
            op: c.op,
            path: &c.path,
            path2: c.path2.as_deref(),
        };
        let seed = self.seed;
        self.proc(tgid);
        let Some(proc) = self.procs.get(&tgid) else {
            return;
        };
        let stream = proc.stream;
        let tree = Tree {
            local: &proc.local,
            matched: self.words.rules(planlang::SHM_MATCHED),
            fired: self.words.rules(planlang::SHM_FIRED),
        };
        let decision = decide(self.plan.rules(), &site, &tree, seed, stream);
        let Some(d) = decision else {
            return self.pass(fd, &n, &c, tgid, stream);
        };
        let mut line = self.head(tgid, &c, stream);
        let atext = action_text(d.action);
        let rule = Some((d.rule + 1, d.ordinal));
        match d.action {
            Action::Errno(e) => {
                self.finish(&mut line, &c, Some(-1), e, &atext, None, rule, None);
                let _ = notif::fail(fd, n.id, e);
            }
            Action::Lie => {
                let v = if c.op == Op::Write { c.len as i64 } else { 0 };
                self.finish(&mut line, &c, Some(v), 0, &atext, None, rule, None);
                let _ = notif::reply(fd, n.id, v);
            }
            Action::Crash => {
                self.finish(&mut line, &c, None, 0, &atext, None, rule, None);
                kill(tgid);
            }
            Action::Delay(ms) => {
                self.finish(&mut line, &c, None, 0, &atext, None, rule, None);
                let l = Arc::clone(listener);
                let id = n.id;
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(ms));
                    let _ = notif::allow(l.as_fd(), id);
                });
            }
            Action::Short(lim) | Action::Torn(lim) => {
                let done = perform(&c, tgid, lim).unwrap_or_default();
                self.finish(
                    &mut line,
                    &c,
                    Some(done.result),
                    done.errno,
                    &atext,
                    None,
                    rule,
                    Some(&done),
                );
                if matches!(d.action, Action::Torn(_)) {
                    kill(tgid);
                } else {
                    answer(fd, n.id, &done);
                }
            }
            Action::CrashAfter => match perform(&c, tgid, u64::MAX) {
                Some(done) => {
                    self.finish(
                        &mut line,
                        &c,
                        Some(done.result),
                        done.errno,
                        &atext,
                        None,
                        rule,
                        Some(&done),
                    );
                    kill(tgid);
                }
                None => self.crash_after_kernel_call(fd, &n, &c, tgid, &mut line, &atext, rule),
            },
            Action::After(e) => {
                let done = perform(&c, tgid, u64::MAX).unwrap_or_default();
                self.finish(
                    &mut line,
                    &c,
                    Some(-1),
                    e,
                    &atext,
                    Some(done.result),
                    rule,
                    Some(&done),
                );
                drop(done.opened);
                let _ = notif::fail(fd, n.id, e);
            }
        }
    }

    /// `crash-after` of a call the supervisor cannot make with its effect in the
    /// process. An answer that lets the kernel make the call would let the process
    /// run on until the SIGKILL lands: long enough, after a lock, to fork a child that
    /// inherits it. So the process never runs again: a `flock` or OFD lock is taken
    /// on its open file description by the supervisor (on a thread of its own, as a
    /// blocking lock blocks) and the kill comes before any answer; a `close` is left
    /// to the exit, which closes every fd. Only a POSIX `fcntl` lock, which would be
    /// the supervisor's, is still made by the kernel, with the kill after the answer.
    #[allow(clippy::too_many_arguments)]
    fn crash_after_kernel_call(
        &mut self,
        fd: std::os::fd::BorrowedFd<'_>,
        n: &Notif,
        c: &Call,
        tgid: u32,
        line: &mut Line,
        atext: &str,
        rule: Option<(usize, u64)>,
    ) {
        if c.op == Op::Close {
            self.finish(line, c, None, 0, atext, None, rule, None);
            kill(tgid);
            return;
        }
        let posix = !(c.sys.name == "flock"
            || matches!(c.args[1] as i32, libc::F_OFD_SETLK | libc::F_OFD_SETLKW));
        if posix {
            self.finish(line, c, None, 0, atext, None, rule, None);
            let _ = notif::allow(fd, n.id);
            kill(tgid);
            return;
        }
        // The lock, then the kill, then the copy of the fd goes: the lock lives as
        // long as the process's own fd, which its exit closes.
        let call = c.clone();
        self.finish(line, c, None, 0, atext, None, rule, None);
        self.lockers.push(std::thread::spawn(move || {
            let held = super::perform::ofd_lock(&call, tgid);
            kill(tgid);
            drop(held);
        }));
    }

    /// No rule fired: the kernel makes the call, unless `record` needs its result
    /// and bytes, in which case the supervisor makes it.
    fn pass(
        &mut self,
        fd: std::os::fd::BorrowedFd<'_>,
        n: &Notif,
        c: &Call,
        tgid: u32,
        stream: u64,
    ) {
        let record = self.data.is_some()
            && match c.op {
                // Writes to pipes and terminals may block: the kernel makes them.
                Op::Write => c.regular,
                op => super::perform::can_perform(op),
            };
        if self.trace.is_none() {
            let _ = notif::allow(fd, n.id);
            return;
        }
        let mut line = self.head(tgid, c, stream);
        if record {
            if let Some(done) = perform(c, tgid, u64::MAX) {
                self.finish(
                    &mut line,
                    c,
                    Some(done.result),
                    done.errno,
                    "pass",
                    None,
                    None,
                    Some(&done),
                );
                answer_open(fd, n.id, c, done);
                return;
            }
        }
        let _ = notif::allow(fd, n.id);
        // The kernel made it after our answer: its result is not seen here.
        line.bool("continued", true);
        if self.data.is_some() && c.op == Op::Write && c.len > 0 {
            // Output to a pipe, socket or terminal: its position is what counts.
            line.i64("len", c.len as i64);
        }
        self.finish(&mut line, c, None, 0, "pass", None, None, None);
    }

    fn exec(&mut self, n: &Notif, tgid: u32) {
        let a = n.data.args;
        let (dirfd, p) = if n.data.nr == libc::SYS_execveat as i32 {
            (a[0] as i64, a[1])
        } else {
            (libc::AT_FDCWD as i64, a[0])
        };
        let Ok(raw) = target::read_cstr(n.pid, p) else {
            return;
        };
        let path = target::abs_path(n.pid, dirfd, &raw);
        // execvp tries each $PATH directory in turn: only an attempt that can succeed
        // starts an image (an exec failing on a file that is there is not told apart).
        let runnable = std::fs::metadata(std::ffi::OsStr::from_bytes(&path))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        if !runnable && !raw.is_empty() {
            return;
        }
        // A new image: per-process counts start again, with a new stream.
        self.procs.remove(&tgid);
        let stream = self.proc(tgid).stream;
        self.words.all()[planlang::SHM_LOADED].fetch_add(1, Ordering::Relaxed);
        let rules = self.plan.rules().len() as i64;
        let mut l = Line::new();
        self.seq += 1;
        l.u64("seq", self.seq);
        l.i64("pid", i64::from(tgid));
        l.i64("tid", i64::from(n.pid));
        l.u64("stream", stream);
        l.str("op", b"loaded");
        l.str("call", b"");
        l.str("path", &path);
        l.i64("result", 0);
        l.i64("errno", 0);
        l.str("action", b"none");
        l.i64("rules", rules);
        l.bool("shared", true);
        l.str("backend", b"seccomp");
        l.finish();
        self.emit(&l);
    }

    fn head(&mut self, tgid: u32, c: &Call, stream: u64) -> Line {
        let mut l = Line::new();
        self.seq += 1;
        l.u64("seq", self.seq);
        l.i64("pid", i64::from(tgid));
        l.i64("tid", i64::from(c.tid));
        l.u64("stream", stream);
        l.str("op", c.op.name().as_bytes());
        l.str("call", c.sys.name.as_bytes());
        l
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        l: &mut Line,
        c: &Call,
        result: Option<i64>,
        err: i32,
        action: &str,
        real: Option<i64>,
        rule: Option<(usize, u64)>,
        done: Option<&Done>,
    ) {
        if self.trace.is_none() {
            return;
        }
        l.str("path", &c.path);
        if let Some(p2) = &c.path2 {
            l.str("path2", p2);
        }
        let fd = match (c.op, done) {
            (Op::Open, Some(d)) if d.opened.is_some() => None,
            _ => c.fd,
        };
        if let Some(fd) = fd {
            l.i64("fd", fd);
        }
        match result {
            Some(r) => l.i64("result", r),
            None => l.null("result"),
        }
        l.i64("errno", i64::from(err));
        if let Some(name) = planlang::errno_name(err).filter(|_| err != 0) {
            l.str("errno_name", name.as_bytes());
        }
        l.str("action", action.as_bytes());
        if let Some(r) = real {
            l.i64("real_result", r);
        }
        detail(l, c);
        if let (Some(d), Some(sink)) = (done, self.data.as_mut()) {
            if c.op == Op::Write && d.result > 0 {
                l.i64("len", d.result);
                if let Some(off) = d.off {
                    l.i64("off", off);
                    if sink.file.write_all(&d.bytes).is_ok() {
                        l.u64("data", sink.len);
                        sink.len += d.bytes.len() as u64;
                    }
                }
            }
            match c.sys.name {
                "ftruncate" | "truncate" => l.i64("len", c.args[1] as i64),
                "fallocate" => {
                    l.i64("falloc_mode", c.args[1] as i64);
                    l.i64("off", c.args[2] as i64);
                    l.i64("len", c.args[3] as i64);
                }
                _ => {}
            }
        }
        match rule {
            Some((r, hit)) => {
                l.u64("rule", r as u64);
                l.u64("hit", hit);
            }
            None => l.null("rule"),
        }
        l.finish();
        self.emit(l);
        if rule.is_some() {
            // A fault is in the trace before the process sees it (or dies of it).
            self.flush();
        }
    }

    /// Queues a trace line. Lines of calls that passed are written in batches — when
    /// the tree makes no watched call for a millisecond, when 64 KiB are held, before
    /// any fault is answered and at the end — so a loop of watched calls does not pay
    /// a `write` each; the order of lines is kept.
    fn emit(&mut self, l: &Line) {
        if self.trace.is_none() {
            return;
        }
        self.pending.extend_from_slice(l.as_bytes());
        if self.pending.len() >= PENDING_MAX {
            self.flush();
        }
    }

    fn flush(&mut self) {
        let Some(t) = self.trace.as_mut() else { return };
        if !self.pending.is_empty() && t.write_all(&self.pending).is_err() {
            let lines = self.pending.iter().filter(|&&b| b == b'\n').count();
            self.words.all()[planlang::SHM_TRACE_ERRORS].fetch_add(lines as u64, Ordering::Relaxed);
        }
        self.pending.clear();
    }
}

/// The fd of an `open` made for the process goes to it as the call's result.
fn answer_open(fd: std::os::fd::BorrowedFd<'_>, id: u64, c: &Call, done: Done) {
    match (&done.opened, c.detail) {
        (Some(f), Detail::Open { flags, .. }) => {
            if let Err(e) = notif::send_fd(fd, id, f, flags & libc::O_CLOEXEC != 0) {
                let _ = notif::fail(fd, id, e.raw_os_error().unwrap_or(libc::EIO));
            }
        }
        _ => answer(fd, id, &done),
    }
}

fn answer(fd: std::os::fd::BorrowedFd<'_>, id: u64, done: &Done) {
    let _ = if done.result < 0 {
        notif::fail(fd, id, done.errno)
    } else {
        notif::reply(fd, id, done.result)
    };
}

/// SIGKILL the whole process (every thread).
fn kill(tgid: u32) {
    // SAFETY: kill takes integers only.
    unsafe { libc::kill(tgid as libc::pid_t, libc::SIGKILL) };
}
