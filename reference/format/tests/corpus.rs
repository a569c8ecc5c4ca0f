//! Every fixture of `corpus/checkpoints/expected.jsonl` gets exactly its verdict.

use std::path::{Path, PathBuf};

use vx_format::{read, ReadContext};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/checkpoints")
}

#[test]
fn every_corpus_verdict_matches() {
    let dir = corpus_dir();
    let expected = std::fs::read_to_string(dir.join("expected.jsonl")).expect("expected.jsonl");
    let mut failures = Vec::new();
    let mut count = 0;
    for line in expected.lines() {
        let row: serde_json::Value = serde_json::from_str(line).expect("expected.jsonl row");
        let file = row["file"].as_str().unwrap();
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let name = Path::new(file).file_name().unwrap().to_str().unwrap();
        let ctx = ReadContext {
            file_name: Some(name),
            socket: row.get("socket").and_then(|s| s.as_str()),
            uid: row.get("uid").and_then(|u| u.as_u64()),
            max_bytes: row
                .get("max_bytes")
                .and_then(|m| m.as_u64())
                .unwrap_or(16_777_216),
        };
        let (result, rule) = match read(&bytes, &ctx) {
            Ok(_) => ("valid".to_string(), None),
            Err(e) => (e.code().as_str().to_string(), Some(e.rule.id().to_string())),
        };
        let want_rule = row["rule"].as_str().map(str::to_string);
        if result != row["result"].as_str().unwrap() || rule != want_rule {
            failures.push(format!(
                "{}: got {result} {rule:?}, want {} {want_rule:?}",
                row["case"], row["result"]
            ));
        }
        count += 1;
    }
    assert!(count >= 150, "corpus has only {count} cases");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_names_every_rule_of_the_reader() {
    let expected = std::fs::read_to_string(corpus_dir().join("expected.jsonl")).unwrap();
    let missing: Vec<&str> = vx_format::Rule::ALL
        .iter()
        .map(|r| r.id())
        .filter(|id| !expected.contains(&format!("\"rule\":\"{id}\"")))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a corpus case: {missing:?}"
    );
}

/// The checkpoint readers' libFuzzer dictionary (`corpus/fuzz/checkpoint.dict`),
/// generated from the kit's own tables so it cannot drift: JSON's tokens, the limits,
/// the format numbers, every key and short string the canonical writer puts in the
/// RFC's examples and in generated states (plain, and escaped as they stand inside
/// the envelope's payload string), and every named enumeration's values.
fn checkpoint_dictionary() -> String {
    use std::collections::BTreeSet;
    use vx_format::limits::MAX_SAFE_INTEGER;
    use vx_format::{testing::rfc_example, write_payload, Anchor, Border, Format};

    fn walk(v: &serde_json::Value, keys: &mut BTreeSet<String>, strings: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    keys.insert(k.clone());
                    walk(v, keys, strings);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, keys, strings)),
            serde_json::Value::String(s) if s.len() <= 40 => {
                strings.insert(s.clone());
            }
            _ => {}
        }
    }
    let (mut keys, mut strings) = (BTreeSet::new(), BTreeSet::new());
    let mut payloads: Vec<String> = Format::ALL
        .iter()
        .map(|f| write_payload(&rfc_example(*f), *f).unwrap())
        .collect();
    for seed in 0..64u32 {
        let bytes: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed * 40_503) >> 13) as u8)
            .collect();
        if let Ok((format, state)) =
            vx_format::generate::any(&mut arbitrary::Unstructured::new(&bytes))
        {
            let payload = write_payload(&state, format).unwrap();
            let value: serde_json::Value = serde_json::from_str(&payload).unwrap();
            walk(&value, &mut keys, &mut BTreeSet::new());
            payloads.push(payload);
        }
    }
    for payload in &payloads[..Format::ALL.len()] {
        walk(
            &serde_json::from_str(payload).unwrap(),
            &mut keys,
            &mut strings,
        );
    }
    strings.extend(Anchor::ALL.iter().map(|a| a.as_str().to_owned()));
    strings.extend(Border::ALL.iter().map(|b| b.as_str().to_owned()));
    // libFuzzer's entry syntax: `\\`, `\"` and `\xHH` for anything not printable ASCII.
    let escape = |s: &str| -> String {
        s.bytes()
            .map(|b| match b {
                b'\\' => "\\\\".to_owned(),
                b'"' => "\\\"".to_owned(),
                b' '..=b'~' => char::from(b).to_string(),
                _ => format!("\\x{b:02X}"),
            })
            .collect()
    };
    let mut out = String::from(
        "# libFuzzer dictionary for the checkpoint readers, generated from the kit's tables\n\
         # by reference/format/tests/corpus.rs (VX_UPDATE_FUZZ_DICTS=1 cargo test -p vx-format\n\
         # --test corpus fuzz_dictionary). Do not edit by hand.\n",
    );
    let mut tokens: Vec<String> = [
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "\"",
        "\\\"",
        "\\\\",
        "\\u",
        "\\ud800",
        "\\udc00",
        "\\ud83d\\ude42",
        "true",
        "false",
        "null",
        "-0",
        "1e0",
        "1.0",
        "\u{feff}",
    ]
    .iter()
    .map(|t| t.to_string())
    .collect();
    for n in [MAX_SAFE_INTEGER, MAX_SAFE_INTEGER + 1] {
        tokens.push(n.to_string());
        tokens.push(format!("-{n}"));
    }
    for f in Format::ALL {
        tokens.push(format!("{{\"format\":{},\"payload\":\"", f.number()));
    }
    tokens.push("\",\"sha256\":\"".into());
    for k in &keys {
        tokens.push(format!("\"{k}\":"));
        tokens.push(format!("\\\"{k}\\\":"));
    }
    for s in &strings {
        tokens.push(format!("\"{s}\""));
    }
    let mut seen = BTreeSet::new();
    for t in tokens {
        if seen.insert(t.clone()) {
            out.push_str(&format!("\"{}\"\n", escape(&t)));
        }
    }
    out
}

#[test]
fn fuzz_dictionary_is_current() {
    let path = corpus_dir().join("../fuzz/checkpoint.dict");
    let want = checkpoint_dictionary();
    vx_format::testing::assert_fuzz_dictionary(
        &path,
        &want,
        "cargo test -p vx-format --test corpus fuzz_dictionary",
    );
}
