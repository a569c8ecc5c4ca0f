//! Every case of `corpus/broker/expected.jsonl` (written by generate.py, independent
//! of this crate) gets its expected verdict from the pinned offline checkers, and
//! every corpus input passes the fuzz targets' invariants.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/broker")
}

fn expected() -> Vec<Value> {
    let text = std::fs::read_to_string(corpus().join("expected.jsonl")).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn vxbroker(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vxbroker"))
        .args(args)
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_kind(kind: &str) -> Vec<Value> {
    expected()
        .into_iter()
        .filter(|c| c["kind"] == kind)
        .collect()
}

#[test]
fn the_corpus_has_every_kind() {
    for kind in ["key", "resume", "sidecar", "frame"] {
        assert!(of_kind(kind).len() >= 20, "{kind}");
    }
}

#[test]
fn key_cases() {
    let mut by_new: BTreeMap<bool, Vec<(Value, String)>> = BTreeMap::new();
    for case in of_kind("key") {
        let text = std::fs::read_to_string(corpus().join(case["file"].as_str().unwrap())).unwrap();
        by_new
            .entry(case["new"].as_bool().unwrap())
            .or_default()
            .push((case, text));
    }
    for (new, cases) in by_new {
        let mut args = vec!["key", "check", "--json"];
        if new {
            args.push("--new");
        }
        args.extend(cases.iter().map(|(_, k)| k.as_str()));
        let out = vxbroker(&args);
        let got = lines(&out);
        assert_eq!(got.len(), cases.len());
        let all_valid = cases.iter().all(|(c, _)| c["result"] == "valid");
        assert_eq!(out.status.code(), Some(i32::from(!all_valid)));
        for ((case, text), line) in cases.iter().zip(&got) {
            let name = &case["case"];
            assert_eq!(line["key"].as_str(), Some(text.as_str()), "{name}");
            assert_eq!(line["result"], case["result"], "{name}");
            assert_eq!(line["rule"], case["rule"], "{name}");
            assert_eq!(line.get("physical_key"), case.get("physical_key"), "{name}");
            vx_broker::fuzzing::broker_key(text.as_bytes());
        }
    }
}

#[test]
fn resume_cases() {
    for case in of_kind("resume") {
        let name = &case["case"];
        let text = std::fs::read_to_string(corpus().join(case["file"].as_str().unwrap())).unwrap();
        vx_broker::fuzzing::broker_resume_plan(text.as_bytes());
        let words: Vec<&str> = text.split_whitespace().collect();
        let flags = ["--have", "--gen", "--total", "--ring-len", "--master-gen"];
        let mut args = vec!["resume-plan", "--json"];
        for (flag, word) in flags.iter().zip(&words) {
            if *word != "-" {
                args.extend([*flag, *word]);
            }
        }
        let out = vxbroker(&args);
        let got = lines(&out);
        assert_eq!(got.len(), 1, "{name}");
        if let Some(plan) = case.get("plan") {
            assert_eq!(out.status.code(), Some(0), "{name}");
            assert_eq!(&got[0]["plan"], plan, "{name}");
            assert_eq!(got[0].get("from"), case.get("from"), "{name}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{name}");
            assert_eq!(got[0]["error"]["code"], case["result"], "{name}");
            assert_eq!(got[0]["error"]["rule"], case["rule"], "{name}");
        }
    }
}

#[test]
fn sidecar_cases() {
    let cases = of_kind("sidecar");
    let paths: Vec<String> = cases
        .iter()
        .map(|c| {
            corpus()
                .join(c["file"].as_str().unwrap())
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut args = vec!["sidecar", "check", "--json"];
    args.extend(paths.iter().map(String::as_str));
    let out = vxbroker(&args);
    assert_eq!(out.status.code(), Some(1));
    let got = lines(&out);
    assert_eq!(got.len(), cases.len());
    for ((case, path), line) in cases.iter().zip(&paths).zip(&got) {
        let name = &case["case"];
        assert_eq!(line["file"].as_str(), Some(path.as_str()), "{name}");
        assert_eq!(line["result"], case["result"], "{name}");
        assert_eq!(line["rule"], case["rule"], "{name}");
        let bytes = std::fs::read(path).unwrap();
        vx_broker::fuzzing::broker_alias_sidecar(&bytes);
        vx_broker::fuzzing::broker_owner_file(&bytes);
    }
}

#[test]
fn frame_cases() {
    let cases = of_kind("frame");
    assert!(cases.len() >= 20);
    for case in cases {
        let name = &case["case"];
        let bytes = std::fs::read(corpus().join(case["file"].as_str().unwrap())).unwrap();
        vx_broker::fuzzing::broker_frames(&bytes);
        let text = std::str::from_utf8(&bytes).unwrap();
        match vx_broker::frames::decode_client(text) {
            Ok(_) => assert_eq!(case["result"], "valid", "{name}"),
            Err(e) => {
                assert_eq!(case["result"].as_str(), Some(e.code.as_str()), "{name}");
                assert_eq!(case["rule"].as_str(), Some(e.rule.id()), "{name}");
            }
        }
    }
}

/// The broker readers' dictionary (`corpus/broker/broker.dict`), from the kit's own
/// tables: key syntax with every seed engine and the id forms, the limits, JSON's
/// tokens, and every key and short value the sidecar, owner-file and client-frame
/// writers put in the corpus's accepted cases.
fn broker_dictionary() -> String {
    use std::collections::BTreeSet;
    use vx_broker::key::{EngineTable, PLACEHOLDER_PREFIX};
    use vx_broker::limits::{MAX_CLIENT_TEXT_BYTES, MAX_KEY_BYTES, MAX_SIDECAR_BYTES};
    use vx_broker::{alias, frames, owner};
    fn walk(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    out.insert(format!("\"{k}\""));
                    walk(v, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            Value::String(s) if s.len() <= 40 => {
                out.insert(format!("\"{s}\""));
            }
            _ => {}
        }
    }
    let mut tokens: Vec<String> = [":", "@", "/", "..", "-", " ", "0", "{", "}", "[", "]"]
        .iter()
        .chain(&[
            ",", "\"", "\\u0040", "\\ud800", "1.5", "1e3", "-1", "null", "true",
        ])
        .chain(&["\u{feff}", "ses_", "9007199254740991", "9007199254740992"])
        .map(|t| t.to_string())
        .collect();
    tokens.push(u64::MAX.to_string());
    for n in [
        MAX_KEY_BYTES as u64,
        MAX_SIDECAR_BYTES,
        MAX_CLIENT_TEXT_BYTES as u64,
    ] {
        tokens.push(n.to_string());
    }
    tokens.push(PLACEHOLDER_PREFIX.to_owned());
    let engines = EngineTable::seed();
    for e in engines.names() {
        tokens.extend([e.to_owned(), format!("{e}@")]);
    }
    tokens.push(format!(
        "\"version\":{}",
        vx_broker::limits::SIDECAR_VERSION
    ));
    // Every key of the corpus the key reader accepts, whole.
    let mut keys: Vec<PathBuf> = std::fs::read_dir(corpus().join("keys"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    keys.sort();
    for path in keys {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if vx_broker::key::parse_key(&text, &engines, true).is_ok() && text.len() <= 64 {
            tokens.push(text);
        }
    }
    let mut written = BTreeSet::new();
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["sidecar", "frames"] {
        let mut stack = vec![corpus().join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let out = if let Ok(map) = alias::decode(&bytes) {
            Some(alias::encode(&map))
        } else if let Ok(rec) = owner::decode(&bytes) {
            owner::encode(&rec).ok()
        } else {
            std::str::from_utf8(&bytes)
                .ok()
                .and_then(|t| frames::decode_client(t).ok())
                .map(|f| frames::encode_client(&f).into_bytes())
        };
        if let Some(Ok(v)) = out.map(|o| serde_json::from_slice::<Value>(&o)) {
            walk(&v, &mut written);
        }
    }
    tokens.extend(written);
    let mut seen = BTreeSet::new();
    let mut text = String::from(
        "# libFuzzer dictionary for the broker readers, generated from the kit's tables by\n\
         # reference/broker/tests/corpus.rs (VX_UPDATE_FUZZ_DICTS=1 cargo test -p vx-broker\n\
         # --test corpus fuzz_dictionary). Do not edit by hand.\n",
    );
    for t in tokens.into_iter().filter(|t| !t.is_empty()) {
        if seen.insert(t.clone()) {
            let body: String = t
                .bytes()
                .map(|b| match b {
                    b'\\' => "\\\\".to_owned(),
                    b'"' => "\\\"".to_owned(),
                    b' '..=b'~' => char::from(b).to_string(),
                    _ => format!("\\x{b:02X}"),
                })
                .collect();
            text.push_str(&format!("\"{body}\"\n"));
        }
    }
    text
}

#[test]
fn fuzz_dictionary_is_current() {
    let path = corpus().join("broker.dict");
    let want = broker_dictionary();
    vx_format::testing::assert_fuzz_dictionary(
        &path,
        &want,
        "cargo test -p vx-broker --test corpus fuzz_dictionary",
    );
}
