//! The lock under `libvxfault.so`: its open and flock go through glibc, so the fault
//! plans of the issue reach them, and each errno gets the answer the contract gives it.

use std::path::{Path, PathBuf};
use std::process::Command;

use vx_broker::key::{parse_key, EngineTable};
use vx_broker::lock::{Acquired, LockDir};
use vxfault::Injector;

const CHILD_ENV: &str = "VX_BROKER_LOCK_CHILD_DIR";

/// The workload, run by this test binary in a child under the injector. Without the
/// variable (an ordinary test run) it does nothing.
#[test]
fn acquire_child_under_injection() {
    let Some(dir) = std::env::var_os(CHILD_ENV).map(PathBuf::from) else {
        return;
    };
    let key = parse_key("opencode:ses_fault", &EngineTable::seed(), false).unwrap();
    let uid = u64::from(nix::unistd::geteuid().as_raw());
    let line = match LockDir::open(&dir.join("locks"), uid).and_then(|d| d.acquire(&key)) {
        Ok(Acquired::Won(lock)) => {
            lock.transfer();
            "won".to_string()
        }
        Ok(Acquired::Held) => "held".to_string(),
        Err(e) => format!("err {} {}", e.code, e.rule.id()),
    };
    std::fs::write(dir.join("outcome"), line).unwrap();
}

/// Runs the workload under `plan`; returns its outcome line and the number of flock
/// calls on lock files the trace shows.
fn under(plan: &str) -> (String, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let dir: &Path = tmp.path();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "acquire_child_under_injection",
        "--exact",
        "--test-threads=1",
        "--quiet",
    ]);
    cmd.env(CHILD_ENV, dir);
    let (outcome, output) = Injector::new(plan).unwrap().output(&mut cmd).unwrap();
    outcome.injectable().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let flocks = outcome
        .records()
        .unwrap()
        .iter()
        .filter(|r| r.op == "flock" && r.path.contains("/locks/"))
        .count();
    (
        std::fs::read_to_string(dir.join("outcome")).unwrap(),
        flocks,
    )
}

#[test]
fn eintr_is_retried_and_wins() {
    assert_eq!(under("flock@*/locks/*#1=EINTR"), ("won".into(), 2));
}

#[test]
fn eintr_on_every_attempt_gives_up_after_three_retries() {
    assert_eq!(
        under("flock@*/locks/*=EINTR"),
        ("err unavailable.lock lock.interrupted".into(), 4)
    );
}

#[test]
fn ewouldblock_is_held() {
    assert_eq!(under("flock@*/locks/*=EWOULDBLOCK").0, "held");
}

#[test]
fn other_flock_errors_are_unavailable() {
    for errno in ["ENOLCK", "EACCES"] {
        assert_eq!(
            under(&format!("flock@*/locks/*={errno}")).0,
            "err unavailable.lock lock.flock",
            "{errno}"
        );
    }
}

#[test]
fn an_open_refused_is_unavailable() {
    assert_eq!(
        under("open@*/locks/*.lock=EACCES").0,
        "err unavailable.lock lock.open"
    );
}
