//! `cargo bench -p vxref --bench attach`: the attach figures for `docs/performance.md`
//! (section "Attach"), measured against tmux in the same run.
//!
//! A pane runs `cat` of a file of ordinary text lines (256 MiB by default) at 80x24
//! with one attached client that reads every frame.
//! - vxref: wall time from sending `pane.create` (over an authenticated connection) to
//!   the attached client's `EXIT` frame; the client attaches right after the reply
//!   and drains `S`/`R`/`O` frames with the blocking `vxref::attach::client`.
//! - tmux: a server kept running (one idle session) with `-f /dev/null`; wall time from
//!   `new-session -d` (running `cat file; tmux wait-for -S done<i>`) to the return of
//!   `tmux wait-for done<i>`, with `tmux attach` running under a PTY of 80x24 whose
//!   output a thread drains.
//!
//! A vxref viewer that falls out of the ring (`CLOSE lagging`, possible on a loaded
//! machine: the producer never waits) reattaches with its offset, as the protocol
//! intends, and the count is reported.
//!
//! Rounds alternate the two; medians and the ratio tmux/vxref (>= 1.0: vxref at least
//! as fast). Environment: `VXBENCH_ROUNDS` (default 5), `VXBENCH_MIB` (default 256),
//! `VXBENCH_VXREF` (another vxref binary to measure, for A/B runs of two builds).

use serde_json::{json, Value};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use vxref::attach::client::{self, Frame};

mod common;

use common::{Served, VXREF};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn make_file(path: &Path, mib: usize) {
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
}

struct Vx {
    served: Served,
    conn: common::Conn,
    token: String,
    window: String,
}

impl Vx {
    fn start(dir: &Path) -> Vx {
        // VXBENCH_VXREF: another vxref binary to measure (A/B runs of two builds).
        let bin = std::env::var("VXBENCH_VXREF").unwrap_or_else(|_| VXREF.to_string());
        let served = Served::start(&bin, dir, None);
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

    /// One round: spawn, attach, drain to EXIT; returns the time, the final offset and
    /// how often the viewer lagged and reattached.
    fn round(&mut self, file: &Path) -> (Duration, u64, u32) {
        let t = Instant::now();
        let p = self.call(
            "pane.create",
            json!({"window": self.window, "argv": ["cat", file.to_str().unwrap()]}),
        );
        let pane = p["pane"].as_str().unwrap().to_string();
        let mut a = client::attach(&self.served.socket, Some(&self.token), &pane, None)
            .unwrap_or_else(|e| panic!("attach: {e:?}"));
        let mut at = a.offset();
        let mut lags = 0;
        loop {
            match a.read_frame().expect("frame").expect("open") {
                Frame::Output { offset, bytes } => at = offset + bytes.len() as u64,
                Frame::Exit(_) => break,
                Frame::Snapshot(_) | Frame::Ready => {}
                // A viewer that fell out of the ring resumes from where it was, as
                // the protocol intends; it gets a snapshot and the current end.
                Frame::Close(r) if r == "lagging" => {
                    lags += 1;
                    let source = a.source().to_string();
                    a = client::attach(
                        &self.served.socket,
                        Some(&self.token),
                        &pane,
                        Some((&source, at)),
                    )
                    .unwrap_or_else(|e| panic!("reattach: {e:?}"));
                    at = a.offset();
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        let elapsed = t.elapsed();
        drop(a);
        self.call("pane.kill", json!({"pane": pane}));
        (elapsed, at, lags)
    }
}

struct Tmux {
    socket: PathBuf,
}

impl Tmux {
    fn cmd(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.socket).arg("-f").arg("/dev/null");
        c
    }

    fn run(&self, args: &[&str]) {
        let st = self.cmd().args(args).status().expect("run tmux");
        assert!(st.success(), "tmux {args:?}");
    }

    fn round(&self, file: &Path, i: usize) -> (Duration, u64) {
        let name = format!("r{i}");
        let chan = format!("done{i}");
        let shell = format!(
            "cat {}; tmux -S {} wait-for -S {chan}",
            file.display(),
            self.socket.display()
        );
        let t = Instant::now();
        self.run(&[
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "80",
            "-y",
            "24",
            &shell,
        ]);
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
        self.run(&["wait-for", &chan]);
        let elapsed = t.elapsed();
        let _ = self
            .cmd()
            .args(["kill-session", "-t", &name])
            .stderr(Stdio::null())
            .status();
        let _ = client.wait();
        let total = drain.join().unwrap();
        (elapsed, total)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
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
    make_file(&file, mib);
    let tmux_v = Command::new("tmux")
        .arg("-V")
        .output()
        .expect("tmux installed");
    println!(
        "attach bench: cat of {mib} MiB of text lines at 80x24, {rounds} rounds alternating; {}",
        String::from_utf8_lossy(&tmux_v.stdout).trim()
    );
    let mut vx = Vx::start(dir.path());
    let tmux = Tmux {
        socket: dir.path().join("tmux.sock"),
    };
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "keep",
        "-x",
        "80",
        "-y",
        "24",
        "sleep 100000",
    ]);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut total_lags = 0;
    for i in 0..rounds {
        let (t_vx, b_vx, lags) = vx.round(&file);
        total_lags += lags;
        let (t_tm, b_tm) = tmux.round(&file, i);
        println!(
            "round {i}: vxref {:.3} s ({} MiB, {lags} lagging reattaches)  tmux {:.3} s ({} KiB to its client)",
            t_vx.as_secs_f64(),
            b_vx >> 20,
            t_tm.as_secs_f64(),
            b_tm >> 10
        );
        ours.push(t_vx);
        theirs.push(t_tm);
    }
    let (m_vx, m_tm) = (median(&mut ours), median(&mut theirs));
    println!(
        "median: vxref {:.3} s ({:.0} MiB/s)  tmux {:.3} s  ratio tmux/vxref {:.2}  ({total_lags} lagging reattaches in all)",
        m_vx.as_secs_f64(),
        mib as f64 / m_vx.as_secs_f64(),
        m_tm.as_secs_f64(),
        m_tm.as_secs_f64() / m_vx.as_secs_f64()
    );
}
