//! The process state everything the kit starts begins in, whatever state `vxcert` (or
//! `cargo test`) was started in, and the sweep that leaves nothing of a scenario
//! running after it.
//!
//! A verdict must not depend on how the kit was started. `nohup` hands its command
//! SIGHUP ignored, a CI runner or service manager may hand signals ignored or
//! blocked, and a caller may leak descriptors; ignored dispositions, a blocked mask
//! and descriptors without `FD_CLOEXEC` all survive `exec`. So a broker's SIGHUP to
//! its agent did nothing under `nohup` and a "kill on detach" violation passed.
//! [`clean_start`] gives each program default dispositions, an empty mask and a
//! session of its own; [`close_inherited_on_exec`] marks what `vxcert` itself
//! inherited close-on-exec.
//!
//! Nothing outlives its scenario: the run is the child subreaper of everything it
//! starts (orphans come back to it, not to PID 1), so every leftover is a descendant,
//! and [`sweep_scenario`] kills the descendants that belong to one scenario's sandbox
//! (its path is in their environment, command line or working directory; a process
//! inherits the sandbox's `HOME`), [`sweep_all`] every descendant at the end of a run
//! or when the run is interrupted.

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// `argv[1]` of `vxcert` started as the trampoline of [`clean_command`].
pub const TRAMPOLINE_ARG: &str = "__vxcert-clean-start";

/// `vxcert`'s own executable, once its `main` has called [`trampoline_or_return`]
/// (unset in a unit test's binary, which cannot be a trampoline).
static TRAMPOLINE: OnceLock<PathBuf> = OnceLock::new();

/// Called first in `vxcert`'s `main`. Started as [`TRAMPOLINE_ARG`] `PROGRAM ARGS…`,
/// it gives itself the clean start ([`reset_dispositions`], a new session) and
/// executes `PROGRAM` in its place, never returning; otherwise it records the
/// executable for [`clean_command`] and returns.
pub fn trampoline_or_return() {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new(TRAMPOLINE_ARG)) {
        // The running image itself, even once its file is replaced or deleted (a
        // rebuild during a long run): a spawned child's `/proc/self/exe` is still
        // this executable until it executes another.
        let exe = PathBuf::from("/proc/self/exe");
        if exe.exists() {
            let _ = TRAMPOLINE.set(exe);
        }
        return;
    }
    let Some(program) = args.next() else {
        eprintln!("vxcert: {TRAMPOLINE_ARG} needs a program to start");
        std::process::exit(127);
    };
    reset_dispositions();
    let _ = nix::unistd::setsid();
    // Environment, working directory and descriptors are the ones the kit gave this
    // process; `exec` searches PATH as the kit's own start would have.
    let e = Command::new(&program).args(args).exec();
    eprintln!("vxcert: cannot start {}: {e}", program.to_string_lossy());
    std::process::exit(127);
}

/// `program args` with exactly the environment `env` (the last value of a name wins)
/// in `cwd`, starting in the clean state of [`clean_start`].
///
/// Inside `vxcert` it starts through `vxcert` itself ([`trampoline_or_return`]):
/// a `Command` with a `pre_exec` hook is forked, and the fork copies the page tables
/// of the whole run (hundreds of MiB of heap), which then cost the child's `exec` as
/// much to tear down, and the run's later writes a copy-on-write fault each. That was
/// about half of a reference run's CPU time; the trampoline is spawned with
/// `posix_spawn` and costs one small `exec`. A program that does not resolve to an
/// executable (or a relative path) starts through [`clean_start`], so that `spawn`
/// reports its error as before; so does one whose environment sets the dynamic
/// loader (`LD_PRELOAD`: the fault injector, libfaketime), which would load into the
/// trampoline too and count, time or fault its image as the implementation's (a
/// fault injection added later goes through [`without_trampoline`]).
pub fn clean_command(
    program: &str,
    args: &[String],
    env: &[(OsString, OsString)],
    cwd: &Path,
) -> Command {
    let path_var = env.iter().rev().find(|(k, _)| k == "PATH").map(|(_, v)| v);
    let loader_set = env
        .iter()
        .any(|(k, _)| k.as_encoded_bytes().starts_with(b"LD_"));
    let via = TRAMPOLINE
        .get()
        .filter(|_| !loader_set && resolves(program, path_var.map(OsString::as_os_str)));
    let mut cmd = match via {
        Some(exe) => {
            let mut cmd = Command::new(exe);
            cmd.arg(TRAMPOLINE_ARG).arg(program);
            cmd
        }
        None => {
            let mut cmd = Command::new(program);
            clean_start(&mut cmd);
            cmd
        }
    };
    cmd.args(args).env_clear().current_dir(cwd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// The program and arguments `cmd` starts, seen through the trampoline of
/// [`clean_command`]: what evidence and messages name.
pub fn shown_argv(cmd: &Command) -> (OsString, Vec<OsString>) {
    let args: Vec<OsString> = cmd.get_args().map(OsStr::to_owned).collect();
    let through = TRAMPOLINE
        .get()
        .is_some_and(|t| t.as_os_str() == cmd.get_program());
    match args.split_first() {
        Some((marker, rest)) if through && marker == TRAMPOLINE_ARG && !rest.is_empty() => {
            (rest[0].clone(), rest[1..].to_vec())
        }
        _ => (cmd.get_program().to_owned(), args),
    }
}

/// `cmd` started without the trampoline of [`clean_command`] (as it is when that
/// was not used): for a fault injector, whose library or seccomp filter would
/// otherwise see the trampoline's calls as the implementation's. The program,
/// arguments, environment and working directory are kept; standard streams set on
/// `cmd` are not (`Command` does not tell them), so set them afterwards.
pub fn without_trampoline(cmd: &mut Command) {
    let through = TRAMPOLINE
        .get()
        .is_some_and(|t| t.as_os_str() == cmd.get_program());
    if !through {
        return;
    }
    let (program, args) = shown_argv(cmd);
    let mut plain = Command::new(program);
    plain.args(args).env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            plain.env(k, v);
        }
    }
    if let Some(dir) = cmd.get_current_dir() {
        plain.current_dir(dir);
    }
    clean_start(&mut plain);
    *cmd = plain;
}

/// Whether `program` names an executable file: an absolute path, or a name found in
/// an absolute directory of `path`.
fn resolves(program: &str, path: Option<&OsStr>) -> bool {
    let executable =
        |p: &Path| p.is_file() && nix::unistd::access(p, nix::unistd::AccessFlags::X_OK).is_ok();
    if program.contains('/') {
        return Path::new(program).is_absolute() && executable(Path::new(program));
    }
    !program.is_empty()
        && path.is_some_and(|dirs| {
            std::env::split_paths(dirs).any(|d| d.is_absolute() && executable(&d.join(program)))
        })
}

/// Default dispositions for every signal, an empty signal mask and a new session
/// (so the program and what it starts can be signalled as a group), in the child
/// between `fork` and `exec`. A session cannot be made for a process that already
/// leads a group (a command with `process_group(0)`); it keeps that group.
pub fn clean_start(cmd: &mut Command) -> &mut Command {
    // SAFETY: between fork and exec only async-signal-safe calls are allowed:
    // sigaction, sigprocmask and setsid are (POSIX.1-2008 §2.4.3); nothing allocates.
    unsafe {
        cmd.pre_exec(|| {
            reset_dispositions();
            let _ = nix::unistd::setsid();
            Ok(())
        })
    }
}

/// Every catchable signal back to `SIG_DFL` and an empty mask in this process.
/// Async-signal-safe: [`clean_start`] calls it between fork and exec, and `vxstub`
/// at its start (a real agent CLI does not run with SIGHUP ignored because its
/// broker was started under `nohup`).
pub fn reset_dispositions() {
    // SAFETY: a zeroed sigaction is a valid SIG_DFL action with an empty mask;
    // sigaction and sigprocmask only read the pointers passed for the call.
    unsafe {
        let mut dfl: nix::libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = nix::libc::SIG_DFL;
        nix::libc::sigemptyset(&mut dfl.sa_mask);
        for sig in 1..=nix::libc::SIGRTMAX() {
            if sig == nix::libc::SIGKILL || sig == nix::libc::SIGSTOP {
                continue;
            }
            // Fails for the few numbers glibc reserves (32, 33): nothing to reset.
            nix::libc::sigaction(sig, &dfl, std::ptr::null_mut());
        }
        let mut empty: nix::libc::sigset_t = std::mem::zeroed();
        nix::libc::sigemptyset(&mut empty);
        nix::libc::sigprocmask(nix::libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    }
}

/// Marks every descriptor above stderr that this process inherited close-on-exec,
/// so no program the kit starts gets a descriptor of whoever started the kit (a
/// caller's `flock` held by leftover agents was seen). Call first thing in `main`.
pub fn close_inherited_on_exec() {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    let fds: Vec<i32> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .filter(|fd| *fd > 2)
        .collect();
    for fd in fds {
        // SAFETY: F_GETFD/F_SETFD only change a flag of the descriptor table; a
        // descriptor closed meanwhile (the directory's own) makes them fail harmlessly.
        unsafe {
            let flags = nix::libc::fcntl(fd, nix::libc::F_GETFD);
            if flags >= 0 {
                nix::libc::fcntl(fd, nix::libc::F_SETFD, flags | nix::libc::FD_CLOEXEC);
            }
        }
    }
}

/// A process the sweep killed: what the run's log names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    pub pid: i32,
    pub comm: String,
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (pid {})", self.comm, self.pid)
    }
}

/// Kills every live descendant of this process whose environment, command line or
/// working directory names `sandbox` (or a path under it), until none is left or
/// two seconds passed; returns what it killed.
pub fn sweep_scenario(sandbox: &Path) -> Vec<Leftover> {
    let marker = sandbox.as_os_str().as_encoded_bytes().to_vec();
    sweep(|pid| belongs_to(pid, &marker))
}

/// Kills every live descendant of this process (the end of a run, an interrupt).
pub fn sweep_all() -> Vec<Leftover> {
    sweep(|_| true)
}

fn sweep(mut select: impl FnMut(i32) -> bool) -> Vec<Leftover> {
    let mut killed: Vec<Leftover> = Vec::new();
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        let found: Vec<i32> = live_descendants()
            .into_iter()
            .filter(|p| select(*p))
            .collect();
        if found.is_empty() || Instant::now() >= until {
            return killed;
        }
        for pid in found {
            if !killed.iter().any(|k| k.pid == pid) {
                killed.push(Leftover {
                    pid,
                    comm: comm(pid),
                });
            }
            // A process that forks while it is killed leaves a child in its group.
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Live (not zombie) processes below this one, from each process's parent in `/proc`.
pub fn live_descendants() -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut parent_of: Vec<(i32, i32)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let Some(fields) = stat_fields(&e.path().join("stat")) else {
                continue;
            };
            if matches!(fields.first().map(String::as_str), Some("Z" | "X")) {
                continue;
            }
            if let Some(ppid) = fields.get(1).and_then(|f| f.parse().ok()) {
                parent_of.push((pid, ppid));
            }
        }
    }
    let mut below = vec![me];
    let mut i = 0;
    while i < below.len() {
        let p = below[i];
        below.extend(parent_of.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    below.remove(0);
    below
}

/// Whether `pid`'s environment, command line or working directory names `marker`
/// (a sandbox path) or a path under it.
pub fn belongs_to(pid: i32, marker: &[u8]) -> bool {
    let mentions = |bytes: &[u8]| {
        bytes
            .windows(marker.len() + 1)
            .any(|w| w.starts_with(marker) && matches!(w[marker.len()], b'/' | 0 | b'=' | b':'))
            || bytes.ends_with(marker)
    };
    let proc_dir = format!("/proc/{pid}");
    ["environ", "cmdline"]
        .iter()
        .any(|f| std::fs::read(format!("{proc_dir}/{f}")).is_ok_and(|b| mentions(&b)))
        || std::fs::read_link(format!("{proc_dir}/cwd"))
            .is_ok_and(|p| mentions(p.as_os_str().as_encoded_bytes()))
}

/// The fields of a `/proc/<pid>/stat` after the parenthesised command name (which
/// may itself hold spaces and parentheses): state, ppid, pgrp, session, …
/// (here rather than in `process`, which re-exports it: `vxstub` includes this file
/// alone).
pub fn stat_fields(stat_file: &Path) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(stat_file).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_string).collect())
}

fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// Runs [`sweep_all`] and exits when SIGINT, SIGTERM, SIGHUP or SIGQUIT arrives,
/// except those this process was started with ignored (`nohup` keeps the run alive
/// on a hangup, as its caller asked). Call before any other thread is started: the
/// signals are blocked here and the threads inherit the mask; children do not
/// ([`clean_start`]).
pub fn sweep_on_interrupt() {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow};
    let mut set = SigSet::empty();
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
    ] {
        let probe = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
        // SAFETY: installing SIG_DFL and immediately restoring the old action; no
        // handler function is involved. Only this thread runs yet.
        let old = unsafe { sigaction(sig, &probe) };
        if let Ok(old) = old {
            // SAFETY: as above, the action read back a moment ago.
            let _ = unsafe { sigaction(sig, &old) };
            if old.handler() == SigHandler::SigIgn {
                continue;
            }
        }
        set.add(sig);
    }
    if nix::sys::signal::pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None).is_err() {
        return;
    }
    std::thread::spawn(move || {
        if let Ok(sig) = set.wait() {
            let left = sweep_all();
            // Not eprintln!: whoever reads stderr may be gone (it was killed first),
            // and a panic here would leave the run running.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "vxcert: {sig} received; stopped {} process(es) the run had started",
                left.len()
            );
            std::process::exit(128 + sig as i32);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program started through [`clean_start`] has every signal at its default,
    /// nothing blocked and a session of its own, although its parent ignored SIGHUP
    /// and SIGPIPE and blocked SIGUSR1 (as `nohup` or a CI runner may start vxcert).
    #[test]
    fn a_started_program_has_default_dispositions_and_an_empty_mask() {
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "grep -E '^(SigBlk|SigIgn):' /proc/self/status; ps -o sid= -p $$; echo $$",
        ]);
        // SAFETY: signal and sigprocmask are async-signal-safe. Registered before
        // clean_start's closure, so the child is first put in the hostile state.
        unsafe {
            cmd.pre_exec(|| {
                nix::libc::signal(nix::libc::SIGHUP, nix::libc::SIG_IGN);
                nix::libc::signal(nix::libc::SIGPIPE, nix::libc::SIG_IGN);
                let mut set: nix::libc::sigset_t = std::mem::zeroed();
                nix::libc::sigemptyset(&mut set);
                nix::libc::sigaddset(&mut set, nix::libc::SIGUSR1);
                nix::libc::sigprocmask(nix::libc::SIG_BLOCK, &set, std::ptr::null_mut());
                Ok(())
            });
        }
        clean_start(&mut cmd);
        let out = cmd.output().expect("run sh");
        let text = String::from_utf8_lossy(&out.stdout);
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| u64::from_str_radix(v.trim(), 16).unwrap_or(u64::MAX))
        };
        assert_eq!(field("SigBlk:"), Some(0), "blocked signals: {text}");
        // Signals 32 and 33 are glibc's own (thread cancellation, setxid); its
        // sigaction refuses them, and no program using glibc can handle them.
        let glibc_own = (1u64 << 31) | (1u64 << 32);
        assert_eq!(
            field("SigIgn:").map(|m| m & !glibc_own),
            Some(0),
            "ignored signals: {text}"
        );
        let ids: Vec<u32> = text
            .lines()
            .skip(2)
            .map(|l| l.trim().parse().unwrap_or(0))
            .collect();
        assert!(
            ids.len() == 2 && ids[0] == ids[1],
            "the program leads a session of its own: {text}"
        );
    }
}
