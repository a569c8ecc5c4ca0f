//! Added cost of libvxfault.so per intercepted `write`, against no preload, in the
//! same run: `cargo bench -p vxfault --bench write_overhead`.
//!
//! The bench re-executes itself as a child per configuration; the child times
//! `ITERS` one-byte `write(2)` calls (through std, so through the PLT and the hook)
//! to /dev/null and to a tmpfs file, `ROUNDS` times, and reports its fastest round's
//! ns per call. The parent interleaves the configurations `REPS` times and reports the
//! median of each, and its difference to "no preload" in the same repetition.

use std::fs::OpenOptions;
use std::io::Write;
use std::process::Command;
use std::time::Instant;

const ITERS: u32 = 200_000;
const ROUNDS: u32 = 5;
const REPS: usize = 7;

/// (name, plan or None for no preload)
fn configs() -> Vec<(&'static str, Option<&'static str>)> {
    vec![
        ("no preload", None),
        ("preload, no rule for write (plan `fsync=EIO`)", Some("fsync=EIO")),
        (
            "preload, non-firing write rule, no glob (`write#1000000000=EIO`)",
            Some("write#1000000000=EIO"),
        ),
        (
            "preload, write rule whose glob does not match (`write@/nonexistent/*=EIO`)",
            Some("write@/nonexistent/*=EIO"),
        ),
        (
            "preload, matching glob, non-firing trigger (`write@/dev/*#1000000000=EIO`)",
            Some("write@/dev/*#1000000000=EIO"),
        ),
    ]
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
        for _ in 0..ITERS {
            f.write_all(b"x").expect("write");
        }
        let ns = t.elapsed().as_nanos() as f64 / f64::from(ITERS);
        best = best.min(ns);
    }
    if target != "devnull" {
        let _ = std::fs::remove_file(&path);
    }
    println!("{best:.1}");
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
            for (_, plan) in &cfgs {
                let mut c = Command::new(&exe);
                c.args(["--child", target]).env_remove("LD_PRELOAD");
                if let Some(p) = plan {
                    c.env("LD_PRELOAD", &lib).env("VXFAULT_PLAN", p);
                }
                c.env_remove("VXFAULT_TRACE").env_remove("VXFAULT_SHM");
                let out = c.output().expect("child");
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                let v: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().expect("ns");
                this.push(v);
            }
            for (i, v) in this.iter().enumerate() {
                ns[i].push(*v);
                diff[i].push(v - this[0]);
            }
        }
        println!("write(2) of 1 byte to {target}: {ITERS} calls x best of {ROUNDS} rounds, median of {REPS} interleaved runs");
        println!("{:<80} {:>10} {:>12}", "configuration", "ns/call", "added ns");
        for (i, (name, _)) in cfgs.iter().enumerate() {
            println!("{:<80} {:>10.1} {:>12.1}", name, median(&mut ns[i]), median(&mut diff[i]));
        }
        println!();
    }
    let _ = std::io::stdout().flush();
}
