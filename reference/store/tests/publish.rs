//! Atomic publish on real files: generations, file safety, and a failure at every step
//! through the failure seam (prior checkpoint intact, own temp file removed, no
//! success reported).

mod common;

use std::os::unix::fs::MetadataExt;

use common::*;
use nix::errno::Errno;
use vx_format::limits::MAX_SAFE_INTEGER;
use vx_store::io::Step;
use vx_store::{ErrorCode, Status, StoreConfig};

#[test]
fn publish_allocates_fresh_ids_and_increasing_generations() {
    let mut t = TestStore::new();
    let a = t.store.publish(T0, &mut state(3, T0, false)).unwrap();
    let b = t.store.publish(T0, &mut state(3, T0, false)).unwrap();
    assert_eq!((a.generation, b.generation), (1, 2));
    assert_ne!(a.checkpoint, b.checkpoint);
    assert!(vx_format::ids::is_checkpoint_id(&a.checkpoint));
    // Exactly the two final files: no temporary file left behind.
    let mut want = vec![
        format!("{}.json", a.checkpoint),
        format!("{}.json", b.checkpoint),
    ];
    want.sort();
    assert_eq!(t.entries(), want);

    // The file is the canonical encoding with the store's identity, 0600, one link.
    let path = t.path_of(&b.checkpoint);
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o600);
    assert_eq!(meta.nlink(), 1);
    assert_eq!(u64::from(meta.uid()), uid());
    let decoded = vx_format::read(&std::fs::read(&path).unwrap(), &Default::default()).unwrap();
    assert_eq!(decoded.format, vx_format::Format::CURRENT);
    assert_eq!(decoded.checkpoint.checkpoint, b.checkpoint);
    assert_eq!(decoded.checkpoint.socket, t.location.socket);
    assert_eq!(decoded.checkpoint.uid, uid());
    assert_eq!(t.store.health().last_success, Some(T0));
}

#[test]
fn store_directories_are_created_private() {
    let t = TestStore::new();
    let state_home = t.tmp.path().join("state");
    for dir in [
        state_home.join("venomx"),
        state_home.join("venomx/recovery"),
        t.dir(),
    ] {
        let meta = std::fs::symlink_metadata(&dir).unwrap();
        assert!(meta.is_dir());
        assert_eq!(meta.mode() & 0o777, 0o700, "{}", dir.display());
        assert_eq!(u64::from(meta.uid()), uid());
    }
}

#[test]
fn next_generation_follows_the_largest_retained_valid_one() {
    let mut t = TestStore::new();
    t.plant(7, T0);
    t.plant(3, T0);
    // A corrupt file says nothing about generations.
    write_private(
        &t.path_of("c11111111-1111-4111-8111-111111111111"),
        b"{\"format\":3}",
    );
    assert_eq!(
        t.store
            .publish(T0, &mut state(1, T0, false))
            .unwrap()
            .generation,
        8
    );

    // Forgetting the newest lowers the next generation again.
    let mut u = TestStore::new();
    let first = u.store.publish(T0, &mut state(1, T0, false)).unwrap();
    let second = u.store.publish(T0, &mut state(1, T0, false)).unwrap();
    u.store.forget(&second.checkpoint).unwrap();
    assert_eq!(
        u.store
            .publish(T0, &mut state(1, T0, false))
            .unwrap()
            .generation,
        first.generation + 1
    );
}

#[test]
fn generation_exhaustion_refuses_without_writing() {
    let mut t = TestStore::new();
    t.plant(MAX_SAFE_INTEGER, T0);
    let before = t.entries();
    let err = t.store.publish(T0, &mut state(1, T0, false)).unwrap_err();
    assert_eq!(err.code, ErrorCode::RecoveryIo);
    assert!(err.reason.contains("exhausted"));
    assert_eq!(t.entries(), before);
    assert_eq!(
        t.store.health().last_error_code(),
        Some(ErrorCode::RecoveryIo)
    );
    assert_eq!(t.store.health().last_success, None);

    let mut u = TestStore::new();
    u.plant(MAX_SAFE_INTEGER - 1, T0);
    assert_eq!(
        u.store
            .publish(T0, &mut state(1, T0, false))
            .unwrap()
            .generation,
        MAX_SAFE_INTEGER
    );
}

#[test]
fn oversized_checkpoint_fails_before_writing() {
    let mut t = TestStore::with_config(StoreConfig {
        max_checkpoint_bytes: 65_536,
        ..Default::default()
    });
    let ok = t.store.publish(T0, &mut state(1, T0, false)).unwrap();
    let err = t.store.publish(T0, &mut state(100, T0, true)).unwrap_err();
    assert_eq!(err.code, ErrorCode::CheckpointSize);
    assert_eq!(t.entries(), vec![format!("{}.json", ok.checkpoint)]);
}

#[test]
fn an_invalid_state_is_refused_with_the_readers_verdict() {
    let mut t = TestStore::new();
    let mut bad = state(2, T0, false);
    bad.panes.swap(0, 1); // unsorted pane ids
    let err = t.store.publish(T0, &mut bad).unwrap_err();
    assert_eq!(err.code, ErrorCode::CheckpointCorrupt);
    assert!(t.entries().is_empty());
}

/// Each step of publish fails once; the earlier checkpoint must survive byte for
/// byte, no new final or temporary file may remain (except after the rename, where
/// the new file is in place but not known durable), and success is never reported.
#[test]
fn a_failure_at_every_publish_step_leaves_the_previous_checkpoint() {
    for (step, errno) in [
        (Step::CreateTemp, Errno::EACCES),
        (Step::Write, Errno::ENOSPC),
        (Step::Write, Errno::EDQUOT),
        (Step::Write, Errno::EIO),
        (Step::FsyncFile, Errno::EIO),
        (Step::Close, Errno::EIO),
        (Step::Rename, Errno::EIO),
        (Step::Rename, Errno::EEXIST),
        (Step::FsyncDir, Errno::EIO),
    ] {
        let mut t = TestStore::new();
        let previous = t.store.publish(T0, &mut state(4, T0, false)).unwrap();
        let previous_bytes = std::fs::read(t.path_of(&previous.checkpoint)).unwrap();
        let log = t.use_io(FaultyIo::failing(step, 1, errno));

        let err = t
            .store
            .publish(at(1), &mut state(4, T0, false))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::RecoveryIo, "{step:?}");
        assert_eq!(err.errno, Some(errno), "{step:?}");
        let text = err.to_string();
        assert!(
            !text.contains(t.tmp.path().to_str().unwrap())
                && !text.contains(".tmp-")
                && !text.contains(".json"),
            "no path or name in the error: {text}"
        );
        assert_eq!(
            t.store.health().last_error_code(),
            Some(ErrorCode::RecoveryIo)
        );
        assert_eq!(
            t.store.health().last_success,
            Some(T0),
            "{step:?}: no success recorded"
        );
        assert_eq!(
            std::fs::read(t.path_of(&previous.checkpoint)).unwrap(),
            previous_bytes,
            "{step:?}"
        );

        let entries = t.entries();
        assert!(
            entries.iter().all(|e| !e.starts_with(".tmp-")),
            "{step:?}: temp left: {entries:?}"
        );
        let log = log.lock().unwrap().clone();
        if step == Step::FsyncDir {
            // Renamed but not known durable: present and valid, yet reported failed.
            assert_eq!(entries.len(), 2, "{step:?}");
        } else {
            assert_eq!(
                entries,
                vec![format!("{}.json", previous.checkpoint)],
                "{step:?}"
            );
            assert!(
                !log.contains(&Step::FsyncDir),
                "{step:?}: no directory fsync after a failed step"
            );
        }
        if step != Step::CreateTemp && step != Step::FsyncDir {
            assert_eq!(
                log.last(),
                Some(&Step::Unlink),
                "{step:?}: own temp file removed"
            );
        }
        // Listing still works and the earlier checkpoint is valid.
        let listing = t.store.list(at(1)).unwrap();
        let prev = listing
            .entries
            .iter()
            .find(|e| e.checkpoint == previous.checkpoint)
            .unwrap();
        assert_eq!(prev.status, Status::Valid);
        assert_eq!(listing.temp_files, 0);
    }
}

#[test]
fn step_order_is_create_write_fsync_close_rename_fsync_dir() {
    let mut t = TestStore::new();
    let log = t.use_io(FaultyIo::new());
    t.store.publish(T0, &mut state(2, T0, false)).unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            Step::CreateTemp,
            Step::Write,
            Step::FsyncFile,
            Step::Close,
            Step::Rename,
            Step::FsyncDir
        ]
    );
}

#[test]
fn short_writes_are_continued_and_interrupted_writes_retried() {
    let mut t = TestStore::new();
    let mut io = FaultyIo::new();
    io.short_writes = Some(7);
    io.interrupt_writes = true;
    let log = t.use_io(io);
    let published = t.store.publish(T0, &mut state(10, T0, true)).unwrap();
    let bytes = std::fs::read(t.path_of(&published.checkpoint)).unwrap();
    assert_eq!(bytes.len() as u64, published.bytes);
    let writes = log
        .lock()
        .unwrap()
        .iter()
        .filter(|s| **s == Step::Write)
        .count();
    assert_eq!(writes, bytes.len().div_ceil(7));
    vx_format::read(&bytes, &Default::default()).unwrap();
    assert_eq!(
        t.store
            .load(&published.checkpoint, T0)
            .unwrap()
            .checkpoint
            .panes
            .len(),
        10
    );
}

#[test]
fn a_failure_in_the_middle_of_a_short_write_sequence_is_reported() {
    let mut t = TestStore::new();
    let previous = t.store.publish(T0, &mut state(1, T0, false)).unwrap();
    let mut io = FaultyIo::failing(Step::Write, 3, Errno::ENOSPC);
    io.short_writes = Some(100);
    t.use_io(io);
    let err = t.store.publish(T0, &mut state(10, T0, false)).unwrap_err();
    assert_eq!(err.errno, Some(Errno::ENOSPC));
    assert_eq!(t.entries(), vec![format!("{}.json", previous.checkpoint)]);
}

#[test]
fn a_temp_file_that_could_not_be_removed_is_never_a_candidate() {
    let mut t = TestStore::new();
    let previous = t.store.publish(T0, &mut state(1, T0, false)).unwrap();
    let mut io = FaultyIo::failing(Step::FsyncFile, 1, Errno::EIO);
    io.fails.push((Step::Unlink, 1, Errno::EIO));
    t.use_io(io);
    t.store.publish(T0, &mut state(1, T0, false)).unwrap_err();
    assert_eq!(
        t.entries()
            .iter()
            .filter(|e| e.starts_with(".tmp-"))
            .count(),
        1
    );

    let listing = t.store.list(T0).unwrap();
    assert_eq!(listing.temp_files, 1);
    assert_eq!(listing.entries.len(), 1);
    assert_eq!(listing.entries[0].checkpoint, previous.checkpoint);
    assert_eq!(listing.entries[0].status, Status::Valid);
    // The next publish still allocates from the durable checkpoint.
    assert_eq!(
        t.store
            .publish(T0, &mut state(1, T0, false))
            .unwrap()
            .generation,
        previous.generation + 1
    );
}

#[test]
fn enospc_on_fsync_keeps_previous_and_reports() {
    let mut t = TestStore::new();
    let previous = t.store.publish(T0, &mut state(3, T0, false)).unwrap();
    t.use_io(FaultyIo::failing(Step::FsyncFile, 1, Errno::ENOSPC));
    let err = t.store.publish(T0, &mut state(3, T0, false)).unwrap_err();
    assert_eq!(err.errno, Some(Errno::ENOSPC));
    let loaded = t.store.load(&previous.checkpoint, T0).unwrap();
    assert_eq!(loaded.checkpoint.generation, previous.generation);
}

#[test]
fn an_alternate_socket_never_uses_the_default_store() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("state");
    let a = vx_store::StoreLocation::resolve(
        Some(home.as_os_str()),
        None,
        &tmp.path().join("default.sock"),
    )
    .unwrap();
    let b = vx_store::StoreLocation::resolve(
        Some(home.as_os_str()),
        None,
        &tmp.path().join("other.sock"),
    )
    .unwrap();
    assert_ne!(a.dir(), b.dir());
    let mut sa = vx_store::Store::open(&a, uid(), StoreConfig::default()).unwrap();
    let mut sb = vx_store::Store::open(&b, uid(), StoreConfig::default()).unwrap();
    let published = sa.publish(T0, &mut state(1, T0, false)).unwrap();
    assert!(sb.list(T0).unwrap().entries.is_empty());
    assert_eq!(
        sb.load(&published.checkpoint, T0).unwrap_err().code,
        ErrorCode::CheckpointNotFound
    );

    // A file copied from the other socket's store names the wrong socket: corrupt.
    std::fs::copy(
        a.dir().join(format!("{}.json", published.checkpoint)),
        b.dir().join(format!("{}.json", published.checkpoint)),
    )
    .unwrap();
    let listing = sb.list(T0).unwrap();
    assert_eq!(listing.entries[0].status, Status::Corrupt);
    assert_eq!(listing.entries[0].generation, None);
}
