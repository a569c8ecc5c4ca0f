//! One harness for several contracts: `--contract`, the profile's `contracts`, the
//! preflight that refuses to start with a missing piece, and undefined steps as
//! harness errors.

mod common;

use common::{bin_dir, vxcert};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn features_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../features")
}

/// The reference profile's claims line, which the tests below rewrite.
const REFERENCE_CLAIMS: &str =
    "contracts = [\"recovery\", \"agent-restore\", \"single-writer\", \"session-persist\"]";

fn reference_profile() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/reference.toml")
}

fn run(args: &[&str], report: &Path) -> Output {
    Command::new(vxcert())
        .arg("run")
        .args(args)
        .arg("--report")
        .arg(report)
        .output()
        .unwrap()
}

fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("report.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn stderr_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_contract_the_profile_does_not_claim_is_a_usage_error_not_an_empty_pass() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path().join("r");
    let profile = dir.path().join("p.toml");
    let base = std::fs::read_to_string(reference_profile()).unwrap();
    let claims = base.replace(REFERENCE_CLAIMS, "contracts = [\"recovery\"]");
    assert_ne!(claims, base, "the reference profile's claims line moved");
    std::fs::write(&profile, claims).unwrap();
    let out = run(
        &[
            "--profile",
            profile.to_str().unwrap(),
            "--contract",
            "session-persist",
        ],
        &r,
    );
    assert_eq!(out.status.code(), Some(2));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("does not claim the session-persist"),
        "{lines:?}"
    );
    assert!(!r.join("report.json").exists());

    let out = run(&["--contract", "recovery-rfc"], &r);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr_lines(&out)[0].contains("unknown contract"));
}

#[test]
fn a_claimed_contract_needs_its_profile_table() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.toml");
    let base = std::fs::read_to_string(reference_profile()).unwrap();
    let claims = base.replace(REFERENCE_CLAIMS, "contracts = [\"session-persist\"]");
    assert_ne!(claims, base, "the reference profile's claims line moved");
    let (head, tail) = claims
        .split_once("\n[persist]\n")
        .expect("a [persist] table");
    let rest = &tail[tail.find("\n[").expect("a table after [persist]")..];
    std::fs::write(&profile, format!("{head}{rest}")).unwrap();
    let out = run(
        &["--profile", profile.to_str().unwrap()],
        &dir.path().join("r"),
    );
    assert_eq!(out.status.code(), Some(2));
    let lines = stderr_lines(&out);
    assert!(lines[0].contains("[persist]"), "{lines:?}");
}

#[test]
fn a_missing_reference_is_one_line_naming_the_path() {
    common::ensure_reference(&[]);
    let bins = tempfile::tempdir().unwrap();
    let r = bins.path().join("r");
    // The broker and the packer are there, vxref is not (the injector is the copy
    // inside vxcert).
    for kept in ["vxbroker", "vxpersist"] {
        std::fs::copy(bin_dir().join(kept), bins.path().join(kept)).unwrap();
    }
    let out = run(&["--bin-dir", bins.path().to_str().unwrap()], &r);
    assert_eq!(out.status.code(), Some(2));
    let lines = stderr_lines(&out);
    let vxref = bins.path().join("vxref").display().to_string();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains(&vxref) && lines[0].contains("cargo build --workspace"),
        "{lines:?}"
    );
    assert!(!r.join("report.json").exists(), "nothing may run");

    // Two missing: one line each.
    std::fs::remove_file(bins.path().join("vxbroker")).unwrap();
    let out = run(&["--bin-dir", bins.path().to_str().unwrap()], &r);
    assert_eq!(out.status.code(), Some(2));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines.iter().any(|l| l.contains("vxbroker")), "{lines:?}");
}

#[test]
fn plain_run_and_contract_recovery_agree_and_reports_carry_the_contract() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let out = run(&["--quiet", "--tags", "@rfc-8-topology"], &a);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = run(
        &[
            "--quiet",
            "--tags",
            "@rfc-8-topology",
            "--contract",
            "recovery",
        ],
        &b,
    );
    assert!(out.status.success());
    // Progress goes to a terminal only: nothing on stderr here.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (ra, rb) = (report(&a), report(&b));
    let verdicts = |r: &Value| -> Vec<(String, String)> {
        r["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["name"].to_string(), s["verdict"].to_string()))
            .collect()
    };
    assert_eq!(verdicts(&ra), verdicts(&rb));
    // The reference claims every contract; the tag selects recovery scenarios only.
    assert_eq!(
        ra["run"]["contracts"],
        serde_json::json!([
            "recovery",
            "agent-restore",
            "single-writer",
            "session-persist"
        ])
    );
    assert_eq!(rb["run"]["contracts"], serde_json::json!(["recovery"]));
    for key in ["rows", "scenarios"] {
        for item in rb[key].as_array().unwrap() {
            assert_eq!(item["contract"], "recovery", "{key}: {item}");
        }
    }
    assert!(ra["clauses"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["contract"] == "agent-restore"));
    let md = std::fs::read_to_string(a.join("report.md")).unwrap();
    assert!(md.contains("## Contract `recovery`"), "{md}");
    assert!(md.contains("## Contract `agent-restore`"), "{md}");
    // Cucumber's own JSON report, for existing Cucumber report tools.
    let cj: Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("cucumber-recovery.json")).unwrap())
            .unwrap();
    let features = cj.as_array().unwrap();
    assert!(features.iter().any(|f| f["name"] == "Topology"), "{cj}");
    for f in features {
        for e in f["elements"].as_array().unwrap() {
            assert!(e["steps"].as_array().is_some_and(|s| !s.is_empty()));
        }
    }
}

/// A suite whose step matches no definition reports a harness error for it and
/// fails the run; the other scenario of the suite still passes.
#[test]
fn an_undefined_step_is_a_harness_error() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("features/recovery");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(
        suite.join("clauses.toml"),
        "[[clause]]\nid = \"rfc-x-probe\"\nsection = \"x\"\nlevel = \"must\"\ntext = \"probe\"\n",
    )
    .unwrap();
    std::fs::write(
        suite.join("01_probe.feature"),
        "@rfc-x-probe @must\nFeature: Probe\n\n  Scenario: defined\n    Given a daemon started with recovery enabled\n    When the owner calls \"session.list\"\n    Then the call succeeds\n\n  Scenario: undefined\n    Given a daemon started with recovery enabled\n    When the owner does something nobody defined\n",
    )
    .unwrap();
    let r = dir.path().join("r");
    let out = run(
        &[
            "--quiet",
            "--contract",
            "recovery",
            "--features",
            dir.path().join("features").to_str().unwrap(),
        ],
        &r,
    );
    assert_eq!(out.status.code(), Some(1));
    let rep = report(&r);
    let by_name = |n: &str| {
        rep["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .cloned()
            .unwrap()
    };
    assert_eq!(by_name("defined")["verdict"], "pass");
    let u = by_name("undefined");
    assert_eq!(u["verdict"], "harness-error", "{u}");
    assert!(u["message"].as_str().unwrap().contains("undefined"), "{u}");
}

#[test]
fn the_registry_lives_with_its_suite() {
    assert!(features_root().join("recovery/clauses.toml").is_file());
    assert!(!features_root().join("clauses.toml").exists());
}
