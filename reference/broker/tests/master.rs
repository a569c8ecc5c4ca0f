//! `vxbroker master`: create-only and attach-only, one agent for many viewers,
//! detach is not kill, delta / fresh / full resume over the ring, the alternate
//! screen's redraw nudge, the inherited lock, and exit with the agent.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use vx_broker::key::{parse_key, EngineTable};
use vx_broker::lock::{Acquired, LockDir};
use vx_broker::master::frame;
use vx_broker::resume::Plan;

const BIN: &str = env!("CARGO_BIN_EXE_vxbroker");
const WAIT: Duration = Duration::from_secs(10);

/// A master child, killed by PID if a test fails before it exits.
struct Master(Child);

impl Drop for Master {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn master_cmd(sock: &Path, ring: &str, gen: &str, argv: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(["master", "--create"]).arg(sock);
    cmd.args(["--ring", ring, "--gen", gen, "--"]).args(argv);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

fn start(sock: &Path, ring: &str, gen: &str, argv: &[&str]) -> Master {
    let m = Master(master_cmd(sock, ring, gen, argv).spawn().unwrap());
    wait_accepting(sock);
    m
}

fn wait_accepting(sock: &Path) {
    let deadline = Instant::now() + WAIT;
    while UnixStream::connect(sock).is_err() {
        assert!(Instant::now() < deadline, "master never accepted");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn wait_exit(m: &mut Master) -> i32 {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = m.0.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        assert!(Instant::now() < deadline, "master did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
}

struct Viewer {
    stream: UnixStream,
    plan: Plan,
    output: Vec<u8>,
    seq: Option<u64>,
    exit: Option<i32>,
}

impl Viewer {
    fn attach(sock: &Path, have: Option<u64>, gen: Option<u64>) -> Viewer {
        let mut stream = UnixStream::connect(sock).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        frame::write(&mut stream, frame::HELLO, &frame::hello(have, gen)).unwrap();
        let (kind, payload) = frame::read(&mut stream).unwrap().unwrap();
        assert_eq!(kind, frame::PLAN);
        let plan = frame::parse_plan(&payload).unwrap();
        Viewer {
            stream,
            plan,
            output: Vec::new(),
            seq: None,
            exit: None,
        }
    }

    fn next(&mut self) -> Option<u8> {
        let (kind, payload) = frame::read(&mut self.stream).unwrap()?;
        match kind {
            frame::OUTPUT => self.output.extend_from_slice(&payload),
            frame::SEQ => self.seq = Some(u64::from_be_bytes(payload[..8].try_into().unwrap())),
            frame::EXIT => self.exit = Some(i32::from_be_bytes(payload[..].try_into().unwrap())),
            other => panic!("unexpected frame {other}"),
        }
        Some(kind)
    }

    fn read_until(&mut self, done: impl Fn(&Viewer) -> bool) {
        while !done(self) {
            assert!(self.next().is_some(), "stream ended early");
        }
    }

    fn send(&mut self, text: &[u8]) {
        frame::write(&mut self.stream, frame::INPUT, text).unwrap();
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fn sock(dir: &Path) -> PathBuf {
    dir.join("m.sock")
}

#[test]
fn viewers_share_one_agent_and_resume_by_plan() {
    let tmp = tempfile::tempdir().unwrap();
    let s = sock(tmp.path());
    let mut m = start(&s, "64", "7", &["/bin/cat"]);

    let mut a = Viewer::attach(&s, None, None);
    assert_eq!(a.plan, Plan::Fresh);
    a.read_until(|v| v.seq.is_some());
    assert_eq!(a.seq, Some(0));
    a.send(b"hello\n");
    // The PTY echoes the line and cat writes it back: two copies. The second copy's
    // line end can come in a read of its own, so wait for it: after it nothing more is
    // written, and `have` is the master's total (the offsets below count on it).
    a.read_until(|v| {
        v.output.windows(5).filter(|w| w == b"hello").count() >= 2 && v.output.ends_with(b"\r\n")
    });
    let a_output = std::mem::take(&mut a.output);
    let have = a_output.len() as u64;
    drop(a);

    // Detach is not kill: the master still accepts, and a viewer at the end of the
    // stream gets an empty delta.
    let b = Viewer::attach(&s, Some(have), Some(7));
    assert_eq!(b.plan, Plan::Delta { from: have });

    let mut c = Viewer::attach(&s, Some(1), Some(7));
    assert_eq!(c.plan, Plan::Delta { from: 1 });
    c.read_until(|v| v.output.len() as u64 >= have - 1);
    assert_eq!(c.output, a_output[1..]);

    let mut d = Viewer::attach(&s, Some(have), Some(6));
    assert_eq!(d.plan, Plan::Full);
    d.read_until(|v| v.seq.is_some());
    assert_eq!((d.output.len() as u64, d.seq), (have, Some(have)));

    // Fill past the 64-byte ring: an offset that left it falls behind.
    let mut e = Viewer::attach(&s, Some(have), None);
    e.send(&[b'x'; 100]);
    e.send(b"\n");
    e.read_until(|v| v.output.iter().filter(|&&b| b == b'x').count() >= 200);
    let mut f = Viewer::attach(&s, Some(1), Some(7));
    assert_eq!(f.plan, Plan::FellBehind);
    f.read_until(|v| v.seq.is_some());
    assert_eq!(f.output.len(), 64);

    // Ctrl-D: cat exits, the master tells the viewers, unlinks and exits with it.
    e.send(b"\x04");
    f.read_until(|v| v.exit.is_some());
    assert_eq!(f.exit, Some(0));
    assert_eq!(wait_exit(&mut m), 0);
    assert!(!s.exists(), "socket left behind");
    drop((b, d));
}

#[test]
fn create_only_and_attach_only_fail_loud() {
    let tmp = tempfile::tempdir().unwrap();
    let s = sock(tmp.path());
    let _m = start(&s, "1024", "1", &["/bin/cat"]);
    let second = master_cmd(&s, "1024", "1", &["/bin/cat"]).output().unwrap();
    assert_eq!(second.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&second.stderr).contains("conflict.socket_exists"));
    assert!(
        UnixStream::connect(&s).is_ok(),
        "the first master must be untouched"
    );

    // A regular file at the path is never replaced either.
    let file = tmp.path().join("file.sock");
    std::fs::write(&file, b"keep").unwrap();
    assert_eq!(
        master_cmd(&file, "1024", "1", &["/bin/cat"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(5)
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"keep");

    let out = Command::new(BIN)
        .args(["master", "--attach"])
        .arg(tmp.path().join("absent.sock"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(6));
    assert!(
        !tmp.path().join("absent.sock").exists(),
        "attach-only must not create"
    );

    let out = master_cmd(&tmp.path().join("x.sock"), "0", "1", &["/bin/cat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = master_cmd(
        &tmp.path().join("y.sock"),
        "1024",
        "1",
        &["/nonexistent/agent"],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(6));
    assert!(
        !tmp.path().join("y.sock").exists(),
        "a failed spawn leaves no socket"
    );
}

#[test]
fn the_alternate_screen_gets_a_nudge_not_a_replay() {
    let tmp = tempfile::tempdir().unwrap();
    let s = sock(tmp.path());
    let script =
        "trap 'printf WINCH' WINCH; printf '\\033[?1049hAPP'; while :; do sleep 0.05; done";
    let _m = start(&s, "4096", "1", &["/bin/sh", "-c", script]);
    // The first viewer sees the switch live, or (if it came later) already gets the
    // nudge: either way the agent is on the alternate screen afterwards.
    let mut first = Viewer::attach(&s, None, None);
    first.read_until(|v| contains(&v.output, b"APP") || contains(&v.output, b"WINCH"));
    let mut second = Viewer::attach(&s, None, None);
    assert_eq!(second.plan, Plan::Fresh);
    assert_eq!(
        second.next(),
        Some(frame::SEQ),
        "no replay before seq on the alternate screen"
    );
    second.read_until(|v| contains(&v.output, b"WINCH"));
    assert!(!contains(&second.output, b"APP"));
}

#[test]
fn the_master_holds_the_inherited_lock_until_it_exits() {
    let tmp = tempfile::tempdir().unwrap();
    let uid = u64::from(nix::unistd::geteuid().as_raw());
    let dir = LockDir::open(&tmp.path().join("locks"), uid).unwrap();
    let key = parse_key("opencode:ses_master", &EngineTable::seed(), false).unwrap();
    let Acquired::Won(lock) = dir.acquire(&key).unwrap() else {
        panic!("held")
    };
    let s = sock(tmp.path());
    let mut cmd = Command::new(BIN);
    cmd.args([
        "master",
        "--lock-fd",
        "3",
        "--ring",
        "1024",
        "--gen",
        "1",
        "--create",
    ])
    .arg(&s);
    cmd.args([
        "--",
        "/bin/sh",
        "-c",
        "read line; test -e /proc/self/fd/3 && exit 9; exit 0",
    ]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let fd = lock.fd().as_raw_fd();
    // SAFETY: only dup2 or fcntl runs between fork and exec; both are
    // async-signal-safe. (A lock that is itself descriptor 3 kept close-on-exec
    // through a dup2 onto itself, and the master started without it: a CI flake.)
    unsafe {
        cmd.pre_exec(move || vx_broker::lock::inherit_at_master_fd(fd));
    }
    let mut m = Master(cmd.spawn().unwrap());
    lock.transfer();
    wait_accepting(&s);
    assert!(dir.is_held(&key).unwrap(), "the master must hold the lock");
    let mut v = Viewer::attach(&s, None, None);
    v.send(b"go\n");
    v.read_until(|v| v.exit.is_some());
    // The agent did not inherit the lock descriptor (exit 9 would say it did).
    assert_eq!(v.exit, Some(0));
    assert_eq!(wait_exit(&mut m), 0);
    assert!(
        !dir.is_held(&key).unwrap(),
        "the lock frees when the master exits"
    );
}

/// The mask of `Sig<field>` in `/proc/<pid>/status` text.
fn sig_mask(status: &str, field: &str) -> u64 {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix(&format!("Sig{field}:\t")))
        .unwrap_or_else(|| panic!("no Sig{field} in {status}"));
    u64::from_str_radix(line.trim(), 16).unwrap()
}

/// A broker started under `nohup` or as a background job inherits SIGHUP (and others)
/// ignored and perhaps some signals blocked; the agent must not, or STOP's hangup
/// leaves it running (retire and kill-relaunch rows failed that way).
#[test]
fn the_agent_starts_with_default_signals_whatever_the_master_inherited() {
    use nix::sys::signal::{signal, sigprocmask, SigHandler, SigSet, SigmaskHow, Signal};
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("agent-status");
    // `exec`: the status read is the agent's own, not a forked child's of the shell.
    let script = format!("exec cat /proc/self/status > {}", report.display());
    let hostile = |cmd: &mut Command| {
        // SAFETY: only signal() with SIG_IGN and sigprocmask run between fork and exec;
        // both are async-signal-safe and install no Rust handler.
        unsafe {
            cmd.pre_exec(|| {
                for s in [
                    Signal::SIGHUP,
                    Signal::SIGINT,
                    Signal::SIGQUIT,
                    Signal::SIGTERM,
                    Signal::SIGPIPE,
                ] {
                    signal(s, SigHandler::SigIgn).map_err(std::io::Error::from)?;
                }
                let mut blocked = SigSet::empty();
                blocked.add(Signal::SIGUSR1);
                sigprocmask(SigmaskHow::SIG_BLOCK, Some(&blocked), None)
                    .map_err(std::io::Error::from)
            });
        }
    };
    let five: u64 = [1u32, 2, 3, 13, 15].iter().map(|n| 1u64 << (n - 1)).sum();

    // The control: the same inheritance without the master reaches the program, so the
    // check below can see it.
    let mut direct = Command::new("/bin/sh");
    direct.args(["-c", &script]);
    hostile(&mut direct);
    assert!(direct.status().unwrap().success());
    let status = std::fs::read_to_string(&report).unwrap();
    assert_eq!(
        sig_mask(&status, "Ign") & five,
        five,
        "the control inherits SIG_IGN"
    );
    assert_ne!(
        sig_mask(&status, "Blk"),
        0,
        "the control inherits a blocked signal"
    );
    std::fs::remove_file(&report).unwrap();

    let s = sock(tmp.path());
    let mut cmd = master_cmd(&s, "1024", "1", &["/bin/sh", "-c", &script]);
    hostile(&mut cmd);
    // The agent exits at once, and the master with it: no attach, only its report.
    let _m = Master(cmd.spawn().unwrap());
    let deadline = Instant::now() + WAIT;
    let status = loop {
        match std::fs::read_to_string(&report) {
            Ok(s) if s.contains("SigBlk") => break s,
            _ => assert!(
                Instant::now() < deadline,
                "the agent never wrote its status"
            ),
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(
        sig_mask(&status, "Ign") & five,
        0,
        "HUP INT QUIT PIPE TERM at default"
    );
    assert_eq!(
        sig_mask(&status, "Blk"),
        0,
        "no signal blocked in the agent"
    );
}
