//! Recovery rows whose seed sentence leaves a name or a reach to another RFC judge
//! that part as a pin: a daemon or CLI that differs there only is `non-strict`, and
//! the part the seed does state still fails.

mod common;

use common::vxcert;
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

fn toml_list(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

/// Runs the rows `tags` selects with daemon `serve` and CLI `cli`: the exit code and
/// each scenario's (verdict, message) by `name [example]`.
fn run(serve: &[&str], cli: &[&str], tags: &str) -> (i32, BTreeMap<String, (String, String)>) {
    run_env(serve, cli, "", tags)
}

/// As [`run`], with `extra` profile TOML (an `[env]` table).
fn run_env(
    serve: &[&str],
    cli: &[&str],
    extra: &str,
    tags: &str,
) -> (i32, BTreeMap<String, (String, String)>) {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("pins.toml");
    std::fs::write(
        &profile,
        format!(
            "name = \"recovery-pins\"\nserve = {}\ncli = {}\n{extra}",
            toml_list(serve),
            toml_list(cli)
        ),
    )
    .unwrap();
    let report = dir.path().join("report");
    let out = Command::new(vxcert())
        .args(["run", "--contract", "recovery", "--tags", tags, "--report"])
        .arg(&report)
        .arg("--profile")
        .arg(&profile)
        .output()
        .unwrap();
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    let rows = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let name = s["name"].as_str().unwrap().to_string();
            let key = match s["example"].as_str() {
                Some(e) => format!("{name} [{e}]"),
                None => name,
            };
            let verdict = s["verdict"].as_str().unwrap().to_string();
            let message = s["message"].as_str().unwrap_or_default().to_string();
            (key, (verdict, message))
        })
        .collect();
    (out.status.code().unwrap_or(-1), rows)
}

const SERVE: &[&str] = &["{bin_dir}/vxref", "serve", "--socket", "{socket}"];
const CLI: &[&str] = &["{bin_dir}/vxref", "--socket", "{socket}"];

/// A CLI that, with nothing listening, says so in plain text: how it reports that is
/// RFC-0001/0002's, so the rows are non-strict under `rfc-pin-cli-no-daemon-json`;
/// the same CLI exiting 0 fails them (the seed: recovery commands fail, they never
/// start a daemon).
#[test]
fn a_cli_that_reports_no_daemon_in_plain_text_is_non_strict_and_exit_0_fails() {
    let dir = tempfile::tempdir().unwrap();
    let vxref = common::bin_dir().join("vxref");
    for (code, want) in [(1, "non-strict"), (0, "fail")] {
        let cli = common::script(
            dir.path(),
            &format!("cli{code}"),
            &format!(
                "sock=$1; shift\n[ -S \"$sock\" ] || {{ echo \"venomx: nothing listens on $sock\"; exit {code}; }}\n\
                 exec {} --socket \"$sock\" \"$@\"",
                vxref.display()
            ),
        );
        let (_, rows) = run(SERVE, &[&cli, "{socket}"], "@rfc-8-on-demand");
        let no_daemon: Vec<_> = rows
            .iter()
            .filter(|(k, _)| k.starts_with("A recovery command with no daemon"))
            .collect();
        assert_eq!(no_daemon.len(), 4, "{rows:#?}");
        for (row, (verdict, message)) in no_daemon {
            assert_eq!(verdict, want, "{row}: {message}");
            if want == "non-strict" {
                assert!(message.contains("rfc-pin-cli-no-daemon-json"), "{message}");
            }
        }
        // The other rows of the feature run the CLI with a daemon: untouched.
        for (row, (verdict, message)) in rows
            .iter()
            .filter(|(k, _)| !k.starts_with("A recovery command with no daemon"))
        {
            assert_ne!(verdict, "fail", "{row}: {message}");
        }
    }
}

/// A daemon that logs every spawn's argv under its state home (the reference's
/// `spawn-log` control): the seed keeps argv out of the store, errors, events and
/// doctor, not out of logs, so the rows that scan every written file are
/// non-strict under `rfc-pin-secret-scan-scope`; the PID kept in a checkpoint
/// (`checkpoint-keeps-pid`) still fails the store row.
#[test]
fn argv_logged_outside_the_store_is_non_strict_and_a_pid_in_the_store_fails() {
    for (defect, row, want, why) in [
        (
            "spawn-log",
            "Doctor output holds no argv or token",
            "non-strict",
            "rfc-pin-secret-scan-scope",
        ),
        (
            "checkpoint-keeps-pid",
            "A checkpoint holds no token, environment, argv, argv0, cwd or PID",
            "fail",
            "the store file",
        ),
    ] {
        let (_, rows) = run_env(
            SERVE,
            CLI,
            &format!("[env]\nVXREF_NEGATIVE_CONTROL = \"{defect}\"\n"),
            "@rfc-8-secret-exclusion",
        );
        let (verdict, message) = &rows[row];
        assert_eq!(verdict, want, "{defect}: {message}");
        assert!(message.contains(why), "{defect}: {message}");
    }
}

/// `[recovery] grant` spells every grant a row sends: the kit's spelling given
/// explicitly certifies the reference's grant rows, and a spelling the reference
/// does not read fails the rows that delegate a grant, so the key reaches the wire.
#[test]
fn the_profiles_grant_spelling_reaches_every_request() {
    for (grant, want_fail) in [
        ("\"{right}@{resource}\"", false),
        ("\"{resource}#{right}\"", true),
    ] {
        let (code, rows) = run_env(
            SERVE,
            CLI,
            &format!("[recovery]\ngrant = '{grant}'\n"),
            "@rfc-8-grants",
        );
        let failing: Vec<&String> = rows
            .iter()
            .filter(|(_, (v, _))| v == "fail")
            .map(|(k, _)| k)
            .collect();
        assert_eq!(code != 0, want_fail, "{grant}: {failing:#?}");
        assert_eq!(!failing.is_empty(), want_fail, "{grant}: {rows:#?}");
    }
}
