//! The seccomp backend: the same plans as `libvxfault.so`, for programs the preload
//! cannot see (Go, static binaries, raw system calls). The child loads a filter that
//! reports exactly the system calls of the plan's families
//! (`planlang::syscalls::SYSCALLS`) to a supervisor thread of the runner, which
//! decides each one with the preload's own decision code and answers it.
//! docs/fault-injection.md ("Two backends") has the design and its limits.

mod decode;
pub mod elf;
mod filter;
mod notif;
mod perform;
pub(crate) mod run;
mod supervisor;
mod target;
mod trace_words;

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::str::FromStr;
use std::sync::Arc;
use std::thread::JoinHandle;

use rustix::net::{socketpair, AddressFamily, SocketFlags, SocketType};

pub use supervisor::{DataSink, Stats};

use crate::planlang::{self, Action};
use crate::{Op, PlanError, RuleInfo};

/// How faults reach the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// `LD_PRELOAD=libvxfault.so`: libc's wrappers.
    Preload,
    /// A seccomp user-notification filter: the system calls themselves.
    Seccomp,
    /// The preload for a dynamically linked program that imports libc's file calls,
    /// seccomp otherwise.
    #[default]
    Auto,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Preload => "preload",
            Backend::Seccomp => "seccomp",
            Backend::Auto => "auto",
        }
    }
}

/// A `--backend`/`fault_backend` value that is not a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownBackend(pub String);

impl fmt::Display for UnknownBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown backend `{}` (expected preload, seccomp or auto)",
            self.0
        )
    }
}

impl std::error::Error for UnknownBackend {}

impl FromStr for Backend {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Backend, UnknownBackend> {
        match s {
            "preload" => Ok(Backend::Preload),
            "seccomp" => Ok(Backend::Seccomp),
            "auto" => Ok(Backend::Auto),
            _ => Err(UnknownBackend(s.to_string())),
        }
    }
}

/// The backend a run uses, and why (for `auto`, what the program is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub backend: Backend,
    pub reason: String,
}

/// Resolves `requested` for the program `prog`: `auto` reads the program's ELF file.
pub fn choose(requested: Backend, prog: &Path) -> Choice {
    if requested != Backend::Auto {
        return Choice {
            backend: requested,
            reason: "as requested".into(),
        };
    }
    let shown = prog.display();
    let (backend, reason) = match elf::classify(prog) {
        Ok((_, elf::Kind::Libc)) => (
            Backend::Preload,
            format!("auto: {shown} is dynamically linked and calls libc's file functions"),
        ),
        Ok((p, elf::Kind::Static)) => (
            Backend::Seccomp,
            format!("auto: {} is statically linked", p.display()),
        ),
        Ok((p, elf::Kind::Go)) => (
            Backend::Seccomp,
            format!("auto: {} is a Go program (raw system calls)", p.display()),
        ),
        Ok((p, elf::Kind::NoLibcCalls)) => (
            Backend::Seccomp,
            format!(
                "auto: {} imports none of libc's file functions",
                p.display()
            ),
        ),
        Ok((p, elf::Kind::Unknown(why))) => (
            Backend::Preload,
            format!("auto: {} is {why}; the preload is tried", p.display()),
        ),
        Err(_) => (
            Backend::Preload,
            format!("auto: {shown} was not found; the preload is tried"),
        ),
    };
    Choice { backend, reason }
}

/// Refuses a plan the seccomp backend cannot honour, before anything runs: `after:ERRNO`
/// on `close` or `flock` would need the supervisor to close an fd of the process or
/// take a POSIX lock in its name, which it cannot.
pub fn check_rules(rules: &[RuleInfo], plan: &str) -> Result<(), PlanError> {
    let mut parsed = Box::new(planlang::Plan::EMPTY);
    if planlang::parse(plan.as_bytes(), &mut parsed).is_err() {
        return Ok(());
    }
    for (i, (r, info)) in parsed.rules().iter().zip(rules).enumerate() {
        if matches!(r.action, Action::After(_)) && !perform::can_perform(r.op) {
            return Err(PlanError {
                rule: i + 1,
                text: info.text.clone(),
                message: format!(
                    "after:ERRNO on {} needs the preload backend (the seccomp supervisor \
                     cannot {} in the process's stead)",
                    r.op.name(),
                    if r.op == Op::Close {
                        "close an fd"
                    } else {
                        "take a lock"
                    }
                ),
            });
        }
    }
    Ok(())
}

/// The families a filter watches: the plan's, or all of them when the whole trace
/// is wanted (`points`, `record`).
pub fn families(rules: &[RuleInfo], all: bool) -> Vec<Op> {
    if all {
        return planlang::ALL_OPS.to_vec();
    }
    let mut ops: Vec<Op> = rules.iter().map(|r| r.op).collect();
    ops.dedup();
    ops
}

/// A command prepared to run under the filter: spawn it, call [`Attached::spawned`],
/// then [`Attached::finish`] once it exited.
pub struct Attached {
    child_end: Option<OwnedFd>,
    handle: JoinHandle<io::Result<Stats>>,
}

/// What the supervisor needs besides the filter.
pub struct Setup<'a> {
    pub plan: &'a str,
    pub ops: &'a [Op],
    pub seed: u64,
    /// The trace file (appended), if any.
    pub trace: Option<&'a Path>,
    /// `record`'s data file, if recording.
    pub data: Option<&'a Path>,
    /// A counter file made for this plan: the supervisor counts into it, so it can
    /// be read while the program runs ([`crate::Counters::read`]).
    pub counters: Option<&'a crate::Counters>,
}

/// Installs the filter in `cmd`'s child (between fork and exec) and starts the
/// supervisor thread, which waits for the child's listener.
pub fn attach(cmd: &mut Command, s: &Setup<'_>) -> io::Result<Attached> {
    let mut plan = Box::new(planlang::Plan::EMPTY);
    planlang::parse(s.plan.as_bytes(), &mut plan)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.msg))?;
    let filter = Arc::new(filter::Filter::compile(s.ops)?);
    let (ours, theirs) = socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    let open_append = |p: &Path| OpenOptions::new().append(true).create(true).open(p);
    let trace: Option<File> = s.trace.map(open_append).transpose()?;
    let data = match s.data {
        Some(p) => {
            let file = open_append(p)?;
            let len = file.metadata()?.len();
            Some(DataSink { file, len })
        }
        None => None,
    };
    let words = match s.counters {
        Some(c) => c.map(s.plan)?,
        None => crate::Words::own(),
    };
    let calls = filter.calls.clone();
    let child_fd = theirs.as_raw_fd();
    let f = Arc::clone(&filter);
    // SAFETY: the closure runs in the forked child before exec; `install` makes only
    // system calls (seccomp, prctl, sendmsg on a stack buffer) and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            // SAFETY: `child_fd` is our end of the socketpair, open in the child (it is
            // close-on-exec, not close-on-fork); borrowed, not closed, here.
            let sock = std::mem::ManuallyDrop::new(OwnedFd::from_raw_fd(child_fd));
            f.install(&sock)
        });
    }
    let seed = s.seed;
    let handle = std::thread::spawn(move || -> io::Result<Stats> {
        let listener = filter::receive(&ours)?;
        drop(ours);
        let sup = supervisor::Supervisor::new(plan, seed, calls, trace, data, words);
        Ok(sup.run(listener))
    });
    Ok(Attached {
        child_end: Some(theirs),
        handle,
    })
}

impl Attached {
    /// After the spawn (successful or not): the runner's copy of the child's socket
    /// end is closed, so a child that died before sending its listener ends the wait.
    pub fn spawned(&mut self) {
        self.child_end = None;
    }

    /// Waits until no process uses the filter any more, and returns the counts.
    pub fn finish(mut self) -> io::Result<Stats> {
        self.child_end = None;
        self.handle
            .join()
            .map_err(|_| io::Error::other("the seccomp supervisor panicked"))?
    }
}

/// Spawns `cmd` under the filter; the caller waits for the child, then calls
/// [`Attached::finish`].
pub fn spawn(cmd: &mut Command, s: &Setup<'_>) -> io::Result<(Child, Attached)> {
    let mut att = attach(cmd, s)?;
    let child = cmd.spawn();
    att.spawned();
    match child {
        Ok(c) => Ok((c, att)),
        Err(e) => {
            let _ = att.finish();
            Err(e)
        }
    }
}
