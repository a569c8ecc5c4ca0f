//! The verdict does not depend on how `vxcert` was started, and nothing it started
//! outlives it (issue 47). `vxcert run` is started here the way `nohup`, a CI runner
//! or a service manager may start it: SIGHUP and SIGPIPE ignored, SIGUSR1 and SIGUSR2
//! blocked, and an extra descriptor (a file this test holds an `flock` on) open
//! without close-on-exec. Against the foreign single-writer broker (Python), the
//! honest build must certify and the planted `kill-on-detach` violation must fail
//! exactly its scenario, as from a clean start; afterwards no process the run
//! started is alive and no leftover holds the caller's lock.
//!
//! Before the fix the honest broker failed two rows and `kill-on-detach` passed
//! under `nohup`: the stand-in agents inherited SIGHUP ignored, so the broker's
//! hangup to its agent did nothing, and 117 agents were left running after CI.

mod common;

use nix::fcntl::{Flock, FlockArg};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn peer_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers/single-writer-broker")
}

/// `vxcert run` started in a hostile process state; `violation` is the peer's
/// `PEER_VIOLATION`. The exit code and `(scenario name, verdict)` of each row.
fn certify_hostile(
    violation: Option<(&str, &str)>,
    caller_fd: i32,
    report: &Path,
) -> (i32, Vec<(String, String)>) {
    let mut cmd = Command::new(common::vxcert());
    cmd.args(["run", "--quiet", "--profile"])
        .arg(peer_dir().join("profile.toml"))
        .arg("--report")
        .arg(report)
        .env_remove("PEER_VIOLATION");
    if let Some((name, tags)) = violation {
        cmd.env("PEER_VIOLATION", name).args(["--tags", tags]);
    }
    // SAFETY: signal, sigprocmask and dup2 are async-signal-safe; nothing allocates.
    unsafe {
        cmd.pre_exec(move || {
            nix::libc::signal(nix::libc::SIGHUP, nix::libc::SIG_IGN);
            nix::libc::signal(nix::libc::SIGPIPE, nix::libc::SIG_IGN);
            let mut blocked: nix::libc::sigset_t = std::mem::zeroed();
            nix::libc::sigemptyset(&mut blocked);
            nix::libc::sigaddset(&mut blocked, nix::libc::SIGUSR1);
            nix::libc::sigaddset(&mut blocked, nix::libc::SIGUSR2);
            nix::libc::sigprocmask(nix::libc::SIG_BLOCK, &blocked, std::ptr::null_mut());
            // dup2 clears close-on-exec on the copy: vxcert inherits fd 9.
            if nix::libc::dup2(caller_fd, 9) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().expect("run vxcert");
    let text = std::fs::read_to_string(report.join("report.json")).unwrap_or_else(|_| {
        panic!(
            "no report.json; vxcert's stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let json: serde_json::Value = serde_json::from_str(&text).expect("report.json is JSON");
    let rows = json["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or("").to_string(),
                s["verdict"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    (out.status.code().unwrap_or(-1), rows)
}

/// Live processes below this test process (it is their subreaper, so the orphans of
/// everything vxcert started come back here instead of to PID 1).
fn live_descendants() -> Vec<String> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    let mut parents = vec![me];
    let mut i = 0;
    let procs: Vec<(String, String, String, String)> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let (head, rest) = stat.rsplit_once(')')?;
            let comm = head.split_once('(')?.1.to_string();
            let mut f = rest.split_whitespace();
            let state = f.next()?.to_string();
            let ppid = f.next()?.to_string();
            Some((
                e.file_name().to_string_lossy().into_owned(),
                ppid,
                state,
                comm,
            ))
        })
        .collect();
    while i < parents.len() {
        for (pid, ppid, state, comm) in &procs {
            if *ppid == parents[i] {
                parents.push(pid.clone());
                if state != "Z" {
                    out.push(format!("{comm} (pid {pid})"));
                }
            }
        }
        i += 1;
    }
    out
}

#[test]
fn a_hostile_start_gives_the_quiet_verdicts_and_leaves_nothing_running() {
    common::ensure_reference(&[]);
    nix::sys::prctl::set_child_subreaper(true).expect("become a subreaper");
    let dir = tempfile::tempdir().expect("tempdir");
    let lock_path = dir.path().join("caller.lock");
    let lock_file = std::fs::File::create(&lock_path).expect("create the caller's lock");
    let held = Flock::lock(lock_file, FlockArg::LockExclusiveNonblock).expect("flock");
    let fd = held.as_raw_fd();

    let (code, rows) = certify_hostile(None, fd, &dir.path().join("honest"));
    let bad: Vec<String> = rows
        .iter()
        .filter(|(_, v)| {
            !["pass", "non-strict", "not-claimed", "unsupported-optional"].contains(&v.as_str())
        })
        .map(|(n, v)| format!("{n}: {v}"))
        .collect();
    assert!(
        bad.is_empty() && code == 0,
        "the honest peer under a hostile start: exit {code}, rows not passing: {bad:#?}"
    );
    assert!(
        rows.iter().filter(|(_, v)| v == "pass").count() >= 20,
        "the honest peer passed fewer than 20 rows: {rows:#?}"
    );

    let (code, rows) = certify_hostile(
        Some(("kill-on-detach", "@sw-detach-not-kill")),
        fd,
        &dir.path().join("kill-on-detach"),
    );
    let failing: Vec<&(String, String)> = rows
        .iter()
        .filter(|(_, v)| !["pass", "not-claimed", "unsupported-optional"].contains(&v.as_str()))
        .collect();
    assert_eq!(
        failing,
        vec![&(
            "Closing the last viewer leaves the master".to_string(),
            "fail".to_string()
        )],
        "kill-on-detach under a hostile start (exit {code})"
    );
    assert_eq!(code, 1, "vxcert's exit status with kill-on-detach planted");

    let left = live_descendants();
    assert!(
        left.is_empty(),
        "processes the runs started are still running: {left:?}"
    );
    // No leftover holds the caller's descriptor: once this test lets go of its own,
    // another open of the file can take the lock.
    drop(held);
    let again = std::fs::File::open(&lock_path).expect("reopen the caller's lock");
    assert!(
        Flock::lock(again, FlockArg::LockExclusiveNonblock).is_ok(),
        "a process the run started still holds the caller's locked descriptor"
    );
}

/// The trampoline `vxcert` starts implementations through (a `posix_spawn` of
/// itself, instead of a fork of the whole run): started from a parent with SIGHUP
/// and SIGPIPE ignored and SIGUSR1 blocked, the program it becomes has every
/// signal at its default, nothing blocked and a session of its own, and keeps its
/// arguments, environment and working directory; a program that cannot start is named
/// on stderr with exit status 127.
#[test]
fn the_start_trampoline_gives_a_clean_state_and_becomes_its_program() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cmd = Command::new(common::vxcert());
    cmd.args([
        "__vxcert-clean-start",
        "sh",
        "-c",
        "grep -E '^(SigBlk|SigIgn):' /proc/self/status; echo \"sid $(ps -o sid= -p $$)\"; \
         echo \"pid $$\"; echo \"arg0 $0\"; echo \"mark $VX_MARK\"; pwd",
        "zero",
    ])
    .env("VX_MARK", "kept")
    .current_dir(dir.path());
    // SAFETY: signal and sigprocmask are async-signal-safe; nothing allocates.
    unsafe {
        cmd.pre_exec(|| {
            nix::libc::signal(nix::libc::SIGHUP, nix::libc::SIG_IGN);
            nix::libc::signal(nix::libc::SIGPIPE, nix::libc::SIG_IGN);
            let mut blocked: nix::libc::sigset_t = std::mem::zeroed();
            nix::libc::sigemptyset(&mut blocked);
            nix::libc::sigaddset(&mut blocked, nix::libc::SIGUSR1);
            nix::libc::sigprocmask(nix::libc::SIG_BLOCK, &blocked, std::ptr::null_mut());
            Ok(())
        });
    }
    let out = cmd.output().expect("run the trampoline");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "trampoline: {:?}: {text}", out.status);
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("no {name} line in {text}"))
    };
    let mask = |name: &str| u64::from_str_radix(&field(name), 16).expect("a signal mask");
    // Signals 32 and 33 are glibc's own; its sigaction refuses them.
    let glibc_own = (1u64 << 31) | (1u64 << 32);
    assert_eq!(mask("SigBlk:"), 0, "blocked signals: {text}");
    assert_eq!(mask("SigIgn:") & !glibc_own, 0, "ignored signals: {text}");
    assert_eq!(field("sid "), field("pid "), "not a session leader: {text}");
    assert_eq!(field("arg0 "), "zero", "{text}");
    assert_eq!(field("mark "), "kept", "{text}");
    let cwd = std::fs::canonicalize(dir.path()).expect("canonical tempdir");
    assert!(
        text.lines().any(|l| Path::new(l) == cwd),
        "working directory: {text}"
    );

    let missing = Command::new(common::vxcert())
        .args(["__vxcert-clean-start", "/nonexistent/vx-program", "a"])
        .output()
        .expect("run the trampoline");
    assert_eq!(missing.status.code(), Some(127));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(
        err.contains("cannot start /nonexistent/vx-program"),
        "stderr: {err}"
    );
}
