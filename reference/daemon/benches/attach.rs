//! `cargo bench -p vxref --bench attach`: the attach figures for `docs/performance.md`
//! (section "Attach"), measured against tmux in the same run.
//!
//! A pane runs `sh -c 'cat FILE; echo > FIFO; exec sleep 1000'` (a file of ordinary
//! text lines, 256 MiB by default) at 80x24 with one attached client.
//! - Both sides stop at the same observable point: the bench's read of the FIFO
//!   returns, i.e. `cat` has written every byte into the PTY and the server has read
//!   all but what the PTY buffer holds. The server's own CPU time over the same span is
//!   reported beside the wall time (tmux: server plus its attached client; vxref: the
//!   daemon, whose emulator runs on a second thread).
//! - vxref: timed from sending `pane.create` (over an authenticated connection); a
//!   viewer thread attaches right after the reply and drains `S`/`R`/`O` frames with
//!   the blocking `vxref::attach::client`. The time at which the viewer has received
//!   every byte (the file plus the `\r` ONLCR adds to each line) is reported too.
//! - tmux: a server kept running (one idle session) with `-f /dev/null`; timed from
//!   `new-session -d` with `tmux attach` running under a PTY of 80x24 whose output a
//!   thread drains (tmux sends its client redraws, not every byte).
//!
//! A vxref viewer that falls out of the ring (`CLOSE lagging`, possible on a loaded
//! machine: the producer never waits) reattaches with its offset, as the protocol
//! intends, and the count is reported.
//!
//! The order alternates every round (vxref first in even rounds, tmux first in odd
//! ones); medians and the ratio tmux/vxref (>= 1.0: vxref at least as fast).
//! Environment: `VXBENCH_ROUNDS` (default 5), `VXBENCH_MIB` (default 256),
//! `VXBENCH_VXREF` (another vxref binary to measure, for A/B runs of two builds).

use serde_json::{json, Value};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use vxref::attach::client::{self, Frame};

mod common;

use common::{cpu, Served};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Writes the text file; its size in bytes and lines.
fn make_file(path: &Path, mib: usize) -> (u64, u64) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let target = mib << 20;
    let mut written = 0;
    let mut n = 0u64;
    while written < target {
        let line =
            format!("{n:>9} the quick brown fox jumps over the lazy dog; pack my box with jugs\n");
        out.write_all(line.as_bytes()).unwrap();
        written += line.len();
        n += 1;
    }
    out.flush().unwrap();
    (written as u64, n)
}

/// What the pane (or the tmux session) runs: the writer, then the signal, then an
/// idle wait so the server and its client are still there to be measured.
fn program(file: &Path, fifo: &Path) -> String {
    format!(
        "cat {}; echo > {}; exec sleep 1000",
        file.display(),
        fifo.display()
    )
}

/// Blocks until the program has signalled through the FIFO.
fn wait_signal(fifo: &Path) {
    let mut f = std::fs::File::open(fifo).expect("open fifo");
    let mut sink = Vec::new();
    f.read_to_end(&mut sink).expect("read fifo");
}

/// One side's round.
struct Round {
    /// From the start to the FIFO signal.
    wall: Duration,
    /// The server's CPU time over the same span.
    cpu: Duration,
    /// vxref: when the viewer had every byte; tmux: what its client received.
    viewer: Option<Duration>,
    bytes: u64,
    lags: u32,
}

struct Vx {
    served: Served,
    conn: common::Conn,
    token: String,
    window: String,
}

impl Vx {
    fn start(dir: &Path) -> Vx {
        let served = Served::start(&common::vxref(), dir, None);
        let mut conn = served.connect();
        let s = conn.call("session.create", json!({"name": "bench"}));
        let w = conn.call(
            "window.create",
            json!({"session": s["session"], "name": "w", "cols": 80, "rows": 24}),
        );
        Vx {
            token: served.owner_token(),
            window: w["window"].as_str().unwrap().to_string(),
            served,
            conn,
        }
    }

    fn call(&mut self, verb: &str, params: Value) -> Value {
        self.conn.call(verb, params)
    }

    /// One round: spawn, attach in a thread that drains until it has `expected`
    /// bytes, stop at the FIFO signal.
    fn round(&mut self, file: &Path, fifo: &Path, expected: u64) -> Round {
        let pid = self.served.child.id();
        let cpu0 = cpu(pid);
        let t = Instant::now();
        let p = self.call(
            "pane.create",
            json!({"window": self.window, "argv": ["sh", "-c", program(file, fifo)]}),
        );
        let pane = p["pane"].as_str().unwrap().to_string();
        let (socket, token, id) = (self.served.socket.clone(), self.token.clone(), pane.clone());
        let viewer = std::thread::spawn(move || {
            let mut a = client::attach(&socket, Some(&token), &id, None)
                .unwrap_or_else(|e| panic!("attach: {e:?}"));
            let mut at = a.offset();
            let mut lags = 0;
            while at < expected {
                match a.read_frame().expect("frame").expect("open") {
                    Frame::Output { offset, bytes } => at = offset + bytes.len() as u64,
                    Frame::Snapshot(_) | Frame::Ready => {}
                    // A viewer that fell out of the ring resumes from where it was, as
                    // the protocol intends; it gets a snapshot and the current end.
                    Frame::Close(r) if r == "lagging" => {
                        lags += 1;
                        let source = a.source().to_string();
                        a = client::attach(&socket, Some(&token), &id, Some((&source, at)))
                            .unwrap_or_else(|e| panic!("reattach: {e:?}"));
                        at = a.offset();
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            (t.elapsed(), at, lags)
        });
        wait_signal(fifo);
        let wall = t.elapsed();
        let cpu = cpu(pid) - cpu0;
        let (all, at, lags) = viewer.join().unwrap();
        self.call("pane.kill", json!({"pane": pane}));
        Round {
            wall,
            cpu,
            viewer: Some(all),
            bytes: at,
            lags,
        }
    }
}

struct Tmux {
    socket: PathBuf,
    server: u32,
}

impl Tmux {
    fn cmd(socket: &Path) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(socket).arg("-f").arg("/dev/null");
        c
    }

    fn run(socket: &Path, args: &[&str]) -> String {
        let out = Self::cmd(socket).args(args).output().expect("run tmux");
        assert!(out.status.success(), "tmux {args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A server with one idle session, kept for the whole run.
    fn start(socket: PathBuf) -> Tmux {
        let keep = [
            "new-session",
            "-d",
            "-s",
            "keep",
            "-x",
            "80",
            "-y",
            "24",
            "sleep 100000",
        ];
        Self::run(&socket, &keep);
        let server = Self::run(&socket, &["display-message", "-p", "-t", "keep", "#{pid}"])
            .parse()
            .expect("tmux server pid");
        Tmux { socket, server }
    }

    fn round(&self, file: &Path, fifo: &Path, i: usize) -> Round {
        let name = format!("r{i}");
        let shell = program(file, fifo);
        let server0 = cpu(self.server);
        let t = Instant::now();
        let new = [
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "80",
            "-y",
            "24",
            &shell,
        ];
        Self::run(&self.socket, &new);
        let (pty, pts) = pty_process::blocking::open().unwrap();
        pty.resize(pty_process::Size::new(24, 80)).unwrap();
        let mut client = pty_process::blocking::Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(["attach", "-t", &name])
            .env("TERM", "xterm-256color")
            .spawn(pts)
            .unwrap();
        let drain = std::thread::spawn(move || {
            let mut pty = pty;
            let mut buf = vec![0u8; 64 * 1024];
            let mut total = 0u64;
            while let Ok(n) = pty.read(&mut buf) {
                if n == 0 {
                    break;
                }
                total += n as u64;
            }
            total
        });
        wait_signal(fifo);
        let wall = t.elapsed();
        // The client is still attached (the session's program sleeps).
        let cpu = cpu(self.server) - server0 + cpu(client.id());
        let _ = Self::cmd(&self.socket)
            .args(["kill-session", "-t", &name])
            .stderr(Stdio::null())
            .status();
        let _ = client.wait();
        let total = drain.join().unwrap();
        Round {
            wall,
            cpu,
            viewer: None,
            bytes: total,
            lags: 0,
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Self::cmd(&self.socket).arg("kill-server").status();
    }
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rounds = env_usize("VXBENCH_ROUNDS", 5);
    let mib = env_usize("VXBENCH_MIB", 256);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lines.txt");
    let (size, lines) = make_file(&file, mib);
    // ONLCR: the PTY turns every "\n" into "\r\n".
    let expected = size + lines;
    let fifo = dir.path().join("done.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let tmux_v = Command::new("tmux")
        .arg("-V")
        .output()
        .expect("tmux installed");
    println!(
        "attach bench: cat of {mib} MiB of text lines at 80x24, {rounds} rounds, order alternating; {}",
        String::from_utf8_lossy(&tmux_v.stdout).trim()
    );
    let mut vx = Vx::start(dir.path());
    let tmux = Tmux::start(dir.path().join("tmux.sock"));
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let (mut ours_cpu, mut theirs_cpu, mut ours_all) = (Vec::new(), Vec::new(), Vec::new());
    let mut total_lags = 0;
    for i in 0..rounds {
        let (v, m) = if i % 2 == 0 {
            let v = vx.round(&file, &fifo, expected);
            (v, tmux.round(&file, &fifo, i))
        } else {
            let m = tmux.round(&file, &fifo, i);
            (vx.round(&file, &fifo, expected), m)
        };
        total_lags += v.lags;
        let all = v.viewer.unwrap_or_default();
        println!(
            "round {i} ({} first): vxref {:.3} s, cpu {:.3} s, viewer had all {} MiB at {:.3} s ({} lagging reattaches)  tmux {:.3} s, cpu {:.3} s ({} KiB to its client)",
            if i % 2 == 0 { "vxref" } else { "tmux" },
            v.wall.as_secs_f64(),
            v.cpu.as_secs_f64(),
            v.bytes >> 20,
            all.as_secs_f64(),
            v.lags,
            m.wall.as_secs_f64(),
            m.cpu.as_secs_f64(),
            m.bytes >> 10
        );
        ours.push(v.wall);
        ours_cpu.push(v.cpu);
        ours_all.push(all);
        theirs.push(m.wall);
        theirs_cpu.push(m.cpu);
    }
    let (m_vx, m_tm) = (median(&mut ours), median(&mut theirs));
    let (c_vx, c_tm) = (median(&mut ours_cpu), median(&mut theirs_cpu));
    let a_vx = median(&mut ours_all);
    println!(
        "median: vxref {:.3} s ({:.0} MiB/s), cpu {:.3} s, viewer had all at {:.3} s  tmux {:.3} s, cpu {:.3} s  ratio tmux/vxref wall {:.2}, cpu {:.2}  ({total_lags} lagging reattaches in all)",
        m_vx.as_secs_f64(),
        mib as f64 / m_vx.as_secs_f64(),
        c_vx.as_secs_f64(),
        a_vx.as_secs_f64(),
        m_tm.as_secs_f64(),
        c_tm.as_secs_f64(),
        m_tm.as_secs_f64() / m_vx.as_secs_f64(),
        c_tm.as_secs_f64() / c_vx.as_secs_f64()
    );
}
