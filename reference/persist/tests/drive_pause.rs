//! Seed "Tests (mandatory)", ask_user rows (features 03), through `vxpersist drive`.

mod support;

use serde_json::{json, Value};
use support::*;

fn writer(d: &mut Drive, session: &str) {
    graph(d, vec![node("w", "pi", session)], vec![]);
}

fn pause_ref(i: &Value) -> Option<String> {
    i["checkpoint"]["pause"]["backend_session_state_ref"]
        .as_str()
        .map(str::to_owned)
}

fn has_key(i: &Value, r: &str) -> bool {
    i["store_keys"].as_array().unwrap().iter().any(|k| k == r)
}

#[test]
fn ask_user_error_carries_blob_checkpoint_has_ref_not_bytes() {
    let mut d = Drive::start();
    writer(&mut d, "persist");
    let p = d.ask("w", "which title?");
    assert_eq!(p["result"], "paused");
    let blob_len = p["interaction"]["blob_len"].as_u64().unwrap();
    assert!(
        blob_len > 0,
        "the ask_user error carried the packed session"
    );
    let i = d.inspect();
    assert_eq!(i["checkpoint"]["status"], "paused");
    let a = pause_ref(&i).expect("the pause checkpoint names a pause ref");
    assert!(a.starts_with("w/pause/"));
    assert!(has_key(&i, &a));
    assert_eq!(
        d.stored_blob_sha256("r1", &a),
        p["interaction"]["blob_sha256"]
    );
    // The checkpoint holds the ref, not the bytes.
    let raw = std::fs::read_to_string(d.state().join("runstore/r1/checkpoint.json")).unwrap();
    assert!(!raw.contains("VXTRANSCRIPT"));
    assert!((raw.len() as u64) < blob_len);
    assert!(i["checkpoint"]["node_sessions"]
        .as_object()
        .unwrap()
        .is_empty());
    assert_no_leaks(&i);
}

#[test]
fn wiped_dir_between_ask_user_and_answer_uses_the_pause_ref_not_node_sessions() {
    let mut d = Drive::start();
    writer(&mut d, "persist");
    let id = d.run_to("w")["execute"]["output_session_id"].clone();
    let s1 = slot_ref(&d.inspect(), "w").unwrap();
    let p = d.ask("w", "ok?");
    assert_eq!(p["execute"]["turn"], 2);
    let a = pause_ref(&d.inspect()).unwrap();
    d.new_pod("pod-2");
    let before = d.inspect()["ops"].as_array().unwrap().len();
    let r = d.answer("yes");
    assert_eq!(r["result"], "completed");
    assert_eq!(r["execute"]["session_id"], id);
    // The pause blob held turn 2; NodeSessions[w] (turn 1) would give turn 2 again.
    assert_eq!(r["execute"]["turn"], 3);
    let i = d.inspect();
    let gets: Vec<&Value> = i["ops"].as_array().unwrap()[before..]
        .iter()
        .filter(|o| o["op"] == "store_get")
        .collect();
    assert_eq!(gets.len(), 1);
    assert_eq!(gets[0]["ref"], json!(a));
    assert_ne!(gets[0]["ref"], json!(s1));
}

#[test]
fn two_ask_users_success_deletes_a_after_b_committed() {
    let mut d = Drive::start();
    writer(&mut d, "persist");
    d.ask("w", "first?");
    let a = pause_ref(&d.inspect()).unwrap();
    let r = d.ok(json!({"cmd": "answer", "text": "one", "ask": "second?"}));
    assert_eq!(r["result"], "paused");
    let i = d.inspect();
    let b = pause_ref(&i).unwrap();
    assert_ne!(a, b);
    let put_b = op_index(&i, "store_put", Some(&b)).unwrap();
    let pauses: Vec<usize> = i["ops"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, o)| o["op"] == "pause_run" && o["ok"] == true)
        .map(|(k, _)| k)
        .collect();
    let pause_b = *pauses.last().unwrap();
    let delete_a = op_index(&i, "store_delete", Some(&a)).expect("A deleted");
    assert!(
        put_b < pause_b && pause_b < delete_a,
        "Put(B) → PauseRun(B) → Delete(A)"
    );
    assert!(!has_key(&i, &a) && has_key(&i, &b));
    let done = d.answer("two");
    assert_eq!(done["execute"]["turn"], 3);
}

#[test]
fn pause_run_writes_checkpoint_then_returns_error_b_not_deleted() {
    let mut d = Drive::start();
    writer(&mut d, "persist");
    d.ask("w", "first?");
    let a = pause_ref(&d.inspect()).unwrap();
    d.inject("pause_run", "after");
    let r = d.ok(json!({"cmd": "answer", "text": "one", "ask": "second?"}));
    assert_eq!(r["result"], "paused");
    assert!(warnings(&r).contains(&"persist.pause_run_failed".to_owned()));
    let i = d.inspect();
    let b = pause_ref(&i).expect("the PauseRun landed: the checkpoint names B");
    assert_ne!(a, b);
    assert!(
        has_key(&i, &a) && has_key(&i, &b),
        "neither A nor B deleted"
    );
    assert!(ops_named(&i, "store_delete").is_empty());
    // No LoadRun after the failed PauseRun (its error is not a linearization point).
    assert_eq!(
        ops_named(&i, "load_run").len(),
        1,
        "only the answer's own LoadRun"
    );
    let done = d.answer("two");
    assert_eq!(done["execute"]["turn"], 3, "resumed from B");
}

#[test]
fn pause_run_b_error_keeps_a_and_b_without_load_run_delete() {
    let mut d = Drive::start();
    writer(&mut d, "persist");
    d.ask("w", "first?");
    let a = pause_ref(&d.inspect()).unwrap();
    d.inject("pause_run", "before");
    d.ok(json!({"cmd": "answer", "text": "one", "ask": "second?"}));
    let i = d.inspect();
    assert_eq!(
        pause_ref(&i),
        Some(a.clone()),
        "the durable checkpoint still names A"
    );
    let keys = i["store_keys"].as_array().unwrap();
    assert_eq!(
        keys.iter()
            .filter(|k| k.as_str().unwrap().starts_with("w/pause/"))
            .count(),
        2
    );
    assert!(ops_named(&i, "store_delete").is_empty());
    assert_eq!(ops_named(&i, "load_run").len(), 1);
    let done = d.answer("again");
    assert_eq!(done["execute"]["turn"], 2, "resumed from A's blob");
}

#[test]
fn put_failure_pauses_without_a_ref_and_does_not_block_ask_user() {
    let mut d = Drive::start();
    writer(&mut d, "persist");
    d.inject("store_put", "before");
    let p = d.ask("w", "ok?");
    assert_eq!(p["result"], "paused");
    assert!(warnings(&p).contains(&"persist.pause_put_failed".to_owned()));
    let i = d.inspect();
    assert_eq!(i["checkpoint"]["pause"]["question"], "ok?");
    assert_eq!(pause_ref(&i), None);
    d.new_pod("pod-2");
    let r = d.answer("yes");
    assert_eq!(
        r["execute"]["session_id"],
        json!(null),
        "no ref: fresh, never a guess"
    );
}

#[test]
fn pause_ref_get_or_unpack_failure_strips_id_and_fingerprint() {
    for op in ["store_get", "unpack"] {
        let mut d = Drive::start();
        writer(&mut d, "persist");
        d.run_to("w");
        d.ask("w", "ok?");
        d.inject(op, "before");
        let r = d.answer("yes");
        assert_eq!(r["execute"]["session_id"], json!(null), "{op}");
        assert_eq!(r["execute"]["fingerprint"], json!(null), "{op}");
        assert_eq!(r["execute"]["minted"], true, "{op}");
        let code = match op {
            "store_get" => "persist.pause_get_failed",
            _ => "persist.pause_unpack_failed",
        };
        assert!(warnings(&r).contains(&code.to_owned()), "{op}: {r}");
        // NodeSessions[w] is never overlaid on a failed pause restore.
        let gets = ops_named(&d.inspect(), "store_get").len();
        assert_eq!(
            gets, 2,
            "{op}: visit 2's slot Get and the pause Get, nothing more"
        );
    }
}

#[test]
fn non_persist_reinvoke_success_leaves_no_node_sessions() {
    let mut d = Drive::start();
    writer(&mut d, "fresh");
    d.ask("w", "ok?");
    let a = pause_ref(&d.inspect()).expect("a CLI pause packs whatever the mode");
    d.new_pod("pod-2");
    let r = d.answer("yes");
    assert_eq!(r["result"], "completed");
    assert_eq!(r["execute"]["turn"], 2);
    let i = d.inspect();
    assert!(i["checkpoint"]["node_sessions"]
        .as_object()
        .unwrap()
        .is_empty());
    assert_eq!(i["checkpoint"]["pause"], json!(null));
    let save = i["ops"]
        .as_array()
        .unwrap()
        .iter()
        .rposition(|o| o["op"] == "save_checkpoint")
        .unwrap();
    let del = op_index(&i, "store_delete", Some(&a)).expect("pause blob deleted");
    assert!(save < del, "checkpoint clears the pause ref, then Delete");
    assert!(i["store_keys"].as_array().unwrap().is_empty());
    assert_no_leaks(&i);
}
