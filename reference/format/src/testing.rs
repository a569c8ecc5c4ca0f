//! Test fixtures shared by every crate of the kit (feature `testing`): the RFC's own
//! example checkpoints, one per durable format, taken from the corpus files that hold
//! the RFC's payloads byte for byte (`corpus/checkpoints/rfc/`).

use crate::{read, wrap_envelope, Checkpoint, Format, ReadContext};

/// The RFC's example payload of `format`, before wrapping (RFC §4's format-1 example,
/// §4.1's format-2 one, §4.2's format-3 one).
pub fn rfc_example_payload(format: Format) -> &'static str {
    let text = match format {
        Format::V1 => include_str!("../../../corpus/checkpoints/rfc/payload-format1.json"),
        Format::V2 => include_str!("../../../corpus/checkpoints/rfc/payload-format2.json"),
        Format::V3 => include_str!("../../../corpus/checkpoints/rfc/payload-format3.json"),
    };
    text.trim_end_matches('\n')
}

/// The example wrapped as the RFC's script wraps it: a whole checkpoint file.
pub fn rfc_example_file(format: Format) -> Vec<u8> {
    wrap_envelope(format.number(), rfc_example_payload(format))
}

/// The RFC's example checkpoint of `format`, decoded by the strict reader.
pub fn rfc_example(format: Format) -> Checkpoint {
    let file = rfc_example_file(format);
    match read(&file, &ReadContext::default()) {
        Ok(decoded) => decoded.checkpoint,
        Err(e) => panic!(
            "the RFC's format-{} example must decode: {e}",
            format.number()
        ),
    }
}

/// `cp` with every plain text in the encoded form a daemon's capture makes
/// ([`crate::Text::Encoded`]); it writes the same bytes.
pub fn with_encoded_text(cp: &Checkpoint) -> Checkpoint {
    let mut cp = cp.clone();
    for pane in &mut cp.panes {
        if let crate::Text::Plain(t) = &pane.text {
            pane.text = crate::Text::Encoded(crate::EncodedText {
                saved_at: t.saved_at,
                expires_at: t.expires_at,
                rows: std::sync::Arc::new(
                    crate::EncodedRows::new(&t.screen, &t.history)
                        .expect("plain text rows hold no control character"),
                ),
            });
        }
    }
    cp
}

/// The check behind every `fuzz_dictionary_is_current` test: the committed libFuzzer
/// dictionary at `path` must be exactly `want` (what the kit's tables give), and
/// `VX_UPDATE_FUZZ_DICTS=1` rewrites it first. A mismatch names the file and
/// `regenerate`, the command that rewrites it.
pub fn assert_fuzz_dictionary(path: &std::path::Path, want: &str, regenerate: &str) {
    if std::env::var_os("VX_UPDATE_FUZZ_DICTS").is_some() {
        if let Err(e) = std::fs::write(path, want) {
            panic!("writing {}: {e}", path.display());
        }
    }
    let got = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        got == want,
        "{} is not what the tables give: VX_UPDATE_FUZZ_DICTS=1 {regenerate}",
        path.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_decodes_in_its_format_and_writes_back_byte_for_byte() {
        for format in Format::ALL {
            let cp = rfc_example(format);
            assert_eq!(cp.minimal_format(), format);
            assert_eq!(crate::write(&cp, format).unwrap(), rfc_example_file(format));
        }
    }
}
