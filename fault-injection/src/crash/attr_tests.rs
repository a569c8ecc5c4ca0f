//! The attribute operations (mknod, chmod, truncate, timestamps) through the models
//! and the replay: what each model lets a crash lose, and what a state shows.

use std::path::{Path, PathBuf};

use super::log::{FsOp, Meta, Recording, FORMAT};
use super::model::{enumerate, CrashState, Model, Strategy};
use super::replay::{state_tree, Seen, Tree};

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

fn fsync_file(ino: u64, path: &str) -> FsOp {
    FsOp::Fsync {
        ino: Some(ino),
        path: p(path),
        dir: false,
        all: false,
    }
}

fn chmod(ino: Option<u64>, path: &str, mode: u32) -> FsOp {
    FsOp::Chmod {
        path: p(path),
        ino,
        mode,
    }
}

/// Whether some state crashing after `crash` ops leaves op `op` out.
fn drops(states: &[CrashState], crash: usize, op: usize) -> bool {
    states
        .iter()
        .any(|s| s.crash == crash && s.dropped.contains(&op))
}

#[test]
fn posix_loses_a_chmod_until_the_file_is_fsynced() {
    let ops = vec![chmod(Some(1), "f", 0o600), fsync_file(1, "f")];
    let states = enumerate(Model::Posix, &ops);
    assert!(drops(&states, 1, 0));
    assert!(!drops(&states, 2, 0));
    // An fsync of another file does not cover it.
    let other = vec![chmod(Some(1), "f", 0o600), fsync_file(2, "g")];
    assert!(drops(&enumerate(Model::Posix, &other), 2, 0));
}

#[test]
fn a_directory_chmod_is_durable_after_an_fsync_of_that_directory() {
    let dir = |path: &str| FsOp::Fsync {
        ino: None,
        path: p(path),
        dir: true,
        all: false,
    };
    let ops = vec![chmod(None, "d", 0o700), dir(""), dir("d")];
    let states = enumerate(Model::Posix, &ops);
    assert!(
        drops(&states, 2, 0),
        "the parent's fsync does not cover d's inode"
    );
    assert!(!drops(&states, 3, 0));
}

#[test]
fn ext4_journals_modes_and_times_in_order_with_names() {
    let ops = vec![
        chmod(Some(1), "f", 0o600),
        FsOp::Rename {
            from: p("f"),
            to: p("g"),
            src: Some(1),
            replaces: false,
        },
    ];
    let states = enumerate(Model::Ext4Ordered, &ops);
    // The later rename is in a later (or the same) transaction: kept only with it.
    assert!(!drops(&states, 2, 0));
    assert!(drops(&states, 2, 1));
    assert!(drops(&states, 1, 0));
    // Any fsync commits the running transaction, the chmod with it.
    let synced = vec![chmod(Some(1), "f", 0o600), fsync_file(2, "g")];
    assert!(!drops(&enumerate(Model::Ext4Ordered, &synced), 2, 0));
    assert!(enumerate(Model::Prefix, &ops)
        .iter()
        .all(|s| s.strategy == Strategy::Prefix));
}

fn recording(dir: &Path, ops: Vec<FsOp>) -> Recording {
    Recording {
        dir: dir.to_path_buf(),
        meta: Meta {
            format: FORMAT.into(),
            root: dir.to_path_buf(),
            lines: 0,
            data_bytes: 0,
            exit_code: 0,
            umask: Some(0o022),
            outputs: vec![],
        },
        lines: vec![0; ops.len()],
        ops,
        data: b"abc".to_vec(),
    }
}

fn complete(ops: usize) -> CrashState {
    CrashState {
        id: 0,
        strategy: Strategy::Prefix,
        crash: ops,
        dropped: vec![],
        torn: None,
        zeroed: false,
    }
}

#[test]
fn a_state_shows_modes_nodes_and_explicit_times_until_a_write() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("d")).unwrap();
    std::fs::write(tmp.path().join("f"), b"x").unwrap();
    let base = Tree::load(tmp.path()).unwrap();
    let stamp = FsOp::Utimes {
        path: p("f"),
        ino: Some(1),
        mtime: Some((1_577_836_800, 0)),
    };
    let write = FsOp::Write {
        ino: 1,
        off: 0,
        len: 3,
        data: 0,
        extends: true,
    };
    let ops = vec![
        FsOp::Mknod {
            path: p("d/p"),
            kind: 'p',
            mode: 0o640,
        },
        chmod(None, "d", 0o700),
        chmod(Some(1), "f", 0o600),
        stamp,
        write,
    ];
    let rec = recording(tmp.path(), ops);
    let at = |k: usize| state_tree(&rec, &base, &complete(k)).view();
    let stamped = at(4);
    assert_eq!(stamped[&p("d/p")], Seen::Special('p', 0o640));
    assert_eq!(stamped[&p("d")], Seen::Dir(0o700));
    assert!(matches!(
        stamped[&p("f")],
        Seen::File {
            mode: 0o600,
            mtime: Some((1_577_836_800, 0)),
            ..
        }
    ));
    // The write makes the time the present again: not part of the state.
    assert!(matches!(at(5)[&p("f")], Seen::File { mtime: None, .. }));
    // Written out, the time is the one set.
    let out = tempfile::tempdir().unwrap();
    state_tree(&rec, &base, &complete(4))
        .write_to(out.path())
        .unwrap();
    let m = std::fs::metadata(out.path().join("f")).unwrap();
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    assert_eq!(m.mtime(), 1_577_836_800);
    let fifo = std::fs::symlink_metadata(out.path().join("d/p")).unwrap();
    assert!(fifo.file_type().is_fifo());
    assert_eq!(fifo.mode() & 0o7777, 0o640);
}

#[test]
fn an_explicit_time_on_a_directory_is_left_for_verify_to_refuse() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("d")).unwrap();
    let base = Tree::load(tmp.path()).unwrap();
    let ops = vec![FsOp::Utimes {
        path: p("d"),
        ino: None,
        mtime: Some((0, 0)),
    }];
    let rec = recording(tmp.path(), ops);
    let t = state_tree(&rec, &base, &complete(1));
    assert_eq!(t.times_unmodelled, vec![p("d")]);
}
