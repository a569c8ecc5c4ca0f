//! FsStore: the shared store suite, then what only a filesystem can show: modes,
//! no leftovers, refs that never become paths, unsafe directories.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};

use vx_persist::store::check_run;
use vx_persist::store_suite::run_suite;
use vx_persist::{BackendSessionStore, ErrorCode, FsStore, StateRef};

const REF: &str = "node_1/01J9ZQ4V7X8M2K3N4P5Q6R7S8T";

fn mode(p: &std::path::Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn fs_store_passes_the_store_suite() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsStore::open(&dir.path().join("persist")).unwrap();
    let outcomes = run_suite(&store, "suite");
    assert_eq!(outcomes.len(), 8);
    for o in outcomes {
        assert!(o.failure.is_none(), "{}: {:?}", o.name, o.failure);
    }
}

#[test]
fn put_publishes_private_files_and_leaves_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("persist");
    let store = FsStore::open(&root).unwrap();
    store
        .put("run-1", &StateRef::parse(REF).unwrap(), b"bytes")
        .unwrap();
    let node = root.join("runs/run-1/node_1");
    assert_eq!(
        fs::read(node.join("01J9ZQ4V7X8M2K3N4P5Q6R7S8T")).unwrap(),
        b"bytes"
    );
    assert_eq!(mode(&node.join("01J9ZQ4V7X8M2K3N4P5Q6R7S8T")), 0o600);
    for d in [&root, &root.join("runs"), &root.join("runs/run-1"), &node] {
        assert_eq!(mode(d), 0o700);
    }
    assert_eq!(fs::read_dir(&node).unwrap().count(), 1, "no .tmp- left");
}

#[test]
fn delete_run_sweeps_leftover_temporaries() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("persist");
    let store = FsStore::open(&root).unwrap();
    store
        .put("run-1", &StateRef::parse(REF).unwrap(), b"x")
        .unwrap();
    // What a crash between write and rename leaves.
    fs::write(root.join("runs/run-1/node_1/.tmp-crashed"), b"partial").unwrap();
    store.delete_run("run-1").unwrap();
    assert!(!root.join("runs/run-1").exists());
}

#[test]
fn bad_refs_runs_and_roots_get_clear_errors() {
    for bad in [
        "../x",
        "/etc/x",
        "node/../01J9ZQ4V7X8M2K3N4P5Q6R7S8T",
        "node/01j9zq4v7x8m2k3n4p5q6r7s8t",
        "node/pause/x",
        "node/a/01J9ZQ4V7X8M2K3N4P5Q6R7S8T",
        "node/81J9ZQ4V7X8M2K3N4P5Q6R7S8T",
        "",
    ] {
        assert_eq!(
            StateRef::parse(bad).unwrap_err().code,
            ErrorCode::InvalidRef,
            "{bad}"
        );
    }
    assert_eq!(
        StateRef::parse("n/pause/01J9ZQ4V7X8M2K3N4P5Q6R7S8T")
            .unwrap()
            .to_string(),
        "n/pause/01J9ZQ4V7X8M2K3N4P5Q6R7S8T"
    );
    assert_eq!(check_run("../r").unwrap_err().code, ErrorCode::InvalidRun);
    let dir = tempfile::tempdir().unwrap();
    let store = FsStore::open(&dir.path().join("s")).unwrap();
    assert_eq!(
        store
            .get("../r", &StateRef::parse(REF).unwrap())
            .unwrap_err()
            .code,
        ErrorCode::InvalidRun
    );
    let open = dir.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(FsStore::open(&open).unwrap_err().code, ErrorCode::PersistIo);
    symlink(dir.path().join("s"), dir.path().join("link")).unwrap();
    assert_eq!(
        FsStore::open(&dir.path().join("link")).unwrap_err().code,
        ErrorCode::PersistIo
    );
}

#[test]
fn a_symlinked_run_directory_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("persist");
    let store = FsStore::open(&root).unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.join("runs")).unwrap();
    symlink(outside.path(), root.join("runs/run-1")).unwrap();
    let r = StateRef::parse(REF).unwrap();
    assert_eq!(
        store.put("run-1", &r, b"x").unwrap_err().code,
        ErrorCode::PersistIo
    );
    assert_eq!(
        store.get("run-1", &r).unwrap_err().code,
        ErrorCode::PersistIo
    );
    store.delete_run("run-1").unwrap();
    assert!(outside.path().exists() && fs::read_dir(outside.path()).unwrap().count() == 0);
    assert!(
        !root.join("runs/run-1").exists(),
        "the link itself is removed"
    );
}
