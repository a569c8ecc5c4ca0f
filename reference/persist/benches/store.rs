//! Pack/unpack and the stores against their floors, in the same run (issue 17):
//! - `pack` of a 16 MiB claude_code session (an 8 MiB transcript and 63 files of
//!   128 KiB), blob written to a file, vs GNU `tar -cf` of the same files (target:
//!   ratio tar/ours ≥ 0.7);
//! - `unpack` of that blob into an empty root (validation, O_EXCL writes, per-file
//!   fsync, renames, directory fsyncs) vs `tar -xf` of the same files into an empty
//!   directory (no fsync: tar's own durability), vs `tar -xf` then `sync -f`, and vs
//!   `tar -xf` then an fsync of every file and directory it made (the durability
//!   unpack gives, without its validation, staging and ordering);
//! - `FsStore::put` of the 16 MiB blob and of a 64 KiB one vs a floor doing exactly
//!   write + fsync + rename + directory fsync of the same bytes (target: ours/floor
//!   ≤ 1.2);
//! - put/get latency of a 64 KiB and a 1 MiB blob on fs, SeaweedFS and moto (the
//!   twins when `VXPERSIST_S3_SEAWEEDFS` / `VXPERSIST_S3_MOTO` are set), reported.
//!
//! Rounds alternate ours and the floor; medians are printed. Run:
//! `cargo bench -p vx-persist --bench store` (`VX_BENCH_ROUNDS`, default 20).

use std::hint::black_box;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use vx_persist::{BackendSessionStore, FsStore, Layouts, S3Store, SessionPacker, StateRef};

const KEY: &str = "projects/-home-u-p/s1.jsonl";

fn make_session(root: &Path) {
    let write = |rel: &str, len: usize, byte: u8| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, vec![byte; len]).unwrap();
    };
    write(KEY, 8 << 20, b'k');
    for i in 0..63 {
        write(
            &format!("projects/-home-u-p/s1/tool-results/r{i:02}.txt"),
            128 << 10,
            b'o',
        );
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn timed(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn tar(args: &[&str], dir: &Path) {
    let status = Command::new("tar")
        .args(args)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "tar {args:?}");
}

fn report(
    what: &str,
    ours: Duration,
    floor_name: &str,
    floor: Duration,
    ratio_floor_over_ours: bool,
) {
    let ratio = if ratio_floor_over_ours {
        floor.as_secs_f64() / ours.as_secs_f64()
    } else {
        ours.as_secs_f64() / floor.as_secs_f64()
    };
    let how = if ratio_floor_over_ours {
        "floor/ours"
    } else {
        "ours/floor"
    };
    println!("{what}: ours {ours:?}, {floor_name} {floor:?}, ratio {how} {ratio:.2}");
}

/// A valid ULID for round `i`.
fn ulid(i: usize) -> String {
    const CROCKFORD: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let mut tail = String::new();
    let mut n = i;
    for _ in 0..8 {
        tail.insert(0, CROCKFORD[n % 32] as char);
        n /= 32;
    }
    format!("01J9ZQ4V7X8M2K3N4P{tail}")
}

/// The floor of a durable publish: exclusive create, write, fsync, rename, dir fsync.
fn floor_publish(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".tmp-{name}"));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .unwrap();
    f.write_all(bytes).unwrap();
    f.sync_all().unwrap();
    drop(f);
    std::fs::rename(&tmp, dir.join(name)).unwrap();
    std::fs::File::open(dir).unwrap().sync_all().unwrap();
}

fn bench_pack_unpack(rounds: usize, tmp: &Path) {
    let src = tmp.join("src");
    make_session(&src);
    let packer = SessionPacker::new(Layouts::builtin(), "claude_code", &src).unwrap();
    let blob = packer.pack("s1").unwrap();
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        ours.push(timed(|| {
            let blob = packer.pack("s1").unwrap();
            std::fs::write(tmp.join("ours.blob"), black_box(&blob)).unwrap();
        }));
        floor.push(timed(|| tar(&["-cf", "../floor.tar", "projects"], &src)));
    }
    report(
        &format!("pack 16 MiB session ({} bytes)", blob.len()),
        median(ours),
        "tar -cf",
        median(floor),
        true,
    );

    let (mut ours, mut floor, mut floor_sync) = (Vec::new(), Vec::new(), Vec::new());
    let mut floor_fsync = Vec::new();
    for i in 0..rounds {
        let root = tmp.join(format!("u{i}"));
        std::fs::create_dir(&root).unwrap();
        let unpacker = SessionPacker::new(Layouts::builtin(), "claude_code", &root).unwrap();
        ours.push(timed(|| unpacker.unpack("s1", black_box(&blob)).unwrap()));
        let t = tmp.join(format!("t{i}"));
        std::fs::create_dir(&t).unwrap();
        floor.push(timed(|| tar(&["-xf", "../floor.tar"], &t)));
        let ts = tmp.join(format!("ts{i}"));
        std::fs::create_dir(&ts).unwrap();
        floor_sync.push(timed(|| {
            tar(&["-xf", "../floor.tar"], &ts);
            let status = Command::new("sync").arg("-f").arg(&ts).status().unwrap();
            assert!(status.success());
        }));
        let tf = tmp.join(format!("tf{i}"));
        std::fs::create_dir(&tf).unwrap();
        floor_fsync.push(timed(|| {
            tar(&["-xf", "../floor.tar"], &tf);
            fsync_tree(&tf);
        }));
        for d in [root, t, ts, tf] {
            std::fs::remove_dir_all(d).unwrap();
        }
    }
    let ours = median(ours);
    report(
        "unpack 16 MiB session",
        ours,
        "tar -xf",
        median(floor),
        true,
    );
    report(
        "unpack 16 MiB session",
        ours,
        "tar -xf + sync -f",
        median(floor_sync),
        true,
    );
    report(
        "unpack 16 MiB session",
        ours,
        "tar -xf + fsync each file and dir",
        median(floor_fsync),
        true,
    );
}

/// fsyncs every file below `dir`, then every directory (children before parents).
fn fsync_tree(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            fsync_tree(&path);
        } else {
            std::fs::File::open(&path).unwrap().sync_all().unwrap();
        }
    }
    std::fs::File::open(dir).unwrap().sync_all().unwrap();
}

fn bench_fs_put(rounds: usize, tmp: &Path) {
    let store_root = tmp.join("persist");
    let store = FsStore::open(&store_root).unwrap();
    let floor_dir = store_root.join("runs/floor/writer");
    std::fs::create_dir_all(&floor_dir).unwrap();
    for (label, len) in [("16 MiB", 16usize << 20), ("64 KiB", 64 << 10)] {
        let bytes = vec![0x5au8; len];
        let (mut ours, mut floor) = (Vec::new(), Vec::new());
        for i in 0..rounds {
            let r = StateRef::parse(&format!("writer/{}", ulid(i))).unwrap();
            ours.push(timed(|| store.put("bench", &r, &bytes).unwrap()));
            floor.push(timed(|| floor_publish(&floor_dir, &ulid(i), &bytes)));
        }
        report(
            &format!("FsStore put {label}"),
            median(ours),
            "write+fsync+rename+dir fsync",
            median(floor),
            false,
        );
        store.delete_run("bench").unwrap();
        std::fs::remove_dir_all(&floor_dir).unwrap();
        std::fs::create_dir_all(&floor_dir).unwrap();
    }
}

fn latency(name: &str, store: &dyn BackendSessionStore, rounds: usize) {
    let run = format!("bench-{}", std::process::id());
    for (label, len) in [("64 KiB", 64usize << 10), ("1 MiB", 1 << 20)] {
        let bytes = vec![0xa5u8; len];
        let (mut puts, mut gets) = (Vec::new(), Vec::new());
        for i in 0..rounds {
            let r = StateRef::parse(&format!("writer/{}", ulid(i))).unwrap();
            puts.push(timed(|| store.put(&run, &r, &bytes).unwrap()));
            gets.push(timed(|| {
                assert_eq!(store.get(&run, &r).unwrap().len(), len)
            }));
        }
        println!(
            "latency {name} {label}: put {:?}, get {:?} (medians of {rounds})",
            median(puts),
            median(gets)
        );
        store.delete_run(&run).unwrap();
    }
}

fn main() {
    let rounds: usize = std::env::var("VX_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    // Only `--bench` runs measure (cargo test runs bench targets with no flag).
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    bench_pack_unpack(rounds, tmp.path());
    bench_fs_put(rounds, tmp.path());
    let fs = FsStore::open(&tmp.path().join("latency")).unwrap();
    latency("fs", &fs, rounds);
    for (name, var) in [
        ("seaweedfs", "VXPERSIST_S3_SEAWEEDFS"),
        ("moto", "VXPERSIST_S3_MOTO"),
    ] {
        match std::env::var(var) {
            Ok(url) if !url.is_empty() => latency(name, &S3Store::open(&url).unwrap(), rounds),
            _ => println!("latency {name}: skipped ({var} unset)"),
        }
    }
}
