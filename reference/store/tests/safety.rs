//! Every unsafe filesystem object, on real files: `unsafe` in a listing,
//! `unavailable.recovery_io` in inspect, load and forget, and never repaired.
//! CI runs as root, which bypasses permission checks: "another owner" is made with
//! chown, and nothing here relies on EACCES.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use vx_store::{ErrorCode, Status, Store, StoreConfig};

const OTHER_UID: u32 = 65534;

fn chown(path: &Path, uid: u32) {
    assert_eq!(
        nix::unistd::geteuid().as_raw(),
        0,
        "making a file of another owner needs root (CI runs as root)"
    );
    nix::unistd::fchownat(
        None,
        path,
        Some(nix::unistd::Uid::from_raw(uid)),
        None,
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    )
    .unwrap();
}

/// A valid checkpoint file for this store, written outside it; returns its id.
fn valid_file_outside(t: &TestStore, dir: &Path) -> (String, std::path::PathBuf) {
    let mut cp = state(2, T0, false);
    let id = vx_store::names::new_checkpoint_id().unwrap();
    cp.checkpoint = id.clone();
    cp.generation = 9;
    cp.socket = t.location.socket.clone();
    cp.uid = uid();
    let path = dir.join(format!("{id}.json"));
    write_private(
        &path,
        &vx_format::write(&cp, vx_format::Format::CURRENT).unwrap(),
    );
    (id, path)
}

/// Makes one unsafe object of `kind` in the store; returns its checkpoint id.
fn make_unsafe(t: &TestStore, kind: &str) -> String {
    let outside = t.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    match kind {
        "symlink" => {
            let (id, target) = valid_file_outside(t, &outside);
            std::os::unix::fs::symlink(&target, t.path_of(&id)).unwrap();
            id
        }
        "dangling-symlink" => {
            let id = vx_store::names::new_checkpoint_id().unwrap();
            std::os::unix::fs::symlink("/nonexistent/target", t.path_of(&id)).unwrap();
            id
        }
        "hard-link" => {
            let id = t.plant(9, T0);
            std::fs::hard_link(t.path_of(&id), outside.join("second-link")).unwrap();
            id
        }
        "fifo" => {
            let id = vx_store::names::new_checkpoint_id().unwrap();
            nix::unistd::mkfifo(
                &t.path_of(&id),
                nix::sys::stat::Mode::from_bits_truncate(0o600),
            )
            .unwrap();
            id
        }
        "socket" => {
            let id = vx_store::names::new_checkpoint_id().unwrap();
            // Socket paths are limited to 108 bytes: bind nearby, then move it in.
            let short = t.tmp.path().join("s.sock");
            let listener = std::os::unix::net::UnixListener::bind(&short).unwrap();
            std::fs::set_permissions(&short, std::fs::Permissions::from_mode(0o600)).unwrap();
            std::fs::rename(&short, t.path_of(&id)).unwrap();
            drop(listener);
            id
        }
        "directory" => {
            let id = vx_store::names::new_checkpoint_id().unwrap();
            std::fs::create_dir(t.path_of(&id)).unwrap();
            std::fs::set_permissions(t.path_of(&id), std::fs::Permissions::from_mode(0o700))
                .unwrap();
            std::fs::write(t.path_of(&id).join("inner"), b"x").unwrap();
            id
        }
        "other-owner" => {
            let id = t.plant(9, T0);
            chown(&t.path_of(&id), OTHER_UID);
            id
        }
        "group-readable" | "other-readable" | "group-writable" | "other-writable" => {
            let mode = match kind {
                "group-readable" => 0o640,
                "other-readable" => 0o604,
                "group-writable" => 0o620,
                _ => 0o602,
            };
            let id = t.plant(9, T0);
            std::fs::set_permissions(t.path_of(&id), std::fs::Permissions::from_mode(mode))
                .unwrap();
            id
        }
        other => panic!("unknown kind {other}"),
    }
}

const KINDS: [&str; 11] = [
    "symlink",
    "dangling-symlink",
    "hard-link",
    "fifo",
    "socket",
    "directory",
    "other-owner",
    "group-readable",
    "other-readable",
    "group-writable",
    "other-writable",
];

fn snapshot(path: &Path) -> (u32, u32, u64) {
    let m = std::fs::symlink_metadata(path).unwrap();
    (m.mode(), m.uid(), m.nlink())
}

#[test]
fn every_unsafe_object_is_unsafe_in_list_and_refused_by_operations() {
    for kind in KINDS {
        let mut t = TestStore::new();
        let good = t.plant(1, T0);
        let id = make_unsafe(&t, kind);
        let before = snapshot(&t.path_of(&id));

        let listing = t.store.list(T0).unwrap();
        let row = listing
            .entries
            .iter()
            .find(|e| e.checkpoint == id)
            .unwrap_or_else(|| panic!("{kind} not listed"));
        assert_eq!(row.status, Status::Unsafe, "{kind}");
        assert_eq!(
            row.generation, None,
            "{kind}: no generation from an unsafe object"
        );
        assert_eq!(
            listing.entries[0].checkpoint, good,
            "{kind}: decodable first"
        );

        for (op, err) in [
            ("load", t.store.load(&id, T0).unwrap_err()),
            ("inspect", t.store.inspect(&id, T0).unwrap_err()),
            ("forget", t.store.forget(&id).unwrap_err()),
        ] {
            assert_eq!(err.code, ErrorCode::RecoveryIo, "{kind} {op}");
            assert_eq!(err.exit_code(), 6);
        }
        // Nothing was repaired, removed or chmod'ed.
        assert_eq!(snapshot(&t.path_of(&id)), before, "{kind}");
        // Retention and the text purge leave it alone too.
        let pruned = t
            .store
            .prune_with(
                &StoreConfig {
                    max_checkpoints: 1,
                    ..Default::default()
                },
                T0,
            )
            .unwrap();
        assert!(
            pruned.unsafe_entries.iter().any(|(e, _)| *e == id),
            "{kind}: reported as a diagnostic"
        );
        assert!(
            t.store.purge_text().is_err(),
            "{kind}: a purge cannot prove it holds no text"
        );
        assert_eq!(snapshot(&t.path_of(&id)), before, "{kind}");
        // The safe checkpoint beside it is still usable.
        t.store.load(&good, T0).unwrap();
    }
}

#[test]
fn a_fifo_never_blocks_a_listing_or_a_load() {
    let t = TestStore::new();
    let id = make_unsafe(&t, "fifo");
    let (send, recv) = mpsc::channel();
    let mut store = t.store;
    let worker = std::thread::spawn(move || {
        let listing = store.list(T0).unwrap();
        let load = store.load(&id, T0).unwrap_err();
        send.send((listing.entries[0].status, load.code)).unwrap();
    });
    let (status, code) = recv
        .recv_timeout(Duration::from_secs(10))
        .expect("list/load blocked on a FIFO");
    worker.join().unwrap();
    assert_eq!(status, Status::Unsafe);
    assert_eq!(code, ErrorCode::RecoveryIo);
}

#[test]
fn an_unsafe_store_directory_is_refused_and_not_repaired() {
    // Permissive store directory.
    let t = TestStore::new();
    std::fs::set_permissions(t.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = Store::open_dir(&t.dir(), uid(), None, StoreConfig::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::RecoveryIo);
    let err = Store::open(&t.location, uid(), StoreConfig::default()).unwrap_err();
    assert_eq!(err.code, ErrorCode::RecoveryIo);
    assert_eq!(
        std::fs::metadata(t.dir()).unwrap().mode() & 0o777,
        0o755,
        "never chmod'ed"
    );
    // The open store notices on its held handle.
    assert_eq!(t.store.check_dir().unwrap_err().code, ErrorCode::RecoveryIo);

    // A permissive recovery/ parent.
    let t = TestStore::new();
    let recovery = t.dir().parent().unwrap().to_path_buf();
    std::fs::set_permissions(&recovery, std::fs::Permissions::from_mode(0o750)).unwrap();
    assert_eq!(
        Store::open(&t.location, uid(), StoreConfig::default())
            .unwrap_err()
            .code,
        ErrorCode::RecoveryIo
    );

    // A world-writable venomx/ parent.
    let t = TestStore::new();
    let venomx = recovery_parent(&t);
    std::fs::set_permissions(&venomx, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(
        Store::open(&t.location, uid(), StoreConfig::default())
            .unwrap_err()
            .code,
        ErrorCode::RecoveryIo
    );

    // Another owner.
    let t = TestStore::new();
    chown(&t.dir(), OTHER_UID);
    assert_eq!(
        Store::open(&t.location, uid(), StoreConfig::default())
            .unwrap_err()
            .code,
        ErrorCode::RecoveryIo
    );
    assert_eq!(
        Store::open_dir(&t.dir(), uid(), None, StoreConfig::default())
            .unwrap_err()
            .code,
        ErrorCode::RecoveryIo
    );

    // A symlink in the store directory's place, pointing at a private directory.
    let t = TestStore::new();
    let elsewhere = t.tmp.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::remove_dir(t.dir()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, t.dir()).unwrap();
    assert_eq!(
        Store::open(&t.location, uid(), StoreConfig::default())
            .unwrap_err()
            .code,
        ErrorCode::RecoveryIo
    );
    assert_eq!(
        Store::open_dir(&t.dir(), uid(), None, StoreConfig::default())
            .unwrap_err()
            .code,
        ErrorCode::RecoveryIo
    );
    assert!(
        std::fs::read_dir(&elsewhere).unwrap().next().is_none(),
        "nothing created through the link"
    );

    // A regular file in the store directory's place.
    let t = TestStore::new();
    std::fs::remove_dir(t.dir()).unwrap();
    write_private(&t.dir(), b"");
    assert_eq!(
        Store::open(&t.location, uid(), StoreConfig::default())
            .unwrap_err()
            .code,
        ErrorCode::RecoveryIo
    );
}

fn recovery_parent(t: &TestStore) -> std::path::PathBuf {
    t.dir().parent().unwrap().parent().unwrap().to_path_buf()
}

#[test]
fn the_held_handle_survives_substitution_of_the_path() {
    let mut t = TestStore::new();
    let first = t.store.publish(T0, &mut state(1, T0, false)).unwrap();
    let moved = t.tmp.path().join("moved");
    std::fs::rename(t.dir(), &moved).unwrap();
    std::fs::create_dir(t.dir()).unwrap();
    std::fs::set_permissions(t.dir(), std::fs::Permissions::from_mode(0o700)).unwrap();

    let second = t.store.publish(T0, &mut state(1, T0, false)).unwrap();
    assert_eq!(second.generation, first.generation + 1);
    assert!(
        moved.join(format!("{}.json", second.checkpoint)).exists(),
        "written through the held handle"
    );
    assert!(
        std::fs::read_dir(t.dir()).unwrap().next().is_none(),
        "the substitute is untouched"
    );
    assert_eq!(t.store.list(T0).unwrap().entries.len(), 2);
}

#[test]
fn forget_deletes_only_a_safely_owned_regular_file_without_parsing_it() {
    let mut t = TestStore::new();
    let corrupt = "c22222222-2222-4222-8222-222222222222";
    write_private(&t.path_of(corrupt), b"\xff not json at all");
    let future = t.plant(4, at(10 * DAY_MS));
    let expired = t.plant(5, at(-30 * DAY_MS));
    for id in [corrupt, &future, &expired] {
        t.store.forget(id).unwrap();
        assert!(!t.path_of(id).exists());
    }
    assert_eq!(
        t.store.forget(corrupt).unwrap_err().code,
        ErrorCode::CheckpointNotFound
    );
    for bad in [
        "",
        "../x",
        "c22222222-2222-4222-8222-22222222222/",
        "C22222222-2222-4222-8222-222222222222",
        "p0",
    ] {
        let err = t.store.forget(bad).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidCheckpoint, "{bad:?}");
        assert_eq!(err.code.param(), Some("checkpoint"));
    }
}
