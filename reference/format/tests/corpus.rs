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
