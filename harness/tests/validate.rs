//! `vxcert validate` end to end: the corpus through the CLI, canonical detection,
//! exit codes, and the byte limit applied before reading.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn vxcert() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vxcert"))
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/checkpoints")
}

const ID_FILE: &str = "c01234567-89ab-4cde-8fab-0123456789ab.json";

fn validate_json(extra: &[&str], file: &Path) -> (i32, Value) {
    let out = vxcert()
        .arg("validate")
        .arg("--json")
        .args(extra)
        .arg(file)
        .output()
        .unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    let value: Value = serde_json::from_str(line.trim()).unwrap_or_else(|e| panic!("{e}: {line}"));
    (out.status.code().unwrap(), value)
}

#[test]
fn every_corpus_case_through_the_cli() {
    let expected = std::fs::read_to_string(corpus().join("expected.jsonl")).unwrap();
    let mut mismatches = Vec::new();
    for line in expected.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let mut extra = Vec::new();
        if let Some(s) = row.get("socket").and_then(Value::as_str) {
            extra.extend(["--socket".to_string(), s.to_string()]);
        }
        if let Some(u) = row.get("uid").and_then(Value::as_u64) {
            extra.extend(["--uid".to_string(), u.to_string()]);
        }
        if let Some(m) = row.get("max_bytes").and_then(Value::as_u64) {
            extra.extend(["--max-bytes".to_string(), m.to_string()]);
        }
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        let file = corpus().join(row["file"].as_str().unwrap());
        let (code, got) = validate_json(&extra, &file);
        let want = row["result"].as_str().unwrap();
        let want_code = if want == "valid" { 0 } else { 1 };
        let keys: Vec<&String> = got.as_object().unwrap().keys().collect();
        if got["result"] != want || code != want_code || keys != ["file", "reason", "result"] {
            mismatches.push(format!("{}: {got} exit {code}", row["case"]));
        }
        if let Some(rule) = row["rule"].as_str() {
            let reason = got["reason"].as_str().unwrap_or_default();
            if !reason.starts_with(&format!("{rule}:")) {
                mismatches.push(format!(
                    "{}: reason {reason:?} does not name {rule}",
                    row["case"]
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn rfc_examples_are_canonical_and_reformatted_files_are_not() {
    // A format-1 payload under format 3 is what the writer emits for that state.
    for case in [
        "rfc-format1",
        "rfc-format2",
        "rfc-format3",
        "rfc-format1-read-as-3",
    ] {
        let (code, got) = validate_json(&["--canonical"], &corpus().join(case).join(ID_FILE));
        assert_eq!(code, 0, "{case}");
        assert_eq!(
            (got["result"].as_str(), got["canonical"].as_bool()),
            (Some("valid"), Some(true)),
            "{case}"
        );
    }
    for case in [
        "valid-whitespace",
        "valid-escaped-strings",
        "trailing-newline-payload-ok",
    ] {
        let (code, got) = validate_json(&["--canonical"], &corpus().join(case).join(ID_FILE));
        assert_eq!(code, 0, "{case}");
        assert_eq!(
            (got["result"].as_str(), got["canonical"].as_bool()),
            (Some("valid"), Some(false)),
            "{case}"
        );
    }
}

#[test]
fn several_files_one_line_each_and_exit_one_when_any_is_invalid() {
    let good = corpus().join("rfc-format2").join(ID_FILE);
    let bad = corpus().join("envelope-bad-checksum").join(ID_FILE);
    let out = vxcert()
        .arg("validate")
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].ends_with(": valid"), "{text}");
    assert!(
        lines[1].contains("conflict.checkpoint_corrupt: envelope.checksum"),
        "{text}"
    );
    let out = vxcert()
        .arg("validate")
        .arg(&good)
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn usage_errors_exit_two() {
    assert_eq!(
        vxcert().arg("validate").output().unwrap().status.code(),
        Some(2)
    );
    let out = vxcert()
        .args(["validate", "--uid", "minus-one", "x.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        vxcert()
            .args(["validate", "--bogus", "x.json"])
            .output()
            .unwrap()
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn missing_file_is_an_io_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let (code, got) = validate_json(&[], &dir.path().join(ID_FILE));
    assert_eq!(code, 1);
    assert_eq!(got["result"], "unavailable.recovery_io");
}

#[test]
fn over_limit_file_is_refused_on_its_length_before_reading() {
    // A 1 TiB sparse file: reading it would exhaust memory, so a verdict proves
    // the length was checked first.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(ID_FILE);
    std::fs::File::create(&path)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let (code, got) = validate_json(&[], &path);
    assert_eq!(
        (code, got["result"].as_str()),
        (1, Some("unsupported.checkpoint_size"))
    );
    let rfc = std::fs::read(corpus().join("rfc-format1").join(ID_FILE)).unwrap();
    std::fs::write(&path, &rfc).unwrap();
    let exact = rfc.len().to_string();
    let one_less = (rfc.len() - 1).to_string();
    assert_eq!(
        validate_json(&["--max-bytes", &exact], &path).1["result"],
        "valid"
    );
    assert_eq!(
        validate_json(&["--max-bytes", &one_less], &path).1["result"],
        "unsupported.checkpoint_size"
    );
}
