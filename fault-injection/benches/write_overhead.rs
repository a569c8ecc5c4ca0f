//! Added cost of libvxfault.so per intercepted `write`, against no preload, in the
//! same run: `cargo bench -p vxfault --bench write_overhead`.
//!
//! The bench re-executes itself as a child per configuration; the child times
//! `ITERS` one-byte calls (through std, so through the PLT and the hook): `write` to
//! /dev/null and `pwrite64` at offset 0 to a tmpfs file, `ROUNDS` times, and reports its fastest round's
//! ns per call. The parent interleaves the configurations `REPS` times and reports, per
//! configuration, the minimum and median over repetitions, the difference of the
//! minima to "no preload", and the median of the per-repetition differences to "no
//! preload" (each repetition runs every configuration back to back). When libfiu is
//! installed (Debian: `fiu-utils`), two libfiu configurations run in the same
//! interleaving, for the comparison in fault-injection/README.md.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::process::Command;
use std::time::Instant;

const ITERS: u32 = 20_000;
const ROUNDS: u32 = 5;
const REPS: usize = 31;

/// What a configuration preloads.
#[derive(Clone, Copy)]
enum Preload {
    None,
    /// libvxfault.so with this plan.
    Vxfault(&'static str),
    /// libfiu's POSIX preload (Debian's fiu-utils) with this `FIU_ENABLE`.
    Libfiu(&'static str),
}

/// libfiu's preload libraries, as `fiu-run -x` sets them.
const LIBFIU: [&str; 2] = [
    "/usr/lib/fiu/fiu_run_preload.so",
    "/usr/lib/fiu/fiu_posix_preload.so",
];

/// (name, what to preload). libfiu rows are added when it is installed, for the
/// comparison in fault-injection/README.md.
fn configs() -> Vec<(&'static str, Preload)> {
    let mut v = vec![
        ("no preload", Preload::None),
        (
            "preload, no rule for write (plan `fsync=EIO`)",
            Preload::Vxfault("fsync=EIO"),
        ),
        (
            "preload, non-firing write rule, no glob (`write#1000000000=EIO`)",
            Preload::Vxfault("write#1000000000=EIO"),
        ),
        (
            "preload, write rule whose glob does not match (`write@/nonexistent/*=EIO`)",
            Preload::Vxfault("write@/nonexistent/*=EIO"),
        ),
        (
            "preload, matching glob, non-firing trigger (`write@/dev/*#1000000000=EIO`)",
            Preload::Vxfault("write@/dev/*#1000000000=EIO"),
        ),
    ];
    if LIBFIU.iter().all(|p| std::path::Path::new(p).is_file()) {
        v.push((
            "libfiu, no point for write (`enable name=posix/io/sync/fsync`)",
            Preload::Libfiu("enable name=posix/io/sync/fsync"),
        ));
        v.push((
            "libfiu, non-firing write point (`enable_random name=posix/io/rw/write,probability=0`)",
            Preload::Libfiu("enable_random name=posix/io/rw/write,probability=0"),
        ));
    }
    v
}

fn child(target: &str) {
    let path = if target == "devnull" {
        "/dev/null".to_string()
    } else {
        let dir = if std::path::Path::new("/dev/shm").is_dir() {
            "/dev/shm".to_string()
        } else {
            std::env::temp_dir().display().to_string()
        };
        format!("{dir}/vxfault-bench-{}", std::process::id())
    };
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .expect("open");
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let t = Instant::now();
        if target == "devnull" {
            for _ in 0..ITERS {
                f.write_all(b"x").expect("write");
            }
        } else {
            // pwrite at offset 0: a constant-cost write that never grows the file.
            for _ in 0..ITERS {
                f.write_at(b"x", 0).expect("pwrite");
            }
        }
        let ns = t.elapsed().as_nanos() as f64 / f64::from(ITERS);
        best = best.min(ns);
    }
    if target != "devnull" {
        let _ = std::fs::remove_file(&path);
    }
    println!("{best:.1}");
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::MAX, f64::min)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1]);
        return;
    }
    let lib = vxfault::preload_path().expect("libvxfault.so");
    let exe = std::env::current_exe().expect("current_exe");
    let cfgs = configs();
    for target in ["devnull", "tmpfs"] {
        // results[config][rep], and the per-rep difference to config 0.
        let mut ns = vec![Vec::new(); cfgs.len()];
        let mut diff = vec![Vec::new(); cfgs.len()];
        for _ in 0..REPS {
            let mut this = Vec::new();
            for (_, preload) in &cfgs {
                let mut c = Command::new(&exe);
                c.args(["--child", target]).env_remove("LD_PRELOAD");
                match preload {
                    Preload::None => {}
                    Preload::Vxfault(p) => {
                        c.env("LD_PRELOAD", &lib).env("VXFAULT_PLAN", p);
                    }
                    Preload::Libfiu(enable) => {
                        c.env("LD_PRELOAD", LIBFIU.join(" "))
                            .env("FIU_ENABLE", enable);
                    }
                }
                c.env_remove("VXFAULT_TRACE").env_remove("VXFAULT_SHM");
                let out = c.output().expect("child");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let v: f64 = String::from_utf8_lossy(&out.stdout)
                    .trim()
                    .parse()
                    .expect("ns");
                this.push(v);
            }
            for (i, v) in this.iter().enumerate() {
                ns[i].push(*v);
                diff[i].push(v - this[0]);
            }
        }
        println!("{} of 1 byte to {target}: {ITERS} calls x best of {ROUNDS} rounds, median of {REPS} interleaved runs", if target == "devnull" { "write" } else { "pwrite64" });
        println!(
            "{:<86} {:>9} {:>9} {:>11} {:>11}",
            "configuration", "min ns", "med ns", "added(min)", "added(med)"
        );
        let base_min = min(&ns[0]);
        for (i, (name, _)) in cfgs.iter().enumerate() {
            println!(
                "{:<86} {:>9.1} {:>9.1} {:>11.1} {:>11.1}",
                name,
                min(&ns[i]),
                median(&mut ns[i]),
                min(&ns[i]) - base_min,
                median(&mut diff[i])
            );
        }
        println!();
    }
    let _ = std::io::stdout().flush();
}
