//! The strict workspace-archive reader against serde_json's untyped parse of the
//! same bytes (target: ≥ 0.5×), on a 1000-pane schema-2 archive.
//!
//! `cargo bench -p vx-agentsession --bench archive_reader` prints the median time of
//! `vx_agentsession::archive::read` (strict scan, schema look-up, typed decode with
//! every rule) and of `serde_json::from_slice::<Value>`, measured in alternating
//! rounds of the same run, and the ratio peer time / our time (1.0 = as fast as the
//! peer). Also the canonical writer. `--quick` (and `cargo test --benches`) keeps it
//! instant.

use std::hint::black_box;
use std::time::{Duration, Instant};

use vx_agentsession::archive::{read, write, Archive, Layout, Pane, Session, SplitDir, Window};
use vx_agentsession::record::Record;

/// 50 sessions × 4 windows × 5 panes, phux-like: titles, cwds, a record on every
/// other pane, a split tree per window.
fn archive() -> Archive {
    let mut sessions = Vec::new();
    for s in 0..50 {
        let mut windows = Vec::new();
        for w in 0..4 {
            let panes: Vec<Pane> = (0..5)
                .map(|p| Pane {
                    active: p == 0,
                    title: Some(format!("agent {s}.{w}.{p} — build ✓")),
                    cwd: Some(format!("/home/dev/src/project-{s}/crate-{w}")),
                    command: None,
                    agent_session: (p % 2 == 0).then(|| Record {
                        plugin_id: "com.phux.agents".into(),
                        integration_id: if p == 0 { "claude-code" } else { "codex" }.into(),
                        native_id: format!("0f8e6a2c-41d7-4b8e-9c55-{s:04}{w:04}{p:04}"),
                    }),
                    cols: Some(120),
                    rows: Some(40),
                })
                .collect();
            let mut layout = Layout::Pane(4);
            for i in (0..4).rev() {
                layout = Layout::Split {
                    dir: if i % 2 == 0 {
                        SplitDir::Horizontal
                    } else {
                        SplitDir::Vertical
                    },
                    ratio: 0.33333334,
                    left: Box::new(Layout::Pane(i)),
                    right: Box::new(layout),
                };
            }
            windows.push(Window {
                name: format!("window-{w}"),
                active: w == 0,
                layout: Some(layout),
                panes,
            });
        }
        sessions.push(Session {
            name: format!("session-{s}"),
            active: s == 0,
            cwd: None,
            command: None,
            windows,
        });
    }
    Archive { sessions }
}

/// Alternating rounds: each round times one run of every contender, so load
/// changes on the shared machine hit all of them alike.
fn paired_medians(contenders: &mut [&mut dyn FnMut()], budget: Duration) -> Vec<Duration> {
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); contenders.len()];
    let start = Instant::now();
    while start.elapsed() < budget || times[0].len() < 5 {
        for (i, f) in contenders.iter_mut().enumerate() {
            let t = Instant::now();
            f();
            times[i].push(t.elapsed());
        }
    }
    times
        .into_iter()
        .map(|mut t| {
            t.sort();
            t[t.len() / 2]
        })
        .collect()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--test" || a == "--quick");
    let budget = if quick {
        Duration::from_millis(1)
    } else {
        Duration::from_secs(5)
    };
    let model = archive();
    let bytes = write(&model);
    assert_eq!(read(&bytes).unwrap().archive, model);
    let panes: usize = model
        .sessions
        .iter()
        .flat_map(|s| &s.windows)
        .map(|w| w.panes.len())
        .sum();
    let medians = paired_medians(
        &mut [
            &mut || drop(black_box(read(black_box(&bytes)).unwrap())),
            &mut || {
                drop(black_box(
                    serde_json::from_slice::<serde_json::Value>(black_box(&bytes)).unwrap(),
                ))
            },
            &mut || drop(black_box(write(black_box(&model)))),
        ],
        budget,
    );
    let (ours, serde, writer) = (medians[0], medians[1], medians[2]);
    let mib = |d: Duration| bytes.len() as f64 / d.as_secs_f64() / (1024.0 * 1024.0);
    println!("| archive | bytes | archive::read | serde_json Value | ratio | archive::write |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| {panes} panes, schema 2 | {} | {:.3} ms ({:.0} MiB/s) | {:.3} ms ({:.0} MiB/s) | **{:.2}×** | {:.3} ms ({:.0} MiB/s) |",
        bytes.len(),
        ours.as_secs_f64() * 1e3,
        mib(ours),
        serde.as_secs_f64() * 1e3,
        mib(serde),
        serde.as_secs_f64() / ours.as_secs_f64(),
        writer.as_secs_f64() * 1e3,
        mib(writer),
    );
}
