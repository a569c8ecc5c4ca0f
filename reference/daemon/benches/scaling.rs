//! How verb costs grow with the number of panes: `pane.create` (each in a fresh
//! window), `pane.list` and `session.list`, measured at each level of
//! `VXBENCH_LEVELS` (default 10,100,1000) idle `cat` panes in one daemon. For each
//! level: the median wall time of `VXBENCH_SAMPLES` calls (default 30) and the
//! daemon's CPU time per call (its threads' on-CPU time, which a loaded machine
//! disturbs far less than wall time), and the ratio of each to the first level.
//! Run: `cargo bench -p vxref --bench scaling`; `VXBENCH_VXREF=<binary>` measures
//! another build of the daemon (an earlier commit) with the same client.

mod common;

use common::{cpu, Served};
use serde_json::json;
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

struct Row {
    level: usize,
    wall: Duration,
    cpu: Duration,
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let bin = common::vxref();
    let served = Served::start(&bin, dir.path(), None);
    let pid = served.child.id();
    let mut c = served.connect();
    let session = c.call("session.create", json!({"name": "s"}))["session"].clone();
    let k = samples();
    let create = |c: &mut common::Conn| {
        let w = c.call("window.create", json!({"session": session, "name": "w"}))["window"].clone();
        let t = Instant::now();
        c.call("pane.create", json!({"window": w, "argv": ["cat"]}));
        t.elapsed()
    };
    let mut panes = 0;
    let mut rows: Vec<(&str, Vec<Row>)> = vec![
        ("pane.create", vec![]),
        ("pane.list", vec![]),
        ("session.list", vec![]),
    ];
    for level in levels() {
        while panes < level {
            create(&mut c);
            panes += 1;
        }
        let c0 = cpu(pid);
        let mut walls: Vec<Duration> = (0..k).map(|_| create(&mut c)).collect();
        let cpu_each = (cpu(pid) - c0) / k as u32;
        panes += k;
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
    println!("## verb cost by pane count ({k} calls per level, median wall, daemon CPU per call)");
    println!("| verb | panes | wall | × first | daemon CPU | × first |");
    println!("|---|---|---|---|---|---|");
    for (verb, out) in &rows {
        let (w0, c0) = (
            out[0].wall.as_secs_f64(),
            out[0].cpu.as_secs_f64().max(1e-9),
        );
        for r in out {
            println!(
                "| `{verb}` | {} | {:.2} ms | {:.2} | {:.2} ms | {:.2} |",
                r.level,
                r.wall.as_secs_f64() * 1e3,
                r.wall.as_secs_f64() / w0,
                r.cpu.as_secs_f64() * 1e3,
                r.cpu.as_secs_f64() / c0
            );
        }
    }
}
