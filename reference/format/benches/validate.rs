//! Strict validation throughput against serde_json's untyped parse of the same bytes.
//!
//! `cargo bench -p vx-format --bench validate` prints, for a ~1 MiB and a ~16 MiB
//! checkpoint (plain text panes, the realistic bulk of a large file), the median
//! time of `vx_format::read` and of two serde_json peers measured in the same run:
//! - `serde envelope`: `from_slice::<Value>` of the file (the literal "same bytes");
//! - `serde env+payload`: that, plus `from_str::<Value>` of the decoded payload, the
//!   least an untyped reader must do to see the checkpoint at all.
//!
//! The reader and its peers run interleaved (one call of each per round, the order
//! rotated), so load drift hits all three alike. The ratio is peer time / our time:
//! 1.0 means as fast as the peer.

use std::hint::black_box;
use std::time::{Duration, Instant};

use vx_format::*;

fn line(i: usize) -> String {
    let words = [
        "build",
        "ok",
        "✓",
        "naïve",
        "\"quoted\"",
        "path/to/file.rs:42",
        "漢字",
        "warning:",
    ];
    let mut s = String::new();
    let mut j = i;
    while s.len() < 72 {
        s.push_str(words[j % words.len()]);
        s.push(' ');
        j = j.wrapping_mul(31).wrapping_add(7);
    }
    s
}

fn state(target_bytes: usize) -> (Checkpoint, Vec<u8>) {
    let mut cp = Checkpoint {
        checkpoint: "c0f1e2d3c-4b5a-4968-8776-655443322110".into(),
        generation: 1,
        socket: "/run/user/1000/venomx/default.sock".into(),
        uid: 1000,
        captured_at: time::parse_timestamp("2026-11-29T10:00:00.000Z").unwrap(),
        shutdown: Shutdown::Open,
        sessions: vec![Session {
            id: 0,
            name: "work".into(),
        }],
        windows: vec![Window {
            id: 0,
            session: 0,
            name: "main".into(),
            revision: 1,
            nodes: vec![],
        }],
        panes: vec![],
    };
    let saved_at = cp.captured_at;
    loop {
        let id = cp.panes.len() as u64;
        cp.panes.push(Pane {
            id,
            window: 0,
            session: 0,
            cols: 80,
            rows: 50,
            state: PaneState::Running,
            previous_state: None,
            float: None,
            tags: vec![Tag {
                key: "owner".into(),
                value: "venomx".into(),
            }],
            text: Text::Plain(PlainText {
                saved_at,
                expires_at: Timestamp(saved_at.0 + 86_400_000),
                screen: (0..50).map(|i| line(i + id as usize)).collect(),
                history: (0..400).map(|i| line(i * 3 + id as usize)).collect(),
            }),
        });
        let n = cp.panes.len();
        let mut fixed = Vec::new();
        build_chain(n, &mut fixed);
        cp.windows[0].nodes = fixed;
        let bytes = write(&cp, Format::V3).unwrap();
        if bytes.len() >= target_bytes {
            cp.panes.pop();
            let mut fixed = Vec::new();
            build_chain(cp.panes.len(), &mut fixed);
            cp.windows[0].nodes = fixed;
            let bytes = write(&cp, Format::V3).unwrap();
            return (cp, bytes);
        }
    }
}

/// Preorder of split(p0, split(p1, split(p2, … p_{n-1}))).
fn build_chain(n: usize, nodes: &mut Vec<Node>) {
    for p in 0..n {
        if p + 1 < n {
            let i = nodes.len();
            nodes.push(Node::Split {
                axis: Axis::Rows,
                first: i + 1,
                second: i + 2,
                ratio: None,
            });
        }
        nodes.push(Node::Pane { pane: p as u64 });
    }
}

fn median(mut f: impl FnMut(), budget: Duration) -> Duration {
    let mut times = Vec::new();
    let start = Instant::now();
    while start.elapsed() < budget || times.len() < 5 {
        let t = Instant::now();
        f();
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// The median time of each of `fs`, run interleaved (one call of each per round, the
/// order rotated every round) until `budget` has passed, so load drift hits all alike.
fn interleaved_medians(fs: &mut [&mut dyn FnMut()], budget: Duration) -> Vec<Duration> {
    let mut times = vec![Vec::new(); fs.len()];
    let start = Instant::now();
    let mut round = 0;
    while start.elapsed() < budget || round < 5 {
        for k in 0..fs.len() {
            let i = (k + round) % fs.len();
            let t = Instant::now();
            (fs[i])();
            times[i].push(t.elapsed());
        }
        round += 1;
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
    // `cargo test --benches` runs this with --test-ish flags; keep that instant.
    let quick = std::env::args().any(|a| a == "--test" || a == "--quick");
    let budget = if quick {
        Duration::from_millis(1)
    } else {
        Duration::from_secs(3)
    };
    if std::env::args().any(|a| a == "--profile-write") {
        // For `valgrind --tool=callgrind`: the writer `VX_WRITES` times (default 20) on
        // the 1 MiB state; subtract a run with VX_WRITES=0 to drop the setup.
        let (cp, _) = state(1 << 20);
        let writes: usize = std::env::var("VX_WRITES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(20);
        for _ in 0..writes {
            drop(black_box(write(black_box(&cp), Format::V3).unwrap()));
        }
        return;
    }
    if std::env::args().any(|a| a == "--profile-read") {
        // For `perf record`: only the reader, on the large file.
        let (_, bytes) = state(16_777_216);
        let ctx = ReadContext::default();
        let env = read_envelope(&bytes, &ctx).unwrap();
        let stages = [
            (
                "envelope scan",
                median(
                    || {
                        black_box(json::check_document(&bytes, Doc::Envelope).unwrap());
                    },
                    budget,
                ),
            ),
            (
                "envelope read (scan+unescape+sha)",
                median(
                    || drop(black_box(read_envelope(&bytes, &ctx).unwrap())),
                    budget,
                ),
            ),
            (
                "sha256 of payload",
                median(
                    || {
                        black_box(<sha2::Sha256 as sha2::Digest>::digest(
                            env.payload.as_bytes(),
                        ));
                    },
                    budget,
                ),
            ),
            (
                "payload scan",
                median(
                    || {
                        black_box(json::check_text(&env.payload, Doc::Payload).unwrap());
                    },
                    budget,
                ),
            ),
            (
                "whole read",
                median(|| drop(black_box(read(&bytes, &ctx).unwrap())), budget),
            ),
        ];
        for (name, d) in stages {
            println!("{name}: {:.1} ms", d.as_secs_f64() * 1e3);
        }
        return;
    }
    println!(
        "| file | bytes | vx_format::read | serde envelope | ratio | serde env+payload | ratio |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut writer_lines = Vec::new();
    for (label, target) in [("1 MiB", 1usize << 20), ("16 MiB", 16_777_216)] {
        let (cp, bytes) = state(target);
        let writing = median(
            || drop(black_box(write(black_box(&cp), Format::V3).unwrap())),
            budget,
        );
        writer_lines.push(format!(
            "writer, {label}: {:.1} ms ({:.0} MiB/s)",
            writing.as_secs_f64() * 1e3,
            bytes.len() as f64 / writing.as_secs_f64() / (1 << 20) as f64
        ));
        let ctx = ReadContext::default();
        read(&bytes, &ctx).expect("benchmark file is valid");
        let mut ours_f = || drop(black_box(read(black_box(&bytes), &ctx).unwrap()));
        let mut envelope_f = || {
            drop(black_box(
                serde_json::from_slice::<serde_json::Value>(black_box(&bytes)).unwrap(),
            ))
        };
        let mut both_f = || {
            let env: serde_json::Value = serde_json::from_slice(black_box(&bytes)).unwrap();
            let payload = env["payload"].as_str().unwrap();
            drop(black_box(
                serde_json::from_str::<serde_json::Value>(payload).unwrap(),
            ));
        };
        let m = interleaved_medians(&mut [&mut ours_f, &mut envelope_f, &mut both_f], budget * 3);
        let (ours, envelope_only, both) = (m[0], m[1], m[2]);
        let mibs = |d: Duration| bytes.len() as f64 / d.as_secs_f64() / (1 << 20) as f64;
        println!(
            "| {label} | {} | {:.1} ms ({:.0} MiB/s) | {:.1} ms ({:.0} MiB/s) | {:.2}x | {:.1} ms ({:.0} MiB/s) | {:.2}x |",
            bytes.len(),
            ours.as_secs_f64() * 1e3,
            mibs(ours),
            envelope_only.as_secs_f64() * 1e3,
            mibs(envelope_only),
            envelope_only.as_secs_f64() / ours.as_secs_f64(),
            both.as_secs_f64() * 1e3,
            mibs(both),
            both.as_secs_f64() / ours.as_secs_f64(),
        );
    }
    for line in writer_lines {
        println!("{line}");
    }
}
