//! The writer on one daemon-sized checkpoint, against the floor of its own work.
//!
//! `cargo bench -p vx-format --bench write` prints the median time of
//! `vx_format::write` for N panes (`VXBENCH_PANES`, default 1000; one 80x24 window
//! each, a full screen and 17 rows of history per pane, as in vxref's capture bench)
//! with the text omitted, as `Text::Plain` rows, and as `Text::Encoded` rows (what
//! vxref's capture hands the writer for a screen it already encoded), and through a
//! `RecordCache` that has seen the same state (`write_cached`, as vxref's worker
//! writes an idle daemon's checkpoints: every record's bytes kept), beside the
//! floor of the file itself: SHA-256 of the payload plus one copy of the file's bytes
//! (what any writer of this format must do at least). All run interleaved, the
//! order rotated each round, so load drift hits them alike.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use vx_format::*;

fn state(panes: u64, text: &str) -> Checkpoint {
    let mut cp = vx_format::testing::rfc_example(Format::CURRENT);
    let session = cp.windows[0].session;
    let template = cp.windows[0].clone();
    cp.windows.clear();
    cp.panes.clear();
    for id in 0..panes {
        cp.windows.push(Window {
            id,
            nodes: vec![Node::Pane { pane: id }],
            ..template.clone()
        });
        let row = |r: u64| {
            format!(
                "{r:>5}  -rw-r--r-- 1 user user {:>6} Nov 30 12:{:02} \"notes\".rs",
                r * 37,
                r % 60
            )
        };
        let screen: Vec<String> = (17..41).map(row).collect();
        let history: Vec<String> = (0..17).map(row).collect();
        let (saved_at, expires_at) = (cp.captured_at, Timestamp(cp.captured_at.0 + 60_000));
        let text = match text {
            "plain" => Text::Plain(PlainText {
                saved_at,
                expires_at,
                screen,
                history,
            }),
            "encoded" => Text::Encoded(EncodedText {
                saved_at,
                expires_at,
                rows: Arc::new(EncodedRows::new(&screen, &history).unwrap()),
            }),
            _ => Text::Omitted,
        };
        cp.panes.push(Pane {
            id,
            window: id,
            session,
            cols: 80,
            rows: 24,
            state: PaneState::Running,
            previous_state: None,
            float: None,
            tags: vec![Tag {
                key: "owner".into(),
                value: "bench".into(),
            }],
            text,
        });
    }
    cp
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn main() {
    let panes: u64 = std::env::var("VXBENCH_PANES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let rounds = 200;
    println!("| panes | text | file bytes | write | floor (SHA-256 + one copy) | × floor |");
    println!("|---|---|---|---|---|---|");
    for group in [
        vec![
            ("omitted", "omitted", false),
            ("omitted, cached", "omitted", true),
        ],
        vec![
            ("plain", "plain", false),
            ("encoded", "encoded", false),
            ("encoded, cached", "encoded", true),
        ],
    ] {
        let mut cases: Vec<(&str, Checkpoint, Option<RecordCache>)> = group
            .iter()
            .map(|&(label, text, cached)| {
                (label, state(panes, text), cached.then(RecordCache::new))
            })
            .collect();
        let file = write(&cases[0].1, Format::CURRENT).unwrap();
        let payload = write_payload(&cases[0].1, Format::CURRENT).unwrap();
        let mut times = vec![Vec::new(); cases.len() + 1];
        for round in 0..rounds {
            for k in 0..times.len() {
                let which = (k + round) % times.len();
                let start = Instant::now();
                if which == cases.len() {
                    let digest = Sha256::digest(payload.as_bytes());
                    black_box((digest, file.clone()));
                } else {
                    let (_, state, cache) = &mut cases[which];
                    let bytes = match cache {
                        Some(cache) => write_cached(state, Format::CURRENT, cache),
                        None => write(state, Format::CURRENT),
                    };
                    black_box(bytes.unwrap());
                }
                times[which].push(start.elapsed());
            }
        }
        let floor = median(times.pop().unwrap());
        for ((label, _, _), t) in cases.iter().zip(times) {
            let t = median(t);
            println!(
                "| {panes} | {label} | {} | {:.0} µs | {:.0} µs | {:.2}× |",
                file.len(),
                t.as_secs_f64() * 1e6,
                floor.as_secs_f64() * 1e6,
                t.as_secs_f64() / floor.as_secs_f64()
            );
        }
    }
}
