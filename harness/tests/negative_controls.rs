//! The suite proves it can fail: rows run against small deliberately non-conforming
//! implementations must FAIL on exactly the scenarios that should catch each defect,
//! and pass the others of the same rows.

mod common;

use common::vxcert;
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

fn toml_list(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

/// Runs the rows selected by `tags` against a profile whose daemon is `serve`, and
/// returns (exit code, names of failing scenarios with their example, report).
fn run_control(serve: &[&str], tags: &str) -> (i32, BTreeSet<String>, Value) {
    run_control_env(serve, "", tags)
}

/// As [`run_control`], with extra profile TOML (an `[env]` table).
fn run_control_env(serve: &[&str], extra: &str, tags: &str) -> (i32, BTreeSet<String>, Value) {
    common::ensure_reference(&["leaky_daemon"]);
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("control.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"negative-control\"\nserve = {}\ncli = {}\ntimeout_multiplier = 1.0\n{}",
            toml_list(serve),
            toml_list(&["{bin_dir}/vxref", "--socket", "{socket}"]),
            if serve[0].ends_with("leaky_daemon") {
                "[readiness]\nkind = \"file\"\npath = \"{socket}.ready\"\n"
            } else {
                extra
            }
        ),
    )
    .unwrap();
    let report = dir.path().join("report");
    let out = Command::new(vxcert())
        .arg("run")
        .arg("--profile")
        .arg(&profile)
        .arg("--tags")
        .arg(tags)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    common::require_sentences(&report);
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    let failing = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["verdict"] != "pass")
        .map(|s| {
            let name = s["name"].as_str().unwrap().to_string();
            match s["example"].as_str() {
                Some(e) => format!("{name} [{e}]"),
                None => name,
            }
        })
        .collect();
    (out.status.code().unwrap_or(-1), failing, json)
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

const REFERENCE: &[&str] = &["{bin_dir}/vxref", "serve", "--socket", "{socket}"];

/// Runs `tags` against the control and against the reference: the control must fail
/// exactly the reference's failures (if any) plus `caught`, and the reference must
/// pass every scenario in `caught`.
fn assert_caught(serve: &[&str], tags: &str, caught: &[&str]) -> Value {
    let (_, reference_failing, _) = run_control(REFERENCE, tags);
    let caught = set(caught);
    assert!(
        reference_failing.is_disjoint(&caught),
        "the reference itself fails {reference_failing:?}"
    );
    let (code, failing, report) = run_control(serve, tags);
    assert_eq!(code, 1, "the control's run must fail: {report:#}");
    let want: BTreeSet<String> = reference_failing.union(&caught).cloned().collect();
    assert_eq!(failing, want, "{report:#}");
    assert_eq!(report["run"]["result"], "fail");
    report
}

/// A daemon that writes a checkpoint file at every start although recovery is
/// disabled: "Defaults / disabled" must fail exactly where it looks at the store.
#[test]
fn checkpoint_written_while_disabled_fails_defaults_row() {
    let script = "mkdir -p '{store}' && chmod 700 '{state_home}/venomx' '{state_home}/venomx/recovery' '{store}' \
        && printf '{}' > '{store}/c11111111-1111-4111-8111-111111111111.json' \
        && chmod 600 '{store}/c11111111-1111-4111-8111-111111111111.json' \
        && exec '{bin_dir}/vxref' serve --socket '{socket}'";
    let report = assert_caught(
        &["/bin/sh", "-c", script],
        "@rfc-8-defaults-disabled",
        &[
            "A default daemon writes no checkpoint through mutations and a clean stop",
            "A restarted default daemon starts with zero sessions again",
            "An explicit checkpoint is refused while disabled",
        ],
    );
    let rows: Vec<&str> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["row"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["Defaults / disabled"]);
}

/// A daemon whose pane.list shows the whole argv[0] (directory part included):
/// "Secret exclusion" must fail exactly on the argv0 scenario. (The checkpoint
/// scenario is left out: the relayed daemon's store is keyed by its own socket.)
#[test]
fn argv0_with_directory_fails_secret_exclusion_row() {
    let report = assert_caught(
        &[
            "{bin_dir}/examples/leaky_daemon",
            "argv0-dir",
            "{bin_dir}/vxref",
            "{socket}",
        ],
        "@rfc-8-secret-exclusion and not @rfc-4-writer-allowlist",
        &["pane.list shows the basename of argv[0] and nothing else of argv"],
    );
    let s = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "pane.list shows the basename of argv[0] and nothing else of argv")
        .unwrap();
    assert!(s["message"].as_str().unwrap().contains("argv0"), "{s:#}");
}

/// A daemon that answers a restore into a nonempty tree with success: "Duplicate
/// launch" must fail exactly on its four nonempty-restore scenarios (one through the
/// CLI, in 24_exact_values.feature).
#[test]
fn restore_into_nonempty_tree_fails_duplicate_launch_row() {
    assert_caught(
        &[
            "{bin_dir}/examples/leaky_daemon",
            "restore-nonempty",
            "{bin_dir}/vxref",
            "{socket}",
        ],
        "@rfc-8-duplicate-launch",
        &[
            "A retried restore is rejected once the tree is nonempty",
            "Restore into a tree with only an empty session is rejected",
            "Concurrent restores of one checkpoint: exactly one commits",
            "Restore into a nonempty tree through the CLI fails conflict.not_empty, exit 5",
        ],
    );
}

/// A daemon whose list calls corrupt files valid: "Corrupt/partial state" must fail
/// every damaged-file example and the inspect scenario must still pass (inspect
/// is not relayed differently).
#[test]
fn corrupt_listed_as_valid_fails_corrupt_partial_row() {
    let examples = [
        "truncated",
        "bad checksum",
        "duplicate key",
        "duplicate pane id",
        "invalid tree",
        "unknown field",
        "trailing data",
        "unsafe integer",
        "running pane in a clean checkpoint",
        "format 1.0",
    ];
    let caught: Vec<String> = examples
        .iter()
        .map(|e| {
            format!("A damaged newest file is listed corrupt, refuses restore, and restores nothing [{e}]")
        })
        .collect();
    // 22_closed_shapes extends the row: every file it plants is listed corrupt.
    let levels = [
        "envelope",
        "payload",
        "session",
        "window",
        "split node",
        "pane node",
        "pane",
        "omitted text",
        "plain text",
    ];
    let mut caught = caught;
    caught.extend(levels.iter().map(|l| format!(
        "One unknown key at a level of formats 1, 2 and 3 makes each file corrupt, listed without a generation, and restores nothing [{l}]"
    )));
    caught.extend(["float", "tag"].iter().map(|l| format!(
        "One unknown key in a float or a tag of formats 2 and 3 makes each file corrupt and restores nothing [{l}]"
    )));
    caught.extend(["generation 0", "checkpoint differs from file name"].iter().map(|e| format!(
        "A payload field outside its table rule is corrupt in formats 1 and 3; the older valid file still restores [{e}]"
    )));
    caught.push(
        "Two files with one generation are both listed corrupt with it, and neither restores"
            .into(),
    );
    let caught: Vec<&str> = caught.iter().map(String::as_str).collect();
    assert_caught(
        &[
            "{bin_dir}/examples/leaky_daemon",
            "corrupt-as-valid",
            "{bin_dir}/vxref",
            "{socket}",
        ],
        "@rfc-8-corrupt-partial",
        &caught,
    );
}

/// Runs `tags` against the reference with profile TOML `reference_extra`, then with
/// `control_extra`: the control must fail exactly the reference's failures plus
/// `caught`, which the reference passes. Returns the message of the first caught
/// scenario's failure, and the control's report.
fn assert_caught_by_profile(
    reference_extra: &str,
    control_extra: &str,
    tags: &str,
    caught: &[&str],
) -> (String, Value) {
    let (_, reference_failing, _) = run_control_env(REFERENCE, reference_extra, tags);
    let caught = set(caught);
    assert!(
        reference_failing.is_disjoint(&caught),
        "the reference itself fails {reference_failing:?}"
    );
    let (code, failing, report) = run_control_env(REFERENCE, control_extra, tags);
    assert_eq!(code, 1, "the control's run must fail: {report:#}");
    let want: BTreeSet<String> = reference_failing.union(&caught).cloned().collect();
    assert_eq!(failing, want, "{report:#}");
    let message = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["verdict"] == "fail" && caught.contains(s["name"].as_str().unwrap()))
        .and_then(|s| s["message"].as_str())
        .unwrap_or_default()
        .to_string();
    (message, report)
}

/// The reference whose panes carry their child's PID as a tag
/// (`VXREF_NEGATIVE_CONTROL=checkpoint-keeps-pid`), so every checkpoint holds it:
/// the checkpoint scenario of "Secret exclusion" must fail, naming the store file.
/// (A PID is a short number; it must be caught as a number, not as any substring.)
#[test]
fn a_checkpoint_keeping_the_pid_fails_the_checkpoint_secret_scenario() {
    let control = "[env]\nVXREF_NEGATIVE_CONTROL = \"checkpoint-keeps-pid\"\n";
    let (message, report) = assert_caught_by_profile(
        "",
        control,
        "@rfc-2-no-secrets-checkpointed",
        &["A checkpoint holds no token, environment, argv, argv0, cwd or PID"],
    );
    assert!(message.contains("holds the number"), "{message}");
    // The failed row shows the daemon as it stood: its argv and its state.
    let failed = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["verdict"] == "fail")
        .unwrap();
    let daemon = &failed["evidence"]["processes"][0];
    assert!(
        daemon["argv"][0]
            .as_str()
            .unwrap_or_default()
            .ends_with("vxref"),
        "{failed}"
    );
    assert!(daemon["duration_ms"].as_u64().is_some(), "{daemon}");
}

/// The reference with its store-directory fsyncs turned into no-ops (the injector's
/// `lie`): a daemon that acknowledges a checkpoint without syncing the directory.
/// "Interrupted writes" must fail exactly on the traced publication scenario (the
/// scenarios with fault plans of their own replace this plan).
#[test]
fn skipped_directory_fsync_fails_interrupted_writes_row() {
    let dir64 = "?".repeat(64);
    let extra = format!("[env]\nVXFAULT_PLAN = \"fsync@*/recovery/{dir64}=lie\"\n");
    let (message, _) = assert_caught_by_profile(
        "",
        &extra,
        "@rfc-8-interrupted-writes",
        &["An acknowledged checkpoint was written, synced, renamed and its directory synced first"],
    );
    assert!(message.contains("directory"), "{message}");
}

/// The reference's skill claimed, its command replaced by `skill` (a TOML list).
fn skill_claim(skill: &str) -> String {
    format!("features = [\"skill\"]\nskill = {skill}\n")
}

const REFERENCE_SKILL: &str = r#"["{bin_dir}/vxref", "manifest", "--skill"]"#;

const SKILL_SCENARIO: &str =
    "The generated agent skill never recommends the owner sentinel and names every required point";

/// The reference whose generated skill tells agents to retry a denied verb with the
/// owner sentinel (`VXREF_NEGATIVE_CONTROL=skill-recommends-owner`, in the daemon's
/// environment too): "Credentials" must fail exactly on the skill scenario, and its
/// clause `rfc-1-skill-no-owner` with it.
#[test]
fn skill_recommending_owner_fails_the_skill_scenario_of_credentials() {
    let claim = skill_claim(REFERENCE_SKILL);
    let control = format!("{claim}[env]\nVXREF_NEGATIVE_CONTROL = \"skill-recommends-owner\"\n");
    let (message, report) =
        assert_caught_by_profile(&claim, &control, "@rfc-8-credentials", &[SKILL_SCENARIO]);
    assert!(
        message.contains("@owner") && message.contains("line"),
        "{message}"
    );
    let clause = report["clauses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "rfc-1-skill-no-owner")
        .unwrap();
    assert_eq!(clause["verdict"], "fail", "{clause}");
}

/// A skill command whose output lacks one required point's heading fails the same
/// scenario, naming the point.
#[test]
fn skill_without_a_required_point_fails_the_skill_scenario() {
    let drop_point = r#"["/bin/sh", "-c", "'{bin_dir}/vxref' manifest --skill | grep -v '^## No process survives a restore$'"]"#;
    let (message, _) = assert_caught_by_profile(
        &skill_claim(REFERENCE_SKILL),
        &skill_claim(drop_point),
        "@rfc-1-skill-no-owner",
        &[SKILL_SCENARIO],
    );
    assert!(message.contains("process-limits"), "{message}");
}

/// A daemon that resumes an old daemon's event cursor (`resumed: true`, no
/// `source_changed`, no snapshot): "Resume" must fail exactly on the old-cursor
/// scenario; its attach scenarios pass through the relay unchanged.
#[test]
fn old_event_cursor_resumed_fails_resume_row() {
    let report = assert_caught(
        &[
            "{bin_dir}/examples/leaky_daemon",
            "resume-old-cursor",
            "{bin_dir}/vxref",
            "{socket}",
        ],
        "@rfc-8-resume",
        &["A new authenticated client with an old event cursor gets a source_changed snapshot"],
    );
    let s = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["verdict"] == "fail")
        .unwrap();
    assert!(s["message"].as_str().unwrap().contains("resumed"), "{s:#}");
}

/// A daemon that delivers `recovery.restored` to subscribers without read on
/// `server:root`: "Events/clients" must fail exactly on the scenario where a client
/// scoped to one session subscribes across a restore.
#[test]
fn restored_event_to_scoped_client_fails_events_clients_row() {
    let report = assert_caught(
        &[
            "{bin_dir}/examples/leaky_daemon",
            "restored-to-all",
            "{bin_dir}/vxref",
            "{socket}",
        ],
        "@rfc-8-events-clients",
        &["A client with read on one session gets no event of a restore and no recovery.restored; the owner gets them"],
    );
    let s = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["verdict"] == "fail")
        .unwrap();
    assert!(
        s["message"].as_str().unwrap().contains("recovery.restored"),
        "{s:#}"
    );
}

/// A relay that lists every valid checkpoint as corrupt refuses the damaged files'
/// valid twins too: every corrupt-newest example is `inconclusive` (its control, the
/// intact twin listed corrupt, in the evidence), and no row passes.
#[test]
fn valid_listed_as_corrupt_makes_the_damaged_file_rows_inconclusive() {
    let (code, _, report) = run_control(
        &[
            "{bin_dir}/examples/leaky_daemon",
            "valid-as-corrupt",
            "{bin_dir}/vxref",
            "{socket}",
        ],
        "@rfc-3-corrupt-newest-no-fallback",
    );
    assert_eq!(code, 1);
    let scenarios = report["scenarios"].as_array().unwrap();
    // The rows that also expect an older valid file listed valid fail at that step.
    assert!(scenarios.iter().all(|s| s["verdict"] != "pass"), "{report}");
    let damaged: Vec<&Value> = scenarios
        .iter()
        .filter(|s| {
            s["name"]
                == "A damaged newest file is listed corrupt, refuses restore, and restores nothing"
        })
        .collect();
    assert_eq!(damaged.len(), 10);
    for s in damaged {
        assert_eq!(s["verdict"], "inconclusive", "{s}");
        let control = &s["evidence"]["control"];
        assert_eq!(control["accepted"], false, "{s}");
        assert!(
            control["observed"].as_str().unwrap().contains("corrupt"),
            "{control}"
        );
    }
}

/// A relay that denies every `recovery.*` request, the owner's too, refuses the denial
/// rows' controls (the same call by the owner): every row that judges a non-admin
/// principal's denial of a recovery verb is `inconclusive`, with that control in its
/// evidence, and no row of the grants feature that calls a recovery verb passes.
#[test]
fn denying_the_owner_too_makes_the_denial_rows_inconclusive() {
    let (code, _, report) = run_control(
        &[
            "{bin_dir}/examples/leaky_daemon",
            "deny-recovery-verbs",
            "{bin_dir}/vxref",
            "{socket}",
        ],
        "@rfc-8-grants",
    );
    assert_eq!(code, 1);
    let scenarios = report["scenarios"].as_array().unwrap();
    // Only the two rows that never call a recovery verb pass, as on the reference.
    let passed: BTreeSet<&str> = scenarios
        .iter()
        .filter(|s| s["verdict"] == "pass")
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        passed,
        BTreeSet::from([
            "The unknown principal stays read-only: it cannot create, spawn or reconfigure",
            "Relaunch without write on the pane is denied before archive lookup",
        ]),
        "{report}"
    );
    let denials: Vec<&Value> = scenarios
        .iter()
        .filter(|s| {
            let name = s["name"].as_str().unwrap_or("");
            name.contains("cannot use recovery verbs") || name.contains("denied the recovery verbs")
        })
        .collect();
    assert_eq!(denials.len(), 9, "{report}");
    for s in denials {
        assert_eq!(s["verdict"], "inconclusive", "{s}");
        let control = &s["evidence"]["control"];
        assert_eq!(control["accepted"], false, "{s}");
        assert!(
            control["observed"]
                .as_str()
                .unwrap()
                .contains("denied.admin"),
            "{control}"
        );
    }
}

/// A daemon whose `serve` wrapper leaves a helper running beside it (a process
/// forked before the exec, as a runtime's helper or a resource tracker would be):
/// the seed's "execute and signal zero processes" is about restore, not the whole
/// tree a daemon keeps, so the child-process rows count only what the daemon starts
/// after it is ready, and pass (one launch of two concurrent relaunches included).
#[test]
fn a_helper_the_daemon_keeps_from_its_start_is_no_child_of_a_restore() {
    let script =
        "sleep 120 </dev/null >/dev/null 2>&1 & exec '{bin_dir}/vxref' serve --socket '{socket}'";
    let run = run_control(
        &["/bin/sh", "-c", script],
        "@rfc-8-vanished-executable or @rfc-8-duplicate-launch",
    );
    passes_having_run(
        run,
        &[
            "Restore succeeds and relaunch of a missing program fails cleanly",
            "Concurrent relaunches of one archive: exactly one launches",
        ],
    );
}

/// A control's run certifies (exit 0, nothing failing) and ran each of `rows`.
fn passes_having_run((code, failing, report): (i32, BTreeSet<String>, Value), rows: &[&str]) {
    assert_eq!((code, failing), (0, BTreeSet::new()), "{report:#}");
    let names: BTreeSet<&str> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    for row in rows {
        assert!(names.contains(row), "{row} did not run: {names:?}");
    }
}

/// A daemon whose periodic timer fires as soon as its first mutation activates it
/// (the reference's `tick-at-activation` variant): RFC §3 forbids an automatic
/// checkpoint only before that mutation, so every row that counts files,
/// generations or the store's calls counts from the store the setup left, and the
/// daemon certifies as the reference does.
#[test]
fn a_daemon_that_checkpoints_at_activation_passes_the_rows_that_count_writes() {
    let run = run_control_env(
        REFERENCE,
        "[env]\nVXREF_VARIANT = \"tick-at-activation\"\n",
        "@rfc-8-clean-restart or @rfc-8-interrupted-writes or @rfc-8-filesystem-security \
         or @rfc-8-retention-config or @exact-values",
    );
    passes_having_run(
        run,
        &[
            "Explicit restore reproduces topology and known exit codes without processes",
            "A failed checkpoint write keeps the prior generation and is reported",
            "Every power-cut state of one store change keeps a durable generation",
            "Disabling by reload stops writes but keeps archives",
            "Each write's generation is the largest valid retained one plus 1, across prunes",
            "A generation whose directory fsync failed does not count for pruning under a count of one",
        ],
    );
}
