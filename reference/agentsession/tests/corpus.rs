//! Every case of `corpus/workspace/expected.jsonl` and
//! `corpus/integrations/expected.jsonl` (written by independent Python generators)
//! gets exactly its verdict, and every rule has a case.

use std::path::{Path, PathBuf};

use vx_agentsession::check::{InputKind, Verdict};
use vx_agentsession::record;
use vx_agentsession::rules::{ArchiveRule, NativeRule, RecordRule, TemplateRule};

fn corpus(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus")
        .join(dir)
}

fn rows(dir: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(corpus(dir).join("expected.jsonl")).expect("expected.jsonl");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("expected.jsonl row"))
        .collect()
}

/// The verdict a checker gives a case, padding it first when the row says so.
fn verdict_of(dir: &str, row: &serde_json::Value) -> Verdict {
    let mut bytes = std::fs::read(corpus(dir).join(row["file"].as_str().unwrap())).unwrap();
    let kind = match row["kind"].as_str().unwrap() {
        "archive" => InputKind::WorkspaceArchive,
        "template" => InputKind::IntegrationTemplate,
        "record" => {
            return match record::parse(&bytes) {
                Ok(_) => Verdict::valid(),
                Err(e) => Verdict {
                    result: e.code(),
                    rule: Some(e.rule_id()),
                    reason: Some(e.reason()),
                },
            }
        }
        other => panic!("unknown kind {other}"),
    };
    if let Some(pad_to) = row.get("pad_to").and_then(|v| v.as_u64()) {
        // The length decides before reading; then the padded bytes are read too.
        if let Some(refused) = kind.length_verdict(pad_to) {
            return refused;
        }
        let filler = if kind == InputKind::WorkspaceArchive {
            b' '
        } else {
            b'\n'
        };
        bytes.resize(pad_to as usize, filler);
    }
    match kind.length_verdict(bytes.len() as u64) {
        Some(refused) => refused,
        None => kind.verdict(&bytes),
    }
}

fn check_all(dir: &str) -> String {
    let mut failures = Vec::new();
    let mut seen = String::new();
    for row in rows(dir) {
        let got = verdict_of(dir, &row);
        let want_result = row["result"].as_str().unwrap();
        let want_rule = row["rule"].as_str();
        if got.result != want_result || got.rule != want_rule {
            failures.push(format!(
                "{}: expected {want_result} {want_rule:?}, got {} {:?} ({:?})",
                row["case"], got.result, got.rule, got.reason
            ));
        }
        if let Some(rule) = got.rule {
            seen.push_str(rule);
            seen.push('\n');
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    seen
}

fn assert_covers(seen: &str, ids: impl IntoIterator<Item = &'static str>) {
    let missing: Vec<&str> = ids
        .into_iter()
        .filter(|id| !seen.lines().any(|l| l == *id))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a corpus case: {missing:?}"
    );
}

#[test]
fn workspace_corpus_verdicts() {
    let seen = check_all("workspace");
    assert_covers(&seen, ArchiveRule::ALL.iter().map(|r| r.id()));
    assert_covers(&seen, RecordRule::ALL.iter().map(|r| r.id()));
    assert_covers(&seen, NativeRule::ALL.iter().map(|r| r.id()));
}

#[test]
fn integrations_corpus_verdicts() {
    let seen = check_all("integrations");
    assert_covers(&seen, TemplateRule::ALL.iter().map(|r| r.id()));
}

#[test]
fn valid_archives_round_trip_through_the_canonical_writer() {
    for row in rows("workspace") {
        if row["kind"] != "archive" || row["result"] != "valid" || row.get("pad_to").is_some() {
            continue;
        }
        let bytes = std::fs::read(corpus("workspace").join(row["file"].as_str().unwrap())).unwrap();
        let decoded = vx_agentsession::archive::read(&bytes).unwrap();
        let written = vx_agentsession::archive::write(&decoded.archive);
        let again = vx_agentsession::archive::read(&written).unwrap();
        assert_eq!(again.archive, decoded.archive, "{}", row["case"]);
        assert_eq!(
            vx_agentsession::archive::write(&again.archive),
            written,
            "{}",
            row["case"]
        );
    }
}
