//! Retention on real files: count and age pruning with directory fsync, the last
//! durable checkpoint surviving a failed write, the text purge, temp cleanup, and
//! failures reported.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::*;
use nix::errno::Errno;
use vx_store::io::Step;
use vx_store::{ErrorCode, Status, StoreConfig, TextMode};

fn ids_in(t: &mut TestStore) -> Vec<(String, Status)> {
    t.store
        .list(T0)
        .unwrap()
        .entries
        .into_iter()
        .map(|e| (e.checkpoint, e.status))
        .collect()
}

#[test]
fn prune_by_count_keeps_the_newest_generations_and_syncs_the_directory() {
    let mut t = TestStore::new();
    let mut published = Vec::new();
    for _ in 0..5 {
        published.push(
            t.store
                .publish(T0, &mut state(1, T0, false))
                .unwrap()
                .checkpoint,
        );
    }
    let log = t.use_io(FaultyIo::new());
    let cleanup = t.store.prune(T0).unwrap();
    let mut want_deleted = published[..2].to_vec();
    want_deleted.sort();
    assert_eq!(cleanup.deleted, want_deleted);
    assert_eq!(
        ids_in(&mut t)
            .into_iter()
            .map(|(id, _)| id)
            .collect::<Vec<_>>(),
        published[2..].to_vec()
    );
    // Two unlinks, then one directory fsync for the batch.
    assert_eq!(
        log.lock().unwrap().clone(),
        vec![Step::Unlink, Step::Unlink, Step::FsyncDir]
    );
    assert_eq!(t.store.health().last_cleanup_error, None);

    // Nothing to do: no deletions and no fsync.
    log.lock().unwrap().clear();
    assert!(t.store.prune(T0).unwrap().deleted.is_empty());
    assert!(log.lock().unwrap().is_empty());
}

#[test]
fn prune_by_age_removes_expired_even_the_newest() {
    let mut t = TestStore::with_config(StoreConfig {
        max_age_seconds: 3600,
        ..Default::default()
    });
    let old = t.plant(1, at(-2 * HOUR_MS));
    let edge = t.plant(2, at(-HOUR_MS));
    let newest_but_expired = t.plant(3, at(-HOUR_MS - 1));
    let future = t.plant(4, at(HOUR_MS));
    let corrupt = "c33333333-3333-4333-8333-333333333333";
    write_private(&t.path_of(corrupt), b"{}");
    let cleanup = t.store.prune(T0).unwrap();
    let mut want = vec![old, newest_but_expired];
    want.sort();
    assert_eq!(cleanup.deleted, want);
    // Exactly max_age old is kept; future and corrupt files are never pruned.
    let left: Vec<String> = ids_in(&mut t).into_iter().map(|(id, _)| id).collect();
    assert_eq!(left, vec![edge, future, corrupt.to_string()]);
}

#[test]
fn a_stricter_count_under_a_prospective_config_prunes_before_activation() {
    let mut t = TestStore::new();
    for _ in 0..3 {
        t.store.publish(T0, &mut state(1, T0, false)).unwrap();
    }
    let stricter = StoreConfig {
        max_checkpoints: 1,
        ..*t.store.config()
    };
    assert_eq!(t.store.prune_with(&stricter, T0).unwrap().deleted.len(), 2);
    assert_eq!(
        t.store.config().max_checkpoints,
        3,
        "prune_with does not activate the config"
    );
    t.store.set_config(stricter);
    assert_eq!(ids_in(&mut t).len(), 1);
}

#[test]
fn the_last_durable_checkpoint_survives_a_failed_write() {
    let mut t = TestStore::with_config(StoreConfig {
        max_checkpoints: 1,
        ..Default::default()
    });
    let durable = t.store.publish(T0, &mut state(1, T0, false)).unwrap();
    // The next publish renames its file into place but the directory fsync fails.
    t.use_io(FaultyIo::failing(Step::FsyncDir, 1, Errno::EIO));
    let err = t.store.publish(T0, &mut state(1, T0, false)).unwrap_err();
    assert_eq!(err.code, ErrorCode::RecoveryIo);
    let listing = ids_in(&mut t);
    assert_eq!(listing.len(), 2, "the failed write's file is visible");
    let failed = listing[1].0.clone();

    // Pruning to one must not delete the durable checkpoint for the failed one.
    t.use_io(FaultyIo::new());
    let cleanup = t.store.prune(T0).unwrap();
    assert!(cleanup.deleted.is_empty(), "{:?}", cleanup.deleted);
    t.store.load(&durable.checkpoint, T0).unwrap();

    // Once a later directory fsync succeeds, everything renamed is durable and
    // ordinary count pruning resumes.
    let next = t.store.publish(T0, &mut state(1, T0, false)).unwrap();
    let cleanup = t.store.prune(T0).unwrap();
    let mut want = vec![durable.checkpoint, failed];
    want.sort();
    assert_eq!(cleanup.deleted, want);
    assert_eq!(ids_in(&mut t), vec![(next.checkpoint, Status::Valid)]);
}

#[test]
fn prune_failures_are_reported_with_what_was_and_was_not_deleted() {
    let mut t = TestStore::with_config(StoreConfig {
        max_checkpoints: 1,
        ..Default::default()
    });
    let a = t
        .store
        .publish(T0, &mut state(1, T0, false))
        .unwrap()
        .checkpoint;
    let b = t
        .store
        .publish(T0, &mut state(1, T0, false))
        .unwrap()
        .checkpoint;
    t.store.publish(T0, &mut state(1, T0, false)).unwrap();
    t.use_io(FaultyIo::failing(Step::Unlink, 1, Errno::EIO));
    let err = t.store.prune(T0).unwrap_err();
    assert_eq!(err.error.code, ErrorCode::RecoveryIo);
    assert_eq!(err.error.errno, Some(Errno::EIO));
    let mut both = [a.clone(), b.clone()];
    both.sort();
    assert_eq!(err.not_deleted, vec![both[0].clone()]);
    assert_eq!(err.deleted, vec![both[1].clone()]);
    assert_eq!(
        t.store.health().last_cleanup_error.as_ref().map(|e| e.code),
        Some(ErrorCode::RecoveryIo)
    );

    // A failed directory fsync after deletions is a failure too.
    t.use_io(FaultyIo::failing(Step::FsyncDir, 1, Errno::EIO));
    let err = t.store.prune(T0).unwrap_err();
    assert_eq!(err.deleted, vec![both[0].clone()]);
    assert_eq!(err.error.errno, Some(Errno::EIO));
    // A clean run clears doctor's cleanup error.
    t.use_io(FaultyIo::new());
    t.store.prune(T0).unwrap();
    assert_eq!(t.store.health().last_cleanup_error, None);
}

#[test]
fn text_purge_deletes_every_text_bearing_checkpoint() {
    let mut t = TestStore::with_config(StoreConfig {
        terminal_text: TextMode::Plain,
        ..Default::default()
    });
    let with_text = t
        .store
        .publish(T0, &mut state(3, T0, true))
        .unwrap()
        .checkpoint;
    let without = t
        .store
        .publish(T0, &mut state(3, T0, false))
        .unwrap()
        .checkpoint;
    let mut expired_with_text = state(2, at(-30 * DAY_MS), true);
    let expired_with_text = t.plant_state(3, &mut expired_with_text);
    let corrupt = "c33333333-3333-4333-8333-333333333333";
    write_private(
        &t.path_of(corrupt),
        b"{\"format\":3,\"payload\":\"...screen text...\"",
    );
    let temp = ".tmp-88888888-8888-4888-8888-888888888888";
    write_private(&t.dir().join(temp), b"partial write with text");

    let cleanup = t.store.purge_text().unwrap();
    let mut want = vec![
        with_text,
        expired_with_text,
        corrupt.to_string(),
        temp.to_string(),
    ];
    want.sort();
    let mut got = cleanup.deleted.clone();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(t.entries(), vec![format!("{without}.json")]);
}

#[test]
fn text_purge_fails_and_says_which_when_it_cannot_delete() {
    let mut t = TestStore::new();
    let with_text = t
        .store
        .publish(T0, &mut state(1, T0, true))
        .unwrap()
        .checkpoint;
    let hard = t
        .store
        .publish(T0, &mut state(1, T0, true))
        .unwrap()
        .checkpoint;
    std::fs::hard_link(t.path_of(&hard), t.tmp.path().join("second-link")).unwrap();
    let err = t.store.purge_text().unwrap_err();
    assert_eq!(err.error.code, ErrorCode::RecoveryIo);
    assert_eq!(err.not_deleted, vec![hard.clone()]);
    assert_eq!(err.deleted, vec![with_text]);
    assert!(t.path_of(&hard).exists());

    // An unlink failure names the checkpoint too.
    let mut u = TestStore::new();
    let a = u
        .store
        .publish(T0, &mut state(1, T0, true))
        .unwrap()
        .checkpoint;
    u.use_io(FaultyIo::failing(Step::Unlink, 1, Errno::EROFS));
    let err = u.store.purge_text().unwrap_err();
    assert_eq!(err.not_deleted, vec![a]);
    assert_eq!(err.error.errno, Some(Errno::EROFS));
}

#[test]
fn startup_cleanup_removes_only_safe_owned_regular_temp_files() {
    let mut t = TestStore::new();
    let kept = t
        .store
        .publish(T0, &mut state(1, T0, false))
        .unwrap()
        .checkpoint;
    let safe = ".tmp-11111111-1111-4111-8111-111111111111";
    write_private(&t.dir().join(safe), b"interrupted");
    let permissive = ".tmp-22222222-2222-4222-8222-222222222222";
    write_private(&t.dir().join(permissive), b"x");
    std::fs::set_permissions(
        t.dir().join(permissive),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let dir_temp = ".tmp-33333333-3333-4333-8333-333333333333";
    std::fs::create_dir(t.dir().join(dir_temp)).unwrap();
    std::fs::write(t.dir().join(dir_temp).join("inside"), b"x").unwrap();
    let link_temp = ".tmp-44444444-4444-4444-8444-444444444444";
    std::os::unix::fs::symlink(t.path_of(&kept), t.dir().join(link_temp)).unwrap();
    let foreign = ".tmp-not-a-uuid";
    write_private(&t.dir().join(foreign), b"x");

    let log = t.use_io(FaultyIo::new());
    let cleanup = t.store.remove_temp_files().unwrap();
    assert_eq!(cleanup.deleted, vec![safe.to_string()]);
    let mut diagnosed: Vec<String> = cleanup
        .unsafe_entries
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    diagnosed.sort();
    assert_eq!(
        diagnosed,
        vec![
            permissive.to_string(),
            dir_temp.to_string(),
            link_temp.to_string()
        ]
    );
    assert_eq!(
        log.lock().unwrap().clone(),
        vec![Step::Unlink, Step::FsyncDir]
    );
    // Never a recursive delete; never a final file; never a foreign name.
    assert!(t.dir().join(dir_temp).join("inside").exists());
    assert!(t.path_of(&kept).exists());
    assert!(t.dir().join(foreign).exists());
    assert!(std::fs::symlink_metadata(t.dir().join(link_temp)).is_ok());
}
