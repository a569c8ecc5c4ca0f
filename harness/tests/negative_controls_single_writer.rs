//! The single-writer suite proves it can fail: with one of the reference's offline
//! checkers swapped for a deliberately non-conforming one, it must FAIL exactly the
//! scenarios that catch that defect and pass the others.

mod common;

use common::bin_dir;
use std::collections::BTreeSet;

/// Runs the single-writer suite with the reference's checkers, `swap` replacing
/// `key = [...]` lines of the table: the names of the scenarios that did not pass, and
/// of all scenarios.
fn run(swap: &[(&str, String)]) -> (i32, BTreeSet<String>, BTreeSet<String>) {
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
    ];
    for (k, v) in swap {
        table.iter_mut().find(|(key, _)| key == k).unwrap().1 = v.clone();
    }
    let lines: Vec<String> = table.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    let (code, report) = common::run_profile(
        &format!(
            "name = \"negative-control\"\ncontracts = [\"single-writer\"]\n[single_writer]\n{}\n",
            lines.join("\n")
        ),
        &[],
    );
    (
        code,
        common::scenario_names(&report, true),
        common::scenario_names(&report, false),
    )
}

#[test]
fn the_reference_checkers_pass_every_scenario() {
    let (code, failing, all) = run(&[]);
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
    let (code, failing, all) = run(&[("resume_plan", format!("[{blind:?}]"))]);
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
    let (code, failing, _) = run(&[("sidecar_check", format!("[{accept:?}, \"{{file}}\"]"))]);
    assert_eq!(code, 1);
    let expected: BTreeSet<String> =
        ["A malformed sidecar is refused, naming the rule".to_string()]
            .into_iter()
            .collect();
    assert_eq!(failing, expected);
}
