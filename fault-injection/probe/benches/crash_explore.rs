//! The crash explorer's costs, in the same run: `cargo bench -p vxfault-probe --bench
//! crash_explore`.
//!
//! 1. Recording overhead: a process that publishes one 100-pane checkpoint (24 rows of
//!    text per pane) with vx-store over a store holding generation 1, run plainly and
//!    under `vxfault record` (every call traced, every written byte copied), `REPS`
//!    times interleaved; whole-process wall time, minimum and median, and the ratio.
//! 2. Exploring one recorded publish under `posix` on 2 workers, with vx-store's own
//!    listing as the checker (this binary re-executed): states per strategy, distinct
//!    states, elapsed.

#[path = "../../../reference/store/tests/common/mod.rs"]
#[allow(unused_imports)]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use vx_store::{Status, Store, StoreConfig, StoreLocation};
use vxfault::crash::{self, Checker, Model, Options, Recorder};

const PANES: usize = 100;
const REPS: usize = 11;

fn location(dir: &Path) -> StoreLocation {
    StoreLocation::resolve(
        Some(dir.join("state").as_os_str()),
        None,
        &dir.join("vx.sock"),
    )
    .unwrap()
}

/// Child: publish one generation into the store under `dir`.
fn publish(dir: &Path) {
    let loc = location(dir);
    let mut store = Store::open(&loc, common::uid(), StoreConfig::default()).unwrap();
    let mut state = common::state(PANES, common::T0, true);
    store.publish(common::T0, &mut state).unwrap();
}

/// Child: the checker of one crash state of the store directory `dir`.
fn check(dir: &Path) -> i32 {
    let Ok(mut store) = Store::open_dir(dir, common::uid(), None, StoreConfig::default()) else {
        println!("the store does not open");
        return 1;
    };
    let Ok(listing) = store.list(common::T0) else {
        println!("the store does not list");
        return 1;
    };
    let newest = listing
        .entries
        .iter()
        .filter(|e| e.status == Status::Valid)
        .filter_map(|e| e.generation)
        .max();
    let complete = std::env::var("VXFAULT_COMPLETE").as_deref() == Ok("1");
    match newest {
        None => {
            println!("generation 1 lost");
            1
        }
        Some(g) if complete && g != 2 => {
            println!("the published generation 2 is not the newest valid one");
            1
        }
        Some(_) => 0,
    }
}

fn me() -> PathBuf {
    std::env::current_exe().unwrap()
}

fn child(mode: &str, dir: &Path) -> Command {
    let mut c = Command::new(me());
    c.env("VXBENCH_CHILD", mode).env("VXBENCH_DIR", dir);
    c
}

/// A fresh directory whose store holds generation 1.
fn prepared() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    assert!(child("publish", d.path()).status().unwrap().success());
    d
}

fn timed(mut c: Command) -> Duration {
    let t = Instant::now();
    assert!(c.status().unwrap().success());
    t.elapsed()
}

fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(v[0]), ms(v[v.len() / 2]))
}

fn main() {
    if let Ok(mode) = std::env::var("VXBENCH_CHILD") {
        let dir = PathBuf::from(std::env::var_os("VXBENCH_DIR").unwrap());
        match mode.as_str() {
            "publish" => publish(&dir),
            _ => std::process::exit(check(&dir)),
        }
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let lib = vxfault::preload_path().unwrap();
    let (mut plain, mut recorded) = (Vec::new(), Vec::new());
    let mut last = None;
    for _ in 0..REPS {
        let d = prepared();
        plain.push(timed(child("publish", d.path())));
        let d = prepared();
        let out = d.path().join("rec");
        let rec = Recorder::start(&out, &location(d.path()).dir()).unwrap();
        let mut c = child("publish", d.path());
        for (k, v) in rec.env(&lib) {
            c.env(k, v);
        }
        recorded.push(timed(c));
        rec.finish(0).unwrap();
        last = Some((d, out));
    }
    let (pmin, pmed) = stats(plain);
    let (rmin, rmed) = stats(recorded);
    println!(
        "record: publish of a {PANES}-pane checkpoint, {REPS} interleaved runs: plain min {pmin:.1} ms / median {pmed:.1} ms; \
         recorded min {rmin:.1} ms / median {rmed:.1} ms; ratio of minimums {:.2}x, of medians {:.2}x",
        rmin / pmin,
        rmed / pmed
    );
    let (_keep, out) = last.unwrap();
    let checker = Checker::new(&format!(
        "env VXBENCH_CHILD=check VXBENCH_DIR={{root}} '{}'",
        me().display()
    ))
    .unwrap();
    let opts = Options {
        model: Model::Posix,
        checker,
        jobs: 2,
        only: None,
        timeout: Duration::from_secs(60),
    };
    let r = crash::explore(&out, None, &opts).unwrap();
    let counts: Vec<String> = r
        .counts
        .iter()
        .map(|(s, n)| format!("{} {n}", s.name()))
        .collect();
    println!(
        "explore: one {PANES}-pane publish under posix, 2 workers: {} ops; {}; {} states, {} distinct checked, {} failing, {:.2} s",
        r.ops,
        counts.join(", "),
        r.states,
        r.checked,
        r.violations.len(),
        r.elapsed.as_secs_f64()
    );
    assert!(
        r.violations.is_empty(),
        "the reference's publish failed a state"
    );
}
