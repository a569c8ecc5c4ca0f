//! The foreign peers (`peers/`, test subjects written independently of the
//! reference: two in Python, one in Go): the honest build of each certifies its
//! claimed parts with no `fail` and no `inconclusive`, each planted violation
//! (`PEER_VIOLATION`) fails exactly the scenarios its `violations.toml` lists, each
//! with evidence naming one of its clauses, and `peers/README.md`'s table is exactly
//! `violations.toml`.

mod common;

use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The peers CI certifies.
const PEERS: [&str; 3] = [
    "session-packer",
    "single-writer-broker",
    "agent-restore-checker",
];

/// The Go peer's program, which its profile runs as `{bin_dir}/GO_PEER_BIN`.
const GO_PEER_BIN: &str = "peer-agent-restore-checker";

/// How many violation runs go at once (each is itself concurrent).
const THREADS: usize = 3;

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers")
}

/// Builds the Go peer (standard library only, nothing downloaded) beside vxcert,
/// where its profile's `{bin_dir}` finds it; the binary is never committed.
fn build_go_peer() -> Result<(), String> {
    let out = common::bin_dir().join(GO_PEER_BIN);
    // Another test process may be running the previous build: build aside, then rename.
    let partial = out.with_extension(std::process::id().to_string());
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("go-peer");
    let mut go = Command::new("go");
    go.arg("build")
        .arg("-o")
        .arg(&partial)
        .arg(".")
        .current_dir(peers_dir().join("agent-restore-checker"))
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-mod=mod")
        .env("GOPROXY", "off")
        .env("GOPATH", tmp.join("gopath"));
    if std::env::var_os("GOCACHE").is_none() {
        go.env("GOCACHE", tmp.join("go-cache"));
    }
    let o = go.output().map_err(|e| format!("cannot run go: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "go build of peers/agent-restore-checker failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    std::fs::rename(&partial, &out).map_err(|e| format!("{out:?}: {e}"))
}

/// The peers this machine can run: the Go peer needs Debian's `go`; without it the
/// peer is left out with a note, unless `VXFAULT_REQUIRE_PROGRAMS` is set (CI sets
/// it), which makes a missing `go` a failure.
fn runnable_peers() -> Vec<&'static str> {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    match BUILT.get_or_init(build_go_peer) {
        Ok(()) => PEERS.to_vec(),
        Err(why) => {
            assert!(
                std::env::var_os("VXFAULT_REQUIRE_PROGRAMS").is_none(),
                "{why} (VXFAULT_REQUIRE_PROGRAMS is set)"
            );
            eprintln!("note: agent-restore-checker skipped: {why}");
            PEERS
                .iter()
                .copied()
                .filter(|p| *p != "agent-restore-checker")
                .collect()
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Violations {
    violation: Vec<Violation>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Violation {
    name: String,
    what: String,
    tags: String,
    clauses: Vec<String>,
    scenarios: Vec<String>,
}

fn violations(peer: &str) -> Vec<Violation> {
    let path = peers_dir().join(peer).join("violations.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    toml::from_str::<Violations>(&text)
        .unwrap_or_else(|e| panic!("{path:?}: {e}"))
        .violation
}

/// `vxcert run` on the peer's own profile with `PEER_VIOLATION` set as given: the
/// exit code and the report.
fn certify(peer: &str, violation: Option<&Violation>) -> (i32, serde_json::Value) {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("report");
    let mut cmd = Command::new(common::vxcert());
    cmd.args(["run", "--quiet", "--profile"])
        .arg(peers_dir().join(peer).join("profile.toml"))
        .arg("--report")
        .arg(&report)
        .env_remove("PEER_VIOLATION");
    if let Some(v) = violation {
        cmd.env("PEER_VIOLATION", &v.name).args(["--tags", &v.tags]);
    }
    let out = cmd.output().expect("run vxcert");
    let text = std::fs::read_to_string(report.join("report.json")).unwrap_or_else(|_| {
        panic!(
            "{peer} {violation:?}: no report.json; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let json: serde_json::Value = serde_json::from_str(&text).expect("report.json is JSON");
    common::require_evidence_clauses_tagged(&json);
    (out.status.code().unwrap_or(-1), json)
}

fn scenarios(report: &serde_json::Value) -> &Vec<serde_json::Value> {
    report["scenarios"].as_array().expect("scenarios")
}

fn label(s: &serde_json::Value) -> String {
    format!(
        "{} / {}",
        s["row"].as_str().unwrap_or(""),
        s["name"].as_str().unwrap_or("")
    )
}

/// Each scenario's name as the tables list it: an outline whose name does not vary
/// with its examples (every agent-restore outline) is told apart by its example's
/// first cell, "NAME (CASE)".
fn scenario_names(all: &[serde_json::Value]) -> Vec<String> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for s in all {
        *count.entry(s["name"].as_str().unwrap_or("")).or_default() += 1;
    }
    all.iter()
        .map(|s| {
            let name = s["name"].as_str().unwrap_or("");
            match s["example"].as_str() {
                Some(example) if count[name] > 1 => {
                    format!("{name} ({})", example.split(" | ").next().unwrap_or(""))
                }
                _ => name.to_string(),
            }
        })
        .collect()
}

#[test]
fn each_honest_peer_certifies_its_claimed_parts() {
    common::ensure_reference(&[]);
    for peer in runnable_peers() {
        let (code, report) = certify(peer, None);
        let all = scenarios(&report);
        let bad: Vec<String> = all
            .iter()
            .filter(|s| {
                !["pass", "non-strict", "not-claimed", "unsupported-optional"]
                    .contains(&s["verdict"].as_str().unwrap_or(""))
            })
            .map(|s| format!("{} {}: {}", label(s), s["verdict"], s["message"]))
            .collect();
        assert!(bad.is_empty(), "{peer}: {bad:#?}");
        assert_eq!(code, 0, "{peer}: vxcert's exit status");
        let passed = all.iter().filter(|s| s["verdict"] == "pass").count();
        assert!(passed >= 20, "{peer}: only {passed} scenarios passed");
        let non_strict: Vec<String> = all
            .iter()
            .filter(|s| s["verdict"] == "non-strict")
            .map(label)
            .collect();
        println!(
            "{peer}: {passed} pass, {} non-strict{}",
            non_strict.len(),
            non_strict
                .iter()
                .map(|n| format!("\n  non-strict: {n}"))
                .collect::<String>()
        );
    }
}

/// What one violation's run showed, as a list of problems (empty: as declared).
fn check_violation(peer: &str, v: &Violation) -> Vec<String> {
    let (code, report) = certify(peer, Some(v));
    let mut problems = Vec::new();
    let ran = scenarios(&report);
    let failing: Vec<(&serde_json::Value, String)> = ran
        .iter()
        .zip(scenario_names(ran))
        .filter(|(s, _)| {
            !["pass", "not-claimed", "unsupported-optional"]
                .contains(&s["verdict"].as_str().unwrap_or(""))
        })
        .collect();
    let names: BTreeSet<String> = failing.iter().map(|(_, n)| n.clone()).collect();
    let want: BTreeSet<String> = v.scenarios.iter().cloned().collect();
    if names != want {
        // What the unexpected rows said, so a flake can be read from CI's log alone.
        let unexpected: Vec<String> = failing
            .iter()
            .filter(|(_, n)| !want.contains(n))
            .map(|(s, n)| {
                format!(
                    "{n} ({}): {} [step: {}; notes: {}]",
                    s["verdict"], s["message"], s["evidence"]["step"], s["evidence"]["notes"]
                )
            })
            .collect();
        problems.push(format!(
            "{}: failing {names:#?}, violations.toml lists {want:#?}; unexpected: {unexpected:#?}",
            v.name
        ));
    }
    for (s, _) in &failing {
        if s["verdict"] != "fail" {
            problems.push(format!(
                "{}: {} is {}, not fail: {}",
                v.name,
                label(s),
                s["verdict"],
                s["message"]
            ));
        }
        let clause = s["evidence"]["clause"]["id"].as_str().unwrap_or("");
        if !v.clauses.iter().any(|c| c == clause) {
            problems.push(format!(
                "{}: {}'s evidence names clause {clause:?}, not one of {:?}",
                v.name,
                label(s),
                v.clauses
            ));
        }
    }
    if code != 1 {
        problems.push(format!("{}: vxcert exited {code}, not 1", v.name));
    }
    problems
}

#[test]
fn each_planted_violation_fails_exactly_its_scenarios() {
    common::ensure_reference(&[]);
    let mut work: Vec<(&str, Violation)> = Vec::new();
    for peer in runnable_peers() {
        let vs = violations(peer);
        assert!(vs.len() >= 8, "{peer}: {} violations, at least 8", vs.len());
        work.extend(vs.into_iter().map(|v| (peer, v)));
    }
    let queue = std::sync::Mutex::new(work);
    let problems = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| loop {
                let Some((peer, v)) = queue.lock().unwrap().pop() else {
                    return;
                };
                let found = check_violation(peer, &v);
                problems.lock().unwrap().extend(found);
            });
        }
    });
    let problems = problems.into_inner().unwrap();
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The rows of one peer's table in peers/README.md: (switch, what, scenarios, clauses).
fn readme_rows(peer: &str) -> Vec<(String, String, Vec<String>, Vec<String>)> {
    let text = std::fs::read_to_string(peers_dir().join("README.md")).expect("peers/README.md");
    let start = format!("<!-- peers-table {peer}:");
    let at = text
        .find(&start)
        .unwrap_or_else(|| panic!("peers/README.md has no table for {peer}"));
    let body = &text[at..];
    let body = &body[..body
        .find("<!-- end peers-table -->")
        .expect("the table's end")];
    body.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            assert_eq!(cells.len(), 4, "a row of 4 cells: {l}");
            let unquote = |s: &str| s.trim_matches('`').to_string();
            (
                unquote(cells[0]),
                cells[1].to_string(),
                cells[2].split("<br>").map(str::to_string).collect(),
                cells[3].split(", ").map(unquote).collect(),
            )
        })
        .collect()
}

#[test]
fn the_readme_table_is_violations_toml() {
    for peer in PEERS {
        let want: Vec<_> = violations(peer)
            .into_iter()
            .map(|v| (v.name, v.what, v.scenarios, v.clauses))
            .collect();
        assert_eq!(
            readme_rows(peer),
            want,
            "peers/README.md's table for {peer}"
        );
    }
}

/// The broker peer reads its own viewer frames (`{"type":"input","text":…}`,
/// `{"type":"resize","size":[…]}`), which its profile declares with `input_frame` and
/// `resize_frame`: without them the kit's frames reach it, it reads neither, and the
/// gate row fails (times out waiting for the owner's input); with them it passes.
#[test]
fn the_broker_peers_frames_need_their_profile_keys() {
    common::ensure_reference(&[]);
    let dir = peers_dir().join("single-writer-broker");
    let text = std::fs::read_to_string(dir.join("profile.toml")).expect("the broker's profile");
    assert!(
        text.contains("input_frame = ") && text.contains("resize_frame = "),
        "{text}"
    );
    let text = text.replace("{profile_dir}", &dir.to_string_lossy());
    let gate = "A secondary's input and resize reach neither the agent nor the PTY";
    let verdict_of = |profile: &str| {
        let (_, report) = common::run_profile(profile, &["--tags", "@sw-gate and @part-broker"]);
        scenarios(&report)
            .iter()
            .find(|s| s["name"] == gate)
            .map(|s| s["verdict"].as_str().unwrap_or("").to_string())
            .expect("the gate row ran")
    };
    assert_eq!(verdict_of(&text), "pass");
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("input_frame = ") && !l.starts_with("resize_frame = "))
        .map(|l| format!("{l}\n"))
        .collect();
    // The owner's input never reaches the agent: the row waits for it and times out.
    let v = verdict_of(&without);
    assert!(v == "fail" || v == "timeout", "{v}");
}

/// The broker peer's create-only master daemonizes (`master_daemonizes = true` in its
/// profile); a profile that says otherwise fails exactly the row that waits for it
/// to serve (its foreground part exits 0), so the key is what makes the row pass.
#[test]
fn the_daemonizing_master_needs_its_profile_key() {
    common::ensure_reference(&[]);
    let dir = peers_dir().join("single-writer-broker");
    let text = std::fs::read_to_string(dir.join("profile.toml")).expect("the broker's profile");
    assert!(text.contains("master_daemonizes = true"), "{text}");
    let text = text
        .replace("{profile_dir}", &dir.to_string_lossy())
        .replace("master_daemonizes = true", "master_daemonizes = false");
    let (code, report) = common::run_profile(&text, &["--tags", "@sw-mode-explicit"]);
    let failing: Vec<&str> = scenarios(&report)
        .iter()
        .filter(|s| !["pass", "not-claimed"].contains(&s["verdict"].as_str().unwrap_or("")))
        .map(|s| s["name"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        failing,
        ["A create-only master on a free path serves there"]
    );
    assert_eq!(code, 1);
}

/// The broker peer's engines are written by its setup hook (`[single_writer] setup`)
/// in its own format: with a hook that fails, the scenario fails and says so.
#[test]
fn a_failing_setup_hook_fails_the_scenario_naming_it() {
    common::ensure_reference(&[]);
    let dir = peers_dir().join("single-writer-broker");
    let text = std::fs::read_to_string(dir.join("profile.toml")).expect("the broker's profile");
    let text: String = text
        .replace("{profile_dir}", &dir.to_string_lossy())
        .lines()
        .map(|l| match l.starts_with("setup = ") {
            true => "setup = [\"/bin/false\"]\n".to_string(),
            false => format!("{l}\n"),
        })
        .collect();
    assert!(text.contains("setup = [\"/bin/false\"]"), "{text}");
    let (code, report) = common::run_profile(&text, &["--tags", "@sw-attach-live"]);
    let ran = scenarios(&report);
    assert_eq!(ran.len(), 1, "{ran:#?}");
    assert_eq!(ran[0]["verdict"], "fail", "{}", ran[0]);
    let message = ran[0]["message"].as_str().unwrap_or("");
    assert!(message.contains("setup hook"), "{message}");
    assert_eq!(code, 1);
}

/// A `teardown` hook runs when the scenario's sandbox goes, with the placeholders
/// filled: the broker peer's profile given one that records its `{history}`.
#[test]
fn the_teardown_hook_runs_when_the_scenario_ends() {
    common::ensure_reference(&[]);
    let dir = peers_dir().join("single-writer-broker");
    let marker = tempfile::tempdir().expect("tempdir");
    let file = marker.path().join("teardown.txt");
    let text = std::fs::read_to_string(dir.join("profile.toml")).expect("the broker's profile");
    let text = text
        .replace("{profile_dir}", &dir.to_string_lossy())
        .replace(
            "\nbroker = ",
            &format!(
                "\nteardown = [\"/bin/sh\", \"-c\", \"echo {{history}} >> {}\"]\nbroker = ",
                file.display()
            ),
        );
    let (code, _) = common::run_profile(&text, &["--tags", "@sw-attach-live"]);
    assert_eq!(code, 0);
    let said = std::fs::read_to_string(&file).expect("the teardown hook wrote nothing");
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(
        lines[0].starts_with("/tmp/") && lines[0].ends_with("/history"),
        "{said}"
    );
}

/// The Go peer's own choices pass because its profile declares them: without
/// `archive_max_depth = 512` its reading of the kit's `depth-129` is the kit's pin
/// deviation (`non-strict`), and without `verdict_only` its verdict line of its own
/// words is not the kit's JSON line, so every checker row it runs fails.
#[test]
fn the_go_peers_choices_need_their_profile_keys() {
    common::ensure_reference(&[]);
    if !runnable_peers().contains(&"agent-restore-checker") {
        return;
    }
    let text = std::fs::read_to_string(peers_dir().join("agent-restore-checker/profile.toml"))
        .expect("the checker peer's profile");
    for key in ["archive_max_depth = 512\n", "verdict_only = true\n"] {
        assert!(text.contains(key), "{key}: {text}");
    }
    let verdicts = |profile: &str| -> Vec<(String, String)> {
        let (_, report) = common::run_profile(
            profile,
            &["--tags", "@asr-pin-archive-depth or @asr-schema1"],
        );
        let all = scenarios(&report);
        let names = scenario_names(all);
        all.iter()
            .zip(names)
            .filter(|(s, _)| s["verdict"] != "not-claimed")
            .map(|(s, n)| (n, s["verdict"].as_str().unwrap_or("").to_string()))
            .collect()
    };
    let depth =
        "The archive's nesting depth is bounded by the profile's cap, 128 unless it says otherwise";
    let schema1 = [
        "A schema-1 archive is read",
        "A schema-1 archive cannot smuggle a record (schema1-smuggling)",
        "A schema-1 archive cannot smuggle a record (schema1-smuggling-invalid-record)",
    ];
    let with = |verdict: &str, names: &[&str]| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = names
            .iter()
            .map(|n| (n.to_string(), verdict.to_string()))
            .collect();
        v.sort();
        v
    };
    let sorted = |mut v: Vec<(String, String)>| {
        v.sort();
        v
    };

    let mut honest = with("pass", &schema1);
    honest.push((depth.to_string(), "pass".to_string()));
    honest.sort();
    assert_eq!(sorted(verdicts(&text)), honest);

    let mut no_cap = with("pass", &schema1);
    no_cap.push((depth.to_string(), "non-strict".to_string()));
    no_cap.sort();
    assert_eq!(
        sorted(verdicts(&text.replace("archive_max_depth = 512\n", ""))),
        no_cap
    );

    let mut all = schema1.to_vec();
    all.push(depth);
    assert_eq!(
        sorted(verdicts(&text.replace("verdict_only = true\n", ""))),
        with("fail", &all)
    );
}
