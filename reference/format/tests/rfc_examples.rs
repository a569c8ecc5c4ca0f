//! The RFC's three example payloads: each decodes under its own format and is
//! corrupt under a lower one, and the writer reproduces the payload byte for byte
//! and the envelope exactly as the RFC's Python script writes it.

use std::path::{Path, PathBuf};

use vx_format::{read, wrap_envelope, write, write_payload, Format, ReadContext, Rule};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/checkpoints")
}

const ID_FILE: &str = "c01234567-89ab-4cde-8fab-0123456789ab.json";

fn rfc_payload(n: u64) -> String {
    let text =
        std::fs::read_to_string(corpus().join(format!("rfc/payload-format{n}.json"))).unwrap();
    text.trim_end_matches('\n').to_string()
}

/// Bytes the RFC's script wrote (generate.py runs it verbatim).
fn python_envelope(n: u64) -> Vec<u8> {
    std::fs::read(corpus().join(format!("rfc-format{n}")).join(ID_FILE)).unwrap()
}

fn ctx() -> ReadContext<'static> {
    ReadContext {
        file_name: Some(ID_FILE),
        ..ReadContext::default()
    }
}

#[test]
fn each_example_decodes_under_its_own_format_and_writes_back_byte_for_byte() {
    for n in 1..=3 {
        let format = Format::from_number(n).unwrap();
        let file = python_envelope(n);
        let decoded = read(&file, &ctx()).unwrap_or_else(|e| panic!("format {n}: {e}"));
        assert_eq!(decoded.format, format);
        assert_eq!(
            decoded.checkpoint.minimal_format(),
            format,
            "format {n} example uses its format"
        );
        assert_eq!(
            write_payload(&decoded.checkpoint, format).unwrap(),
            rfc_payload(n)
        );
        assert_eq!(
            write(&decoded.checkpoint, format).unwrap(),
            file,
            "envelope of format {n}"
        );
        assert_eq!(wrap_envelope(n, &rfc_payload(n)), file);
    }
}

#[test]
fn each_example_is_corrupt_under_a_lower_format() {
    for n in 2..=3u64 {
        for lower in 1..n {
            let file = wrap_envelope(lower, &rfc_payload(n));
            let err = read(&file, &ctx()).unwrap_err();
            assert_eq!(
                err.code().as_str(),
                "conflict.checkpoint_corrupt",
                "{n} as {lower}"
            );
            assert_eq!(err.rule, Rule::UnknownField, "{n} as {lower}");
        }
    }
}

#[test]
fn lower_formats_read_under_higher_ones_and_write_the_same_payload() {
    for n in 1..=3u64 {
        for higher in n..=3 {
            let file = wrap_envelope(higher, &rfc_payload(n));
            let decoded = read(&file, &ctx()).unwrap();
            let format = Format::from_number(higher).unwrap();
            assert_eq!(
                write_payload(&decoded.checkpoint, format).unwrap(),
                rfc_payload(n)
            );
        }
    }
}

#[test]
fn writer_refuses_features_a_lower_format_cannot_hold() {
    let decoded = read(&python_envelope(3), &ctx()).unwrap();
    assert_eq!(
        write(&decoded.checkpoint, Format::V2).unwrap_err().rule,
        Rule::UnknownField
    );
    let decoded = read(&python_envelope(2), &ctx()).unwrap();
    assert_eq!(
        write(&decoded.checkpoint, Format::V1).unwrap_err().rule,
        Rule::UnknownField
    );
}

#[test]
fn unsupported_formats_are_incompatible_before_anything_else() {
    for n in [0u64, 4, 5, 1000] {
        let err = read(&wrap_envelope(n, "not even json"), &ctx()).unwrap_err();
        assert_eq!(err.code().as_str(), "unsupported.checkpoint_format");
        assert_eq!(err.code().list_status(), "incompatible");
    }
}

#[test]
fn over_limit_is_refused_on_length_alone() {
    // check_length needs no bytes at all: callers use fstat's size before reading.
    let err = vx_format::check_length(16_777_217, 16_777_216).unwrap_err();
    assert_eq!(err.code().as_str(), "unsupported.checkpoint_size");
    assert!(vx_format::check_length(16_777_216, 16_777_216).is_ok());
    // The hard 64 MiB ceiling wins over a larger configuration.
    assert!(vx_format::check_length(64 * 1024 * 1024 + 1, u64::MAX).is_err());
}
