//! How verb costs and idle memory grow with the number of panes: `pane.create`
//! (each in a fresh window), `pane.list` and `session.list`, measured at each level of
//! `VXBENCH_LEVELS` (default 10,100,1000) idle `cat` panes in one daemon. For each
//! level: the median wall time of `VXBENCH_SAMPLES` calls (default 50) and the
//! daemon's CPU time per call (its threads' on-CPU time, which a loaded machine
//! disturbs far less than wall time), the ratio of each to the first level, and for
//! the list verbs the CPU per listed pane (flat when the cost is linear).
//!
//! Memory: the daemon's resident set (`VmRSS`) once it holds exactly `level` idle
//! panes, and the growth per pane since the first level; the peer is a tmux server
//! (private `-S` socket in a temp dir, killed by PID) holding the same number of idle
//! `cat` panes, one per window, built after the daemon is stopped so both can use the
//! machine's whole PTY budget. Set `VXBENCH_TMUX=0` to skip it.
//!
//! Each pane holds a PTY, a kernel-wide budget (`/proc/sys/kernel/pty/max`, 4096 by
//! default, shared with every other program): a level that does not fit what is free
//! (less a margin) is skipped, or ends the run, with the reason printed, rather than
//! exhausting the machine's PTYs.
//! Run: `cargo bench -p vxref --bench scaling`; `VXBENCH_VXREF=<binary>` measures
//! another build of the daemon (an earlier commit) with the same client.

mod common;

use common::{cpu, Served};
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn levels() -> Vec<usize> {
    std::env::var("VXBENCH_LEVELS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|v: &Vec<usize>| !v.is_empty())
        .unwrap_or_else(|| vec![10, 100, 1000])
}

fn samples() -> usize {
    std::env::var("VXBENCH_SAMPLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50)
}

/// How long a level's panes are left alone before the resident set is read, so
/// their programs have started and their first (empty) reads are parked.
const SETTLE: Duration = Duration::from_millis(500);

struct Row {
    level: usize,
    wall: Duration,
    cpu: Duration,
}

/// Resident memory of `pid` in KiB (`VmRSS` of `/proc/<pid>/status`).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// A request that may fail: the `ok` payload or the whole error reply.
fn try_call(c: &mut common::Conn, verb: &str, params: Value) -> Result<Value, Value> {
    c.send(&json!({"id": 1, "verb": verb, "params": params}).to_string());
    let v: Value = serde_json::from_str(&c.line()).unwrap();
    v.get("ok").cloned().ok_or(v)
}

/// `(panes, RSS KiB)` at each level reached, and why the run stopped early if it did.
type Memory = (Vec<(usize, u64)>, Option<String>);

/// PTYs left free for everything else on the machine: running out fails every
/// other program's PTY open (and other tests' panes), not only this bench's.
const PTY_MARGIN: usize = 64;

/// How many PTYs the bench may open: the kernel-wide limit less those in use and a
/// margin, or None when the limits cannot be read.
fn pty_budget() -> Option<usize> {
    // `nr` counts the PTYs open now, in every devpts instance.
    let read = |name: &str| -> Option<usize> {
        std::fs::read_to_string(format!("/proc/sys/kernel/pty/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    Some(read("max")?.saturating_sub(read("nr")? + PTY_MARGIN))
}

/// The levels that fit the PTY budget (each pane holds one PTY; the daemon also
/// creates `k` more per level), printing why any other is skipped.
fn levels_within_budget(levels: Vec<usize>, k: usize) -> Vec<usize> {
    let Some(budget) = pty_budget() else {
        return levels;
    };
    let mut fit = Vec::new();
    for (i, level) in levels.into_iter().enumerate() {
        // Panes held once this level's creates are measured.
        let needed = level + k * (i + 1);
        if needed <= budget {
            fit.push(level);
        } else {
            println!(
                "level {level} skipped: it needs ~{needed} PTYs and this machine allows \
                 {budget} (/proc/sys/kernel/pty/max less those in use and a margin of \
                 {PTY_MARGIN})"
            );
        }
    }
    fit
}

fn main() {
    let k = samples();
    let levels = levels_within_budget(levels(), k);
    let (rows, vxref_memory) = measure_vxref(&levels, k);
    let tmux_memory = if std::env::var("VXBENCH_TMUX").as_deref() == Ok("0") {
        None
    } else {
        tmux_memory(&levels)
    };
    print_verbs(&rows, k);
    print_memory(&vxref_memory, tmux_memory.as_ref());
}

fn measure_vxref(levels: &[usize], k: usize) -> (Vec<(&'static str, Vec<Row>)>, Memory) {
    let dir = tempfile::tempdir().unwrap();
    let bin = common::vxref();
    let served = Served::start(&bin, dir.path(), None);
    let pid = served.child.id();
    let mut c = served.connect();
    let session = c.call("session.create", json!({"name": "s"}))["session"].clone();
    let create = |c: &mut common::Conn| -> Result<Duration, String> {
        let w = c.call("window.create", json!({"session": session, "name": "w"}))["window"].clone();
        let t = Instant::now();
        try_call(c, "pane.create", json!({"window": w, "argv": ["cat"]}))
            .map_err(|e| format!("pane.create failed: {e}"))?;
        Ok(t.elapsed())
    };
    let mut panes = 0;
    let mut memory = Vec::new();
    let mut stopped = None;
    let mut rows: Vec<(&str, Vec<Row>)> = vec![
        ("pane.create", vec![]),
        ("pane.list", vec![]),
        ("session.list", vec![]),
    ];
    'levels: for &level in levels {
        // Other programs take PTYs too: re-check before each level.
        let needed = level.saturating_sub(panes) + k;
        if pty_budget().is_some_and(|free| needed > free) {
            stopped = Some(format!(
                "at {panes} panes: too few free PTYs for level {level}"
            ));
            break;
        }
        while panes < level {
            if let Err(why) = create(&mut c) {
                stopped = Some(format!("at {panes} panes: {why}"));
                break 'levels;
            }
            panes += 1;
        }
        std::thread::sleep(SETTLE);
        memory.push((panes, rss_kib(pid)));
        let c0 = cpu(pid);
        let mut walls = Vec::with_capacity(k);
        for _ in 0..k {
            match create(&mut c) {
                Ok(wall) => walls.push(wall),
                Err(why) => {
                    stopped = Some(format!("at {panes} panes: {why}"));
                    break 'levels;
                }
            }
            panes += 1;
        }
        let cpu_each = (cpu(pid) - c0) / k as u32;
        walls.sort();
        rows[0].1.push(Row {
            level,
            wall: walls[k / 2],
            cpu: cpu_each,
        });
        for (verb, out) in rows.iter_mut().skip(1) {
            let c0 = cpu(pid);
            let mut walls: Vec<Duration> = (0..k)
                .map(|_| {
                    let t = Instant::now();
                    c.call(verb, json!({}));
                    t.elapsed()
                })
                .collect();
            walls.sort();
            out.push(Row {
                level,
                wall: walls[k / 2],
                cpu: (cpu(pid) - c0) / k as u32,
            });
        }
    }
    (rows, (memory, stopped))
}

/// A tmux server's RSS at each level of idle `cat` panes (one per window), or None
/// when tmux is not installed.
fn tmux_memory(levels: &[usize]) -> Option<Memory> {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("tmux.sock");
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["-f", "/dev/null"])
            .args(args)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .output()
    };
    let started = tmux(&[
        "new-session",
        "-d",
        "-s",
        "b",
        "-x",
        "80",
        "-y",
        "24",
        "cat",
    ])
    .ok()?;
    if !started.status.success() {
        return None;
    }
    let out = tmux(&["display-message", "-p", "#{pid}"]).ok()?;
    let pid: u32 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    let mut panes = 1;
    let mut memory = Vec::new();
    let mut stopped = None;
    'levels: for &level in levels {
        if pty_budget().is_some_and(|free| level.saturating_sub(panes) > free) {
            stopped = Some(format!(
                "at {panes} panes: too few free PTYs for level {level}"
            ));
            break;
        }
        while panes < level {
            // Many windows per client call: the client's own start-up is not measured.
            let batch = (level - panes).min(100);
            let mut args = Vec::with_capacity(batch * 4);
            for _ in 0..batch {
                args.extend(["new-window", "-d", "cat", ";"]);
            }
            let out = tmux(&args).expect("run tmux");
            let listed = tmux(&["list-windows", "-a", "-F", "x"]).expect("run tmux");
            let now = listed.stdout.iter().filter(|&&b| b == b'\n').count();
            if !out.status.success() || now < panes + batch {
                let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
                stopped = Some(format!("at {now} panes: tmux new-window failed: {why}"));
                break 'levels;
            }
            panes = now;
        }
        std::thread::sleep(SETTLE);
        memory.push((panes, rss_kib(pid)));
    }
    stop_by_pid(pid);
    Some((memory, stopped))
}

/// SIGTERM to a process that is not our child (tmux daemonizes), then waits for it
/// to be gone.
fn stop_by_pid(pid: u32) {
    let raw = nix::unistd::Pid::from_raw(pid as i32);
    let _ = nix::sys::signal::kill(raw, nix::sys::signal::Signal::SIGTERM);
    let start = Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        if start.elapsed() > Duration::from_secs(10) {
            let _ = nix::sys::signal::kill(raw, nix::sys::signal::Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn print_verbs(rows: &[(&str, Vec<Row>)], k: usize) {
    println!("## verb cost by pane count ({k} calls per level, median wall, daemon CPU per call)");
    println!("| verb | panes | wall | × first | daemon CPU | × first | CPU per pane |");
    println!("|---|---|---|---|---|---|---|");
    for (verb, out) in rows {
        let Some(first) = out.first() else { continue };
        let (w0, c0) = (first.wall.as_secs_f64(), first.cpu.as_secs_f64().max(1e-9));
        for r in out {
            // A create's cost is per call; a list's is spread over the listed panes.
            let per_pane = if *verb == "pane.create" {
                "–".to_string()
            } else {
                format!("{:.2} µs", r.cpu.as_secs_f64() * 1e6 / r.level as f64)
            };
            println!(
                "| `{verb}` | {} | {:.2} ms | {:.2} | {:.2} ms | {:.2} | {per_pane} |",
                r.level,
                r.wall.as_secs_f64() * 1e3,
                r.wall.as_secs_f64() / w0,
                r.cpu.as_secs_f64() * 1e3,
                r.cpu.as_secs_f64() / c0
            );
        }
    }
}

fn print_memory(vxref: &Memory, tmux: Option<&Memory>) {
    println!();
    println!("## idle memory by pane count (RSS; per pane = growth since the first level)");
    println!(
        "| panes | vxref RSS | vxref per pane | tmux RSS | tmux per pane | vxref/tmux per pane |"
    );
    println!("|---|---|---|---|---|---|");
    let per_pane = |m: &[(usize, u64)], i: usize| -> Option<f64> {
        let (p0, r0) = *m.first()?;
        let (p, r) = *m.get(i)?;
        (p > p0).then(|| (r as f64 - r0 as f64) / (p - p0) as f64)
    };
    let kib = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.1} KiB"));
    for (i, &(panes, rss)) in vxref.0.iter().enumerate() {
        let ours = per_pane(&vxref.0, i);
        let (peer_rss, peer) = match tmux {
            Some((m, _)) => (m.get(i).map(|&(_, r)| r), per_pane(m, i)),
            None => (None, None),
        };
        let ratio = match (ours, peer) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
            _ => "–".to_string(),
        };
        println!(
            "| {panes} | {:.1} MiB | {} | {} | {} | {ratio} |",
            rss as f64 / 1024.0,
            kib(ours),
            peer_rss.map_or("–".to_string(), |r| format!(
                "{:.1} MiB",
                r as f64 / 1024.0
            )),
            kib(peer),
        );
    }
    if let Some(why) = &vxref.1 {
        println!("\nvxref stopped {why}");
    }
    match tmux {
        Some((_, Some(why))) => println!("tmux stopped {why}"),
        None => println!("tmux: not measured"),
        _ => {}
    }
}
