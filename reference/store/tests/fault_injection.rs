//! Publish under `libvxfault.so`: every filesystem call the store makes while
//! publishing is failed in turn (EIO), crashed at (SIGKILL), and writes cut short and torn. The previous
//! generation always stays readable, no temporary or torn file is ever listed as a
//! checkpoint, and no failed call on the durable path is reported as success.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use vx_store::{Status, Store, StoreConfig, StoreLocation};
use vxfault::{escape_glob, points, Injector, PointFilter};

const CHILD_ENV: &str = "VX_FAULT_CHILD_DIR";

fn location(dir: &Path) -> StoreLocation {
    StoreLocation::resolve(
        Some(dir.join("state").as_os_str()),
        None,
        &dir.join("vx.sock"),
    )
    .unwrap()
}

/// The workload, run by this test binary in a child process under the injector.
/// Without the environment variable (an ordinary test run) it has nothing to do.
#[test]
fn publish_child_under_injection() {
    let Some(dir) = std::env::var_os(CHILD_ENV).map(PathBuf::from) else {
        return;
    };
    let outcome = Store::open(&location(&dir), uid(), StoreConfig::default())
        .and_then(|mut store| store.publish(at(HOUR_MS), &mut state(4, at(HOUR_MS), false)));
    let line = match outcome {
        Ok(p) => format!("ok {}", p.checkpoint),
        Err(e) => format!("err {}", e.code.as_str()),
    };
    std::fs::write(dir.join("outcome"), line).unwrap();
}

fn child(dir: &Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "publish_child_under_injection",
        "--exact",
        "--test-threads=1",
        "--quiet",
    ]);
    cmd.env(CHILD_ENV, dir);
    cmd
}

/// A fresh store holding one valid generation; returns its id.
fn reset(dir: &Path) -> String {
    let _ = std::fs::remove_dir_all(dir.join("state"));
    let _ = std::fs::remove_file(dir.join("outcome"));
    let mut store = Store::open(&location(dir), uid(), StoreConfig::default()).unwrap();
    store
        .publish(T0, &mut state(4, T0, false))
        .unwrap()
        .checkpoint
}

/// A rule glob that selects the same file in every run: temporary and final names
/// are random, so they become patterns.
fn pattern(store_dir: &str, path: &[u8]) -> String {
    let path = String::from_utf8_lossy(path);
    let base = escape_glob(store_dir.as_bytes());
    match path
        .strip_prefix(store_dir)
        .and_then(|rest| rest.strip_prefix('/'))
    {
        Some(name) if name.starts_with(".tmp-") => format!("{base}/.tmp-*"),
        Some(name) if name.starts_with('c') && name.ends_with(".json") => format!("{base}/c*.json"),
        _ => escape_glob(path.as_bytes()),
    }
}

#[test]
fn publish_survives_a_failure_or_crash_at_every_call() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    reset(dir);
    let store_dir = location(dir).dir().to_string_lossy().into_owned();
    let filter = PointFilter {
        glob: Some(format!("{}*", escape_glob(store_dir.as_bytes()))),
        ..Default::default()
    };
    let found = points(&mut child(dir), &filter).expect("the store's calls reach the injector");
    assert!(std::fs::read_to_string(dir.join("outcome"))
        .unwrap()
        .starts_with("ok "));

    // Each call of a family on a file pattern, in trace order: (op, pattern, ordinal).
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut cases = BTreeSet::new();
    for p in &found.points {
        let key = (p.op.clone(), pattern(&store_dir, &p.path));
        seen.push(key.clone());
        let ordinal = seen.iter().filter(|k| **k == key).count();
        cases.insert((key.0, key.1, ordinal));
    }
    let ops: BTreeSet<&str> = cases.iter().map(|(op, _, _)| op.as_str()).collect();
    for needed in ["open", "write", "fsync", "rename"] {
        assert!(
            ops.contains(needed),
            "publish made no {needed} call the injector saw: {ops:?}"
        );
    }

    for (op, glob, ordinal) in &cases {
        let mut actions = vec!["EIO", "crash"];
        if op == "write" {
            // A short write must be continued; a torn one is a crash mid-write.
            actions.extend(["short:7", "torn:7"]);
        }
        for action in actions {
            let before = reset(dir);
            let plan = format!("{op}@{glob}##{ordinal}={action}");
            let (outcome, _) = Injector::new(&plan)
                .unwrap()
                .output(&mut child(dir))
                .unwrap();
            outcome
                .injectable()
                .unwrap_or_else(|why| panic!("{plan}: {why}"));
            assert_eq!(outcome.rules[0].fired, 1, "{plan}: the point was not hit");
            let reported = std::fs::read_to_string(dir.join("outcome")).unwrap_or_default();
            if action == "crash" || action.starts_with("torn") {
                assert!(
                    reported.is_empty(),
                    "{plan}: a crashed child reported {reported:?}"
                );
            } else if action.starts_with("short") {
                assert!(
                    reported.starts_with("ok "),
                    "{plan}: a short write was not continued: {reported:?}"
                );
            } else if reported.starts_with("ok") {
                // Only closing a descriptor that holds nothing unsynced may fail unseen.
                assert!(
                    op == "close" && !glob.ends_with(".tmp-*"),
                    "{plan}: success despite a failed {op}"
                );
            } else {
                assert!(
                    reported.starts_with("err unavailable.recovery_io"),
                    "{plan}: {reported:?}"
                );
            }

            let mut store = Store::open(&location(dir), uid(), StoreConfig::default()).unwrap();
            let listing = store.list(at(HOUR_MS)).unwrap();
            for entry in &listing.entries {
                assert!(
                    vx_format::ids::is_checkpoint_id(&entry.checkpoint),
                    "{plan}: listed {entry:?}"
                );
                assert_eq!(entry.status, Status::Valid, "{plan}: {entry:?}");
            }
            assert!(
                listing.entries.iter().any(|e| e.checkpoint == before),
                "{plan}: previous generation gone"
            );
            store
                .load(&before, at(HOUR_MS))
                .unwrap_or_else(|e| panic!("{plan}: previous unreadable: {e:?}"));
            if let Some(id) = reported.strip_prefix("ok ") {
                store
                    .load(id, at(HOUR_MS))
                    .unwrap_or_else(|e| panic!("{plan}: reported {id} unreadable: {e:?}"));
            }
        }
    }
}
