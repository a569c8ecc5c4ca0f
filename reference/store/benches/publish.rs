//! Publish latency of a 100-pane checkpoint against the floor: the same bytes written
//! with plain std calls (create, write_all, sync_all, rename, directory sync_all), in
//! the same run, on the same filesystem. Target: publish ≤ 1.2× the floor.
//!
//! Measured, per state (100 panes, text omitted / 24 rows of plain text each):
//! - `floor-std`: the floor, given the encoded bytes.
//! - `vx-store-publish`: `Store::publish` end to end (allocation with a directory
//!   scan, encoding, safety, temp file, no-replace rename, directory fsync).
//! - `vx-store-publish-excl-encode`: the same calls, minus the encoding time publish
//!   reports (`Published::encode_time`): the store's own cost for the same bytes.
//! - `encode-only`: `vx_format::write` alone.
//!
//! Both sides keep three checkpoints in their directory: after each timed iteration
//! the oldest is deleted and the directory synced, outside the timing. Because the
//! machine is shared and fsync latency drifts, a paired run follows the criterion
//! groups: floor and publish alternate, round by round, and the medians and their
//! ratios are printed (`paired …` lines); those are the figures docs/performance.md
//! quotes.
//!
//! Run: `cargo bench -p vx-store --bench publish`. `VX_BENCH_DIR` picks the
//! filesystem (default: the system temporary directory), `VX_BENCH_ROUNDS` the number
//! of paired rounds (default 400).

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::Criterion;
use vx_format::{Checkpoint, Format};
use vx_store::{Store, StoreConfig, StoreLocation};

#[path = "../tests/common/mod.rs"]
mod common;

const PANES: usize = 100;
const RETAINED: usize = 3;

fn bench_root() -> tempfile::TempDir {
    match std::env::var_os("VX_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

/// One side-by-side setup: a store and a plain directory on the same filesystem.
struct Setup {
    _root: tempfile::TempDir,
    state: Checkpoint,
    bytes: Vec<u8>,
    store: Store,
    published: VecDeque<String>,
    floor_dir: PathBuf,
    floor_files: VecDeque<PathBuf>,
    seq: u64,
}

impl Setup {
    fn new(with_text: bool) -> Setup {
        let root = bench_root();
        let state = common::state(PANES, common::T0, with_text);
        let location = StoreLocation::resolve(
            Some(root.path().join("state").as_os_str()),
            None,
            &root.path().join("vx.sock"),
        )
        .unwrap();
        let store = Store::open(&location, common::uid(), StoreConfig::default()).unwrap();
        // The floor writes exactly the bytes publish writes for the same state (the
        // id differs, its length does not).
        let mut sample = state.clone();
        sample.socket = location.socket.clone();
        sample.uid = common::uid();
        let bytes = vx_format::write(&sample, Format::CURRENT).unwrap();
        let floor_dir = root.path().join("floor");
        std::fs::create_dir(&floor_dir).unwrap();
        Setup {
            _root: root,
            state,
            bytes,
            store,
            published: VecDeque::new(),
            floor_dir,
            floor_files: VecDeque::new(),
            seq: 0,
        }
    }

    /// One floor publish, timed; cleanup untimed.
    fn floor(&mut self) -> Duration {
        self.seq += 1;
        let tmp = self.floor_dir.join(format!(".tmp-{}", self.seq));
        let dst = self.floor_dir.join(format!("c{}.json", self.seq));
        let start = Instant::now();
        floor_publish(&self.floor_dir, &tmp, &dst, &self.bytes);
        let elapsed = start.elapsed();
        self.floor_files.push_back(dst);
        while self.floor_files.len() > RETAINED {
            std::fs::remove_file(self.floor_files.pop_front().unwrap()).unwrap();
            // forget syncs the directory after its deletion; so does this side.
            std::fs::File::open(&self.floor_dir)
                .unwrap()
                .sync_all()
                .unwrap();
        }
        elapsed
    }

    /// One store publish: (end-to-end time, encode time reported by publish).
    fn publish(&mut self) -> (Duration, Duration) {
        let mut input = self.state.clone();
        let start = Instant::now();
        let done = self.store.publish(common::T0, &mut input).unwrap();
        let elapsed = start.elapsed();
        drop(input);
        self.published.push_back(done.checkpoint);
        while self.published.len() > RETAINED {
            self.store
                .forget(&self.published.pop_front().unwrap())
                .unwrap();
        }
        (elapsed, done.encode_time)
    }
}

fn floor_publish(dir: &Path, tmp: &Path, dst: &Path, bytes: &[u8]) {
    let mut f = std::fs::File::create(tmp).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
    drop(f);
    std::fs::rename(tmp, dst).unwrap();
    std::fs::File::open(dir).unwrap().sync_all().unwrap();
}

fn criterion_groups(c: &mut Criterion) {
    for (label, with_text) in [("omitted-text", false), ("plain-text", true)] {
        let mut setup = Setup::new(with_text);
        let mut group = c.benchmark_group(format!("publish-{PANES}-panes-{label}"));
        group
            .sample_size(20)
            .measurement_time(Duration::from_secs(6));
        group.throughput(criterion::Throughput::Bytes(setup.bytes.len() as u64));
        group.bench_function("floor-std", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| setup.floor()).sum())
        });
        group.bench_function("vx-store-publish", |b| {
            b.iter_custom(|iters| (0..iters).map(|_| setup.publish().0).sum())
        });
        group.bench_function("vx-store-publish-excl-encode", |b| {
            b.iter_custom(|iters| {
                (0..iters)
                    .map(|_| {
                        let (total, encode) = setup.publish();
                        total.saturating_sub(encode)
                    })
                    .sum()
            })
        });
        let sample = setup.state.clone();
        group.bench_function("encode-only", |b| {
            b.iter(|| vx_format::write(&sample, Format::CURRENT).unwrap())
        });
        group.finish();
    }
}

fn median(values: &mut [Duration]) -> Duration {
    values.sort();
    values[values.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Floor and publish alternate round by round (the order flips each round), so
/// drifting fsync latency affects both sides alike.
fn paired_report() {
    // Under `cargo test --benches` (no `--bench` flag) a few rounds show it works.
    let benching = std::env::args().any(|a| a == "--bench");
    let default_rounds = if benching { 400 } else { 3 };
    let rounds: usize = std::env::var("VX_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_rounds);
    for (label, with_text) in [("omitted-text", false), ("plain-text", true)] {
        let mut setup = Setup::new(with_text);
        for _ in 0..20 {
            setup.floor();
            setup.publish();
        }
        let (mut floor, mut total, mut store_only, mut encode) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            let (f, (t, e)) = if round % 2 == 0 {
                let f = setup.floor();
                (f, setup.publish())
            } else {
                let p = setup.publish();
                (setup.floor(), p)
            };
            floor.push(f);
            total.push(t);
            store_only.push(t.saturating_sub(e));
            encode.push(e);
        }
        // Per-round differences cancel drift that hits both sides of a round alike.
        let diff = |side: &[Duration]| {
            let mut d: Vec<f64> = floor
                .iter()
                .zip(side)
                .map(|(f, x)| micros(*x) - micros(*f))
                .collect();
            d.sort_by(f64::total_cmp);
            d[d.len() / 2]
        };
        let (diff_total, diff_store) = (diff(&total), diff(&store_only));
        let min = |side: &[Duration]| *side.iter().min().unwrap();
        let (min_f, min_t, min_s) = (min(&floor), min(&total), min(&store_only));
        let (f, t, s, e) = (
            median(&mut floor),
            median(&mut total),
            median(&mut store_only),
            median(&mut encode),
        );
        println!(
            "paired publish-{PANES}-panes-{label} ({} bytes, {rounds} rounds): medians: floor {:.0} µs; \
             publish {:.0} µs = {:.2}x; publish excl. encode {:.0} µs = {:.2}x; encode {:.0} µs",
            setup.bytes.len(),
            micros(f),
            micros(t),
            micros(t) / micros(f),
            micros(s),
            micros(s) / micros(f),
            micros(e),
        );
        println!(
            "paired publish-{PANES}-panes-{label}: minimums: floor {:.0} µs; publish {:.0} µs = {:.2}x; \
             publish excl. encode {:.0} µs = {:.2}x; median per-round difference: publish {:+.0} µs, \
             excl. encode {:+.0} µs",
            micros(min_f),
            micros(min_t),
            micros(min_t) / micros(min_f),
            micros(min_s),
            micros(min_s) / micros(min_f),
            diff_total,
            diff_store,
        );
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    criterion_groups(&mut criterion);
    criterion.final_summary();
    paired_report();
}
