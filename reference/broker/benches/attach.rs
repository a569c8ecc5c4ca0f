//! open→ATTACH of a running session: a fresh WebSocket viewer through `vxbroker
//! serve` (probe, connect to the master, plan, `seq`) vs `dtach -a` on a PTY (spawn,
//! connect, the agent's answer to the attach's SIGWINCH), same run, alternating.
//!
//! `cargo bench -p vx-broker --bench attach` (needs `dtach` and `python3`).
//! `VX_BENCH_ATTACHES` sets the number of attaches per contender (default 200).

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_vxbroker");
const U: &str = "6a73c0de-1234-4abc-8def-0123456789ab";
/// An agent that answers every SIGWINCH with one byte, at once.
const AGENT: &str = "import os,signal\nsignal.signal(signal.SIGWINCH, lambda *a: os.write(1, b'W'))\nwhile True: signal.pause()";

struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_socket(sock: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while UnixStream::connect(sock).is_err() {
        assert!(Instant::now() < deadline, "no socket");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn ours(dir: &Path, n: usize) -> Vec<f64> {
    let sock = dir.join("b.sock");
    let engines = dir.join("E.toml");
    std::fs::write(
        &engines,
        format!("[engine.claude]\npin = \"flag\"\nid = \"uuid\"\nlaunch = [\"python3\", \"-c\", {AGENT:?}, \"{{id}}\"]\nresume = [\"python3\", \"-c\", {AGENT:?}, \"{{id}}\"]\n"),
    )
    .unwrap();
    let run = dir.join("run");
    let _broker = Reaped(
        Command::new(BIN)
            .arg("serve")
            .arg("--listen")
            .arg(format!("unix:{}", sock.display()))
            .arg("--runtime-dir")
            .arg(&run)
            .arg("--lock-dir")
            .arg(dir.join("locks"))
            .arg("--engines")
            .arg(&engines)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_socket(&sock);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let times = rt.block_on(async {
        use vx_broker::client::{Client, Event, Options, Transport};
        let opts = |new| Options {
            transport: Transport::Unix(sock.clone()),
            engine: "claude".into(),
            id: U.into(),
            new,
            cwd: None,
            claim: None,
        };
        // The first open launches; every timed one attaches to that master.
        let mut first = Client::new(opts(true));
        first.connect().await.unwrap();
        while !matches!(first.next().await, Event::Seq { .. }) {}
        let mut times = Vec::with_capacity(n);
        for _ in 0..n {
            let start = Instant::now();
            let mut c = Client::new(opts(false));
            c.connect().await.unwrap();
            while !matches!(c.next().await, Event::Seq { .. }) {}
            times.push(start.elapsed().as_secs_f64());
        }
        times
    });
    for e in std::fs::read_dir(&run).into_iter().flatten().flatten() {
        vx_broker::master::request_stop(&e.path());
    }
    times
}

/// dtach's attach times, and how many attaches never got the agent's answer within
/// [`ANSWER_WAIT`] (left out of the times, reported beside them: a bench must not hang).
fn dtach(dir: &Path, n: usize) -> (Vec<f64>, usize) {
    let sock = dir.join("d.sock");
    let _master = Reaped(
        Command::new("dtach")
            .arg("-N")
            .arg(&sock)
            .args(["-z", "python3", "-c", AGENT])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_socket(&sock);
    std::thread::sleep(Duration::from_millis(200)); // python's handler installed
    let mut times = Vec::with_capacity(n);
    let mut lost = 0;
    let mut buf = [0u8; 256];
    for i in 0..n {
        let start = Instant::now();
        let (mut pty, pts) = pty_process::blocking::open().unwrap();
        // The kernel signals SIGWINCH only on a size change: alternate the size, so
        // every attach's `-r winch` reaches the agent.
        pty.resize(pty_process::Size::new(24 + (i % 2) as u16, 80))
            .unwrap();
        let client = Reaped(
            pty_process::blocking::Command::new("dtach")
                .arg("-a")
                .arg(&sock)
                .args(["-z", "-r", "winch"])
                .spawn(pts)
                .unwrap(),
        );
        let answered = loop {
            if !readable_within(&pty, ANSWER_WAIT.saturating_sub(start.elapsed())) {
                break false;
            }
            let k = pty.read(&mut buf).unwrap();
            assert!(k > 0, "dtach ended");
            if buf[..k].contains(&b'W') {
                break true;
            }
        };
        if answered {
            times.push(start.elapsed().as_secs_f64());
        } else {
            lost += 1;
        }
        drop(client);
    }
    (times, lost)
}

/// How long one dtach attach may wait for the agent's SIGWINCH answer.
const ANSWER_WAIT: Duration = Duration::from_secs(2);

fn readable_within(fd: &impl std::os::fd::AsFd, wait: Duration) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let ms = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
    matches!(poll(&mut fds, PollTimeout::from(ms)), Ok(n) if n > 0)
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let p = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (p(0.5), p(0.99))
}

fn main() {
    let n = std::env::var("VX_BENCH_ATTACHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let (mut a, mut d, mut lost) = (Vec::new(), Vec::new(), 0);
    // Two halves in alternating order.
    for half in 0..2 {
        let tmp = tempfile::tempdir().unwrap();
        if half == 0 {
            a.extend(ours(tmp.path(), n / 2));
            let (times, missed) = dtach(tmp.path(), n / 2);
            d.extend(times);
            lost += missed;
        } else {
            let (times, missed) = dtach(tmp.path(), n / 2);
            d.extend(times);
            lost += missed;
            a.extend(ours(tmp.path(), n / 2));
        }
    }
    let ((am, ap), (dm, dp)) = (stats(a), stats(d));
    let ms = |s: f64| s * 1000.0;
    println!("{n} attaches each, median / p99:");
    println!(
        "  vxbroker serve open->ATTACH (to seq)   {:7.3} ms / {:7.3} ms",
        ms(am),
        ms(ap)
    );
    println!(
        "  dtach 0.9 -a (to the agent's answer)   {:7.3} ms / {:7.3} ms",
        ms(dm),
        ms(dp)
    );
    println!("  ours / dtach (median)                  {:7.2}x", am / dm);
    println!("  dtach attaches without the agent's answer in 2 s: {lost} (not timed)");
}
