//! `vxcert run`'s contract (surface.md): the report files and their shape, exit codes,
//! expected failures that cannot go stale, optional features, usage errors.

mod common;

use common::vxcert;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const BASE: &str = r#"name = "t"
implementation = "reference under test"
serve = ["{bin_dir}/vxref", "serve", "--socket", "{socket}"]
serve_on_demand = ["{bin_dir}/vxref", "serve", "--socket", "{socket}", "--on-demand"]
cli = ["{bin_dir}/vxref", "--socket", "{socket}"]
version = ["{bin_dir}/vxref", "--version"]
"#;

fn run(profile_extra: &str, tags: &str) -> (i32, Value, tempfile::TempDir) {
    let (code, json, _, dir) = run_with(profile_extra, tags, &[]);
    (code, json, dir)
}

/// [`run`] with more `vxcert run` arguments; also its stderr.
fn run_with(
    profile_extra: &str,
    tags: &str,
    args: &[&str],
) -> (i32, Value, String, tempfile::TempDir) {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("p.toml");
    std::fs::write(&profile, format!("{BASE}{profile_extra}")).unwrap();
    let out = Command::new(vxcert())
        .args(["run", "--tags", tags, "--profile"])
        .arg(&profile)
        .arg("--report")
        .arg(dir.path().join("r"))
        .args(args)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(dir.path().join("r/report.json")).unwrap_or_default();
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), json, stderr, dir)
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort();
    k
}

#[test]
fn report_has_the_surface_shape_and_all_three_files() {
    let (code, r, dir) = run("", "@rfc-8-topology");
    assert_eq!(code, 0, "{r:#}");
    for k in [
        "suite_version",
        "rfc",
        "profile",
        "implementation",
        "started_at",
        "duration_ms",
    ] {
        assert!(r["run"].get(k).is_some(), "run.{k} missing");
    }
    assert_eq!(r["run"]["profile"], "t");
    assert!(r["run"]["implementation"]
        .as_str()
        .unwrap()
        .starts_with("reference under test"));
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["row"], "Topology");
    assert_eq!(rows[0]["contract"], "recovery");
    assert_eq!(rows[0]["verdict"], "pass");
    assert_eq!(rows[0]["accepted"], true);
    let scenarios = r["scenarios"].as_array().unwrap();
    // Topology's two scenarios in 10_topology.feature, and the fresh-z one of
    // 24_exact_values.feature's Topology rule.
    assert_eq!(scenarios.len(), 3);
    for s in scenarios {
        for k in [
            "feature",
            "name",
            "row",
            "clauses",
            "verdict",
            "duration_ms",
        ] {
            assert!(s.get(k).is_some(), "scenario.{k} missing: {s}");
        }
        assert!(
            ["10_topology.feature", "24_exact_values.feature"]
                .contains(&s["feature"].as_str().unwrap()),
            "{s}"
        );
        assert_eq!(s["row"], "Topology");
        assert!(s["clauses"]
            .as_array()
            .unwrap()
            .contains(&Value::from("rfc-8-topology")));
    }
    let clauses = r["clauses"].as_array().unwrap();
    let topo = clauses
        .iter()
        .find(|c| c["id"] == "rfc-8-topology")
        .unwrap();
    assert_eq!(
        keys(topo)[..],
        [
            "contract",
            "id",
            "level",
            "scenarios",
            "section",
            "text",
            "verdict"
        ]
    );
    assert_eq!(topo["verdict"], "pass");
    assert_eq!(topo["level"], "must");
    assert_eq!(topo["scenarios"].as_array().unwrap().len(), 3);
    let verdicts = [
        "pass",
        "fail",
        "unsupported-optional",
        "timeout",
        "harness-error",
    ];
    for c in clauses {
        assert!(verdicts.contains(&c["verdict"].as_str().unwrap()), "{c}");
    }
    let xml = std::fs::read_to_string(dir.path().join("r/report.xml")).unwrap();
    assert!(xml.contains("<testsuite name=\"Topology\" tests=\"3\" failures=\"0\" errors=\"0\">"));
    let md = std::fs::read_to_string(dir.path().join("r/report.md")).unwrap();
    assert!(
        md.contains("| Topology | pass | 3 | 0 | 0 | 0 | 0 | 0 |")
            && md.contains("## Contract `recovery`"),
        "{md}"
    );
}

#[test]
fn an_expected_failure_that_passes_fails_the_run() {
    let extra = r#"
[[expected_failure]]
row = "Topology"
scenario = "IDs consumed before the restore are not reused by it"
reason = "stale entry"
"#;
    let (code, r, _dir) = run(extra, "@rfc-8-topology");
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(r["run"]["result"], "fail");
    let problems = r["run"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1);
    assert!(problems[0]
        .as_str()
        .unwrap()
        .contains("remove it from the profile"));
    let s = r["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "IDs consumed before the restore are not reused by it")
        .unwrap();
    assert_eq!(s["unexpected_pass"], true);
}

/// The doctor scenario fails against today's reference: undeclared it fails the run,
/// declared (by scenario, with a reason) it is accepted and reported as such.
#[test]
fn a_declared_failure_is_accepted_and_an_undeclared_one_is_not() {
    let tags = "@rfc-8-secret-exclusion and not @rfc-4-writer-allowlist";
    let (code, r, _dir) = run("", tags);
    let failing: Vec<&Value> = r["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["verdict"] != "pass")
        .collect();
    if failing.is_empty() {
        // The reference has caught up: nothing to declare, the run passes.
        assert_eq!(code, 0, "{r:#}");
        return;
    }
    assert_eq!(code, 1, "{r:#}");
    let mut extra = String::new();
    for s in &failing {
        extra += &format!(
            "[[expected_failure]]\nrow = {:?}\nscenario = {:?}\n{}reason = \"declared by the test\"\n",
            s["row"].as_str().unwrap(),
            s["name"].as_str().unwrap(),
            s["example"]
                .as_str()
                .map(|e| format!("example = {e:?}\n"))
                .unwrap_or_default()
        );
    }
    let (code, r, _dir) = run(&extra, tags);
    assert_eq!(code, 0, "{r:#}");
    for s in r["scenarios"].as_array().unwrap() {
        if s["verdict"] != "pass" {
            assert_eq!(s["expected_failure"], "declared by the test", "{s}");
        }
    }
}

#[test]
fn unclaimed_optional_features_are_unsupported_not_failed() {
    let (code, r, _dir) = run("", "@optional-on-demand");
    assert_eq!(
        code, 0,
        "an unclaimed optional feature fails no MUST: {r:#}"
    );
    let scenarios = r["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 2);
    for s in scenarios {
        assert_eq!(s["verdict"], "unsupported-optional", "{s}");
    }
    let (code, r, _dir) = run("features = [\"on-demand\"]\n", "@optional-on-demand");
    assert_eq!(code, 0, "{r:#}");
    for s in r["scenarios"].as_array().unwrap() {
        assert_eq!(s["verdict"], "pass", "{s}");
    }
}

/// docs/spec/recovery-skill.md: without the feature `skill` the skill scenario and
/// its clause are unsupported, never passed; a half-declared skill is a usage error.
#[test]
fn an_unclaimed_skill_is_unsupported_and_a_half_declared_one_a_usage_error() {
    let (code, r, _dir) = run("", "@rfc-1-skill-no-owner");
    assert_eq!(code, 0, "{r:#}");
    let scenarios = r["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), 1);
    assert_eq!(scenarios[0]["verdict"], "unsupported-optional");
    let clause = r["clauses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "rfc-1-skill-no-owner")
        .unwrap();
    assert_eq!(clause["verdict"], "unsupported-optional", "{clause}");
    let skill = "skill = [\"{bin_dir}/vxref\", \"manifest\", \"--skill\"]\n";
    let (code, r, _dir) = run(
        &format!("features = [\"skill\"]\n{skill}"),
        "@rfc-1-skill-no-owner",
    );
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["scenarios"][0]["verdict"], "pass", "{r:#}");
    for half in [skill.to_string(), "features = [\"skill\"]\n".to_string()] {
        let (code, r, _dir) = run(&half, "@rfc-1-skill-no-owner");
        assert_eq!(code, 2, "{half}: {r:#}");
        assert!(r.is_null(), "a usage error writes no report");
    }
}

#[test]
fn bad_profiles_and_tags_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, "name = \"x\"\nserve = []\ncli = [\"x\"]\n").unwrap();
    let out = Command::new(vxcert())
        .args(["run", "--profile"])
        .arg(&p)
        .arg("--report")
        .arg(dir.path().join("r"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(vxcert())
        .args(["run", "--tags", "@a and and", "--report"])
        .arg(dir.path().join("r"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!Path::new(&dir.path().join("r/report.json")).exists());
}

#[test]
fn a_missing_bin_dir_is_named_with_what_to_pass() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-bin-dir");
    let out = Command::new(vxcert())
        .args(["run", "--bin-dir"])
        .arg(&missing)
        .arg("--report")
        .arg(dir.path().join("r"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("--bin-dir {}", missing.display())),
        "the path is not named: {err}"
    );
    assert!(err.contains("No such file or directory"), "{err}");
    assert!(
        err.contains("cargo build --workspace"),
        "no fix given: {err}"
    );
    assert!(!dir.path().join("r/report.json").exists());
}

/// `--concurrency` overrides the profile's `concurrency`, the report says which ran,
/// and a count out of range is a usage error naming the flag.
#[test]
fn the_run_records_its_concurrency_and_the_flag_overrides_the_profile() {
    let (code, r, _dir) = run("concurrency = 3\n", "@rfc-8-topology");
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["run"]["concurrency"], 3);
    let (code, r, _, _dir) = run_with(
        "concurrency = 3\n",
        "@rfc-8-topology",
        &["--concurrency", "7"],
    );
    assert_eq!(code, 0, "{r:#}");
    assert_eq!(r["run"]["concurrency"], 7);
    for bad in ["0", "many"] {
        let (code, _, err, _dir) = run_with("", "@rfc-8-topology", &["--concurrency", bad]);
        assert_eq!(code, 2, "--concurrency {bad}: {err}");
        assert!(err.contains("--concurrency"), "{err}");
    }
}
