//! Part 1 of the recovery bench: capture + publish of live panes against the floor
//! of the store's own syscalls (see the bench's own doc comment).

use super::{env_usize, median, uuid_like, Daemon};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use vx_format as fmt;

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

pub fn capture_publish(base: &Path, rounds: usize) {
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
