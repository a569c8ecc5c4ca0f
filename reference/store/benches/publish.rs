//! Publish latency of a 100-pane checkpoint against the floor: the same bytes written
//! with plain std calls (create, write_all, sync_all, rename, directory sync_all), in
//! the same run, on the same filesystem. Target: publish ≤ 1.2× the floor.
//!
//! Both sides keep three checkpoints in their directory: the oldest file is deleted
//! after each timed iteration, outside the timing. `publish` includes allocation (a
//! directory scan with cached verdicts), encoding, the safety checks and the
//! temporary file; the floor is given the encoded bytes.
//!
//! Run: `cargo bench -p vx-store --bench publish`. Set `VX_BENCH_DIR` to measure on
//! another filesystem (the default is the system temporary directory).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use vx_format::Format;
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

fn floor_publish(dir: &Path, seq: u64, bytes: &[u8]) -> PathBuf {
    let tmp = dir.join(format!(".tmp-{seq}"));
    let dst = dir.join(format!("c{seq}.json"));
    let mut f = std::fs::File::create(&tmp).unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
    drop(f);
    std::fs::rename(&tmp, &dst).unwrap();
    std::fs::File::open(dir).unwrap().sync_all().unwrap();
    dst
}

fn publish_benches(c: &mut Criterion) {
    for (label, with_text) in [("omitted-text", false), ("plain-text", true)] {
        let state = common::state(PANES, common::T0, with_text);

        let root = bench_root();
        let location = StoreLocation::resolve(
            Some(root.path().join("state").as_os_str()),
            None,
            &root.path().join("vx.sock"),
        )
        .unwrap();
        let config = StoreConfig {
            max_age_seconds: u64::MAX / 2000,
            ..StoreConfig::default()
        };
        let mut store = Store::open(&location, common::uid(), config).unwrap();

        // The floor writes exactly the bytes publish writes for the same state.
        let mut sample = state.clone();
        sample.socket = location.socket.clone();
        sample.uid = common::uid();
        let bytes = vx_format::write(&sample, Format::CURRENT).unwrap();
        let floor_dir = root.path().join("floor");
        std::fs::create_dir(&floor_dir).unwrap();

        let mut group = c.benchmark_group(format!("publish-{PANES}-panes-{label}"));
        group
            .sample_size(30)
            .measurement_time(Duration::from_secs(8));
        group.throughput(criterion::Throughput::Bytes(bytes.len() as u64));

        let mut seq = 0u64;
        let mut floor_files = std::collections::VecDeque::new();
        group.bench_function("floor-std", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    seq += 1;
                    let start = Instant::now();
                    let path = floor_publish(&floor_dir, seq, &bytes);
                    total += start.elapsed();
                    floor_files.push_back(path);
                    while floor_files.len() > RETAINED {
                        std::fs::remove_file(floor_files.pop_front().unwrap()).unwrap();
                        // forget syncs the directory after its deletion; so does this side.
                        std::fs::File::open(&floor_dir).unwrap().sync_all().unwrap();
                    }
                }
                total
            })
        });

        let mut published = std::collections::VecDeque::new();
        group.bench_function("vx-store-publish", |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let input = state.clone();
                    let start = Instant::now();
                    let done = store.publish(common::T0, input).unwrap();
                    total += start.elapsed();
                    published.push_back(done.checkpoint);
                    while published.len() > RETAINED {
                        store.forget(&published.pop_front().unwrap()).unwrap();
                    }
                }
                total
            })
        });
        group.finish();
    }
}

criterion_group!(benches, publish_benches);
criterion_main!(benches);
