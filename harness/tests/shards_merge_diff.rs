//! `vxcert run --shard`, `vxcert merge` and `vxcert diff`, through the steps of the
//! CI workflow to copy (`ci/vxcert-ci.sh`, as `ci/action.yml` runs them): four shards
//! in parallel processes, merged, equal one run scenario for scenario; a diff of a
//! report against itself is empty; a planted regression exits 1 and names it; merges
//! of reports that do not belong together are refused, named.
//!
//! The selection is the agent-restore template-checker rows (64 scenarios, each one
//! checker call): cheap, and enough for every shard to hold some.

mod common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SELECTION: [&str; 4] = [
    "--contract",
    "agent-restore",
    "--tags",
    "@part-checker and @optional-template-check",
];

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ci/vxcert-ci.sh")
}

fn ci(out: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("bash");
    c.arg(script())
        .args(args)
        .env("VXCERT", common::vxcert())
        .env("VXCERT_OUT", out);
    c
}

fn read(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    serde_json::from_str(&text).expect("report.json is JSON")
}

/// Verdict per scenario (contract, feature, name, Examples row).
fn verdicts(r: &Value) -> BTreeMap<String, String> {
    r["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .map(|s| {
            (
                format!(
                    "{} {} {} {}",
                    s["contract"], s["feature"], s["name"], s["example"]
                ),
                s["verdict"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect()
}

fn vxcert(args: &[&str], paths: &[&Path]) -> Output {
    Command::new(common::vxcert())
        .args(args)
        .args(paths)
        .output()
        .expect("run vxcert")
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The workflow's steps are the script's: what this test runs is what CI runs.
#[test]
fn the_action_runs_the_scripts_steps() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ci");
    let action = std::fs::read_to_string(dir.join("action.yml")).expect("ci/action.yml");
    for step in [
        "shard \"${{ inputs.shard }}\"",
        "merge",
        "diff \"${{ inputs.baseline }}\"",
    ] {
        let line = format!("bash \"${{{{ github.action_path }}}}/vxcert-ci.sh\" {step}");
        assert!(action.contains(&line), "ci/action.yml lacks `{line}`");
    }
    let workflow = std::fs::read_to_string(dir.join("certify.yml")).expect("ci/certify.yml");
    for needle in [
        "shard: [1, 2, 3, 4]",
        "step: shard",
        "step: merge",
        "vxcert-out/report/",
    ] {
        assert!(workflow.contains(needle), "ci/certify.yml lacks `{needle}`");
    }
}

#[test]
fn four_shards_merged_are_one_run_and_diffs_name_regressions() {
    common::ensure_reference(&[]);
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("out");
    let single = tmp.path().join("single");
    // The whole selection in one run, beside the shards (as many processes as CI's
    // matrix would start on one machine: five).
    let mut one = Command::new(common::vxcert());
    one.args(["run", "--quiet", "--report"])
        .arg(&single)
        .args(SELECTION);
    one.stdout(std::process::Stdio::null());
    let mut children = vec![one.spawn().expect("start the single run")];
    for k in 1..=4 {
        let k = format!("{k}/4");
        let mut c = ci(&out, &["shard", &k]);
        c.args(SELECTION).stdout(std::process::Stdio::null());
        children.push(c.spawn().expect("start a shard"));
    }
    for mut c in children {
        let status = c.wait().expect("wait");
        assert!(
            status.code().is_some_and(|c| c <= 1),
            "a run ended {status}"
        );
    }
    let whole = read(&single);
    let mut sizes = Vec::new();
    for k in 1..=4 {
        let r = read(&out.join(format!("shard-{k}-of-4")));
        assert_eq!(r["run"]["shard"], format!("{k}/4"));
        sizes.push(r["scenarios"].as_array().map_or(0, Vec::len));
    }
    assert!(sizes.iter().all(|n| *n > 0), "an empty shard: {sizes:?}");

    let merge = ci(&out, &["merge"]).output().expect("merge");
    assert!(merge.status.success(), "{}", text(&merge));
    let merged_dir = out.join("report");
    let merged = read(&merged_dir);
    assert_eq!(
        verdicts(&merged),
        verdicts(&whole),
        "merged shards differ from one run"
    );
    assert_eq!(sizes.iter().sum::<usize>(), verdicts(&whole).len());
    for key in ["result", "counts", "parts", "problems"] {
        assert_eq!(merged["run"][key], whole["run"][key], "run.{key}");
    }
    assert_eq!(merged["rows"], whole["rows"]);
    let clause_verdicts = |r: &Value| -> Vec<(Value, Value)> {
        r["clauses"]
            .as_array()
            .expect("clauses")
            .iter()
            .map(|c| (c["id"].clone(), c["verdict"].clone()))
            .collect()
    };
    assert_eq!(clause_verdicts(&merged), clause_verdicts(&whole));
    assert_eq!(merged["run"]["merged"].as_array().map(Vec::len), Some(4));
    for f in [
        "report.xml",
        "report.md",
        "report.html",
        "cucumber-agent-restore.json",
    ] {
        assert!(merged_dir.join(f).is_file(), "merge wrote no {f}");
    }

    // The workflow's diff step against the single run as the baseline: nothing
    // regressed.
    let d = ci(&out, &["diff", &single.display().to_string()])
        .output()
        .expect("diff");
    assert!(d.status.success(), "{}", text(&d));
    let dj: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("diff/diff.json")).unwrap())
            .unwrap();
    assert_eq!(dj["regressions"], Value::Array(vec![]), "{dj:#}");

    // A report against itself: empty, exit 0, in every format.
    for format in ["text", "markdown", "json"] {
        let o = vxcert(&["diff", "--format", format], &[&merged_dir, &merged_dir]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let s = String::from_utf8_lossy(&o.stdout);
        assert!(!s.contains("REGRESSION") && !s.contains("## "), "{s}");
    }
    let o = vxcert(&["diff", "--format", "json"], &[&merged_dir, &merged_dir]);
    let same: Value = serde_json::from_slice(&o.stdout).expect("diff JSON");
    for k in [
        "regressions",
        "progressions",
        "new_scenarios",
        "removed_scenarios",
    ] {
        assert_eq!(same[k], Value::Array(vec![]), "{k}");
    }

    // A planted regression: a passing scenario fails in the newer report.
    let mut planted = merged.clone();
    let victim = planted["scenarios"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["verdict"] == "pass")
        .expect("a passing scenario");
    victim["verdict"] = "fail".into();
    victim["message"] = "the checker's verdict line said valid; the suite expected invalid".into();
    let name = victim["name"].as_str().unwrap().to_string();
    let bad = tmp.path().join("planted.json");
    std::fs::write(&bad, planted.to_string()).unwrap();
    for format in ["text", "markdown", "json"] {
        let o = vxcert(&["diff", "--format", format], &[&merged_dir, &bad]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(&name),
            "{}",
            text(&o)
        );
    }
    // The other way round it is a progression, and exits 0.
    let o = vxcert(&["diff", "--format", "json"], &[&bad, &merged_dir]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let back: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(back["progressions"].as_array().map(Vec::len), Some(1));

    refusals(tmp.path(), &out);
}

/// Reports that do not belong together are not merged, and the error names why.
fn refusals(tmp: &Path, out: &Path) {
    let shard = |k: u32| out.join(format!("shard-{k}-of-4"));
    let to = tmp.join("refused");
    let o = vxcert(
        &["merge", "--report"],
        &[&to, &shard(1), &shard(2), &shard(4)],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("shard 3/4"),
        "{}",
        text(&o)
    );

    let edit = |k: u32, key: &str, value: &str| -> PathBuf {
        let mut r = read(&shard(k));
        r["run"][key] = value.into();
        let p = tmp.join(format!("edited-{key}.json"));
        std::fs::write(&p, r.to_string()).unwrap();
        p
    };
    for (key, value, words) in [
        ("suite_version", "0.0.0-other", "kit version"),
        ("profile", "another", "profile"),
    ] {
        let other = edit(4, key, value);
        let o = vxcert(
            &["merge", "--report"],
            &[&to, &shard(1), &shard(2), &shard(3), &other],
        );
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(words) && err.contains(value), "{}", text(&o));
    }
    let mut r = read(&shard(4));
    r["run"]["suites"]["agent-restore"] = "0".repeat(64).into();
    let other = tmp.join("other-suite.json");
    std::fs::write(&other, r.to_string()).unwrap();
    let o = vxcert(
        &["merge", "--report"],
        &[&to, &shard(1), &shard(2), &shard(3), &other],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("different agent-restore suites"),
        "{}",
        text(&o)
    );
}
