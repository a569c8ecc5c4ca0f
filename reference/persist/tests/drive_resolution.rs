//! Seed "Tests (mandatory)", resolution and plumbing rows (features 06), and the
//! protocol's refusals, through `vxpersist drive`.

mod support;

use serde_json::json;
use support::*;

#[test]
fn fan_out_persist_is_an_error() {
    let mut d = Drive::start();
    let r = d.send(json!({"cmd": "graph", "nodes": [
        {"id": "b", "backend": "pi", "session": "persist", "fan_out": true}]}));
    assert_eq!(r["error"]["code"], "invalid_graph.fan_out_persist");
    // A fresh node in fan-out is fine.
    d.ok(json!({"cmd": "graph", "nodes": [{"id": "b", "backend": "pi", "fan_out": true}]}));
}

#[test]
fn kimi_and_grok_persist_have_no_capability_inbound_stripped_fresh() {
    for backend in ["kimi", "grok"] {
        let mut d = Drive::start();
        graph(
            &mut d,
            vec![node("src", "pi", "fresh"), node("k", backend, "persist")],
            vec![edge(
                "src",
                "k",
                json!({"_session_id": {"output": "_session_id"}}),
            )],
        );
        d.run_to("src");
        let v1 = d.run_to("k");
        assert_eq!(v1["execute"]["session_id"], json!(null), "{backend}");
        assert!(warnings(&v1).contains(&"persist.no_capability".to_owned()));
        let v2 = d.run_to("k");
        assert_eq!(
            v2["execute"]["session_id"],
            json!(null),
            "{backend}: no slot"
        );
        let i = d.inspect();
        assert!(i["checkpoint"]["node_sessions"]
            .as_object()
            .unwrap()
            .is_empty());
        assert!(i["store_keys"].as_array().unwrap().is_empty());
    }
}

#[test]
fn outputs_loop_snapshots_fork_outputs_and_events_carry_no_ref_or_blob() {
    let mut d = Drive::start();
    d.ok(json!({"cmd": "graph", "nodes": [
        {"id": "w", "backend": "claude_code", "session": "persist",
         "extra_output": {"_session_state_ref": "w/01J00000000000000000000000",
                          "_session_state": "smuggled"}}]}));
    d.run_to("w");
    d.wipe();
    assert_eq!(d.run_to("w")["execute"]["turn"], 2);
    let fork = d.ok(json!({"cmd": "fork", "run": "r2"}));
    let cp = &fork["checkpoint"];
    assert!(
        cp["node_sessions"].as_object().unwrap().is_empty(),
        "fork omits slots"
    );
    assert_eq!(cp["pause"], json!(null), "fork omits the pause ref");
    let i = d.inspect();
    assert_eq!(i["ram"]["loop_snapshots"]["w"].as_array().unwrap().len(), 1);
    assert_no_leaks(&i);
    let fi = d.ok(json!({"cmd": "inspect", "run": "r2"}));
    assert_eq!(fi["checkpoint"]["outputs"]["w"]["turn"], 2);
    assert_no_leaks(&fi);
    assert!(!fork.to_string().contains("\"_session_state_ref\""));
}

#[test]
fn fork_of_a_paused_run_omits_both_refs() {
    let mut d = Drive::start();
    graph(&mut d, vec![node("w", "codex", "persist")], vec![]);
    d.run_to("w");
    d.ask("w", "ok?");
    let fork = d.ok(json!({"cmd": "fork", "run": "r2"}));
    assert!(fork["checkpoint"]["node_sessions"]
        .as_object()
        .unwrap()
        .is_empty());
    assert_eq!(fork["checkpoint"]["pause"], json!(null));
    assert_eq!(fork["checkpoint"]["status"], "running");
}

#[test]
fn no_store_warns_and_runs_fresh() {
    let mut d = Drive::start();
    d.ok(json!({"cmd": "graph", "store": false,
                "nodes": [{"id": "w", "backend": "pi", "session": "persist"}]}));
    let v1 = d.run_to("w");
    assert!(warnings(&v1).contains(&"persist.no_store".to_owned()));
    let v2 = d.run_to("w");
    assert_eq!(v2["execute"]["session_id"], json!(null));
    assert!(d.inspect()["checkpoint"]["node_sessions"]
        .as_object()
        .unwrap()
        .is_empty());
}

#[test]
fn protocol_refusals_have_codes() {
    let mut d = Drive::start();
    assert_eq!(
        d.send_raw(b"not json")["error"]["code"],
        "invalid_request.json"
    );
    assert_eq!(
        d.send_raw(b"{\"cmd\":\"x\"}")["error"]["code"],
        "invalid_request.cmd"
    );
    assert_eq!(
        d.send_raw(b"{\"cmd\":\"run_to\",\"node\":\"w\",\"zzz\":1}")["error"]["code"],
        "invalid_request.field"
    );
    assert_eq!(
        d.send_raw(b"{\"cmd\":\"inspect\",\"cmd\":\"inspect\"}")["error"]["code"],
        "invalid_request.json",
        "duplicate keys are refused"
    );
    assert_eq!(
        d.send(json!({"cmd": "run_to", "node": "w"}))["error"]["code"],
        "conflict.no_graph"
    );
    graph(&mut d, vec![node("w", "pi", "persist")], vec![]);
    assert_eq!(
        d.send(json!({"cmd": "answer", "text": "x"}))["error"]["code"],
        "not_found.run"
    );
    assert_eq!(
        d.send(json!({"cmd": "run_to", "node": "nope"}))["error"]["code"],
        "invalid_request.node"
    );
    assert_eq!(
        d.send(json!({"cmd": "graph", "nodes": [{"id": "w", "backend": "vim"}]}))["error"]["code"],
        "invalid_graph.shape"
    );
    let long = vec![b'x'; 1024 * 1024 + 10];
    assert_eq!(
        d.send_raw(&long)["error"]["code"],
        "invalid_request.line_too_long"
    );
    // The drive is still in step after the long line.
    assert_eq!(d.inspect()["ok"], true);
}

#[test]
fn fresh_is_the_default_mode_and_persist_the_only_resuming_one() {
    let mut d = Drive::start();
    d.ok(json!({"cmd": "graph", "nodes": [{"id": "w", "backend": "pi"}]}));
    d.run_to("w");
    let v2 = d.run_to("w");
    assert_eq!(
        v2["execute"]["session_id"],
        json!(null),
        "no session mode: fresh"
    );
    assert!(d.inspect()["checkpoint"]["node_sessions"]
        .as_object()
        .unwrap()
        .is_empty());
    let r = d.send(
        json!({"cmd": "graph", "nodes": [{"id": "w", "backend": "pi", "session": "resume"}]}),
    );
    assert_eq!(r["error"]["code"], "invalid_graph.shape");
}

#[test]
fn an_executor_that_cannot_start_is_a_fail_stop() {
    let missing = std::path::Path::new("/nonexistent/vxstub");
    let mut d = Drive::start_with(missing);
    graph(&mut d, vec![node("w", "pi", "persist")], vec![]);
    let r = d.run_to("w");
    assert_eq!(r["result"], "failed_resumable");
    assert!(warnings(&r).contains(&"persist.execute_failed".to_owned()));
    let i = d.inspect();
    assert_eq!(i["checkpoint"]["status"], "failed_resumable");
    assert_eq!(i["checkpoint"]["resume_node"], "w");
    assert_eq!(i["executes"][0]["outcome"], "error");
}
