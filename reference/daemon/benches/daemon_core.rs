//! `cargo bench -p vxref --bench daemon_core`: the daemon-core figures for
//! `docs/performance.md`, measured against tmux in the same run.
//!
//! 1. CLI round trip of `vxref pane list --json` vs `tmux list-panes`, both as fresh
//!    processes against a running server holding the same 4 panes; interleaved, the
//!    order flipped every round, so load drift hits both equally. Reports median and p90 wall time and the ratio of medians.
//! 2. Resident memory per idle pane: server RSS (VmRSS) before and after starting N
//!    idle `cat` panes, for the vxref daemon and the tmux server, divided by N.
//!
//! tmux is installed with `apt-get install -y tmux` when missing (CI runs as root).
//! Environment: `VXBENCH_ROUNDS` (default 300), `VXBENCH_PANES` (default 100).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod common;

use common::{Served, VXREF};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn ensure_tmux() -> PathBuf {
    let found = |p: &str| {
        Command::new(p)
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !found("tmux") {
        eprintln!("tmux missing: apt-get install -y tmux");
        let _ = Command::new("apt-get").arg("update").status();
        let ok = Command::new("apt-get")
            .args(["install", "-y", "tmux"])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok && found("tmux"), "could not install tmux");
    }
    PathBuf::from("tmux")
}

struct Vx {
    served: Served,
}

impl Vx {
    fn start(dir: &Path) -> Vx {
        Vx {
            served: Served::start(VXREF, dir, None),
        }
    }

    fn cli(&self, args: &[&str]) -> std::process::Output {
        Command::new(VXREF)
            .arg("--socket")
            .arg(&self.served.socket)
            .args(args)
            .arg("--json")
            .env("VENOMX_TOKEN", "@owner")
            .env("XDG_CONFIG_HOME", self.served.dir.join("config"))
            .output()
            .expect("run vxref")
    }

    fn ok(&self, args: &[&str]) -> serde_json::Value {
        let out = self.cli(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }
}

struct Tmux {
    bin: PathBuf,
    socket: PathBuf,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> std::process::Output {
        Command::new(&self.bin)
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("run tmux")
    }

    fn server_pid(&self) -> u32 {
        let out = self.run(&["display-message", "-p", "#{pid}"]);
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("tmux pid")
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn settle() {
    std::thread::sleep(Duration::from_millis(500));
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let rounds = env_usize("VXBENCH_ROUNDS", 300);
    let panes = env_usize("VXBENCH_PANES", 100);
    let tmux_bin = ensure_tmux();
    let version =
        String::from_utf8_lossy(&Command::new(&tmux_bin).arg("-V").output().unwrap().stdout)
            .trim()
            .to_string();
    let dir = tempfile::tempdir().unwrap();

    // Round trip, 4 panes each.
    let vx = Vx::start(dir.path());
    vx.ok(&["session", "create", "--name", "bench"]);
    vx.ok(&["window", "create", "--session", "s0", "--name", "w"]);
    vx.ok(&["pane", "create", "--window", "w0", "--argv", r#"["cat"]"#]);
    for _ in 0..3 {
        vx.ok(&[
            "pane",
            "split",
            "--pane",
            "p0",
            "--axis",
            "cols",
            "--argv",
            r#"["cat"]"#,
        ]);
    }
    let tmux = Tmux {
        bin: tmux_bin.clone(),
        socket: dir.path().join("tmux.sock"),
    };
    assert!(tmux
        .run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "bench",
            "-x",
            "80",
            "-y",
            "24",
            "cat"
        ])
        .status
        .success());
    for _ in 0..3 {
        assert!(tmux
            .run(&["split-window", "-t", "bench", "cat"])
            .status
            .success());
    }
    settle();
    let mut vx_times = Vec::with_capacity(rounds);
    let mut tmux_times = Vec::with_capacity(rounds);
    for _ in 0..10 {
        vx.cli(&["pane", "list"]);
        tmux.run(&["list-panes", "-a"]);
    }
    // The order flips every round, so neither side always runs right after the other.
    for i in 0..rounds {
        let time_vx = || {
            let t = Instant::now();
            let out = vx.cli(&["pane", "list"]);
            assert!(out.status.success());
            t.elapsed()
        };
        let time_tmux = || {
            let t = Instant::now();
            let out = tmux.run(&["list-panes", "-a"]);
            assert!(out.status.success());
            t.elapsed()
        };
        if i % 2 == 0 {
            vx_times.push(time_vx());
            tmux_times.push(time_tmux());
        } else {
            tmux_times.push(time_tmux());
            vx_times.push(time_vx());
        }
    }
    vx_times.sort();
    tmux_times.sort();
    let (vx_med, tmux_med) = (percentile(&vx_times, 0.5), percentile(&tmux_times, 0.5));
    println!("## round trip ({rounds} alternating rounds, 4 panes, {version})");
    println!("| client | median | p90 |");
    println!("|---|---|---|");
    println!(
        "| `vxref pane list --json` | {:.2} ms | {:.2} ms |",
        vx_med.as_secs_f64() * 1e3,
        percentile(&vx_times, 0.9).as_secs_f64() * 1e3
    );
    println!(
        "| `tmux list-panes -a` | {:.2} ms | {:.2} ms |",
        tmux_med.as_secs_f64() * 1e3,
        percentile(&tmux_times, 0.9).as_secs_f64() * 1e3
    );
    println!(
        "ratio vxref/tmux (medians): {:.2}x",
        vx_med.as_secs_f64() / tmux_med.as_secs_f64()
    );
    drop(tmux);
    drop(vx);

    // Memory per idle pane: fresh servers with one pane each, then N more.
    let dir2 = tempfile::tempdir().unwrap();
    let vx = Vx::start(dir2.path());
    vx.ok(&["session", "create", "--name", "mem"]);
    vx.ok(&[
        "window",
        "create",
        "--session",
        "s0",
        "--name",
        "w",
        "--cols",
        "200",
        "--rows",
        "60",
    ]);
    vx.ok(&["pane", "create", "--window", "w0", "--argv", r#"["cat"]"#]);
    let tmux = Tmux {
        bin: tmux_bin,
        socket: dir2.path().join("tmux.sock"),
    };
    assert!(tmux
        .run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "mem",
            "-x",
            "200",
            "-y",
            "60",
            "cat"
        ])
        .status
        .success());
    settle();
    let vx_pid = vx.served.child.id();
    let tmux_pid = tmux.server_pid();
    let (vx_before, tmux_before) = (rss_kib(vx_pid), rss_kib(tmux_pid));
    // Each new pane in its own window, at 80x24, so sizes do not depend on layout.
    for i in 0..panes {
        let w = vx.ok(&[
            "window",
            "create",
            "--session",
            "s0",
            "--name",
            &format!("w{i}"),
        ]);
        vx.ok(&[
            "pane",
            "create",
            "--window",
            w["window"].as_str().unwrap(),
            "--argv",
            r#"["cat"]"#,
        ]);
        assert!(tmux
            .run(&["new-window", "-d", "-t", "mem", "cat"])
            .status
            .success());
    }
    settle();
    let (vx_after, tmux_after) = (rss_kib(vx_pid), rss_kib(tmux_pid));
    let per = |before: u64, after: u64| after.saturating_sub(before) as f64 / panes as f64;
    println!("## resident memory per idle pane ({panes} idle `cat` panes, server process only)");
    println!("| server | RSS before | RSS after | per pane |");
    println!("|---|---|---|---|");
    println!(
        "| vxref serve | {vx_before} KiB | {vx_after} KiB | {:.1} KiB |",
        per(vx_before, vx_after)
    );
    println!(
        "| tmux server | {tmux_before} KiB | {tmux_after} KiB | {:.1} KiB |",
        per(tmux_before, tmux_after)
    );
}
