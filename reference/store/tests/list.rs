//! List, inspect and load on real files: every status, the RFC's sort order,
//! duplicate generations, counts without content, and no silent fallback to an older
//! checkpoint.

mod common;

use common::*;
use vx_format::{Format, Text, Timestamp};
use vx_store::{ErrorCode, Status, StoreConfig, TextMode};

#[test]
fn every_status_and_the_rfc_sort_order() {
    let mut t = TestStore::new();
    let valid_2 = t.plant(2, T0);
    let valid_1 = t.plant(1, T0);
    let expired = t.plant(3, at(-8 * DAY_MS));
    let future = t.plant(4, at(DAY_MS));
    let corrupt = "c33333333-3333-4333-8333-333333333333";
    // A valid envelope whose payload names another file: decoded as corrupt.
    let mut other = state(1, T0, false);
    other.checkpoint = "c44444444-4444-4444-8444-444444444444".into();
    other.socket = t.location.socket.clone();
    other.uid = uid();
    write_private(
        &t.path_of(corrupt),
        &vx_format::write(&other, Format::CURRENT).unwrap(),
    );
    let incompatible = "c55555555-5555-4555-8555-555555555555";
    write_private(
        &t.path_of(incompatible),
        b"{\"format\":4,\"payload\":\"{}\",\"sha256\":\"00\"}\n",
    );
    let truncated = "c66666666-6666-4666-8666-666666666666";
    let bytes = std::fs::read(t.path_of(&valid_1)).unwrap();
    write_private(&t.path_of(truncated), &bytes[..bytes.len() / 2]);
    let unsafe_id = "c77777777-7777-4777-8777-777777777777";
    std::os::unix::fs::symlink(t.path_of(&valid_1), t.path_of(unsafe_id)).unwrap();
    // Temporary and foreign names are never listed.
    write_private(
        &t.dir().join(".tmp-88888888-8888-4888-8888-888888888888"),
        b"partial",
    );
    write_private(&t.dir().join("notes.txt"), b"x");

    let listing = t.store.list(T0).unwrap();
    let rows: Vec<(String, Status, Option<u64>)> = listing
        .entries
        .iter()
        .map(|e| (e.checkpoint.clone(), e.status, e.generation))
        .collect();
    let mut unknown = vec![
        (corrupt.to_string(), Status::Corrupt, None),
        (incompatible.to_string(), Status::Incompatible, None),
        (truncated.to_string(), Status::Corrupt, None),
        (unsafe_id.to_string(), Status::Unsafe, None),
    ];
    unknown.sort_by(|a, b| a.0.cmp(&b.0));
    let mut want = vec![
        (valid_1, Status::Valid, Some(1)),
        (valid_2, Status::Valid, Some(2)),
        (expired, Status::Expired, Some(3)),
        (future, Status::Future, Some(4)),
    ];
    want.extend(unknown);
    assert_eq!(rows, want);
    assert_eq!(listing.temp_files, 1);
    assert_eq!(listing.other_names, vec!["notes.txt".to_string()]);
    // Reasons name rules, never content.
    let reason = listing
        .entries
        .iter()
        .find(|e| e.checkpoint == corrupt)
        .unwrap()
        .reason
        .clone()
        .unwrap();
    assert!(reason.starts_with("checkpoint.file_name"), "{reason}");
}

#[test]
fn uuid_breaks_generation_ties_and_both_duplicates_are_refused() {
    let mut t = TestStore::new();
    let a = t.plant(5, T0);
    let b = t.plant(5, T0);
    let older = t.plant(4, T0);
    let listing = t.store.list(T0).unwrap();
    let mut dups = [a.clone(), b.clone()];
    dups.sort();
    let rows: Vec<(&str, Status, Option<u64>)> = listing
        .entries
        .iter()
        .map(|e| (e.checkpoint.as_str(), e.status, e.generation))
        .collect();
    assert_eq!(
        rows,
        vec![
            (older.as_str(), Status::Valid, Some(4)),
            (dups[0].as_str(), Status::Corrupt, Some(5)),
            (dups[1].as_str(), Status::Corrupt, Some(5)),
        ]
    );
    for id in [&a, &b] {
        assert_eq!(
            t.store.load(id, T0).unwrap_err().code,
            ErrorCode::CheckpointCorrupt
        );
        assert_eq!(
            t.store.inspect(id, T0).unwrap_err().code,
            ErrorCode::CheckpointCorrupt
        );
    }
    // The older one is still restorable when named explicitly.
    t.store.load(&older, T0).unwrap();
    // Retention does not pick a winner either.
    let cleanup = t
        .store
        .prune_with(
            &StoreConfig {
                max_checkpoints: 1,
                ..Default::default()
            },
            T0,
        )
        .unwrap();
    assert!(cleanup.deleted.is_empty(), "{:?}", cleanup.deleted);
    // A new publish never reuses the duplicated generation.
    assert_eq!(
        t.store
            .publish(T0, &mut state(1, T0, false))
            .unwrap()
            .generation,
        6
    );
}

#[test]
fn a_corrupt_newest_file_never_selects_an_older_one() {
    let mut t = TestStore::new();
    let older = t.store.publish(T0, &mut state(2, T0, false)).unwrap();
    let newest = t.store.publish(T0, &mut state(2, T0, false)).unwrap();
    // Flip one byte inside the payload: checksum mismatch.
    let path = t.path_of(&newest.checkpoint);
    let mut bytes = std::fs::read(&path).unwrap();
    let at_byte = bytes.len() / 2;
    bytes[at_byte] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    let listing = t.store.list(T0).unwrap();
    assert_eq!(listing.entries[0].checkpoint, older.checkpoint);
    assert_eq!(listing.entries[0].status, Status::Valid);
    assert_eq!(listing.entries[1].checkpoint, newest.checkpoint);
    assert_eq!(listing.entries[1].status, Status::Corrupt);
    assert_eq!(
        listing.entries[1].generation, None,
        "no generation from a corrupt file"
    );
    let err = t.store.load(&newest.checkpoint, T0).unwrap_err();
    assert_eq!(err.code, ErrorCode::CheckpointCorrupt);
    assert_eq!(err.exit_code(), 5);
    // Only an explicit request gets the older one.
    assert_eq!(
        t.store
            .load(&older.checkpoint, T0)
            .unwrap()
            .checkpoint
            .checkpoint,
        older.checkpoint
    );
}

#[test]
fn load_errors_follow_the_rfc_table() {
    let mut t = TestStore::with_config(StoreConfig {
        max_checkpoint_bytes: 65_536,
        ..Default::default()
    });
    assert_eq!(
        t.store.load("c0123", T0).unwrap_err().code,
        ErrorCode::InvalidCheckpoint
    );
    assert_eq!(
        t.store.load("../../etc/passwd", T0).unwrap_err().code,
        ErrorCode::InvalidCheckpoint
    );
    assert_eq!(
        t.store
            .load("c01234567-89ab-4cde-8fab-0123456789ab", T0)
            .unwrap_err()
            .code,
        ErrorCode::CheckpointNotFound
    );
    let expired = t.plant(1, at(-8 * DAY_MS));
    let future = t.plant(2, at(1));
    assert_eq!(
        t.store.load(&expired, T0).unwrap_err().code,
        ErrorCode::CheckpointExpired
    );
    assert_eq!(
        t.store.load(&future, T0).unwrap_err().code,
        ErrorCode::CheckpointExpired
    );
    // The clock catching up makes the future one available.
    t.store.load(&future, at(1)).unwrap();

    let big = "c99999999-9999-4999-8999-999999999999";
    write_private(&t.path_of(big), &vec![b' '; 65_537]);
    assert_eq!(
        t.store.load(big, T0).unwrap_err().code,
        ErrorCode::CheckpointSize
    );
    let listing = t.store.list(T0).unwrap();
    assert_eq!(
        listing
            .entries
            .iter()
            .find(|e| e.checkpoint == big)
            .unwrap()
            .status,
        Status::Incompatible
    );

    let v9 = "c88888888-8888-4888-8888-888888888888";
    write_private(&t.path_of(v9), b"{\"format\":9}");
    assert_eq!(
        t.store.load(v9, T0).unwrap_err().code,
        ErrorCode::CheckpointFormat
    );
}

#[test]
fn inspect_counts_without_content_and_load_drops_expired_text() {
    let cfg = StoreConfig {
        terminal_text: TextMode::Plain,
        ..Default::default()
    };
    let mut t = TestStore::with_config(cfg);
    let mut cp = state(12, T0, true);
    // p0's text was already expired on disk; p1 has none.
    cp.panes[0].text = Text::Expired;
    cp.panes[1].text = Text::Omitted;
    let id = t.plant_state(1, &mut cp);

    let inspection = t.store.inspect(&id, at(HOUR_MS)).unwrap();
    assert_eq!(
        (
            inspection.sessions,
            inspection.windows,
            inspection.panes,
            inspection.text_panes,
            inspection.expired_text_panes
        ),
        (1, 2, 12, 10, 1)
    );
    assert_eq!(inspection.generation, 1);
    assert_eq!(inspection.format, Format::CURRENT);

    // After the stored expiry (one day), every text is expired; topology still loads.
    let later = t.store.inspect(&id, at(DAY_MS)).unwrap();
    assert_eq!((later.text_panes, later.expired_text_panes), (0, 11));
    let loaded = t.store.load(&id, at(DAY_MS)).unwrap();
    assert_eq!(loaded.checkpoint.panes.len(), 12);
    assert!(loaded
        .checkpoint
        .panes
        .iter()
        .all(|p| !matches!(p.text, Text::Plain(_))));

    // At the capture instant the text is available (the backward-clock rule is
    // covered by the unit tests of `text_available`).
    let at_capture = t.store.load(&id, T0).unwrap();
    assert!(matches!(
        at_capture.checkpoint.panes[2].text,
        Text::Plain(_)
    ));

    // Current config `.off` forbids restoring text.
    t.store.set_config(StoreConfig {
        terminal_text: TextMode::Off,
        ..cfg
    });
    let off = t.store.inspect(&id, at(HOUR_MS)).unwrap();
    assert_eq!((off.text_panes, off.expired_text_panes), (0, 11));
    // A shorter current text age expires it earlier than the stored expiry.
    t.store.set_config(StoreConfig {
        text_max_age_seconds: 60,
        ..cfg
    });
    let short = t.store.inspect(&id, Timestamp(T0.0 + 61_000)).unwrap();
    assert_eq!(short.text_panes, 0);
}

#[test]
fn socket_and_uid_are_checked_only_with_an_identity() {
    let t = TestStore::new();
    let mut cp = state(1, T0, false);
    let id = t.plant_state(1, &mut cp);
    // Offline view without identity: valid.
    let mut offline =
        vx_store::Store::open_dir(&t.dir(), uid(), None, StoreConfig::default()).unwrap();
    assert_eq!(offline.list(T0).unwrap().entries[0].status, Status::Valid);
    // With another socket: corrupt (wrong store).
    let mut other = vx_store::Store::open_dir(
        &t.dir(),
        uid(),
        Some("/elsewhere/vx.sock".into()),
        StoreConfig::default(),
    )
    .unwrap();
    assert_eq!(other.list(T0).unwrap().entries[0].status, Status::Corrupt);
    assert_eq!(
        other.load(&id, T0).unwrap_err().code,
        ErrorCode::CheckpointCorrupt
    );
}

#[test]
fn a_file_changed_in_place_is_read_again() {
    let mut t = TestStore::new();
    let published = t.store.publish(T0, &mut state(2, T0, false)).unwrap();
    assert_eq!(t.store.list(T0).unwrap().entries[0].status, Status::Valid);
    let path = t.path_of(&published.checkpoint);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(t.store.list(T0).unwrap().entries[0].status, Status::Corrupt);
}

#[test]
fn summary_counts_for_doctor() {
    let mut t = TestStore::new();
    t.plant(1, T0);
    t.plant(2, at(-8 * DAY_MS));
    write_private(&t.path_of("c33333333-3333-4333-8333-333333333333"), b"x");
    let summary = t.store.summary(T0).unwrap();
    assert_eq!(
        (
            summary.valid,
            summary.expired,
            summary.corrupt,
            summary.unsafe_entries
        ),
        (1, 1, 1, 0)
    );
    assert!(summary.bytes > 1);
}
