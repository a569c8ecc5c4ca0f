//! The single-writer suite proves it can fail: with one of the reference's offline
//! checkers swapped for a deliberately non-conforming one, it must FAIL exactly the
//! scenarios that catch that defect and pass the others (a row that deviates only
//! from a kit pin is `non-strict`, which fails nothing).

mod common;

use common::bin_dir;
use std::collections::BTreeSet;

/// A control runs the rows of the part whose command it swaps or whose code holds its
/// defect: the other parts' rows never run that code, so they pass as the reference's
/// full run (`the_reference_checkers_pass_every_scenario`) shows, and running them
/// again would only cost CI time. The offline checkers (`key_check`, `resume_plan`,
/// `sidecar_check`) run in the checker rows only, the master and the client in 09's.
const CHECKER_ROWS: &str = "@part-checker";
const BROKER_ROWS: &str = "@part-broker";

/// Runs the single-writer suite's rows `tags` selects (all when empty) with the
/// reference's checkers, `swap` replacing `key = [...]` lines of the table: the names
/// of the scenarios that did not pass, and of all scenarios.
fn run(swap: &[(&str, String)], tags: &str) -> (i32, BTreeSet<String>, BTreeSet<String>) {
    let args = ["--tags", tags];
    let (code, report) = run_report(swap, None, if tags.is_empty() { &[] } else { &args });
    (
        code,
        failing(&report),
        common::scenario_names(&report, false),
    )
}

/// [`run`]'s report, with the reference broker's negative-control defect `defect`
/// selected and `args` given to `vxcert run`.
fn run_report(
    swap: &[(&str, String)],
    defect: Option<&str>,
    args: &[&str],
) -> (i32, serde_json::Value) {
    common::run_profile(&control_profile(swap, defect), args)
}

/// The reference broker's profile, with `swap`ped keys and the negative control
/// `defect` switched on.
fn control_profile(swap: &[(&str, String)], defect: Option<&str>) -> String {
    common::ensure_reference(&[]);
    let vxbroker = bin_dir().join("vxbroker");
    assert!(vxbroker.is_file(), "cargo build -p vx-broker first");
    let b = vxbroker.display();
    let mut table = [
        (
            "key_check",
            format!("[\"{b}\", \"key\", \"check\", \"--json\", \"{{key}}\"]"),
        ),
        (
            "key_check_new",
            format!("[\"{b}\", \"key\", \"check\", \"--json\", \"--new\", \"{{key}}\"]"),
        ),
        (
            "resume_plan",
            format!("[\"{b}\", \"resume-plan\", \"--json\"]"),
        ),
        (
            "sidecar_check",
            format!("[\"{b}\", \"sidecar\", \"check\", \"--json\", \"{{file}}\"]"),
        ),
        (
            "broker",
            format!(
                "[\"{b}\", \"serve\", \"--listen\", \"unix:{{socket}}\", \"--runtime-dir\", \"{{runtime_dir}}\", \"--lock-dir\", \"{{lock_dir}}\", \"--engines\", \"{{engines}}\"]"
            ),
        ),
        (
            "broker_takeover",
            format!(
                "[\"{b}\", \"serve\", \"--listen\", \"unix:{{socket}}\", \"--runtime-dir\", \"{{runtime_dir}}\", \"--lock-dir\", \"{{lock_dir}}\", \"--engines\", \"{{engines}}\", \"--takeover\"]"
            ),
        ),
        (
            "broker_scopes",
            format!(
                "[\"{b}\", \"serve\", \"--listen\", \"unix:{{socket}}\", \"--runtime-dir\", \"{{runtime_dir}}\", \"--lock-dir\", \"{{lock_dir}}\", \"--engines\", \"{{engines}}\", \"--scope-wrapper\", \"{{scope_wrapper}}\"]"
            ),
        ),
        ("scope_properties_env", "\"VXBROKER_SCOPE_PROPERTIES\"".to_string()),
        (
            "master_create",
            format!("[\"{b}\", \"master\", \"--create\", \"{{socket}}\", \"--\", \"/bin/cat\"]"),
        ),
        (
            "master_attach",
            format!("[\"{b}\", \"master\", \"--attach\", \"{{socket}}\"]"),
        ),
        (
            "client",
            format!("[\"{b}\", \"client\", \"--connect\", \"tcp:{{address}}\", \"--key\", \"{{key}}\", \"--fp\", \"{{fp}}\", \"--tab\", \"{{tab}}\"]"),
        ),
        (
            "client_take_over",
            format!("[\"{b}\", \"client\", \"--connect\", \"tcp:{{address}}\", \"--key\", \"{{key}}\", \"--fp\", \"{{fp}}\", \"--tab\", \"{{tab}}\", \"--take-over\"]"),
        ),
    ];
    for (k, v) in swap {
        table.iter_mut().find(|(key, _)| key == k).unwrap().1 = v.clone();
    }
    let lines: Vec<String> = table.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!(
        "name = \"negative-control\"\ncontracts = [\"single-writer\"]\nfeatures = [\"takeover\", \"scopes\"]\n{}{}[single_writer]\n{}\n",
        common::WAIT_BOUND_CONCURRENCY,
        defect.map_or(String::new(), |d| format!(
            "[env]\nVXBROKER_NEGATIVE_CONTROL = \"{d}\"\n"
        )),
        lines.join("\n")
    )
}

/// The scenarios whose verdict fails a run: a `non-strict` row (a deviation from a
/// kit pin only) is not among them.
fn failing(report: &serde_json::Value) -> BTreeSet<String> {
    report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter(|s| !["pass", "non-strict"].contains(&s["verdict"].as_str().unwrap_or_default()))
        .map(|s| s["name"].as_str().expect("name").to_string())
        .collect()
}

#[test]
fn the_reference_checkers_pass_every_scenario() {
    let (code, failing, all) = run(&[], "");
    assert_eq!(code, 0, "{failing:?}");
    assert!(all.len() >= 6, "{all:?}");
}

/// A planner that trusts `have` blindly: always a delta from it (fresh without one).
#[test]
fn a_planner_that_trusts_have_fails_the_non_delta_scenarios_only() {
    let dir = tempfile::tempdir().unwrap();
    let blind = common::script(
        dir.path(),
        "plan",
        r#"have=""
while [ $# -gt 0 ]; do [ "$1" = --have ] && have=$2; shift; done
if [ -n "$have" ]; then printf '{"plan":"delta","from":%s}\n' "$have"; else echo '{"plan":"fresh"}'; fi"#,
    );
    let (code, failing, all) = run(&[("resume_plan", format!("[{blind:?}]"))], CHECKER_ROWS);
    assert_eq!(code, 1);
    let expected: BTreeSet<String> = all
        .iter()
        .filter(|n| {
            n.starts_with("Anything else is a fresh start") || n.starts_with("A malformed counter")
        })
        // Without a `have` the blind planner says fresh, which is right.
        .filter(|n| !n.ends_with(": fresh-absent"))
        .cloned()
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(failing, expected);
}

/// A sidecar reader without checks: every file is valid.
#[test]
fn an_accept_all_sidecar_reader_fails_the_malformed_sidecar_scenario_only() {
    let dir = tempfile::tempdir().unwrap();
    let accept = common::script(
        dir.path(),
        "sidecar",
        r#"printf '{"file":"%s","result":"valid","rule":null,"reason":null}\n' "$1""#,
    );
    let (code, failing, _) = run(
        &[("sidecar_check", format!("[{accept:?}, \"{{file}}\"]"))],
        CHECKER_ROWS,
    );
    assert_eq!(code, 1);
    let expected: BTreeSet<String> =
        ["A malformed sidecar is refused, naming the rule".to_string()]
            .into_iter()
            .collect();
    assert_eq!(failing, expected);
}

/// Runs the rows `tags` selects against the reference broker with `defect` and
/// requires exactly `expected` to fail (everything else passes).
fn broker_defect_fails_exactly(defect: &str, tags: &str, expected: &[&str]) {
    let (code, report) = run_report(&[], Some(defect), &["--tags", tags]);
    let (failing, all) = (failing(&report), common::scenario_names(&report, false));
    assert_eq!(code, 1, "{defect}: the run must fail");
    let expected: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
    for name in &expected {
        assert!(all.contains(name), "no scenario named {name:?}");
    }
    assert_eq!(failing, expected, "{defect}");
}

/// A broker that takes a socket file for a live master (no `connect()` probe).
#[test]
fn a_broker_that_attaches_on_file_presence_fails_the_orphan_socket_rows_only() {
    broker_defect_fails_exactly(
        "attach-on-file",
        BROKER_ROWS,
        &[
            "A socket nobody listens on is an orphan: the open launches",
            "An orphan socket is not reaped while the lock is held elsewhere",
            "The whole tree killed (a reboot's stand-in) frees the lock; the orphan socket is reaped",
        ],
    );
}

/// A broker that `LOCK_UN`s the lock it handed to the master.
#[test]
fn a_broker_that_unlocks_after_spawn_fails_the_lock_held_rows_only() {
    broker_defect_fails_exactly(
        "unlock-after-spawn",
        BROKER_ROWS,
        &[
            "After LAUNCH the master holds the lock, even with the broker gone",
            "A second broker sharing the lock directory cannot launch a held key",
            "Closing the last viewer leaves the master",
            // 08_faults: the retried flock's lock must still be held after LAUNCH.
            "An interrupted flock (EINTR) is retried: LAUNCH with the lock held",
            // 12_scopes: the lock must pass through the scope wrapper into the master.
            "A launch runs in its own scope, holding the lock; an attach does not",
            "A wrapper whose probe fails: a plain spawn, never a refusal",
        ],
    );
}

/// A broker whose gate lets a secondary's input and resizes through.
#[test]
fn a_broker_that_forwards_secondary_input_fails_the_gate_rows_only() {
    broker_defect_fails_exactly(
        "forward-secondary",
        BROKER_ROWS,
        &[
            "force=1 demotes the owner in place; it keeps streaming",
            "A secondary's input and resize reach neither the agent nor the PTY",
            // 13_side_effects: its raw binary frames go through the same gate.
            "A secondary's raw binary frames never reach the agent",
            // 11_takeover: the gate is the same for another instance's viewers.
            "A viewer of the other broker is read-only and told who holds the session",
            "force=1 through the other broker demotes the holder in place",
        ],
    );
}

/// A broker without the re-probe after the acquire: a master that appeared meanwhile
/// is taken for an orphan (unlinked) and a second master launched.
#[test]
fn a_broker_without_the_recheck_fails_the_recheck_row_only() {
    broker_defect_fails_exactly(
        "no-recheck",
        BROKER_ROWS,
        &["A master that appears while the broker waits for the lock is attached; the lock is released"],
    );
}

/// A master that is neither create-only nor attach-only: `--create` replaces what is
/// at its path, `--attach` with nothing to reach exits 0 without a word.
#[test]
fn a_lenient_master_fails_the_explicit_mode_rows_only() {
    broker_defect_fails_exactly(
        "lenient-master",
        "@part-master",
        &[
            "A create-only master refuses a taken path (a regular file) and leaves it as it was",
            "A create-only master refuses a taken path (a socket nobody listens on) and leaves it as it was",
            "A create-only master refuses a taken path (a listener of the suite) and leaves it as it was",
            "An attach-only master with no master to reach (nothing) fails loud and creates nothing",
            "An attach-only master with no master to reach (a socket nobody listens on) fails loud and creates nothing",
        ],
    );
}

/// A client that sends `force=1` on its automatic reconnects.
#[test]
fn a_client_that_forces_on_reconnect_fails_the_client_rows_only() {
    broker_defect_fails_exactly(
        "client-forces",
        "@part-client",
        &[
            "The client's automatic reconnects after drops never send force",
            "A take-over the user asked for forces once; the reconnects after it do not",
        ],
    );
}

/// A broker whose list takes the engine's index ids for physical keys (no alias
/// resolution): a reconciled session shows twice, or under no placeholder.
#[test]
fn a_broker_that_lists_ghost_rows_fails_the_alias_list_rows_only() {
    broker_defect_fails_exactly(
        "ghost-row",
        BROKER_ROWS,
        &[
            "One new id: the placeholder resolves to it everywhere",
            "Retired, a reconciled session is still listed once, by its real id, from the engine's index",
            "After a broker restart the real id still attaches to the same agent",
        ],
    );
}

/// The lock and launch fault rows whose lock cannot be taken (ENOLCK, EACCES from
/// flock or from the lock file's open) or whose launch fails, run against the
/// reference broker with `defect` under the kit's default pins: the lock-error rows
/// fail, naming `clause` and saying `observed`, and nothing else does.
fn lock_error_rows_fail(defect: &str, clause: &str, observed: &str) {
    let args = ["--tags", "@fault-plans and @sw-launch-fail-frees"];
    let (code, report) = run_report(&[], Some(defect), &args);
    assert_eq!(code, 1, "{defect}: the run must fail");
    let rows = report["scenarios"].as_array().expect("scenarios");
    let lock_rows: Vec<_> = rows
        .iter()
        .filter(|s| {
            s["name"]
                .as_str()
                .unwrap_or_default()
                .starts_with("A lock that cannot be taken")
        })
        .collect();
    assert_eq!(
        lock_rows.len(),
        3,
        "{defect}: the ENOLCK, flock EACCES and open EACCES rows ran"
    );
    for s in &lock_rows {
        let e = &s["evidence"];
        assert_eq!(s["verdict"], "fail", "{defect}: {s}");
        assert_eq!(e["clause"]["id"], clause, "{defect}: {e}");
        assert!(
            e["observed"]
                .as_str()
                .unwrap_or_default()
                .contains(observed),
            "{defect}: {e}"
        );
    }
    assert_eq!(
        failing(&report).len(),
        lock_rows.len(),
        "{defect}: only the lock-error rows fail"
    );
    // Each failed live row shows the broker as it stood (argv, still running, its
    // stderr's end) and the files it created.
    for s in &lock_rows {
        let e = &s["evidence"];
        let brokers = e["processes"]
            .as_array()
            .expect("the brokers in the evidence");
        assert!(!brokers.is_empty(), "{defect}: {e}");
        let b = &brokers[0];
        assert!(
            b["argv"][0]
                .as_str()
                .unwrap_or_default()
                .ends_with("vxbroker")
                && b["argv"][1] == "serve",
            "{defect}: {b}"
        );
        assert!(
            b["exit_status"].is_null() && b.get("signal").is_none(),
            "{defect}: {b}"
        );
        if defect == "reset-on-lock-error" {
            let err = b["stderr_tail"].as_str().unwrap_or_default();
            assert!(
                err.contains("the terminal handler crashed"),
                "{defect}: {b}"
            );
        }
        let files: Vec<&str> = e["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["path"].as_str())
            .collect();
        // The flock rows' broker created the lock file before flock failed.
        if s["example"].as_str().unwrap_or_default().contains("flock@") {
            assert!(
                files.iter().any(|f| f.starts_with("locks/")),
                "{defect}: {files:?}"
            );
        }
    }
}

/// A broker that drops the connection with no close frame on a lock error (a crash
/// of its handler): the viewer's broken connection is no close code, so never a pin
/// deviation (`non-strict`) but a failure, with the kit's own pins.
#[test]
fn a_broker_that_drops_the_connection_on_a_lock_error_fails_those_rows() {
    lock_error_rows_fail(
        "reset-on-lock-error",
        "sw-launch-fail-frees",
        "without a close frame",
    );
}

/// A broker that closes a lock error 4409, BUSY: the seed's code for a lock that
/// would block, not one that cannot be taken.
#[test]
fn a_broker_that_calls_a_lock_error_busy_fails_those_rows() {
    lock_error_rows_fail("busy-on-lock-error", "sw-busy", "close code 4409");
}

/// The reference broker's `serve` command without the flags of an optional feature.
fn plain_broker() -> String {
    let b = bin_dir().join("vxbroker");
    let b = b.display();
    format!(
        "[\"{b}\", \"serve\", \"--listen\", \"unix:{{socket}}\", \"--runtime-dir\", \"{{runtime_dir}}\", \"--lock-dir\", \"{{lock_dir}}\", \"--engines\", \"{{engines}}\"]"
    )
}

/// Runs the suite with profile key `key` set to the plain broker and requires exactly
/// `expected` to fail.
fn plain_broker_fails_exactly(key: &str, expected: &[&str]) {
    let (code, failed, all) = run(&[(key, plain_broker())], BROKER_ROWS);
    let want: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
    assert_ne!(code, 0, "{key}");
    assert!(want.iter().all(|w| all.contains(w)), "{all:?}");
    assert_eq!(failed, want, "{key}");
}

/// Take-over claimed, but the brokers arbitrate alone (no `--takeover`): each
/// instance keeps its own claims, so another instance's viewer owns and writes.
#[test]
fn brokers_without_take_over_fail_the_take_over_rows_only() {
    plain_broker_fails_exactly(
        "broker_takeover",
        &[
            "A viewer of the other broker is read-only and told who holds the session",
            "A second tab of the owner's browser is passive and does not take the claim",
            "force=1 through the other broker demotes the holder in place",
        ],
    );
}

/// Scopes claimed, but the broker spawns every master plainly (no wrapper): none of
/// the scope rows can pass.
#[test]
fn a_broker_without_scopes_fails_the_scope_rows_only() {
    plain_broker_fails_exactly(
        "broker_scopes",
        &[
            "A launch runs in its own scope, holding the lock; an attach does not",
            "Kill, then relaunch at once: each launch has its own unit name",
            "A wrapper whose probe fails: a plain spawn, never a refusal",
            "A scope that fails at spawn closes the viewer 4502 and frees the lock",
        ],
    );
}

/// A master that cannot run off a terminal fails loud everywhere: given none, its
/// refusals of a taken path are `inconclusive` (their control, the same master on a
/// free path, fails too) and the free-path row fails; with `master_tty = true` the
/// suite runs it on a pty of its own and every master row passes.
#[test]
fn a_master_that_needs_a_terminal_is_inconclusive_without_one_and_passes_on_a_pty() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("needs-tty.sh");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\n[ -t 0 ] && [ -t 2 ] || { echo 'needs-tty: not on a terminal' >&2; exit 3; }\nexec \"$@\"\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let reference =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/reference.toml");
    let text = std::fs::read_to_string(reference).unwrap();
    let w = wrapper.display();
    let text = text
        .replace(
            "master_create = [\"{bin_dir}/vxbroker\"",
            &format!("master_create = [\"{w}\", \"{{bin_dir}}/vxbroker\""),
        )
        .replace(
            "master_attach = [\"{bin_dir}/vxbroker\"",
            &format!("master_attach = [\"{w}\", \"{{bin_dir}}/vxbroker\""),
        );
    assert!(
        text.contains("needs-tty.sh"),
        "the reference's master commands moved"
    );
    let args = ["--contract", "single-writer", "--tags", "@part-master"];
    let (code, report) = common::run_profile(&text, &args);
    assert_eq!(code, 1);
    let verdicts: Vec<(String, String)> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(verdicts.len(), 6, "{verdicts:?}");
    for (name, verdict) in &verdicts {
        let want = if name.contains("free path serves") {
            "fail"
        } else {
            "inconclusive"
        };
        assert_eq!(verdict, want, "{name}");
    }
    let on_a_pty = text.replacen(
        "[single_writer]\n",
        "[single_writer]\nmaster_tty = true\n",
        1,
    );
    let (code, report) = common::run_profile(&on_a_pty, &args);
    assert_eq!(code, 0, "{:?}", common::scenario_names(&report, true));
}

/// A broker the plan never kills (the rule waits for a third sidecar rename, the row
/// makes two): the crash row times out, and its note says what the broker left and
/// how often the rule matched and acted, so an implementer sees why from the report
/// alone.
#[test]
fn a_crash_plan_that_never_fires_times_out_naming_its_counts() {
    common::sidecar_crash_that_never_fires_names_its_counts(|args| run_report(&[], None, args));
}

/// A failed live row's `repro.sh` runs that row again, alone, with the kit (the
/// suite starts the broker): its own report has that one scenario, failing the same
/// way, and the script exits 1.
#[test]
fn a_live_rows_repro_runs_it_again_alone() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("control.toml");
    std::fs::write(&profile, control_profile(&[], Some("reset-on-lock-error"))).unwrap();
    let report = dir.path().join("report");
    let out = std::process::Command::new(common::vxcert())
        .args(["run", "--quiet", "--profile"])
        .arg(&profile)
        .arg("--report")
        .arg(&report)
        .args(["--tags", "@fault-plans and @sw-launch-fail-frees"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    let enolck = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["example"]
                .as_str()
                .is_some_and(|e| e.starts_with("ENOLCK"))
        })
        .expect("the ENOLCK row");
    assert_eq!(enolck["verdict"], "fail", "{enolck}");
    let rel = enolck["evidence"]["reproduce"]
        .as_str()
        .expect("a reproduction");
    let script = report.join(rel).join("repro.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    let at = format!("--at 08_faults.feature:{}", enolck["line"]);
    assert!(
        text.contains(&at) && text.contains("timeout -k 5"),
        "{text}"
    );
    let replay = std::process::Command::new("sh")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&replay.stdout).ends_with("exit 1\n"),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    let again: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(report.join(rel).join("out/report.json")).unwrap(),
    )
    .unwrap();
    let rows = again["scenarios"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{again}");
    assert_eq!(rows[0]["verdict"], "fail");
    assert_eq!(rows[0]["example"], enolck["example"]);
}

/// The take-over rows with `[single_writer].label_param` set to `label_param`: the
/// exit code and the names of the rows that did not pass.
fn take_over_rows_with_label_param(label_param: &str) -> (i32, BTreeSet<String>) {
    let profile = format!(
        "{}label_param = {label_param:?}\n",
        control_profile(&[], None)
    );
    let (code, report) = common::run_profile(&profile, &["--tags", "@sw-takeover"]);
    assert!(
        common::scenario_names(&report, false).len() >= 3,
        "{report}"
    );
    (code, failing(&report))
}

/// The seed names the holder's label, not where a viewer's label comes from: a broker
/// whose viewers cannot name themselves declares `label_param = ""` and its
/// take-over rows ask only for a holder with a label (the reference, given no
/// label, shows ""), while a parameter the broker does not read leaves every holder
/// unnamed and fails the rows that look for one.
#[test]
fn the_take_over_rows_use_the_profiles_label_parameter() {
    let (code, failed) = take_over_rows_with_label_param("");
    assert_eq!((code, failed), (0, BTreeSet::new()));
    let (code, failed) = take_over_rows_with_label_param("name");
    assert_eq!(code, 1);
    let want: BTreeSet<String> = [
        "A viewer of the other broker is read-only and told who holds the session",
        "A second tab of the owner's browser is passive and does not take the claim",
        "force=1 through the other broker demotes the holder in place",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(failed, want);
}
