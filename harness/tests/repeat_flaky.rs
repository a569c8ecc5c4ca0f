//! `vxcert run --repeat N` against a checker that is flaky on purpose: a stand-in
//! template checker that answers wrongly on its first call only, and passes every
//! later call to the reference's. Run twice, the scenario that got the first call is
//! `flaky` in every report format, with the evidence of each distinct outcome; every
//! other scenario keeps its verdict; and a run without `--repeat` just fails it.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The first outline of the template rows: valid templates, one checker call each.
const TAGS: &str = "@asr-templates-own-policy and @asr-no-evaluator";

fn profile(dir: &Path) -> std::path::PathBuf {
    let counter = dir.join("calls");
    let checker = common::script(
        dir,
        "flaky-check",
        &format!(
            r#"n=$(cat '{c}' 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > '{c}'
if [ "$n" = 1 ]; then
  printf '{{"file":"%s","result":"invalid","rule":"planted-flake","reason":"the stand-in refuses its first input"}}\n' "$1"
  exit 1
fi
exec '{bin}/vxref' integration check --json "$1""#,
            c = counter.display(),
            bin = common::bin_dir().display()
        ),
    );
    let reference = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/reference.toml"),
    )
    .expect("the reference profile");
    let text: String = reference
        .lines()
        .map(|l| {
            if l.starts_with("template_check") {
                format!("template_check = [\"{checker}\", \"{{file}}\"]")
            } else if l.starts_with("concurrency") {
                // One scenario at a time: the checker's first call is one scenario's.
                "concurrency = 1".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let p = dir.join("flaky.toml");
    std::fs::write(&p, text + "\n").unwrap();
    p
}

fn run(dir: &Path, report: &str, extra: &[&str]) -> (i32, Value) {
    let out = Command::new(common::vxcert())
        .args([
            "run",
            "--quiet",
            "--contract",
            "agent-restore",
            "--tags",
            TAGS,
        ])
        .arg("--profile")
        .arg(profile(dir))
        .arg("--report")
        .arg(dir.join(report))
        .args(extra)
        .output()
        .expect("run vxcert");
    let text = std::fs::read_to_string(dir.join(report).join("report.json"))
        .unwrap_or_else(|_| panic!("no report: {}", String::from_utf8_lossy(&out.stderr)));
    (
        out.status.code().unwrap_or(-1),
        serde_json::from_str(&text).unwrap(),
    )
}

#[test]
fn a_checker_wrong_once_is_flaky_in_every_report_format() {
    common::ensure_reference(&[]);
    let tmp = tempfile::tempdir().unwrap();
    let (code, r) = run(tmp.path(), "twice", &["--repeat", "2"]);
    assert_eq!(code, 1, "a flaky MUST scenario fails the run");
    assert_eq!(r["run"]["repeat"], 2);
    let scenarios = r["scenarios"].as_array().unwrap();
    let ids: std::collections::BTreeSet<String> = scenarios
        .iter()
        .map(|s| format!("{} {}", s["name"], s["example"]))
        .collect();
    assert!(
        scenarios.len() > 1 && ids.len() == scenarios.len(),
        "each scenario is reported once"
    );
    let flaky: Vec<&Value> = scenarios
        .iter()
        .filter(|s| s["verdict"] == "flaky")
        .collect();
    assert_eq!(flaky.len(), 1, "{r:#}");
    assert!(scenarios
        .iter()
        .all(|s| s["verdict"] == "pass" || s["verdict"] == "flaky"));
    let f = flaky[0];
    let outcomes = f["outcomes"].as_array().expect("outcomes");
    assert_eq!(outcomes.len(), 2);
    assert_eq!(outcomes[0]["verdict"], "fail");
    assert_eq!(outcomes[0]["rounds"], serde_json::json!([1]));
    assert_eq!(outcomes[1]["verdict"], "pass");
    assert_eq!(outcomes[1]["rounds"], serde_json::json!([2]));
    let observed = outcomes[0]["evidence"]["observed"].as_str().unwrap_or("");
    assert!(
        observed.contains("invalid"),
        "the failing run's evidence: {f:#}"
    );
    assert!(f["message"].as_str().unwrap().contains("fail in round 1"));
    assert_eq!(r["run"]["counts"]["flaky"], 1);
    assert_eq!(
        r["run"]["parts_failing"]["agent-restore"],
        serde_json::json!(["checker"])
    );

    let example = f["example"].as_str().unwrap().to_string();
    let file = |name: &str| std::fs::read_to_string(tmp.path().join("twice").join(name)).unwrap();
    let (md, xml, html) = (file("report.md"), file("report.xml"), file("report.html"));
    assert!(
        md.contains("| flaky |") && md.contains("fail in round(s) 1"),
        "{md}"
    );
    assert!(xml.contains("<failure message=\"flaky: "), "{xml}");
    assert!(
        html.contains("class=\"v flaky") || html.contains("flaky"),
        "no flaky in the page"
    );
    assert!(html.contains("fail in round(s) 1") && html.contains(&example));

    // Once: the same stand-in fails that one scenario, and it is not called flaky.
    std::fs::remove_file(tmp.path().join("calls")).unwrap();
    let (code, once) = run(tmp.path(), "once", &[]);
    assert_eq!(code, 1);
    assert_eq!(once["run"]["counts"]["fail"], 1, "{once:#}");
    assert!(once["run"]["counts"].get("flaky").is_none());
}

/// `--baseline`: a failure the baseline (a report, or the expectations `vxcert
/// baseline` writes from it) knows is no regression; one it does not allow is, and
/// the problem names the scenario and what the baseline allows, with its reason.
#[test]
fn a_baseline_fails_the_run_only_on_a_regression() {
    common::ensure_reference(&[]);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let fresh = || {
        let _ = std::fs::remove_file(dir.join("calls"));
    };
    let (code, first) = run(dir, "first", &[]);
    assert_eq!(code, 1);
    let failed: Vec<&Value> = first["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["verdict"] == "fail")
        .collect();
    assert_eq!(failed.len(), 1, "{first:#}");
    let (name, example) = (
        failed[0]["name"].as_str().unwrap().to_string(),
        failed[0]["example"].as_str().unwrap().to_string(),
    );

    let exp = dir.join("expectations.toml");
    let out = Command::new(common::vxcert())
        .arg("baseline")
        .arg(dir.join("first"))
        .arg("--out")
        .arg(&exp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&exp).unwrap();
    assert!(
        text.contains(&example) && text.contains("\"fail\""),
        "{text}"
    );

    for baseline in [dir.join("first"), exp.clone()] {
        fresh();
        let b = baseline.display().to_string();
        let (code, r) = run(dir, "again", &["--baseline", &b]);
        assert_eq!(
            code, 0,
            "the same failure is no regression against {b}: {r:#}"
        );
        assert_eq!(r["run"]["baseline"], b.as_str());
        assert_eq!(r["run"]["result"], "pass");
    }

    // An expectation that allows pass or timeout, not fail: a regression, named.
    let strict = text.replace("\"fail\"", "\"pass\", \"timeout\"").replace(
        "reason = \"fail in the report",
        "reason = \"known to time out under load; was: fail in the report",
    );
    let strict_path = dir.join("strict.toml");
    std::fs::write(&strict_path, strict).unwrap();
    fresh();
    let s = strict_path.display().to_string();
    let (code, r) = run(dir, "strict", &["--baseline", &s]);
    assert_eq!(code, 1, "{r:#}");
    let problems = r["run"]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    let p = problems[0].as_str().unwrap();
    assert!(
        p.contains(&name)
            && p.contains(&example)
            && p.contains("fail where the baseline allows pass or timeout: known to time out"),
        "{p}"
    );

    // A baseline that cannot be read is a usage error, before anything runs.
    let (code, _) = (
        Command::new(common::vxcert())
            .args(["run", "--quiet", "--baseline"])
            .arg(dir.join("missing.toml"))
            .arg("--report")
            .arg(dir.join("none"))
            .status()
            .unwrap()
            .code(),
        (),
    );
    assert_eq!(code, Some(2));
    assert!(!dir.join("none/report.json").exists());
}
