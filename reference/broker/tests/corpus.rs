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
