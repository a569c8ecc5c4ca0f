//! What the harness's integration tests share: where vxcert is, and building the
//! programs it runs next to itself.
#![allow(dead_code)] // each test binary uses a part

use std::path::PathBuf;
use std::process::Command;

pub fn vxcert() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_vxcert"))
}

/// The directory vxcert (and the kit's other programs) live in.
pub fn bin_dir() -> PathBuf {
    vxcert().parent().expect("bin dir").to_path_buf()
}

/// Builds the reference daemon, the injector, the broker and (with `examples`) the relay
/// examples into vxcert's target directory, unless they are there: `cargo test
/// --workspace` builds them, `cargo test -p vxcert` may not.
pub fn ensure_reference(examples: &[&str]) {
    let dir = bin_dir();
    let present = dir.join("vxref").is_file()
        && dir.join("libvxfault.so").is_file()
        && dir.join("vxbroker").is_file()
        && dir.join("vxpersist").is_file()
        && examples
            .iter()
            .all(|e| dir.join("examples").join(e).is_file());
    if present {
        return;
    }
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args([
        "build",
        "-p",
        "vxref",
        "-p",
        "vxfault-preload",
        "-p",
        "vx-persist",
        "-p",
        "vxcert",
    ]);
    for e in examples {
        cmd.args(["--example", e]);
    }
    let status = cmd
        .arg("--target-dir")
        .arg(dir.parent().expect("target dir"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo build the reference");
    assert!(status.success(), "building the reference failed");
}

/// `--concurrency N` when `VXCERT_CONTROLS_CONCURRENCY` is set: the controls' runs
/// at another number of scenarios at once, to measure a row's flake rate under more
/// load (docs/performance.md "CI"). Unset, each run takes its profile's.
///
/// The single-writer suite waits more than it computes (an owner silent for 5 s,
/// twenty reconnects): its controls' profiles say [`WAIT_BOUND_CONCURRENCY`].
fn controls_concurrency() -> Vec<String> {
    std::env::var("VXCERT_CONTROLS_CONCURRENCY")
        .map(|n| vec!["--concurrency".to_string(), n])
        .unwrap_or_default()
}

/// The `concurrency` of a control's profile whose suite mostly waits (single-writer):
/// 12 scenarios at once took its control binary from 110 s to about 65 s, with the
/// machine's two cores still not saturated (docs/performance.md "CI").
pub const WAIT_BOUND_CONCURRENCY: &str = "concurrency = 12\n";

/// Runs `vxcert run --quiet` with a profile of this text (and `args`): the exit code
/// and the report.
pub fn run_profile(profile_text: &str, args: &[&str]) -> (i32, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let profile = dir.path().join("control.toml");
    std::fs::write(&profile, profile_text).expect("write the profile");
    let report = dir.path().join("report");
    let out = Command::new(vxcert())
        .args(["run", "--quiet", "--profile"])
        .arg(&profile)
        .arg("--report")
        .arg(&report)
        .args(args)
        .args(controls_concurrency())
        .output()
        .expect("run vxcert");
    let text = std::fs::read_to_string(report.join("report.json")).unwrap_or_else(|_| {
        panic!(
            "no report.json; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    require_sentences(&report);
    let report: serde_json::Value = serde_json::from_str(&text).expect("report.json is JSON");
    require_evidence_clauses_tagged(&report);
    // Shown by the test harness only when the test fails: what each row that did not
    // pass said, so a failed control is diagnosed from its output alone.
    for s in report["scenarios"].as_array().into_iter().flatten() {
        if s["verdict"] != "pass" {
            let message: String = s["message"]
                .as_str()
                .unwrap_or("")
                .chars()
                .take(600)
                .collect();
            eprintln!(
                "{} [{}] {}: {message}",
                s["name"], s["example"], s["verdict"]
            );
        }
    }
    (out.status.code().unwrap_or(-1), report)
}

/// The names of a report's scenarios (only those that did not pass, with `failing`).
pub fn scenario_names(
    report: &serde_json::Value,
    failing: bool,
) -> std::collections::BTreeSet<String> {
    report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter(|s| !failing || s["verdict"] != "pass")
        .map(|s| s["name"].as_str().expect("name").to_string())
        .collect()
}

/// An executable shell script in `dir`.
pub fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write the script");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p.to_string_lossy().into_owned()
}

/// The tags that select the alias-sidecar crash row of the single-writer suite.
pub const SIDECAR_CRASH_TAGS: &str = "@sw-alias and @sw-durable-formats";

/// The name of that row.
pub const SIDECAR_CRASH_ROW: &str =
    "A broker killed while it replaces the alias sidecar leaves the old one intact";

/// Runs the single-writer suite with its alias-sidecar crash planned at a rename the
/// row never makes ([`single_writer_crash_never_fires`]), through `run` (given the
/// `--features` and `--tags` arguments), and requires the row's timeout to name the
/// plan's counts ([`require_the_sidecar_crash_counts`]).
pub fn sidecar_crash_that_never_fires_names_its_counts(
    run: impl FnOnce(&[&str]) -> (i32, serde_json::Value),
) {
    let dir = tempfile::tempdir().unwrap();
    let features = single_writer_crash_never_fires(dir.path());
    let (code, report) = run(&[
        "--features",
        features.to_str().unwrap(),
        "--tags",
        SIDECAR_CRASH_TAGS,
    ]);
    assert_eq!(code, 1);
    require_the_sidecar_crash_counts(&report);
}

/// A copy of the kit's single-writer suite under `dir` whose alias-sidecar crash row
/// plans its crash at a third rename, which the row never makes; returns the features
/// directory to pass as `--features`.
pub fn single_writer_crash_never_fires(dir: &std::path::Path) -> PathBuf {
    let features = dir.join("features");
    let suite = features.join("single-writer");
    std::fs::create_dir_all(&suite).unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../features/single-writer");
    for e in std::fs::read_dir(&root).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), suite.join(e.file_name())).unwrap();
    }
    let faults = std::fs::read_to_string(root.join("08_faults.feature")).unwrap();
    let never = faults.replace(
        "rename@{alias_sidecar}*#2=crash",
        "rename@{alias_sidecar}*#3=crash",
    );
    assert_ne!(never, faults, "the crash row's plan moved");
    std::fs::write(suite.join("08_faults.feature"), never).unwrap();
    features
}

/// Requires the crash row of a [`single_writer_crash_never_fires`] run to have timed
/// out with a note that says how often the plan matched and that it acted on none, and
/// which sessions the engine minted. At least one match: the row waits for the broker
/// only after viewer A was told the minted key, which the first alias (the first
/// rename) precedes; two are what it normally makes, but a timeout of the row's own
/// may come before the second, and the note's job is to say how many it saw.
pub fn require_the_sidecar_crash_counts(report: &serde_json::Value) {
    let rows = report["scenarios"].as_array().unwrap();
    let row = rows
        .iter()
        .find(|s| s["name"] == SIDECAR_CRASH_ROW)
        .expect("the crash row ran");
    assert_eq!(row["verdict"], "timeout", "{row}");
    let note = row["message"].as_str().unwrap();
    let counts = note
        .split_once("*#3=crash\" matched ")
        .and_then(|(_, rest)| rest.split_once(" calls, acted on 0"))
        .map(|(n, _)| n);
    assert!(
        counts.is_some_and(|n| n.parse::<u64>().is_ok_and(|n| n >= 1)),
        "{note}"
    );
    assert!(
        note.contains("the engine's index lists [\"ses_Stub"),
        "{note}"
    );
}

/// Every report format of a run states its failures as sentences with values: no
/// assertion text (`left:` / `right:`, "assertion `left == right` failed") anywhere.
/// The clause a row's evidence names is one of the row's own clause tags: a step
/// that names another clause when it fails (a shared step written for one row and
/// reused in a row of another clause) would send an implementer to the wrong seed
/// sentence. Held on every row that failed in every control run.
pub fn require_evidence_clauses_tagged(report: &serde_json::Value) {
    for s in report["scenarios"].as_array().into_iter().flatten() {
        // A row that does not apply judges no clause.
        if s["verdict"] == "unsupported-optional" {
            continue;
        }
        let Some(id) = s["evidence"]["clause"]["id"].as_str() else {
            continue;
        };
        let tags: Vec<&str> = s["clauses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c.as_str())
            .collect();
        assert!(
            tags.contains(&id),
            "{} [{}]: its evidence names the clause {id}, which is not among its tags {tags:?}",
            s["name"],
            s["example"]
        );
    }
}

pub fn require_sentences(report_dir: &std::path::Path) {
    for name in ["report.json", "report.md", "report.xml", "report.html"] {
        let Ok(text) = std::fs::read_to_string(report_dir.join(name)) else {
            continue;
        };
        for needle in [
            "assertion `left",
            "\\n  left: ",
            "\n  left: ",
            "\\n right: ",
        ] {
            assert!(
                !text.contains(needle),
                "{name} of {} holds assertion text ({needle:?})",
                report_dir.display()
            );
        }
    }
}

/// Writes, in `dir`, a session-persist layouts document of an implementation whose
/// sessions are one file each (claude_code: its transcript; codex: its rollout; no
/// pi, no subtree), and returns its path.
pub fn one_file_layouts(dir: &std::path::Path) -> String {
    let layouts = dir.join("one-file.toml");
    std::fs::write(
        &layouts,
        "[auth]\nnever = [\".credentials.json\", \"auth.json\", \".claude.json\"]\n\
         [backend.claude_code]\ncapability = true\nroot_env = \"CLAUDE_CONFIG_DIR\"\n\
         key = \"projects/{dir}/{id}.jsonl\"\nfiles = [\"projects/{dir}/{id}.jsonl\"]\n\
         [backend.codex]\ncapability = true\nroot_env = \"CODEX_HOME\"\n\
         key = \"sessions/{yyyy}/{mm}/{dd}/rollout-{ts}-{id}.jsonl\"\n\
         files = [\"sessions/{yyyy}/{mm}/{dd}/rollout-{ts}-{id}.jsonl\"]\n",
    )
    .expect("write the layouts");
    layouts.display().to_string()
}
