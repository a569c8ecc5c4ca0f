//! `Text::Encoded` (rows checked and encoded once, `EncodedRows`) is written as
//! exactly the bytes of the equivalent `Text::Plain`, gives its rows back, and is
//! refused where the plain rows would be.

use arbitrary::Unstructured;
use proptest::prelude::*;
use std::sync::Arc;
use vx_format::{
    generate, read, validate, write, write_payload, Checkpoint, EncodedRows, EncodedText, Format,
    PlainText, ReadContext, Rule, Text, Timestamp,
};

fn encoded(cp: &Checkpoint) -> Checkpoint {
    vx_format::testing::with_encoded_text(cp)
}

fn has_text(cp: &Checkpoint) -> bool {
    cp.panes.iter().any(|p| p.text.is_plain())
}

/// Same file, same payload, and the encoded form converts back to the plain one.
fn assert_same_bytes(cp: &Checkpoint, format: Format) {
    let fast = encoded(cp);
    assert_eq!(write(&fast, format).unwrap(), write(cp, format).unwrap());
    assert_eq!(
        write_payload(&fast, format).unwrap(),
        write_payload(cp, format).unwrap()
    );
    for (a, b) in fast.panes.iter().zip(&cp.panes) {
        assert_eq!(a.text.to_plain(), b.text);
        assert_eq!(a.text.is_plain(), b.text.is_plain());
    }
}

/// The RFC's example with plain text on its first pane: rows with the characters
/// both encodings escape.
fn example_with_text(format: Format) -> Checkpoint {
    let mut cp = vx_format::testing::rfc_example(format);
    let pane = &mut cp.panes[0];
    pane.text = Text::Plain(PlainText {
        saved_at: cp.captured_at,
        expires_at: Timestamp(cp.captured_at.0 + 60_000),
        screen: (0..pane.rows)
            .map(|i| format!("row {i}: \"quoted\" C:\\dir é"))
            .collect(),
        history: vec!["$ ls".into(), String::new(), "\\\"".into()],
    });
    cp
}

#[test]
fn rfc_examples_write_the_same_bytes_encoded() {
    for format in Format::ALL {
        assert_same_bytes(&vx_format::testing::rfc_example(format), format);
        let cp = example_with_text(format);
        assert!(has_text(&cp));
        assert_same_bytes(&cp, format);
    }
}

#[test]
fn generated_states_write_the_same_bytes_encoded() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/checkpoints");
    let mut with_text = 0;
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            let Ok((format, state)) = generate::any(&mut Unstructured::new(&data)) else {
                continue;
            };
            assert_same_bytes(&state, format);
            // What the writer wrote from the encoded form reads back as the plain state.
            let bytes = write(&encoded(&state), format).unwrap();
            let name = state.file_name();
            let ctx = ReadContext {
                file_name: Some(&name),
                ..ReadContext::default()
            };
            assert_eq!(read(&bytes, &ctx).unwrap().checkpoint, state);
            with_text += usize::from(has_text(&state));
        }
    }
    assert!(with_text >= 20, "only {with_text} states with text");
}

#[test]
fn control_rows_are_refused_as_the_validator_refuses_them() {
    let cp = example_with_text(Format::CURRENT);
    let pane = cp
        .panes
        .iter()
        .position(|p| p.text.is_plain())
        .expect("a pane with text");
    for (bad, key) in [
        ("a\u{1b}b", "screen"),
        ("\u{7f}", "history"),
        ("\u{85}", "history"),
    ] {
        let Text::Plain(t) = &cp.panes[pane].text else {
            unreachable!()
        };
        let mut t = t.clone();
        let rows = if key == "screen" {
            &mut t.screen
        } else {
            &mut t.history
        };
        rows.push(bad.into());
        let index = rows.len() - 1;
        let e = EncodedRows::new(&t.screen, &t.history).unwrap_err();
        assert_eq!(e.rule, Rule::TextControl);
        assert_eq!(e.path_string(), format!("$.text.{key}[{index}]"));
        if key == "history" {
            // The validator's verdict on the same rows, under the pane.
            let mut plain = cp.clone();
            plain.panes[pane].text = Text::Plain(t.clone());
            let v = validate(&plain, Format::CURRENT).unwrap_err();
            assert_eq!(v.rule, Rule::TextControl);
            assert!(v.path_string().ends_with(&e.path_string()[1..]));
        }
    }
}

#[test]
fn the_writer_checks_the_encoded_screen_against_the_panes_rows() {
    let cp = example_with_text(Format::CURRENT);
    let mut fast = encoded(&cp);
    let pane = fast.panes.iter().position(|p| p.text.is_plain()).unwrap();
    fast.panes[pane].rows += 1;
    let e = write(&fast, Format::CURRENT).unwrap_err();
    assert_eq!(e.rule, Rule::TextRows);
    // And its times, as for plain text.
    let mut fast = encoded(&cp);
    if let Text::Encoded(t) = &mut fast.panes[pane].text {
        t.expires_at = Timestamp(t.saved_at.0 - 1);
    }
    assert_eq!(
        write(&fast, Format::CURRENT).unwrap_err().rule,
        Rule::TextTimes
    );
}

fn row() -> impl Strategy<Value = String> {
    // Printable text with the characters JSON escapes (`"`, `\`) and multi-byte ones.
    prop::collection::vec(
        prop_oneof![
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("\\\"".to_string()),
            Just("é".to_string()),
            Just("\u{1f600}".to_string()),
            "[ -~]{0,12}",
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn rows_come_back_as_they_were_given(
        screen in prop::collection::vec(row(), 1..5),
        history in prop::collection::vec(row(), 0..5),
    ) {
        let rows = EncodedRows::new(&screen, &history).unwrap();
        prop_assert_eq!(rows.screen_rows(), screen.len());
        let (s, h) = rows.rows();
        prop_assert_eq!(&s, &screen);
        prop_assert_eq!(&h, &history);
        let plain = PlainText {
            saved_at: Timestamp(1_700_000_000_000),
            expires_at: Timestamp(1_700_000_001_000),
            screen,
            history,
        };
        let text = Text::Encoded(EncodedText {
            saved_at: plain.saved_at,
            expires_at: plain.expires_at,
            rows: Arc::new(rows),
        });
        prop_assert_eq!(text.to_plain(), Text::Plain(plain));
    }
}

/// A payload of megabytes (hashed in chunks, with shared rows in between): the file
/// is the same, plain or encoded, and the two-pass writer's.
#[test]
fn large_payloads_write_the_same_bytes() {
    for format in Format::ALL {
        let mut cp = example_with_text(format);
        for pane in &mut cp.panes {
            let rows = pane.rows;
            pane.text = Text::Plain(PlainText {
                saved_at: cp.captured_at,
                expires_at: Timestamp(cp.captured_at.0 + 60_000),
                screen: (0..rows).map(|i| format!("screen {i} \"x\"")).collect(),
                history: (0..40_000)
                    .map(|i| format!("{i:>6} history row with \"quotes\", \\ and é"))
                    .collect(),
            });
        }
        let plain = write(&cp, format).unwrap();
        assert!(plain.len() > 2 << 20, "{} bytes", plain.len());
        let two_pass =
            vx_format::wrap_envelope(format.number(), &write_payload(&cp, format).unwrap());
        assert_eq!(plain, two_pass);
        assert_eq!(write(&encoded(&cp), format).unwrap(), plain);
        // Every other pane encoded: chunks and shared rows interleave.
        let mut mixed = encoded(&cp);
        for (i, pane) in mixed.panes.iter_mut().enumerate() {
            if i % 2 == 1 {
                pane.text = pane.text.to_plain();
            }
        }
        assert_eq!(write(&mixed, format).unwrap(), plain);
    }
}
