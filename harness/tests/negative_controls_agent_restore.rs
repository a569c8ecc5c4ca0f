//! The agent-restore suite proves it can fail: pointed at deliberately non-conforming
//! offline checkers, it must FAIL exactly the scenarios that catch each defect and
//! pass the others.

mod common;
#[path = "negative_controls_agent_restore/kit_readings.rs"]
mod kit_readings;
#[path = "negative_controls_agent_restore/switches.rs"]
mod switches;

use common::script;
use std::collections::BTreeSet;
use std::path::Path;

/// Scenarios whose every step expects the checker to accept its input.
const ACCEPTING: [&str; 4] = [
    "Templates the peer ships and the kit's valid cases are accepted",
    "Members a reader does not know, outside the record, are read past",
    "Archives phux writes, and the kit's valid cases, are read as valid",
    "A schema-1 archive is read",
];

/// The two scenarios that look for the input's content in the verdict.
const NO_CONTENT: [&str; 2] = [
    "A refusal carries no content of the template",
    "A refusal names the rule and the field, never the identity",
];

/// Runs the agent-restore suite with these two checkers: (exit code, the names of
/// the scenarios that did not pass, and of all scenarios).
fn run(archive: &str, template: &str) -> (i32, BTreeSet<String>, BTreeSet<String>) {
    common::ensure_reference(&[]);
    let (code, report) = common::run_profile(
        &format!(
            "name = \"negative-control\"\ncontracts = [\"agent-restore\"]\nfeatures = [\"template-check\"]\n\
             [agent_restore]\narchive_check = [{archive:?}, \"{{file}}\"]\ntemplate_check = [{template:?}, \"{{file}}\"]\n"
        ),
        // The server rows are the relay controls' (below).
        &["--tags", "not @optional-agent-server"],
    );
    (
        code,
        common::scenario_names(&report, true),
        common::scenario_names(&report, false),
    )
}

fn reference_checker(dir: &Path, name: &str, verb: &str) -> String {
    let vxref = common::bin_dir().join("vxref");
    script(
        dir,
        name,
        &format!("exec {} {verb} check --json \"$1\"", vxref.display()),
    )
}

#[test]
fn the_reference_checkers_pass_every_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let (code, failing, all) = run(
        &reference_checker(dir.path(), "a", "workspace"),
        &reference_checker(dir.path(), "t", "integration"),
    );
    assert_eq!(code, 0, "{failing:?}");
    assert!(all.len() >= 15, "{all:?}");
}

/// A checker without checks: every input is valid.
#[test]
fn an_accept_all_checker_fails_every_refusal_scenario_and_only_those() {
    let dir = tempfile::tempdir().unwrap();
    let accept = script(
        dir.path(),
        "accept",
        r#"printf '{"file":"%s","result":"valid","rule":null,"reason":null}\n' "$1""#,
    );
    let (code, failing, all) = run(&accept, &accept);
    assert_eq!(code, 1);
    let expected: BTreeSet<String> = all
        .iter()
        .filter(|n| !ACCEPTING.contains(&n.as_str()))
        .cloned()
        .collect();
    assert_eq!(failing, expected);
}

/// A checker that refuses everything, judged by verdict alone: no refusal proves
/// anything when the valid twin is refused too, so every refusal row is
/// `inconclusive` (its control in the evidence), every acceptance row fails, and
/// no checker row passes.
#[test]
fn a_refuse_all_checker_by_verdict_alone_makes_every_refusal_inconclusive() {
    common::ensure_reference(&[]);
    let (code, report) = common::run_profile(
        "name = \"refuse-all\"\ncontracts = [\"agent-restore\"]\nfeatures = [\"template-check\"]\n\
         [agent_restore]\nverdict_only = true\nparts = [\"checker\"]\n\
         archive_check = [\"sh\", \"-c\", \"exit 1\", \"{file}\"]\n\
         template_check = [\"sh\", \"-c\", \"exit 1\", \"{file}\"]\n",
        &["--tags", "@part-checker"],
    );
    assert_eq!(code, 1);
    let scenarios = report["scenarios"].as_array().unwrap();
    assert!(scenarios.len() >= 150, "{}", scenarios.len());
    for s in scenarios {
        let (name, verdict) = (s["name"].as_str().unwrap(), s["verdict"].as_str().unwrap());
        if ACCEPTING.contains(&name) {
            assert_eq!(verdict, "fail", "{name}: {s}");
        } else {
            assert_eq!(verdict, "inconclusive", "{name}: {s}");
            let control = &s["evidence"]["control"];
            assert_eq!(control["accepted"], false, "{name}: {s}");
            assert!(
                control["what"].as_str().unwrap().contains("corpus's valid"),
                "{name}: {control}"
            );
        }
    }
}

/// The reference's verdicts, with the input's last bytes added to every refusal's
/// reason: only the two content-exclusion scenarios may notice, and as SHOULD rows
/// (the ADR does not say what a refusal may quote) they leave the run certified.
#[test]
fn a_checker_that_quotes_its_input_fails_the_content_scenarios_only() {
    let dir = tempfile::tempdir().unwrap();
    let quote = dir.path().join("quote.py");
    std::fs::write(
        &quote,
        r#"import json, sys
v = json.loads(sys.stdin.read())
if v["result"] != "valid":
    v["reason"] += " near " + open(sys.argv[1], "rb").read()[-200:].decode("utf-8", "replace")
print(json.dumps(v))
sys.exit(0 if v["result"] == "valid" else 1)
"#,
    )
    .unwrap();
    let leak = |name: &str, verb: &str| {
        let vxref = common::bin_dir().join("vxref");
        script(
            dir.path(),
            name,
            &format!(
                "{} {verb} check --json \"$1\" | python3 {} \"$1\"",
                vxref.display(),
                quote.display()
            ),
        )
    };
    let (code, failing, _) = run(&leak("a", "workspace"), &leak("t", "integration"));
    assert_eq!(code, 0, "{failing:?}");
    let expected: BTreeSet<String> = NO_CONTENT.iter().map(|s| s.to_string()).collect();
    assert_eq!(failing, expected);
}

/// Runs the server rows against the relay in `mode` (the reference behind a wire
/// relay that breaks one ADR-0068 rule): (exit code, the names of the scenarios that
/// failed, of those that passed, and of those that were inconclusive).
fn run_relay(mode: &str) -> (i32, BTreeSet<String>, BTreeSet<String>, BTreeSet<String>) {
    common::ensure_reference(&["leaky_daemon"]);
    let serve = format!(
        "[\"{{bin_dir}}/examples/leaky_daemon\", {mode:?}, \"{{bin_dir}}/vxref\", \"{{socket}}\"]\n\
         [readiness]\nkind = \"file\"\npath = \"{{socket}}.ready\""
    );
    let (code, report) = server_rows_report(&serve, "{socket}", PLUGINS_DIR, "", SERVER_ROWS);
    let with = |verdict: &str| with_verdict(&report, verdict);
    assert!(
        with("harness-error").is_empty(),
        "{:?}",
        with("harness-error")
    );
    (code, with("fail"), with("pass"), with("inconclusive"))
}

/// The server rows every control runs (the legacy ones need `legacy_serve`).
const SERVER_ROWS: &str = "@optional-agent-server and not @optional-legacy-spawn";

/// Runs the scenarios `tags` selects with this `serve` (profile TOML from the value
/// on, tables after it allowed), the clients' (workspace and launch) `--socket` word and `extra`
/// lines of the `[agent_restore]` table (a `satellite_window` claims `satellite`).
fn run_server_rows(
    serve: &str,
    client_socket: &str,
    extra: &str,
    tags: &str,
) -> (i32, BTreeSet<String>, BTreeSet<String>) {
    let (code, report) = server_rows_report(serve, client_socket, PLUGINS_DIR, extra, tags);
    let with = |verdict: &str| with_verdict(&report, verdict);
    assert!(
        with("harness-error").is_empty(),
        "the control profile lacks a template: {:?}",
        with("harness-error")
    );
    (code, with("fail"), with("pass"))
}

/// Where the control profiles' implementation reads plugins: the reference's place.
const PLUGINS_DIR: &str = "{config_home}/venomx/plugins";

/// The names of the report's scenarios with this verdict.
fn with_verdict(report: &serde_json::Value, verdict: &str) -> BTreeSet<String> {
    report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .filter(|s| s["verdict"] == verdict)
        .map(|s| s["name"].as_str().expect("name").to_string())
        .collect()
}

/// The run of [`run_server_rows`] with the plugins directory given: (exit code,
/// report.json).
fn server_rows_report(
    serve: &str,
    client_socket: &str,
    plugins_dir: &str,
    extra: &str,
    tags: &str,
) -> (i32, serde_json::Value) {
    server_rows_report_with(
        "{bin_dir}/vxref",
        serve,
        client_socket,
        plugins_dir,
        extra,
        tags,
    )
}

/// [`server_rows_report`] with `vxref` for every `vxref` the profile runs (the
/// suite's `cli` and the clients; `serve` names its own).
fn server_rows_report_with(
    vxref: &str,
    serve: &str,
    client_socket: &str,
    plugins_dir: &str,
    extra: &str,
    tags: &str,
) -> (i32, serde_json::Value) {
    // The reference claims the kit's fallback argv (`@optional-fallback-argv`).
    let features = "\"agent-server\", \"fallback-argv\"";
    server_rows_report_claiming(
        vxref,
        features,
        serve,
        client_socket,
        plugins_dir,
        extra,
        tags,
    )
}

/// [`server_rows_report_with`] claiming `features` (and those `extra` needs).
fn server_rows_report_claiming(
    vxref: &str,
    features: &str,
    serve: &str,
    client_socket: &str,
    plugins_dir: &str,
    extra: &str,
    tags: &str,
) -> (i32, serde_json::Value) {
    let mut features = features.to_string();
    if extra.contains("satellite_window") {
        features.push_str(", \"satellite\"");
    }
    if extra.contains("legacy_serve") {
        features.push_str(", \"legacy-spawn\"");
    }
    common::run_profile(
        &format!(
            "name = \"negative-control\"\ncontracts = [\"agent-restore\"]\nfeatures = [{features}]\n\
             cli = [{vxref:?}, \"--socket\", \"{{socket}}\"]\n\
             serve = {serve}\n\
             [agent_restore]\nplugins_dir = {plugins_dir:?}\n\
             archive_check = [{vxref:?}, \"workspace\", \"check\", \"--json\", \"{{file}}\"]\n\
             workspace_save = [{vxref:?}, \"--socket\", {client_socket:?}, \"workspace\", \"save\", \"--output\", \"{{file}}\"]\n\
             workspace_restore = [{vxref:?}, \"--socket\", {client_socket:?}, \"workspace\", \"restore\", \"--archive\", \"{{file}}\", \"--fallback-argv\", \"{{fallback_argv}}\"]\n\
             agent_launch = [{vxref:?}, \"--socket\", {client_socket:?}, \"agent\", \"launch\", \"--window\", \"{{window}}\", \"--integration\", \"{{integration}}\", \"--native-id\", \"{{native_id}}\"]\n{extra}"
        ),
        &["--tags", tags],
    )
}

/// A restore client that never confirms over the connection it restores through:
/// it names the daemon's socket itself, so the suite's relays never see it: a pane
/// whose record reads back altered survives, and a creation result the relay would
/// hide comes back. Only the two rows that restore through a relay may notice.
#[test]
fn a_restore_that_skips_the_lying_confirmation_fails_the_confirm_row_only() {
    common::ensure_reference(&[]);
    let serve = "[\"{bin_dir}/vxref\", \"serve\", \"--socket\", \"{socket}\"]\n[readiness]\nkind = \"socket\"";
    let (code, failing, passing) =
        run_server_rows(serve, "{runtime_dir}/venomx/s.sock", "", SERVER_ROWS);
    assert_eq!(code, 1);
    assert!(passing.len() >= 9, "{passing:?}");
    // And the rows whose relay (readback, reserved namespace, a name taken, a pane
    // replaced, a plugin reload before the launch) the bypassing client never crosses.
    assert_eq!(
        failing,
        names(&[
            CONFIRM_ROW,
            HIDDEN_RESULT_ROW,
            "A launch client whose record reads back altered fails and gets the new pane killed",
            "A name another client takes after restore read the sessions is skipped, and that session is left alone",
            "A pane replaced after its record was read is not archived, though the pane count is unchanged",
            "A server whose reserved namespace takes a client's write is refused before anything is created, whatever it advertises",
            RELOAD_ROW,
        ])
    );
}

/// A launch client that confirms over another connection than it launched through:
/// it names the daemon's socket itself, so the relay that drops its `meta.set` never
/// sees it, and against the older server the record it sets is confirmed. Only the
/// fallback row whose confirmation must fail may notice.
#[test]
fn a_launch_that_bypasses_the_dropping_relay_fails_the_unconfirmed_fallback_row_only() {
    common::ensure_reference(&[]);
    let serve = "[\"{bin_dir}/vxref\", \"serve\", \"--socket\", \"{socket}\"]\n[readiness]\nkind = \"socket\"";
    let extra = "legacy_serve = [\"{bin_dir}/vxref\", \"serve\", \"--socket\", \"{socket}\", \"--legacy-spawn\"]\n";
    let (code, failing, passing) = run_server_rows(
        serve,
        "{runtime_dir}/venomx/s.sock",
        extra,
        "@asr-fallback or @asr-readback",
    );
    assert_eq!(code, 1);
    assert_eq!(passing.len(), 2, "{passing:?}");
    assert_eq!(
        failing,
        names(&[
            "Against an older server, a record the client cannot confirm gets the new pane killed",
            "A launch client whose record reads back altered fails and gets the new pane killed",
        ])
    );
}

/// An implementation that claims satellites but whose "satellite" window is a
/// local one, where the reference installs the record: the satellite row fails.
#[test]
fn a_satellite_that_accepts_local_provenance_fails_the_satellite_row() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let vxref = common::bin_dir().join("vxref");
    let vxref = vxref.display();
    let local_window = script(
        dir.path(),
        "satellite-window",
        &format!(
            "s=$({vxref} --socket \"$1\" --json session create --name sat | \
             python3 -c 'import json,sys; print(json.load(sys.stdin)[\"session\"])') || exit 1\n\
             exec {vxref} --socket \"$1\" --json window create --session \"$s\" --name w"
        ),
    );
    let serve = "[\"{bin_dir}/vxref\", \"serve\", \"--socket\", \"{socket}\"]\n[readiness]\nkind = \"socket\"";
    let extra = format!("satellite_window = [{local_window:?}, \"{{socket}}\"]\n");
    let (code, failing, _) = run_server_rows(serve, "{socket}", &extra, "@asr-satellite");
    assert_eq!(code, 1);
    assert_eq!(
        failing,
        names(&["A spawn on a satellite refuses the local agent-session record"])
    );
}

/// A daemon whose one-shot creation results any connection reads, as often as it
/// likes (`VXREF_NEGATIVE_CONTROL=created-result-shared`): exactly the rows where
/// another client, or a second read, must see nothing fail.
#[test]
fn a_creation_result_readable_by_any_connection_fails_the_one_shot_rows() {
    common::ensure_reference(&[]);
    let serve = "[\"/usr/bin/env\", \"VXREF_NEGATIVE_CONTROL=created-result-shared\", \"{bin_dir}/vxref\", \"serve\", \"--socket\", \"{socket}\"]\n[readiness]\nkind = \"socket\"";
    let (code, failing, passing) = run_server_rows(serve, "{socket}", "", SERVER_ROWS);
    assert_eq!(code, 1);
    assert!(passing.len() >= 9, "{passing:?}");
    assert_eq!(failing, names(&ONE_SHOT_SHARED_FAILS));
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A relay whose readback lies: every row that reads a record back must fail, and
/// restore's confirmation must refuse (and remove) the pane it launched.
#[test]
fn a_readback_that_lies_fails_every_readback_row() {
    let (code, failing, passing, inconclusive) = run_relay("readback-lies");
    assert_eq!(code, 1);
    assert!(passing.len() >= 9, "{passing:?}");
    assert_eq!(failing, names(&READBACK_LIES_FAILS));
    assert_eq!(inconclusive, names(&READBACK_LIES_INCONCLUSIVE));
}

/// A relay that drops `meta.set`: every row that writes through meta.set (a refusal
/// expected, or a value read back) must fail; spawn-path rows pass.
#[test]
fn a_dropped_meta_set_fails_every_meta_set_row() {
    let (code, failing, passing, inconclusive) = run_relay("drop-meta-set");
    assert_eq!(code, 1);
    assert!(passing.len() >= 9, "{passing:?}");
    assert_eq!(failing, names(&DROP_META_SET_FAILS));
    assert_eq!(inconclusive, names(&DROP_META_SET_INCONCLUSIVE));
}

/// A relay whose reserved namespace is writable: restore's probe must refuse every
/// native restore before creating anything; records and launch rows pass.
#[test]
fn a_writable_reserved_namespace_fails_every_native_restore_row() {
    let (code, failing, passing, inconclusive) = run_relay("reserved-writable");
    assert_eq!(code, 1);
    assert!(passing.len() >= 9, "{passing:?}");
    assert_eq!(failing, names(&RESERVED_WRITABLE_FAILS));
    assert_eq!(inconclusive, names(&RESERVED_WRITABLE_INCONCLUSIVE));
}

/// The one-shot row (05) whose restore goes through the suite's relay that hides
/// the creation result.
const HIDDEN_RESULT_ROW: &str = "A restore whose creation result does not come back stamps nothing";
/// The one-shot row (05) that expects the reserved namespace refused to a client.
const LOSER_ROW: &str =
    "A create that loses the name leaves no result, and no client may write one";

/// Restore's confirmation row (05): it restores through the suite's own lying relay.
const CONFIRM_ROW: &str =
    "A replacement pane whose record reads back altered is removed and the restore fails";

// Reviewed by hand: each row below reads a record back (meta.get, a saved archive,
// or restore's confirmation); the passing rows read none, or only its presence.
const READBACK_LIES_FAILS: [&str; 22] = [
    "A pane killed while save reads the records is archived with its record or not at all",
    "The launch client reads back the exact record before it succeeds",
    "A record given to pane.split and pane.float is there from the pane's first turn",
    "A record with a member beyond the three is refused on both write paths",
    "A resume-only integration resumes a supplied id",
    "A saved native session is restored from its record, as a new process",
    "An existing session name is skipped and its process is untouched",
    "Native ids are trimmed, not option-shaped, control-free and at most 1024 bytes",
    "Plugin and integration ids are trimmed, control-free and at most 120 bytes",
    "Restore rebuilds each window's split tree, for the native pane and fallback panes alike",
    "Restore uses the current template, not the one of the save",
    "Save copies each pane's record into that pane's agent_session",
    "Setting agent/v1 leaves agent-session/v1 unchanged",
    "The caller's id is the resumed id, in argv, environment and record",
    "The whole encoded record is at most 4096 bytes on both write paths",
    "Two panes of one integration keep their own ids",
    "Two restores of one name race: the winner's pane has the winner's record",
    "Without an id, fresh_args gets a minted UUID",
    "A native id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's",
    "An owner id's bound is in bytes, in every UTF-8 width, and its trim is Unicode's",
    "A restored native pane runs in the working directory its current template names",
    "Save copies each split pane's own record, and none to a split without one",
];
// Each row below writes through meta.set and expects a refusal (the size bound) or
// reads the value back; native restore fails too, since a dropped probe looks like a
// writable reserved namespace. Spawn-path records are untouched. The rows whose
// invalid meta.set may be accepted if the next save fails closed on it pass: the
// dropped write stored nothing, and the save archives nothing of it. The refused
// restores whose valid twin restores natively are inconclusive (NATIVE_TWIN_ROWS).
const DROP_META_SET_FAILS: [&str; 10] = [
    LOSER_ROW,
    "A saved native session is restored from its record, as a new process",
    "Restore rebuilds each window's split tree, for the native pane and fallback panes alike",
    "Restore uses the current template, not the one of the save",
    "Setting agent/v1 leaves agent-session/v1 unchanged",
    "The whole encoded record is at most 4096 bytes on both write paths",
    "Two panes of one integration keep their own ids",
    "Two restores of one name race: the winner's pane has the winner's record",
    "A restored native pane runs in the working directory its current template names",
    "A name another client takes after restore read the sessions is skipped, and that session is left alone",
];
// Exactly the rows that restore a session natively (the probe runs only then), and
// the one that expects the reserved namespace refused; the refused restores whose
// valid twin restores natively are inconclusive (NATIVE_TWIN_ROWS).
const RESERVED_WRITABLE_FAILS: [&str; 7] = [
    LOSER_ROW,
    "A saved native session is restored from its record, as a new process",
    "Restore rebuilds each window's split tree, for the native pane and fallback panes alike",
    "Restore uses the current template, not the one of the save",
    "Two restores of one name race: the winner's pane has the winner's record",
    "A name another client takes after restore read the sessions is skipped, and that session is left alone",
    "A restored native pane runs in the working directory its current template names",
];
// The rows where another connection, or the same one a second time, reads the
// result; the restore rows read their own result once and pass.
const ONE_SHOT_SHARED_FAILS: [&str; 2] = [
    "A creation result is read by its own connection only, and only once",
    LOSER_ROW,
];

/// The reference serving a plugins directory where the suite writes none: it knows
/// no integration, so it refuses every launch, the refusal rows' valid twins too.
/// Those rows are `inconclusive` (their control, the twin, in the evidence), never
/// `pass`; the acceptance row fails.
#[test]
fn a_server_that_knows_no_integration_makes_the_launch_refusals_inconclusive() {
    common::ensure_reference(&[]);
    let serve = "[\"{bin_dir}/vxref\", \"serve\", \"--socket\", \"{socket}\"]\n[readiness]\nkind = \"socket\"";
    let (code, report) = server_rows_report(
        serve,
        "{socket}",
        "{state_home}/not-the-plugins",
        "",
        "@asr-option-shaped or @asr-launch-plain",
    );
    assert_eq!(code, 1);
    assert_eq!(
        with_verdict(&report, "inconclusive"),
        names(&[
            "An option-shaped identity is refused before anything is spawned",
            "A provider without native identity cannot be given one",
        ])
    );
    assert_eq!(with_verdict(&report, "pass"), names(&[]));
    for s in report["scenarios"].as_array().unwrap() {
        if s["verdict"] == "inconclusive" {
            let control = &s["evidence"]["control"];
            assert_eq!(control["accepted"], false, "{s}");
            assert!(
                control["what"]
                    .as_str()
                    .unwrap()
                    .contains("the same launch"),
                "{control}"
            );
        }
    }
}

/// A profile that names its own error codes (`[agent_restore.pins]`) is judged
/// strictly by them: the reference, which answers with the kit's code, fails the row
/// under the pin's clause (without the mapping it passes).
#[test]
fn a_declared_error_name_is_judged_strictly() {
    common::ensure_reference(&[]);
    let serve = "[\"{bin_dir}/vxref\", \"serve\", \"--socket\", \"{socket}\"]\n[readiness]\nkind = \"socket\"";
    let extra =
        "[agent_restore.pins]\n\"invalid_params.native_id\" = \"invalid_params.identity\"\n";
    let (code, report) =
        server_rows_report(serve, "{socket}", PLUGINS_DIR, extra, "@asr-option-shaped");
    assert_eq!(code, 1);
    let row = "An option-shaped identity is refused before anything is spawned";
    assert_eq!(with_verdict(&report, "fail"), names(&[row]));
    let s = &report["scenarios"][0];
    assert_eq!(s["evidence"]["clause"]["id"], "asr-pin-error-names", "{s}");
    assert!(
        s["evidence"]["expected"]
            .as_str()
            .unwrap()
            .contains("invalid_params.identity"),
        "{s}"
    );
}

/// The refusal rows whose valid twin is a native restore (the archive restored before
/// the plugin change, or without the suite's relay). Each control that breaks native
/// restore itself (its readback lies, its reserved namespace takes writes, or it
/// drops the probe's meta.set) refuses that twin too: those rows prove nothing
/// against it and are `inconclusive`, never `pass` (before controls, the two relay
/// rows failed there only because the restore was refused for another reason than
/// theirs, and the plugin-change rows passed). The control's own defect is failed by
/// the rows that restore natively.
const NATIVE_TWIN_ROWS: [&str; 5] = [
    "A native session whose integration no longer resolves is never created, nor its program started",
    CONFIRM_ROW,
    HIDDEN_RESULT_ROW,
    PROBE_RELAY_ROW,
    RELOAD_ROW,
];
/// The row (05) whose plugin change reaches the daemon through the suite's
/// `reload-before-launch` relay, after restore's plan.
const RELOAD_ROW: &str =
    "A plugin change that lands between restore's plan and its launch starts no program of any owner";
/// The probe row (05) whose restore goes through the suite's `reserved-writable` relay.
const PROBE_RELAY_ROW: &str = "A server whose reserved namespace takes a client's write is refused before anything is created, whatever it advertises";
/// Its twin, the launch client straight to a daemon whose readback lies, fails too.
const READBACK_LIES_INCONCLUSIVE: [&str; 6] = [
    NATIVE_TWIN_ROWS[0],
    CONFIRM_ROW,
    HIDDEN_RESULT_ROW,
    PROBE_RELAY_ROW,
    RELOAD_ROW,
    "A launch client whose record reads back altered fails and gets the new pane killed",
];
const DROP_META_SET_INCONCLUSIVE: [&str; 5] = NATIVE_TWIN_ROWS;
const RESERVED_WRITABLE_INCONCLUSIVE: [&str; 5] = NATIVE_TWIN_ROWS;
