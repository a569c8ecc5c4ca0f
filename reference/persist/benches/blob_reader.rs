//! The strict blob reader against bare `tar::Archive` iteration of the same bytes, in
//! the same run (issue 17: reader ≥ 0.5× the bare iterator, i.e. at most twice its
//! time). Floors, per blob:
//! - `bare-entries`: `Archive::entries()` over the slice, headers and paths only (the
//!   crate skips bodies by reading them through a scratch buffer).
//! - `bare-entries-read`: `Archive::entries()` over the slice, each body read into a
//!   Vec (what a consumer of the files pays with the crate alone).
//! - `bare-entries-seek`: `Archive::entries_with_seek()`, headers and paths only
//!   (the least walk the crate can do).
//!
//! Blobs: `session-16mib` (a 8 MiB transcript and 63 files of 128 KiB, the size the
//! issue's pack bench names) and `small-64` (64 members of 1 KiB, where per-member
//! validation dominates). Rounds alternate floor and reader; medians and the ratio
//! floor/reader are printed. Run: `cargo bench -p vx-persist --bench blob_reader`
//! (`VX_BENCH_ROUNDS`, default 200).

use std::hint::black_box;
use std::io::{Cursor, Read};
use std::time::{Duration, Instant};

use vx_persist::blob::{read, write, ReadOptions, SessionFile};
use vx_persist::{Layouts, SessionHeader};

fn blob(key_bytes: usize, others: usize, other_bytes: usize) -> Vec<u8> {
    let mut files = vec![SessionFile {
        path: "projects/-home-u-p/s1.jsonl".into(),
        body: vec![b'k'; key_bytes],
    }];
    for i in 0..others {
        files.push(SessionFile {
            path: format!("projects/-home-u-p/s1/tool-results/r{i:02}.txt"),
            body: vec![b'o'; other_bytes],
        });
    }
    let header = SessionHeader {
        backend: "claude_code".into(),
        session_id: "s1".into(),
    };
    write(&header, &files, &ReadOptions::new(Layouts::builtin())).unwrap()
}

fn bare_entries(bytes: &[u8]) -> usize {
    let mut archive = tar::Archive::new(bytes);
    let mut total = 0;
    for entry in archive.entries().unwrap() {
        let entry = entry.unwrap();
        total += entry.header().entry_size().unwrap() as usize + entry.path_bytes().len();
    }
    total
}

fn bare_read(bytes: &[u8]) -> usize {
    let mut archive = tar::Archive::new(bytes);
    let mut total = 0;
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let mut body = Vec::new();
        entry.read_to_end(&mut body).unwrap();
        total += body.len() + entry.path_bytes().len();
    }
    total
}

fn bare_seek(bytes: &[u8]) -> usize {
    let mut archive = tar::Archive::new(Cursor::new(bytes));
    let mut total = 0;
    for entry in archive.entries_with_seek().unwrap() {
        let entry = entry.unwrap();
        total += entry.header().entry_size().unwrap() as usize + entry.path_bytes().len();
    }
    total
}

fn strict(bytes: &[u8]) -> usize {
    let blob = read(bytes, &ReadOptions::new(Layouts::builtin())).unwrap();
    blob.members
        .iter()
        .map(|m| m.body.len() + m.path.len())
        .sum()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(f: impl Fn(&[u8]) -> usize, bytes: &[u8]) -> Duration {
    let start = Instant::now();
    black_box(f(black_box(bytes)));
    start.elapsed()
}

fn main() {
    let rounds: usize = std::env::var("VX_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let blobs = [
        ("session-16mib", blob(8 << 20, 63, 128 << 10)),
        ("small-64", blob(1024, 63, 1024)),
    ];
    // `VX_BENCH_PROFILE=1`: only the strict reader in a loop, for perf.
    if std::env::var_os("VX_BENCH_PROFILE").is_some() {
        for _ in 0..rounds {
            black_box(strict(black_box(&blobs[1].1)));
        }
        return;
    }
    type Reader = fn(&[u8]) -> usize;
    let floors: [(&str, Reader); 3] = [
        ("bare-entries", bare_entries),
        ("bare-entries-read", bare_read),
        ("bare-entries-seek", bare_seek),
    ];
    for (name, bytes) in &blobs {
        for (floor_name, floor) in floors {
            let (mut f, mut s) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
            for _ in 0..rounds {
                f.push(time(floor, bytes));
                s.push(time(strict, bytes));
            }
            let (fm, sm) = (median(f), median(s));
            println!(
                "paired {name} ({} bytes): {floor_name} {:?}, strict reader {:?}, ratio floor/reader {:.2}",
                bytes.len(),
                fm,
                sm,
                fm.as_secs_f64() / sm.as_secs_f64()
            );
        }
    }
}
