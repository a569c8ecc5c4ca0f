//! Seed "Tests (mandatory)", slot commit and rewind rows (features 04), through
//! `vxpersist drive`.

mod support;

use serde_json::{json, Value};
use support::*;

fn writer(d: &mut Drive) {
    graph(
        d,
        vec![node("w", "pi", "persist"), node("j", "codex", "persist")],
        vec![],
    );
}

/// A drive whose writer finished visit 1, and that visit's slot ref.
fn after_first_visit() -> (Drive, String) {
    let mut d = Drive::start();
    writer(&mut d);
    d.run_to("w");
    let s1 = slot_ref(&d.inspect(), "w").unwrap();
    (d, s1)
}

fn has_key(i: &Value, r: &str) -> bool {
    i["store_keys"].as_array().unwrap().iter().any(|k| k == r)
}

fn last_ok(i: &Value, op: &str) -> usize {
    i["ops"]
        .as_array()
        .unwrap()
        .iter()
        .rposition(|o| o["op"] == op && o["ok"] == true)
        .unwrap()
}

#[test]
fn persist_reinvoke_commits_slot_c_clears_pause_then_deletes_b_and_the_old_blob() {
    let mut d = Drive::start();
    writer(&mut d);
    d.run_to("w");
    let old = slot_ref(&d.inspect(), "w").unwrap();
    d.ask("w", "ok?");
    let b = d.inspect()["checkpoint"]["pause"]["backend_session_state_ref"]
        .as_str()
        .unwrap()
        .to_owned();
    d.new_pod("pod-2");
    let r = d.answer("yes");
    assert_eq!(r["edge_selected"], true);
    let i = d.inspect();
    let c = slot_ref(&i, "w").unwrap();
    assert!(c != old && !c.contains("/pause/"));
    assert_eq!(i["checkpoint"]["pause"], json!(null));
    let put_c = op_index(&i, "store_put", Some(&c)).unwrap();
    let save = last_ok(&i, "save_checkpoint");
    let del_b = op_index(&i, "store_delete", Some(&b)).unwrap();
    let del_old = op_index(&i, "store_delete", Some(&old)).unwrap();
    assert!(put_c < save && save < del_b && save < del_old);
    assert_eq!(i["store_keys"], json!([c]));
}

#[test]
fn old_blob_is_deleted_only_after_the_checkpoint_committed() {
    let (mut d, s1) = after_first_visit();
    d.run_to("w");
    let i = d.inspect();
    let s2 = slot_ref(&i, "w").unwrap();
    let put = op_index(&i, "store_put", Some(&s2)).unwrap();
    let save = last_ok(&i, "save_checkpoint");
    let del = op_index(&i, "store_delete", Some(&s1)).unwrap();
    assert!(put < save && save < del);
}

#[test]
fn persist_success_then_save_checkpoint_fail_is_a_fail_stop_resumed_from_the_new_slot() {
    let mut d = Drive::start();
    writer(&mut d);
    let id = d.run_to("w")["execute"]["output_session_id"].clone();
    let s1 = slot_ref(&d.inspect(), "w").unwrap();
    d.inject("save_checkpoint", "before");
    let r = d.run_to("w");
    assert_eq!(r["result"], "failed_resumable");
    assert_eq!(r["edge_selected"], false, "no edge after a failed commit");
    let i = d.inspect();
    assert_eq!(i["checkpoint"]["status"], "failed_resumable");
    let s2 = slot_ref(&i, "w").unwrap();
    assert_ne!(s1, s2, "FailRunResumable's checkpoint has the new slot");
    assert_eq!(
        i["ram"]["slots"]["w"]["state_ref"],
        json!(s2),
        "memory stays on the new slot"
    );
    assert!(has_key(&i, &s1) && has_key(&i, &s2), "both blobs kept");
    assert!(ops_named(&i, "store_delete").is_empty());
    assert_eq!(
        d.send(json!({"cmd": "run_to", "node": "w"}))["error"]["code"],
        "conflict.run_state"
    );
    d.new_pod("pod-2");
    let resumed = d.ok(json!({"cmd": "resume"}));
    assert_eq!(
        resumed["execute"]["node"], "w",
        "Resume re-executes the failed node"
    );
    assert_eq!(resumed["execute"]["session_id"], id);
    assert_eq!(
        resumed["execute"]["turn"], 3,
        "visit N's conversation, not N-1's"
    );
    assert_eq!(resumed["result"], "completed");
}

#[test]
fn fail_run_resumable_failing_too_is_terminal_without_restoring_the_old_slot() {
    let (mut d, s1) = after_first_visit();
    d.inject("save_checkpoint", "before");
    d.inject("fail_run_resumable", "before");
    let r = d.run_to("w");
    assert_eq!(r["result"], "failed");
    let i = d.inspect();
    assert_eq!(i["checkpoint"]["status"], "failed");
    let s2 = slot_ref(&i, "w").unwrap();
    assert_ne!(s1, s2, "the old slot is never written back");
    assert!(has_key(&i, &s1) && has_key(&i, &s2), "blobs remain for GC");
    assert_eq!(
        d.send(json!({"cmd": "resume"}))["error"]["code"],
        "conflict.run_state"
    );
}

#[test]
fn pack_or_put_failure_invalidates_the_slot_and_checkpoints_the_deletion() {
    for op in ["pack", "store_put"] {
        let mut d = Drive::start();
        writer(&mut d);
        d.run_to("w");
        let s1 = slot_ref(&d.inspect(), "w").unwrap();
        d.inject(op, "before");
        let r = d.run_to("w");
        assert_eq!(r["result"], "completed", "{op}");
        let i = d.inspect();
        assert_eq!(
            i["checkpoint"]["node_sessions"].get("w"),
            None,
            "{op}: slot invalidated"
        );
        assert!(op_index(&i, "store_delete", Some(&s1)).unwrap() > last_ok(&i, "save_checkpoint"));
        d.wipe();
        let v3 = d.run_to("w");
        assert_eq!(
            v3["execute"]["session_id"],
            json!(null),
            "{op}: no slot, fresh"
        );
    }
}

#[test]
fn pack_failure_then_checkpoint_failure_fail_stops_with_an_empty_slot() {
    let (mut d, s1) = after_first_visit();
    d.inject("pack", "before");
    d.inject("save_checkpoint", "before");
    let r = d.run_to("w");
    assert_eq!(r["result"], "failed_resumable");
    let i = d.inspect();
    assert_eq!(
        i["checkpoint"]["node_sessions"].get("w"),
        None,
        "empty slot, old not restored"
    );
    assert!(has_key(&i, &s1), "blob kept");
}

#[test]
fn rewind_same_executor_stale_ram_resume_from_failure() {
    let mut d = Drive::start();
    writer(&mut d);
    d.run_to("w");
    d.run_to("w");
    d.run_to("j");
    let i = d.inspect();
    let (w2, j1) = (slot_ref(&i, "w").unwrap(), slot_ref(&i, "j").unwrap());
    let r = d.ok(json!({"cmd": "rewind", "to": "w", "drop": ["w"]}));
    assert_eq!(r["deleted"], json!([w2]));
    let i = d.inspect();
    assert_eq!(i["checkpoint"]["status"], "rewound");
    assert_eq!(i["checkpoint"]["node_sessions"].get("w"), None);
    assert_eq!(slot_ref(&i, "j"), Some(j1.clone()));
    // The checkpoint was written before the blob was deleted.
    assert!(last_ok(&i, "save_checkpoint") < op_index(&i, "store_delete", Some(&w2)).unwrap());
    assert!(!has_key(&i, &w2));
    // The same executor's RAM still holds the dropped slot…
    assert_eq!(i["ram"]["slots"]["w"]["state_ref"], json!(w2));
    let gets_before = ops_named(&i, "store_get").len();
    // …resumeFromFailure restores then adopts, so it is never used.
    let resumed = d.ok(json!({"cmd": "resume"}));
    assert_eq!(resumed["execute"]["node"], "w");
    assert_eq!(
        resumed["execute"]["session_id"],
        json!(null),
        "w starts over"
    );
    assert!(
        warnings(&resumed).is_empty(),
        "no Get of the stale ref: {resumed}"
    );
    let i = d.inspect();
    assert_eq!(ops_named(&i, "store_get").len(), gets_before);
    assert_eq!(
        i["ram"]["slots"]["j"]["state_ref"],
        json!(j1),
        "kept slots adopted"
    );
    assert_eq!(i["ram"]["slots"], i["checkpoint"]["node_sessions"]);
    // j still resumes its own conversation.
    d.wipe();
    assert_eq!(d.run_to("j")["execute"]["turn"], 2);
}
