//! `write_cached` (records' bytes kept between writes in a `RecordCache`) writes
//! exactly what `write` writes, whatever came through the cache before.

use arbitrary::Unstructured;
use proptest::prelude::*;
use vx_format::{
    generate, write, write_cached, Checkpoint, Exit, FloatSpec, Format, PaneState, PreviousState,
    RecordCache, Tag, Text,
};

/// Writes `cp` through `cache` and checks the bytes against the plain writer.
fn assert_cached_writes_same(cache: &mut RecordCache, cp: &Checkpoint, format: Format) {
    let plain = write(cp, format).unwrap();
    let cached = write_cached(cp, format, cache).unwrap();
    assert!(plain == cached, "cached bytes differ from write's");
}

fn corpus_states() -> Vec<(Format, Checkpoint)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/checkpoints");
    let mut states = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(state) =
                generate::any(&mut Unstructured::new(&std::fs::read(&path).unwrap()))
            {
                states.push(state);
            }
        }
    }
    states
}

#[test]
fn corpus_states_in_sequence_write_the_same_bytes() {
    let states = corpus_states();
    assert!(states.len() >= 50, "only {} states", states.len());
    let mut cache = RecordCache::new();
    for (format, state) in &states {
        // Once after whatever the previous state left, once with every record kept.
        assert_cached_writes_same(&mut cache, state, *format);
        assert_cached_writes_same(&mut cache, state, *format);
        let encoded = vx_format::testing::with_encoded_text(state);
        assert_cached_writes_same(&mut cache, &encoded, *format);
    }
    // Back over them in reverse: ids seen before, with other content.
    for (format, state) in states.iter().rev() {
        assert_cached_writes_same(&mut cache, state, *format);
    }
}

/// One edit of every field a record's bytes depend on, each written after the
/// unedited state went through the cache: a field the cache does not compare
/// would leave the old bytes in the file.
#[test]
fn every_field_edit_is_written() {
    type Edit = fn(&mut Checkpoint);
    let edits: &[(&str, Edit)] = &[
        ("checkpoint id", |cp| {
            cp.checkpoint = "c11111111-2222-4333-8444-555555555555".into()
        }),
        ("generation", |cp| cp.generation += 1),
        ("socket", |cp| cp.socket = "/tmp/other.sock".into()),
        ("uid", |cp| cp.uid += 1),
        ("captured_at", |cp| cp.captured_at.0 += 1),
        ("session name", |cp| cp.sessions[0].name = "rest".into()),
        ("window name", |cp| cp.windows[0].name = "tools".into()),
        ("window revision", |cp| cp.windows[0].revision += 1),
        ("split ratio", |cp| {
            if let vx_format::Node::Split { ratio, .. } = &mut cp.windows[0].nodes[0] {
                *ratio = Some(5000);
            }
        }),
        ("split axis", |cp| {
            if let vx_format::Node::Split { axis, .. } = &mut cp.windows[0].nodes[2] {
                *axis = vx_format::Axis::Cols;
            }
        }),
        ("pane cols", |cp| cp.panes[1].cols += 1),
        ("pane rows", |cp| cp.panes[2].rows += 1),
        ("pane state", |cp| {
            cp.panes[1].state = PaneState::Exited {
                exit: Some(Exit::Code(3)),
            }
        }),
        ("pane exit", |cp| {
            cp.panes[1].state = PaneState::Exited {
                exit: Some(Exit::Signal("SIGTERM".into())),
            }
        }),
        ("previous state", |cp| {
            cp.panes[1].previous_state = Some(PreviousState::Interrupted)
        }),
        ("previous state dropped", |cp| {
            cp.panes[1].previous_state = None
        }),
        ("float z", |cp| cp.panes[3].float.as_mut().unwrap().z = 2),
        ("float title", |cp| {
            cp.panes[3].float.as_mut().unwrap().title = Some("notes".into())
        }),
        ("tag value", |cp| cp.panes[0].tags[0].value = "other".into()),
        ("tag added", |cp| {
            cp.panes[2].tags.push(Tag {
                key: "role".into(),
                value: "x".into(),
            })
        }),
        ("tags dropped", |cp| cp.panes[1].tags.clear()),
        ("text", |cp| cp.panes[0].text = Text::Expired),
    ];
    let mut base = vx_format::testing::rfc_example(Format::V3);
    base.panes[1].state = PaneState::Exited {
        exit: Some(Exit::Code(0)),
    };
    base.panes[1].previous_state = Some(PreviousState::Exited);
    let mut float = base.panes[2].clone();
    float.id = 3;
    float.float = Some(FloatSpec {
        z: 1,
        ..FloatSpec::default()
    });
    base.panes.push(float);
    let base_bytes = write(&base, Format::V3).unwrap();
    for (what, edit) in edits {
        let mut cache = RecordCache::new();
        assert_cached_writes_same(&mut cache, &base, Format::V3);
        let mut edited = base.clone();
        edit(&mut edited);
        let bytes = write(&edited, Format::V3).unwrap();
        assert!(bytes != base_bytes, "{what}: the edit changes nothing");
        let cached = write_cached(&edited, Format::V3, &mut cache).unwrap();
        assert!(cached == bytes, "{what}: stale bytes reused");
        // And back.
        assert_cached_writes_same(&mut cache, &base, Format::V3);
    }
}

#[test]
fn a_refused_state_leaves_the_cache_as_it_was() {
    let base = vx_format::testing::rfc_example(Format::V3);
    let mut cache = RecordCache::new();
    assert_cached_writes_same(&mut cache, &base, Format::V3);
    let kept = cache.len();
    assert_eq!(kept, 1 + 1 + 3);
    let mut bad = base.clone();
    bad.generation = 0;
    assert!(write_cached(&bad, Format::V3, &mut cache).is_err());
    // Format 1 cannot hold the ratio or the tags.
    assert!(write_cached(&base, Format::V1, &mut cache).is_err());
    assert_eq!(cache.len(), kept);
    assert_cached_writes_same(&mut cache, &base, Format::V3);
}

#[test]
fn records_leave_the_cache_with_their_state() {
    let mut cache = RecordCache::new();
    let base = vx_format::testing::rfc_example(Format::V2);
    assert_cached_writes_same(&mut cache, &base, Format::V2);
    let records = base.sessions.len() + base.windows.len() + base.panes.len();
    assert_eq!(cache.len(), records);
    let mut empty = base.clone();
    empty.sessions.clear();
    empty.windows.clear();
    empty.panes.clear();
    assert_cached_writes_same(&mut cache, &empty, Format::V2);
    assert!(cache.is_empty());
    // Another format starts afresh.
    assert_cached_writes_same(&mut cache, &base, Format::V2);
    let v1 = vx_format::testing::rfc_example(Format::V1);
    assert_cached_writes_same(&mut cache, &v1, Format::V1);
    assert_eq!(cache.len(), 1 + 1 + v1.panes.len());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random states in sequence through one cache (their ids mostly start at 0,
    /// so records meet records of the same id with other content).
    #[test]
    fn random_sequences_write_the_same_bytes(
        seeds in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 16..600), 1..8)
    ) {
        let mut cache = RecordCache::new();
        for seed in &seeds {
            let Ok((format, state)) = generate::any(&mut Unstructured::new(seed)) else {
                continue;
            };
            let plain = write(&state, format).unwrap();
            prop_assert!(write_cached(&state, format, &mut cache).unwrap() == plain);
            prop_assert!(write_cached(&state, format, &mut cache).unwrap() == plain);
        }
    }
}
