//! `cargo bench -p vxref --bench recovery`: the recovery figures for
//! `docs/performance.md` (section "Recovery").
//!
//! 1. Capture + publish of live panes: a daemon holding N live panes (N = 10, 100,
//!    1000; one 80x24 window each) whose program printed `VXBENCH_LINES` (default 40)
//!    shell-like lines, a full screen and some history, and then waits, answers
//!    `recovery.checkpoint` over one authenticated wire connection (capture in a
//!    reactor turn, encode and publish on the worker), with text omitted, then (after
//!    a `config.reload`) with `.plain` text. Each round also runs the floor
//!    ([`Floor`]): the store's own syscalls up to its durable success (strace of a
//!    publish: list and stat the directory, exclusive create of a fresh temporary
//!    file, write, fsync, close, no-replace rename to a fresh name, directory fsync)
//!    on the bytes of the checkpoint file just written. The daemon prunes after its
//!    reply (RFC §3: after the durable success is acknowledged), so both sides time
//!    up to the durable success and prune outside the timing: the bench waits for
//!    the store to be back at 3 checkpoints, and the floor deletes its oldest file
//!    beyond 3 and fsyncs its directory. Floor and checkpoint alternate (order
//!    flipped every round); medians of wall time and of CPU time (the daemon's
//!    threads to the reply and through its prune; the bench process's for the
//!    floor), since the daemon uses a second core (reactor and worker).
//! 2. Restore of a checkpoint with ~100000 resources (1 session, 1010 windows of 33
//!    panes: 1 + 1010 + 33330 + 65650 nodes = 99991): wall time of `recovery.restore`,
//!    and the daemon's peak RSS (VmHWM) before and after, against the file size.
//! 3. PTY throughput: wall time for a pane to print 64 MiB through its PTY with
//!    recovery off, and with recovery on, `.plain` text and a 1000 ms tick (which
//!    captures every pane's text each second); alternated, medians compared.
//!
//! Environment: `VXBENCH_ROUNDS` (default 30), `VXBENCH_DIR` (default: a temp dir),
//! `VXBENCH_PANES` (comma-separated pane counts for part 1), `VXBENCH_LINES`,
//! `VXBENCH_ONLY` (comma-separated subset of `capture`, `restore`, `pty`),
//! `VXBENCH_RESTORE_RUNS` (restores, each in a fresh daemon; default 3),
//! `VXBENCH_VXREF` (another vxref binary to measure, for A/B runs of two builds),
//! `VXBENCH_PRINTED=1` (part 1: every pane prints before each checkpoint, so no
//! screen's kept capture or encoded text can be reused), `VXBENCH_TEXT` (part 1's
//! text settings, a comma-separated subset of `off`, `plain`; for profiling one).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vx_format as fmt;

#[path = "recovery/capture.rs"]
mod capture;
mod common;

use common::{cpu, Served};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Daemon {
    served: Served,
    conn: common::Conn,
}

impl Daemon {
    fn start(dir: &Path, config: &str) -> Daemon {
        let served = Served::start(&common::vxref(), dir, Some(config));
        let conn = served.connect();
        Daemon { served, conn }
    }

    fn call(&mut self, verb: &str, params: Value) -> Value {
        self.conn.call(verb, params)
    }

    fn store_dir(&self) -> PathBuf {
        vx_store::StoreLocation::resolve(
            Some(self.served.dir.join("state").as_os_str()),
            None,
            &self.served.socket,
        )
        .unwrap()
        .dir()
    }

    fn plant(&self, mut cp: fmt::Checkpoint) -> (String, u64) {
        let loc = vx_store::StoreLocation::resolve(
            Some(self.served.dir.join("state").as_os_str()),
            None,
            &self.served.socket,
        )
        .unwrap();
        cp.socket = loc.socket;
        cp.uid = vx_store::current_uid();
        let bytes = fmt::write(&cp, fmt::Format::CURRENT).unwrap();
        let path = self.store_dir().join(cp.file_name());
        std::fs::write(&path, &bytes).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        (cp.checkpoint, bytes.len() as u64)
    }

    fn status_kib(&self, field: &str) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.served.child.id())).unwrap();
        status
            .lines()
            .find(|l| l.starts_with(field))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

/// Preorder nodes of a balanced tree over panes `first..first + k`.
fn balanced(first: u64, k: u64, out: &mut Vec<fmt::Node>) {
    if k == 1 {
        out.push(fmt::Node::Pane { pane: first });
        return;
    }
    let index = out.len();
    out.push(fmt::Node::Split {
        axis: if index.is_multiple_of(2) {
            fmt::Axis::Cols
        } else {
            fmt::Axis::Rows
        },
        first: index + 1,
        second: 0,
        ratio: None,
    });
    let left = k / 2;
    balanced(first, left, out);
    let second_index = out.len();
    if let fmt::Node::Split { second, .. } = &mut out[index] {
        *second = second_index;
    }
    balanced(first + left, k - left, out);
}

/// `windows` windows of `per_window` tiled panes in one session; `text` rows of plain
/// text per pane (0: omitted).
fn checkpoint(windows: u64, per_window: u64, text: usize) -> fmt::Checkpoint {
    let now = vx_store::clock::now();
    let mut panes = Vec::new();
    let mut ws = Vec::new();
    for w in 0..windows {
        let mut nodes = Vec::new();
        balanced(w * per_window, per_window, &mut nodes);
        ws.push(fmt::Window {
            id: w,
            session: 0,
            name: format!("window {w}"),
            revision: 1,
            nodes,
        });
        for p in w * per_window..(w + 1) * per_window {
            panes.push(fmt::Pane {
                id: p,
                window: w,
                session: 0,
                cols: 80,
                rows: 24,
                state: fmt::PaneState::Running,
                previous_state: None,
                float: None,
                tags: vec![],
                text: if text == 0 {
                    fmt::Text::Omitted
                } else {
                    fmt::Text::Plain(fmt::PlainText {
                        saved_at: now,
                        expires_at: fmt::Timestamp(now.0 + 3_600_000),
                        screen: (0..24)
                            .map(|r| format!("pane {p} row {r}: {}", "x".repeat(40)))
                            .take(text)
                            .chain(std::iter::repeat_n(String::new(), 24 - text.min(24)))
                            .collect(),
                        history: vec![],
                    })
                },
            });
        }
    }
    fmt::Checkpoint {
        checkpoint: format!(
            "c{}",
            uuid_like(windows * 1_000_000 + per_window * 10 + text as u64)
        ),
        generation: 1,
        socket: String::new(),
        uid: 0,
        captured_at: now,
        shutdown: fmt::Shutdown::Open,
        sessions: vec![fmt::Session {
            id: 0,
            name: "bench".into(),
        }],
        windows: ws,
        panes,
    }
}

fn uuid_like(n: u64) -> String {
    format!("{:08x}-0000-4000-8000-{:012x}", n >> 16, n)
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn restore_100k(base: &Path, runs: usize) {
    println!("## restore of ~100000 resources ({runs} runs, a fresh daemon each)");
    let cp = checkpoint(1010, 33, 0);
    let resources = 1
        + cp.windows.len()
        + cp.panes.len()
        + cp.windows.iter().map(|w| w.nodes.len()).sum::<usize>();
    let config = ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000, .max_checkpoint_bytes = 67108864 } }";
    let (mut walls, mut cpus, mut peaks) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        let dir = base.join(format!("restore-{run}"));
        let mut d = Daemon::start(&dir, config);
        let (id, size) = d.plant(cp.clone());
        let before = d.status_kib("VmHWM:");
        let rss_before = d.status_kib("VmRSS:");
        let pid = d.served.child.id();
        let cpu0 = cpu(pid);
        let start = Instant::now();
        let r = d.call("recovery.restore", json!({"checkpoint": id}));
        let took = start.elapsed();
        let cpu_took = cpu(pid) - cpu0;
        assert_eq!(r["panes"].as_array().unwrap().len(), 33330);
        let after = d.status_kib("VmHWM:");
        let rss_after = d.status_kib("VmRSS:");
        let ratio = (after - before) as f64 * 1024.0 / size as f64;
        println!(
            "resources {resources}, file {size} B ({:.1} MiB), restore {:.0} ms (daemon CPU {:.0} ms), VmHWM {before} → {after} KiB (+{:.1} MiB, {ratio:.1}× file), VmRSS {rss_before} → {rss_after} KiB",
            size as f64 / 1048576.0,
            took.as_secs_f64() * 1e3,
            cpu_took.as_secs_f64() * 1e3,
            (after - before) as f64 / 1024.0,
        );
        let start = Instant::now();
        let c = d.call("recovery.checkpoint", json!({}));
        println!(
            "checkpoint of the restored state: {:.0} ms (generation {})",
            start.elapsed().as_secs_f64() * 1e3,
            c["generation"]
        );
        walls.push(took);
        cpus.push(cpu_took);
        peaks.push(ratio);
    }
    peaks.sort_by(f64::total_cmp);
    println!(
        "median of {runs}: restore {:.0} ms, daemon CPU {:.0} ms, peak {:.1}× file",
        median(&mut walls).as_secs_f64() * 1e3,
        median(&mut cpus).as_secs_f64() * 1e3,
        peaks[runs / 2]
    );
}

fn pty_throughput(base: &Path, rounds: usize) {
    println!("## PTY throughput: 64 MiB through one pane");
    let run = |config: &str, name: &str| -> Duration {
        let dir = base.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        let mut d = Daemon::start(&dir, config);
        let s = d.call("session.create", json!({"name": "s"}));
        let w = d.call(
            "window.create",
            json!({"session": s["session"], "name": "w"}),
        );
        // Keep some idle panes with text for the capture to read.
        let p = d.call(
            "pane.create",
            json!({"window": w["window"], "argv": ["/bin/sh", "-c", "seq 1 2000; exec sleep 600"]}),
        );
        let mut last = p["pane"].clone();
        for _ in 0..9 {
            let q = d.call(
                "pane.split",
                json!({"pane": last, "axis": "rows", "argv": ["/bin/sh", "-c", "seq 1 2000; exec sleep 600"]}),
            );
            last = q["pane"].clone();
        }
        let w2 = d.call(
            "window.create",
            json!({"session": s["session"], "name": "load"}),
        );
        let start = Instant::now();
        let p = d.call(
            "pane.create",
            json!({"window": w2["window"], "argv": ["/bin/sh", "-c", "head -c 67108864 /dev/zero | tr '\\0' 'a'"]}),
        );
        loop {
            let c = d.call("pane.capture", json!({"pane": p["pane"]}));
            if c["exited"] == true {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        start.elapsed()
    };
    let off = ".{ .recovery = .{ .enabled = false } }";
    let on = ".{ .recovery = .{ .enabled = true, .interval_ms = 1000, .terminal_text = .plain } }";
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for round in 0..rounds.min(10) {
        if round.is_multiple_of(2) {
            a.push(run(off, "off"));
            b.push(run(on, "on"));
        } else {
            b.push(run(on, "on"));
            a.push(run(off, "off"));
        }
    }
    let (ma, mb) = (median(&mut a), median(&mut b));
    println!(
        "recovery off {:.0} ms, on (.plain, 1 s ticks) {:.0} ms, ratio {:.3}×",
        ma.as_secs_f64() * 1e3,
        mb.as_secs_f64() * 1e3,
        mb.as_secs_f64() / ma.as_secs_f64()
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return;
    }
    let rounds = env_usize("VXBENCH_ROUNDS", 30);
    let holder;
    let base = match std::env::var_os("VXBENCH_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            holder = tempfile::tempdir().unwrap();
            holder.path().to_path_buf()
        }
    };
    let only = std::env::var("VXBENCH_ONLY").unwrap_or_default();
    let run = |part: &str| only.is_empty() || only.split(',').any(|p| p == part);
    if run("capture") {
        capture::capture_publish(&base, rounds);
    }
    if run("restore") {
        restore_100k(&base, env_usize("VXBENCH_RESTORE_RUNS", 3).max(1));
    }
    if run("pty") {
        pty_throughput(&base, rounds);
    }
}
