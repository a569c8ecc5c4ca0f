//! `open_action` with real masters: one agent for 16 concurrent opens, BUSY when the
//! lock is held elsewhere (another broker instance included), stale sockets reaped
//! under the lock, anything else at the path kept, a failed launch frees the lock, an
//! exited agent's key LAUNCHes again, and the re-probe after a slow acquire ATTACHes.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use vx_broker::key::{parse_key, EngineTable, SessionKey};
use vx_broker::lock::LockDir;
use vx_broker::master::frame;
use vx_broker::open::{probe, Action, Liveness, MasterSpec, Opener};
use vx_broker::Rule;

const BIN: &str = env!("CARGO_BIN_EXE_vxbroker");
const WAIT: Duration = Duration::from_secs(10);

fn uid() -> u64 {
    u64::from(nix::unistd::geteuid().as_raw())
}

fn key() -> SessionKey {
    parse_key("opencode:ses_open", &EngineTable::seed(), false).unwrap()
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
}

impl Drop for Fixture {
    /// Masters run in their own sessions: stop any a failed test left behind.
    fn drop(&mut self) {
        for run in ["run", "run-staging"] {
            for e in std::fs::read_dir(self.root.join(run))
                .into_iter()
                .flatten()
                .flatten()
            {
                vx_broker::master::request_stop(&e.path());
            }
        }
    }
}

impl Fixture {
    fn new() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        std::fs::create_dir(root.join("run")).unwrap();
        Fixture { _tmp: tmp, root }
    }

    fn opener(&self, runtime: &str) -> Opener {
        let run = self.root.join(runtime);
        std::fs::create_dir_all(&run).unwrap();
        Opener::new(run, LockDir::open(&self.root.join("locks"), uid()).unwrap())
    }

    fn agents(&self) -> PathBuf {
        self.root.join("agents")
    }

    /// An agent that records its PID, then echoes input until EOF.
    fn spec(&self) -> MasterSpec {
        let script = format!("echo $$ >> '{}'; exec cat", self.agents().display());
        MasterSpec {
            program: BIN.into(),
            ring: 4096,
            gen: 1,
            argv: ["/bin/sh", "-c", &script].map(OsString::from).to_vec(),
            cwd: None,
            wrapper: Vec::new(),
        }
    }

    fn agent_count(&self) -> usize {
        std::fs::read_to_string(self.agents())
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }
}

fn wait_for(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Ends the agent behind `opener`'s socket for the key with Ctrl-D and waits until
/// the master is gone: socket unlinked and lock free.
fn end_agent(opener: &Opener) {
    let sock = opener.socket_path(&key());
    let mut s = UnixStream::connect(&sock).unwrap();
    frame::write(&mut s, frame::HELLO, &frame::hello(None, None)).unwrap();
    frame::write(&mut s, frame::INPUT, b"\x04").unwrap();
    s.flush().unwrap();
    wait_for("the master to exit", || {
        probe(&sock) == Liveness::Absent && !opener.locks().is_held(&key()).unwrap()
    });
}

#[test]
fn sixteen_concurrent_opens_launch_one_agent() {
    let fx = Fixture::new();
    let opener = Arc::new(fx.opener("run"));
    let barrier = Arc::new(Barrier::new(16));
    let spec = fx.spec();
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let (opener, barrier, spec) = (Arc::clone(&opener), Arc::clone(&barrier), spec.clone());
            std::thread::spawn(move || {
                barrier.wait();
                opener.open(&key(), || spec).unwrap()
            })
        })
        .collect();
    let actions: Vec<Action> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let launches = actions
        .iter()
        .filter(|a| matches!(a, Action::Launch { .. }))
        .count();
    assert_eq!(launches, 1, "{actions:?}");
    assert!(
        actions.iter().all(|a| !matches!(a, Action::Busy)),
        "{actions:?}"
    );
    wait_for("the agent", || fx.agent_count() == 1);
    assert!(
        opener.locks().is_held(&key()).unwrap(),
        "the master holds the lock"
    );
    // A running key attaches; the count stays 1.
    assert_eq!(opener.open(&key(), || fx.spec()).unwrap(), Action::Attach);

    // The agent exits: socket gone, lock free, the next open LAUNCHes.
    end_agent(&opener);
    wait_for("the lock to free", || {
        !opener.locks().is_held(&key()).unwrap()
    });
    assert!(matches!(
        opener.open(&key(), || fx.spec()).unwrap(),
        Action::Launch { .. }
    ));
    wait_for("the second agent", || fx.agent_count() == 2);
    end_agent(&opener);
}

#[test]
fn busy_when_the_lock_is_held_elsewhere() {
    let fx = Fixture::new();
    let opener = fx.opener("run");
    let other = LockDir::open(&fx.root.join("locks"), uid()).unwrap();
    let vx_broker::lock::Acquired::Won(held) = other.acquire(&key()).unwrap() else {
        panic!("lock taken")
    };
    assert_eq!(opener.open(&key(), || fx.spec()).unwrap(), Action::Busy);
    assert_eq!(probe(&opener.socket_path(&key())), Liveness::Absent);
    assert_eq!(fx.agent_count(), 0, "BUSY must spawn nothing");
    held.release().unwrap();
}

#[test]
fn a_second_instance_cannot_launch_a_held_key() {
    let fx = Fixture::new();
    let first = fx.opener("run");
    let second = fx.opener("run-staging");
    assert!(matches!(
        first.open(&key(), || fx.spec()).unwrap(),
        Action::Launch { .. }
    ));
    assert_eq!(second.open(&key(), || fx.spec()).unwrap(), Action::Busy);
    wait_for("the agent", || fx.agent_count() == 1);
    end_agent(&first);
}

#[test]
fn a_stale_socket_is_reaped_and_anything_else_kept() {
    let fx = Fixture::new();
    let opener = fx.opener("run");
    let sock = opener.socket_path(&key());
    drop(UnixListener::bind(&sock).unwrap());
    assert_eq!(probe(&sock), Liveness::Stale, "bound, not listening");
    assert!(matches!(
        opener.open(&key(), || fx.spec()).unwrap(),
        Action::Launch { .. }
    ));
    wait_for("the agent", || fx.agent_count() == 1);
    end_agent(&opener);

    std::fs::write(&sock, b"keep").unwrap();
    let err = opener.open(&key(), || fx.spec()).unwrap_err();
    assert_eq!(
        (err.rule, err.code.as_str()),
        (Rule::NotSocket, "conflict.not_socket")
    );
    assert_eq!(std::fs::read(&sock).unwrap(), b"keep");
    assert!(!opener.locks().is_held(&key()).unwrap());
}

#[test]
fn a_failed_launch_frees_the_lock_at_once() {
    let fx = Fixture::new();
    let opener = fx.opener("run");
    let bad = MasterSpec {
        argv: vec!["/nonexistent/agent".into()],
        ..fx.spec()
    };
    let err = opener.open(&key(), || bad).unwrap_err();
    assert_eq!(
        (err.rule, err.code.as_str()),
        (Rule::LaunchFailed, "unavailable.spawn")
    );
    let bad_cwd = MasterSpec {
        cwd: Some(fx.root.join("no-such-dir")),
        ..fx.spec()
    };
    assert_eq!(
        opener.open(&key(), || bad_cwd).unwrap_err().rule,
        Rule::LaunchFailed
    );
    assert!(!opener.locks().is_held(&key()).unwrap());
    assert!(!opener.locks().is_held(&key()).unwrap(), "no BUSY wedge");
    assert_eq!(probe(&opener.socket_path(&key())), Liveness::Absent);
    assert!(matches!(
        opener.open(&key(), || fx.spec()).unwrap(),
        Action::Launch { .. }
    ));
    wait_for("the agent", || fx.agent_count() == 1);
    end_agent(&opener);
}

const CHILD_ENV: &str = "VX_BROKER_OPEN_CHILD_DIR";

/// Runs one open in a child under the injector (for the re-probe test).
#[test]
fn open_child_under_injection() {
    let Some(root) = std::env::var_os(CHILD_ENV).map(PathBuf::from) else {
        return;
    };
    let opener = Opener::new(
        root.join("run"),
        LockDir::open(&root.join("locks"), uid()).unwrap(),
    );
    let spec = MasterSpec {
        program: BIN.into(),
        ring: 4096,
        gen: 1,
        argv: vec!["/bin/cat".into()],
        cwd: None,
        wrapper: Vec::new(),
    };
    let line = match opener.open(&key(), || spec) {
        Ok(Action::Attach) => "attach".to_string(),
        Ok(other) => format!("{other:?}"),
        Err(e) => e.to_string(),
    };
    std::fs::write(root.join("outcome"), line).unwrap();
}

#[test]
fn a_master_appearing_during_the_acquire_is_attached_not_duplicated() {
    let fx = Fixture::new();
    let mut child = Command::new(std::env::current_exe().unwrap());
    child.args([
        "open_child_under_injection",
        "--exact",
        "--test-threads=1",
        "--quiet",
    ]);
    child.env(CHILD_ENV, &fx.root);
    let injector = vxfault::Injector::new("flock@*/locks/*#1=delay:1500").unwrap();
    let sock = fx
        .root
        .join("run")
        .join(format!("{}.sock", key().physical()));
    let lock_file = fx
        .root
        .join("locks")
        .join(format!("{}.lock", key().physical()));
    let racer = std::thread::spawn(move || {
        // The child opened its lock file and sits in the delayed flock: a master
        // appears now, between its probe and its acquire.
        wait_for("the child's lock file", || lock_file.exists());
        let master = Command::new(BIN)
            .args(["master", "--create"])
            .arg(&sock)
            .args(["--", "/bin/cat"])
            .spawn()
            .unwrap();
        wait_for("the racing master", || probe(&sock) == Liveness::Live);
        master
    });
    let (outcome, output) = injector.output(&mut child).unwrap();
    outcome.injectable().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut master = racer.join().unwrap();
    let flocks = outcome
        .records()
        .unwrap()
        .iter()
        .filter(|r| r.op == "flock" && r.path.contains("/locks/"))
        .count();
    master.kill().unwrap();
    master.wait().unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.root.join("outcome")).unwrap(),
        "attach"
    );
    // The acquire happened (so the first probe saw no master) and the won lock was
    // released (LOCK_UN): two flock calls.
    assert_eq!(flocks, 2);
    let locks = LockDir::open(&fx.root.join("locks"), uid()).unwrap();
    assert!(
        !locks.is_held(&key()).unwrap(),
        "the lost race released its lock"
    );
}

#[test]
fn a_stale_socket_that_cannot_be_unlinked_fails_the_launch_and_frees_the_lock() {
    let fx = Fixture::new();
    let sock = fx
        .root
        .join("run")
        .join(format!("{}.sock", key().physical()));
    drop(UnixListener::bind(&sock).unwrap());
    let mut child = Command::new(std::env::current_exe().unwrap());
    child.args([
        "open_child_under_injection",
        "--exact",
        "--test-threads=1",
        "--quiet",
    ]);
    child
        .env(CHILD_ENV, &fx.root)
        .stdout(std::process::Stdio::null());
    let outcome = vxfault::Injector::new("unlink@*.sock=EACCES")
        .unwrap()
        .run(&mut child)
        .unwrap();
    outcome.injectable().unwrap();
    let line = std::fs::read_to_string(fx.root.join("outcome")).unwrap();
    assert!(
        line.starts_with("unavailable.spawn (open.reap_failed"),
        "{line}"
    );
    let locks = LockDir::open(&fx.root.join("locks"), uid()).unwrap();
    assert!(
        !locks.is_held(&key()).unwrap(),
        "the lock is free after the failed launch"
    );
    assert_eq!(probe(&sock), Liveness::Stale, "nothing launched");
    let opener = fx.opener("run");
    assert!(matches!(
        opener.open(&key(), || fx.spec()).unwrap(),
        Action::Launch { .. }
    ));
    end_agent(&opener);
}

/// A launch in flight is `starting` for its key only, and only until it ends; a slow
/// launch of one key does not hold up another key's open (one gate per key).
#[test]
fn a_slow_launch_is_starting_and_does_not_gate_other_keys() {
    let f = Fixture::new();
    let opener = Arc::new(f.opener("run"));
    // A "master" that never accepts and exits after a moment: the launch fails.
    let slow = f.root.join("slow-master");
    std::fs::write(&slow, "#!/bin/sh\nsleep 2\n").unwrap();
    std::fs::set_permissions(&slow, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let slow_spec = MasterSpec {
        program: slow,
        ..f.spec()
    };
    let slow_key = key();
    let other = parse_key("opencode:ses_other", &EngineTable::seed(), false).unwrap();
    let o = Arc::clone(&opener);
    let k = slow_key.clone();
    let launching = std::thread::spawn(move || o.open(&k, || slow_spec));
    let deadline = Instant::now() + WAIT;
    while !opener.starting().contains(&slow_key.physical()) {
        assert!(
            Instant::now() < deadline,
            "the slow launch was never starting"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(matches!(
        opener.open(&other, || f.spec()).unwrap(),
        Action::Launch { .. }
    ));
    // The other key launched while the slow one was still in flight: no shared gate.
    assert_eq!(
        opener.starting(),
        vec![slow_key.physical()],
        "another key's open waited for the slow launch"
    );
    let failed = launching.join().unwrap().unwrap_err();
    assert_eq!(failed.rule, Rule::LaunchFailed);
    assert!(opener.starting().is_empty());
    vx_broker::master::request_stop(&opener.socket_path(&other));
}
