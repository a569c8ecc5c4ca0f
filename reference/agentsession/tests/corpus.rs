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

/// libFuzzer's entry syntax: `\\`, `\"` and `\xHH` for anything not printable ASCII.
fn dict_entry(token: &str) -> String {
    let body: String = token
        .bytes()
        .map(|b| match b {
            b'\\' => "\\\\".to_owned(),
            b'"' => "\\\"".to_owned(),
            b' '..=b'~' => char::from(b).to_string(),
            _ => format!("\\x{b:02X}"),
        })
        .collect();
    format!("\"{body}\"\n")
}

/// The agent-session readers' dictionary (`corpus/fuzz/agent-session.dict`), from the
/// kit's own tables: JSON's tokens and the number bounds, every key the archive and
/// record writers put in the corpus's accepted cases, every TOML key and enum-like
/// value of the accepted templates, the placeholders, and the exec policy's shells
/// and runners.
fn agent_session_dictionary() -> String {
    use std::collections::BTreeSet;
    use vx_agentsession::{archive, exec_policy, limits, template};
    fn keys(v: &serde_json::Value, out: &mut BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    out.insert(format!("\"{k}\""));
                    keys(v, out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
            // Short strings: the enumerations' values (`"split"`, `"horizontal"`).
            serde_json::Value::String(s) if s.len() <= 16 => {
                out.insert(format!("\"{s}\""));
            }
            _ => {}
        }
    }
    let mut tokens: Vec<String> = ["{", "}", "[", "]", ":", ",", "\"", "\\\"", "\\u", "\\ud800"]
        .iter()
        .chain(&[
            "\\u0000", "\\n", "true", "false", "null", "0", "-1", "0.5", "0.0", "1.0",
        ])
        .chain(&[
            "1e-7",
            "0.99999999999999999999",
            "65535",
            "65536",
            "9007199254740992",
        ])
        .map(|t| t.to_string())
        .collect();
    let mut found = BTreeSet::new();
    let mut toml_tokens = BTreeSet::new();
    for dir in ["workspace", "workspace/records", "integrations"] {
        let mut files: Vec<_> = std::fs::read_dir(corpus(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            let written = match dir {
                "workspace" => archive::read(&bytes)
                    .ok()
                    .map(|d| archive::write(&d.archive)),
                "workspace/records" => record::parse(&bytes).ok().map(|r| r.encode()),
                _ => {
                    if template::parse(&bytes).is_ok() {
                        let doc: toml::Table = toml::from_str(std::str::from_utf8(&bytes).unwrap())
                            .expect("an accepted template is TOML");
                        for (k, v) in &doc {
                            match v.as_table() {
                                Some(t) => {
                                    toml_tokens.insert(format!("[{k}]"));
                                    for (k, v) in t {
                                        toml_tokens.insert(format!("{k} = "));
                                        let items = v.as_array().cloned().unwrap_or_default();
                                        for item in items.iter().chain([v]) {
                                            if let Some(s) = item.as_str().filter(|s| s.len() <= 24)
                                            {
                                                toml_tokens.insert(format!("\"{s}\""));
                                            }
                                        }
                                    }
                                }
                                None => {
                                    toml_tokens.insert(format!("{k} = "));
                                }
                            }
                        }
                    }
                    None
                }
            };
            // serde_json stops at depth 128; the deepest accepted archives are left out.
            if let Some(Ok(v)) = written.map(|w| serde_json::from_slice(&w)) {
                keys(&v, &mut found);
            }
        }
    }
    tokens.extend(found);
    tokens.extend(toml_tokens);
    for p in [
        limits::SESSION_ID_PLACEHOLDER,
        limits::PLUGIN_ROOT_PLACEHOLDER,
    ] {
        tokens.push(p.to_owned());
        tokens.push(format!("\"{p}\""));
    }
    let programs = exec_policy::SHELLS.iter().chain(exec_policy::RUNNERS);
    tokens.extend(programs.map(|p| format!("\"{p}\"")));
    tokens.push("\0".into());
    let mut seen = BTreeSet::new();
    let mut out = String::from(
        "# libFuzzer dictionary for the agent-session readers, generated from the kit's\n\
         # tables by reference/agentsession/tests/corpus.rs (VX_UPDATE_FUZZ_DICTS=1 cargo\n\
         # test -p vx-agentsession --test corpus fuzz_dictionary). Do not edit by hand.\n",
    );
    for t in tokens {
        if !t.is_empty() && seen.insert(t.clone()) {
            out.push_str(&dict_entry(&t));
        }
    }
    out
}

#[test]
fn fuzz_dictionary_is_current() {
    let path = corpus("fuzz").join("agent-session.dict");
    let want = agent_session_dictionary();
    vx_format::testing::assert_fuzz_dictionary(
        &path,
        &want,
        "cargo test -p vx-agentsession --test corpus fuzz_dictionary",
    );
}
