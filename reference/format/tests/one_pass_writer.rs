//! `write` encodes the payload straight into the envelope in one pass; its bytes must
//! be exactly the two-pass encoding (`write_payload`, then `wrap_envelope`, the RFC
//! script's wrapping) on the RFC examples, every corpus checkpoint the reader
//! accepts, and random states.

use arbitrary::Unstructured;
use proptest::prelude::*;
use std::path::Path;
use vx_format::{generate, read, wrap_envelope, write, write_payload, Format, ReadContext};

fn two_pass(cp: &vx_format::Checkpoint, format: Format) -> Vec<u8> {
    wrap_envelope(format.number(), &write_payload(cp, format).unwrap())
}

#[test]
fn rfc_examples_encode_as_the_two_pass_writer() {
    for format in Format::ALL {
        let cp = vx_format::testing::rfc_example(format);
        assert_eq!(write(&cp, format).unwrap(), two_pass(&cp, format));
        assert_eq!(
            write(&cp, format).unwrap(),
            vx_format::testing::rfc_example_file(format)
        );
    }
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Every file under `corpus/checkpoints/`.
fn corpus_files() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/checkpoints");
    let mut paths = Vec::new();
    files(&root, &mut paths);
    paths
}

#[test]
fn corpus_checkpoints_encode_as_the_two_pass_writer() {
    let mut compared = 0;
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        let Ok(decoded) = read(&bytes, &ReadContext::default()) else {
            continue;
        };
        for format in Format::ALL {
            if vx_format::validate(&decoded.checkpoint, format).is_ok() {
                let one = write(&decoded.checkpoint, format).unwrap();
                assert_eq!(one, two_pass(&decoded.checkpoint, format), "{path:?}");
                compared += 1;
            }
        }
    }
    assert!(compared >= 10, "only {compared} corpus encodings compared");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_states_encode_as_the_two_pass_writer(
        bytes in prop::collection::vec(any::<u8>(), 0..4096),
        which in 0usize..3,
    ) {
        let format = Format::ALL[which];
        let cp = generate::checkpoint(&mut Unstructured::new(&bytes), format).unwrap();
        prop_assert_eq!(write(&cp, format).unwrap(), two_pass(&cp, format));
    }
}

/// The `format_roundtrip` fuzz target's body on its seeds (`corpus/checkpoints/`, as
/// generator input), with the one-pass bytes compared to the two-pass ones.
#[test]
fn format_roundtrip_seeds_round_trip_and_encode_as_the_two_pass_writer() {
    let mut generated = 0;
    for path in corpus_files() {
        let data = std::fs::read(&path).unwrap();
        let Ok((format, state)) = generate::any(&mut Unstructured::new(&data)) else {
            continue;
        };
        let bytes = write(&state, format).expect("generated states are valid");
        assert_eq!(bytes, two_pass(&state, format), "{path:?}");
        let name = state.file_name();
        let ctx = ReadContext {
            file_name: Some(&name),
            ..ReadContext::default()
        };
        let decoded = read(&bytes, &ctx).expect("writer output reads back");
        assert_eq!(decoded.format, format);
        assert_eq!(decoded.checkpoint, state, "{path:?}");
        generated += 1;
    }
    assert!(generated >= 100, "only {generated} seeds generated a state");
}
