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
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vx_format as fmt;

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

/// The floor of one publish: exactly the store's syscalls up to its durable success
/// (strace of one `recovery.checkpoint`): list the directory and stat each
/// checkpoint in it (the allocation scan), create a fresh temporary file
/// exclusively, write the bytes, fsync, close, rename it without replacing to a
/// fresh final name, fsync the directory. Its prune (delete the oldest beyond 3, fsync
/// the directory) runs after the timing, as the daemon's runs after its reply.
struct Floor {
    dir: PathBuf,
    dir_file: std::fs::File,
    seq: u64,
    kept: std::collections::VecDeque<PathBuf>,
}

impl Floor {
    fn new(dir: PathBuf) -> Floor {
        use std::os::unix::fs::DirBuilderExt as _;
        std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
        let dir_file = std::fs::File::open(&dir).unwrap();
        Floor {
            dir,
            dir_file,
            seq: 0,
            kept: Default::default(),
        }
    }

    fn publish(&mut self, bytes: &[u8]) -> Duration {
        use std::os::unix::fs::OpenOptionsExt as _;
        let start = Instant::now();
        for entry in std::fs::read_dir(&self.dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                std::fs::symlink_metadata(&path).unwrap();
            }
        }
        self.seq += 1;
        let tmp = self.dir.join(format!(".tmp-{}", uuid_like(self.seq)));
        let fin = self.dir.join(format!("c{}.json", uuid_like(self.seq)));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
            .open(&tmp)
            .unwrap();
        f.write_all(bytes).unwrap();
        f.sync_all().unwrap();
        drop(f);
        nix::fcntl::renameat2(
            None,
            &tmp,
            None,
            &fin,
            nix::fcntl::RenameFlags::RENAME_NOREPLACE,
        )
        .unwrap();
        self.dir_file.sync_all().unwrap();
        let took = start.elapsed();
        self.kept.push_back(fin);
        took
    }

    fn prune(&mut self) {
        while self.kept.len() > 3 {
            std::fs::remove_file(self.kept.pop_front().unwrap()).unwrap();
        }
        self.dir_file.sync_all().unwrap();
    }
}

/// One line a live pane prints: shell-like text, with a tab every 8th line and
/// wide characters every 16th, so capture meets what RFC §4's rules handle.
fn output_line(i: usize) -> String {
    let mut line = format!(
        "{i:>5}  -rw-r--r-- 1 user user {:>6} Nov 30 12:{:02} ",
        i * 37,
        i % 60
    );
    line.push_str(match i % 16 {
        0 => "\u{754c}\u{9762}-notes.txt",
        8 => "tab\tseparated.log",
        _ => "some_file_name.rs",
    });
    line
}

/// `n` live panes, one 80x24 window each, whose program prints `lines` lines (a
/// full screen and `lines - 23` rows of history) and then waits; returns once every
/// pane's screen shows its last line.
fn spawn_live_panes(d: &mut Daemon, base: &Path, n: u64, lines: usize) -> Vec<Value> {
    let file = base.join("lines.txt");
    if !file.exists() {
        let text: String = (0..lines).map(|i| output_line(i) + "\n").collect();
        std::fs::write(&file, text).unwrap();
    }
    let argv = json!([
        "/bin/sh",
        "-c",
        format!("cat '{}'; exec sleep 3600", file.display())
    ]);
    let s = d.call("session.create", json!({"name": "bench"}));
    let mut panes = Vec::new();
    for i in 0..n {
        let w = d.call(
            "window.create",
            json!({"session": s["session"], "name": format!("w{i}"), "cols": 80, "rows": 24}),
        );
        let p = d.call("pane.create", json!({"window": w["window"], "argv": argv}));
        panes.push(p["pane"].clone());
    }
    let last = output_line(lines - 1);
    let last = last.split_whitespace().next().unwrap().to_string();
    for p in &panes {
        let start = Instant::now();
        loop {
            let c = d.call("pane.capture", json!({"pane": p}));
            let screen = c["screen"].as_array().unwrap();
            if screen
                .iter()
                .any(|r| r.as_str().unwrap().split_whitespace().next() == Some(&last))
            {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "pane never printed"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    panes
}

/// `VXBENCH_PRINTED=1`: before each checkpoint every pane prints one more character
/// (the terminal's echo of `pane.send`; the program never reads it), so no screen is
/// the one the last checkpoint encoded and the capture derives and encodes every
/// pane's rows again. Waits for the last pane's echo; [`assert_printed`] checks all.
fn print_to_every_pane(d: &mut Daemon, panes: &[Value], mark: char) {
    for p in panes {
        d.call("pane.send", json!({"pane": p, "text": mark.to_string()}));
    }
    let last = panes.last().unwrap();
    let start = Instant::now();
    while !d.call("pane.capture", json!({"pane": last}))["screen"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r.as_str().unwrap().ends_with(mark))
    {
        assert!(start.elapsed() < Duration::from_secs(10), "no echo");
        std::thread::sleep(Duration::from_millis(1));
    }
    // The echoes of the other panes were queued before the last one's.
    std::thread::sleep(Duration::from_millis(20));
}

/// Every pane's text in the checkpoint shows `mark` at the end of a row: no pane's
/// screen was the one encoded before (else the figure would flatter the printed case).
fn assert_printed(bytes: &[u8], mark: char) {
    let cp = fmt::read(bytes, &fmt::ReadContext::default())
        .unwrap()
        .checkpoint;
    for pane in &cp.panes {
        let fmt::Text::Plain(t) = &pane.text else {
            panic!("pane without text")
        };
        assert!(
            t.screen.iter().any(|r| r.ends_with(mark)),
            "a pane's screen did not show this round's echo yet"
        );
    }
}

/// Waits until the daemon's prune (after its reply) left at most 3 checkpoints.
fn settle(store: &Path) {
    let start = Instant::now();
    loop {
        let finals = std::fs::read_dir(store)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().ends_with(".json")
            })
            .count();
        if finals <= 3 || start.elapsed() > Duration::from_secs(5) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Each thread's CPU time so far (`schedstat`, ns) by thread id.
fn thread_cpu(pid: u32) -> std::collections::HashMap<String, u64> {
    let mut out = std::collections::HashMap::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
        if let Some(ns) = stat.split_whitespace().next().and_then(|t| t.parse().ok()) {
            out.insert(task.file_name().to_string_lossy().into_owned(), ns);
        }
    }
    out
}

/// CPU time spent since `before` by the threads alive now (a thread that ended in
/// between takes its time with it: [`common::cpu`]'s sum could even go backwards).
fn cpu_since(pid: u32, before: &std::collections::HashMap<String, u64>) -> Duration {
    let ns = thread_cpu(pid)
        .iter()
        .map(|(tid, ns)| ns.saturating_sub(before.get(tid).copied().unwrap_or(0)))
        .sum();
    Duration::from_nanos(ns)
}

struct Sample {
    wall: Duration,
    /// The measuring side's CPU: the daemon's (all threads) for a checkpoint, this
    /// process's for the floor.
    cpu: Duration,
}

fn medians(v: &mut [Sample]) -> (Duration, Duration) {
    let mut walls: Vec<Duration> = v.iter().map(|s| s.wall).collect();
    let mut cpus: Vec<Duration> = v.iter().map(|s| s.cpu).collect();
    (median(&mut walls), median(&mut cpus))
}

fn capture_publish(base: &Path, rounds: usize) {
    let lines = env_usize("VXBENCH_LINES", 40);
    let printed = std::env::var("VXBENCH_PRINTED").is_ok_and(|v| v == "1");
    let counts: Vec<u64> = std::env::var("VXBENCH_PANES")
        .unwrap_or_else(|_| "10,100,1000".into())
        .split(',')
        .map(|n| n.parse().unwrap())
        .collect();
    println!(
        "## capture + publish of live panes (recovery.checkpoint over the wire) vs floor; {lines} lines printed per pane, {rounds} rounds{}",
        if printed { "; every pane prints before each checkpoint" } else { "; panes idle between checkpoints" }
    );
    println!("| panes | text | file bytes | floor wall | checkpoint wall | ratio of medians | median of round ratios | floor CPU | daemon CPU to reply | daemon CPU with prune | `server.info` round trip | daemon VmRSS before → after the rounds |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for n in counts {
        let dir = base.join(format!("live-{n}"));
        let _ = std::fs::remove_dir_all(&dir);
        let config = |text: &str| {
            format!(".{{ .recovery = .{{ .enabled = true, .interval_ms = 3600000, .terminal_text = {text} }} }}")
        };
        let mut d = Daemon::start(&dir, &config(".off"));
        let created = Instant::now();
        let panes = spawn_live_panes(&mut d, base, n, lines);
        eprintln!(
            "{n} live panes ready in {:.1} s",
            created.elapsed().as_secs_f64()
        );
        let store = d.store_dir();
        let mut floor = Floor::new(store.parent().unwrap().join("floor"));
        let pid = d.served.child.id();
        let me = std::process::id();
        let texts = std::env::var("VXBENCH_TEXT").unwrap_or_else(|_| "off,plain".into());
        for text in [".off", ".plain"] {
            if !texts.split(',').any(|t| t == &text[1..]) {
                continue;
            }
            if text == ".plain" {
                std::fs::write(dir.join("config/venomx/config.zon"), config(text)).unwrap();
                d.call("config.reload", json!({}));
            }
            let rss_before = d.status_kib("VmRSS:");
            let (mut floors, mut cps, mut pruned) = (Vec::new(), Vec::new(), Vec::new());
            // The daemon's fixed cost of any request (the wire, a reactor turn, the
            // reply), which the in-process floor does not pay: one call per round.
            let mut round_trips = Vec::new();
            // Each round's own ratio: the disk's fsync time drifts with the load of
            // the machine, and a round's two sides see the same disk.
            let mut paired: Vec<f64> = Vec::new();
            let mut bytes = Vec::new();
            let take_checkpoint = |d: &mut Daemon, bytes: &mut Vec<u8>| {
                let cpu0 = thread_cpu(pid);
                let start = Instant::now();
                let r = d.call("recovery.checkpoint", json!({}));
                let wall = start.elapsed();
                let to_reply = cpu_since(pid, &cpu0);
                settle(&store);
                let with_prune = cpu_since(pid, &cpu0);
                let name = format!("{}.json", r["checkpoint"].as_str().unwrap());
                *bytes = std::fs::read(store.join(name)).unwrap();
                (
                    Sample {
                        wall,
                        cpu: to_reply,
                    },
                    with_prune,
                )
            };
            let mut take_floor = |bytes: &[u8]| {
                let cpu0 = thread_cpu(me);
                let wall = floor.publish(bytes);
                let sample = Sample {
                    wall,
                    cpu: cpu_since(me, &cpu0),
                };
                floor.prune();
                sample
            };
            // The first checkpoint gives the floor its bytes; three warm-up rounds.
            take_checkpoint(&mut d, &mut bytes);
            for round in 0..rounds + 3 {
                let mark = char::from(b'a' + (round % 26) as u8);
                if printed {
                    print_to_every_pane(&mut d, &panes, mark);
                }
                let (c, f) = if round.is_multiple_of(2) {
                    let c = take_checkpoint(&mut d, &mut bytes);
                    (c, take_floor(&bytes))
                } else {
                    let f = take_floor(&bytes);
                    (take_checkpoint(&mut d, &mut bytes), f)
                };
                if printed && text == ".plain" {
                    assert_printed(&bytes, mark);
                }
                let start = Instant::now();
                d.call("server.info", json!({}));
                let round_trip = start.elapsed();
                if round >= 3 {
                    round_trips.push(round_trip);
                    paired.push(c.0.wall.as_secs_f64() / f.wall.as_secs_f64());
                    cps.push(c.0);
                    pruned.push(c.1);
                    floors.push(f);
                }
            }
            let (fw, fc) = medians(&mut floors);
            let (cw, cc) = medians(&mut cps);
            paired.sort_by(f64::total_cmp);
            println!(
                "| {n} | {} | {} | {:.0} µs | {:.0} µs | {:.2}× | {:.2}× | {:.0} µs | {:.0} µs | {:.0} µs | {:.0} µs | {rss_before} → {} KiB |",
                if text == ".plain" { "plain" } else { "omitted" },
                bytes.len(),
                fw.as_secs_f64() * 1e6,
                cw.as_secs_f64() * 1e6,
                cw.as_secs_f64() / fw.as_secs_f64(),
                paired[paired.len() / 2],
                fc.as_secs_f64() * 1e6,
                cc.as_secs_f64() * 1e6,
                median(&mut pruned).as_secs_f64() * 1e6,
                median(&mut round_trips).as_secs_f64() * 1e6,
                d.status_kib("VmRSS:"),
            );
        }
    }
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
        capture_publish(&base, rounds);
    }
    if run("restore") {
        restore_100k(&base, env_usize("VXBENCH_RESTORE_RUNS", 3).max(1));
    }
    if run("pty") {
        pty_throughput(&base, rounds);
    }
}
