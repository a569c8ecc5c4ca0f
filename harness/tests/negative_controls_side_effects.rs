//! The single-writer rows that observe a forbidden side effect directly (the lock's
//! descriptors, the engine's index opens, the reconcile's cwd and snapshot moment, an
//! unpersisted alias, retire's claim and orphan socket, a secondary's raw bytes, the
//! re-check's spawned master) prove they can fail: the reference broker with one
//! negative-control defect (`VXBROKER_NEGATIVE_CONTROL`, reference/broker/src/
//! negative.rs) fails exactly the rows that catch it, among the side-effect rows and
//! the re-check row (`@side-effects or @sw-recheck`: twelve scenarios, a few seconds a
//! run, instead of the whole suite per defect).

mod common;

use std::collections::BTreeSet;

const ROWS: &str = "@side-effects or @sw-recheck";

/// Runs those rows against the shipped reference profile with `defect` selected and
/// requires exactly `expected` (scenario names) to fail, naming `clause`.
fn defect_fails_exactly(defect: &str, clause: &str, expected: &[&str]) {
    common::ensure_reference(&[]);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let reference = std::fs::read_to_string(root.join("profiles/reference.toml"))
        .expect("profiles/reference.toml");
    let profile = reference.replacen(
        "[env]\n",
        &format!("[env]\nVXBROKER_NEGATIVE_CONTROL = \"{defect}\"\n"),
        1,
    );
    assert_ne!(
        profile, reference,
        "the reference profile has an [env] table"
    );
    let (code, report) =
        common::run_profile(&profile, &["--contract", "single-writer", "--tags", ROWS]);
    let all = common::scenario_names(&report, false);
    assert!(all.len() >= 12, "{defect}: the rows ran: {all:?}");
    let expected: BTreeSet<String> = expected.iter().map(|s| s.to_string()).collect();
    for name in &expected {
        assert!(all.contains(name), "no scenario named {name:?}");
    }
    let mut failing = BTreeSet::new();
    for s in report["scenarios"].as_array().expect("scenarios") {
        if s["verdict"] == "pass" {
            continue;
        }
        assert_eq!(s["verdict"], "fail", "{defect}: {s}");
        let name = s["name"].as_str().expect("name");
        assert_eq!(
            s["evidence"]["clause"]["id"],
            clause_of(name, clause),
            "{defect}: {s}"
        );
        failing.insert(s["name"].as_str().expect("name").to_string());
    }
    assert_eq!(failing, expected, "{defect}");
    // A SHOULD row's fail leaves the run certified: exit 1 only when a MUST row fails.
    let must_fails = report["scenarios"]
        .as_array()
        .expect("scenarios")
        .iter()
        .any(|s| s["verdict"] == "fail" && s["level"] != "should");
    assert_eq!(code, i32::from(must_fails), "{defect}: exit code");
}

const FORK_ROW: &str =
    "The lock's descriptor stays with the master: neither the agent nor what it forks holds it";
/// Its SHOULD twin: the lock kept from the agent while it runs.
const WHILE_RUNNING_ROW: &str =
    "While the agent runs, neither it nor what it forks holds the lock's descriptor";

/// The clause a failing row's evidence names: the fork row fails on the lock outliving
/// the agent (sw-agent-exit); every other row on the defect's own clause.
fn clause_of<'a>(row: &str, clause: &'a str) -> &'a str {
    if row == FORK_ROW {
        "sw-agent-exit"
    } else {
        clause
    }
}
const TWO_KEYS_ROW: &str =
    "Two keys launched at once: a key's lock never reaches the other key's master";

#[test]
fn a_broker_that_rechecks_before_the_acquire_fails_the_recheck_row_only() {
    defect_fails_exactly(
        "recheck-first",
        "sw-recheck",
        &["A master that appears while the broker waits for the lock is attached; the lock is released"],
    );
}

#[test]
fn a_master_that_hands_the_lock_to_the_agent_fails_the_fork_row_only() {
    defect_fails_exactly(
        "lock-to-agent",
        "sw-one-writer",
        &[FORK_ROW, WHILE_RUNNING_ROW],
    );
}

/// Opened without close-on-exec, the lock reaches the master under a second number
/// (and so the agent and its fork), and another key's master launched meanwhile.
#[test]
fn a_lock_opened_without_cloexec_fails_the_two_descriptor_rows() {
    defect_fails_exactly(
        "inherit-lock",
        "sw-one-writer",
        &[FORK_ROW, WHILE_RUNNING_ROW, TWO_KEYS_ROW],
    );
}

#[test]
fn a_gate_that_holds_text_only_fails_the_raw_bytes_row_only() {
    defect_fails_exactly(
        "gate-text-only",
        "sw-gate",
        &["A secondary's raw binary frames never reach the agent"],
    );
}

#[test]
fn a_retire_that_keeps_the_claim_fails_the_two_claim_rows_only() {
    defect_fails_exactly(
        "retire-keeps-claim",
        "sw-retire",
        &[
            "Retire clears the owner's claim: the next launch's first tab owns it",
            "Retire under take-over clears the owner file: the next launch's first tab owns it",
        ],
    );
}

#[test]
fn a_retire_that_reaps_without_the_lock_fails_the_orphan_row_only() {
    defect_fails_exactly(
        "reap-without-lock",
        "sw-reap-under-lock",
        &["Retire leaves an orphan socket alone while another instance holds the lock"],
    );
}

#[test]
fn a_reconcile_that_ignores_the_cwd_fails_the_cwd_row_only() {
    defect_fails_exactly(
        "any-cwd",
        "sw-alias",
        &["An id minted in another directory is not the launch's: the reconcile reads its cwd only"],
    );
}

#[test]
fn an_index_opened_read_write_fails_the_read_only_row_only() {
    defect_fails_exactly(
        "index-read-write",
        "sw-alias",
        &["The engine's index is opened only for reading, from the snapshot on"],
    );
}

#[test]
fn a_snapshot_after_the_launch_fails_the_snapshot_row_only() {
    defect_fails_exactly(
        "snapshot-after-launch",
        "sw-alias",
        &["The snapshot is taken before the launch: an id that appears right after it is the session's"],
    );
}

#[test]
fn an_id_pushed_without_its_alias_fails_the_persist_row_only() {
    defect_fails_exactly(
        "push-unpersisted",
        "sw-alias",
        &["An alias that cannot be persisted is never pushed to the viewer; the broker keeps serving"],
    );
}

#[test]
fn a_broker_that_follows_a_symlink_at_the_socket_path_fails_the_symlink_row_only() {
    defect_fails_exactly(
        "follow-symlink",
        "sw-not-socket",
        &["A symbolic link at the socket path is left alone: the broker never connects through it"],
    );
}
