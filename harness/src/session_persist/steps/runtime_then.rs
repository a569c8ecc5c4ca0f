//! The runtime rows' checks, on the drive's replies and `inspect`: what each visit
//! handed the CLI (Task.SessionID, fingerprint, the turn it continued), the durable
//! checkpoint, the store's keys and the order of store and run-store calls.

use crate::session_persist::bench::Persist;
use crate::session_persist::World;
use crate::verdict::OrHarness;
use cucumber::then;
use serde_json::Value;

/// The transcript marker of the kit's executor (`vxstub cli`): blob bytes carry it.
const TRANSCRIPT_MARKER: &str = "VXTRANSCRIPT";

fn last_execute_of(s: &mut Persist, node: &str) -> Value {
    s.drive()
        .executes_of(node)
        .last()
        .cloned()
        .unwrap_or_else(|| panic!("node {node} never ran"))
}

fn ops(i: &Value) -> Vec<Value> {
    i["ops"].as_array().or_harness("inspect's ops").clone()
}

fn pause_ref(i: &Value) -> Option<String> {
    i["checkpoint"]["pause"]["backend_session_state_ref"]
        .as_str()
        .map(str::to_string)
}

fn slot_ref(i: &Value, node: &str) -> Option<String> {
    i["checkpoint"]["node_sessions"][node]["state_ref"]
        .as_str()
        .map(str::to_string)
}

fn store_has(i: &Value, r: &str) -> bool {
    i["store_keys"]
        .as_array()
        .or_harness("inspect's store_keys")
        .iter()
        .any(|k| k == r)
}

#[then(regex = r#"^the drive refuses it with "([a-z_.]+)"$"#)]
async fn drive_refuses(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let r = s.drive().last().clone();
        assert_eq!(r["ok"], false, "the drive accepted it: {r}");
        assert_eq!(r["error"]["code"].as_str(), Some(&c[1]), "code of {r}");
    })
    .await;
}

#[then(regex = r"^the run is (completed|paused|failed_resumable|failed)$")]
async fn run_is(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let r = s.drive().last_visit().clone();
        assert_eq!(r["result"].as_str(), Some(&c[1]), "the visit's result: {r}");
    })
    .await;
}

#[then(regex = r"^the edge (is|is not) selected$")]
async fn edge_selected(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let r = s.drive().last_visit().clone();
        assert_eq!(r["edge_selected"], &c[1] == "is", "edge_selected of {r}");
    })
    .await;
}

#[then(regex = r#"^node "(\w+)" ran (fresh|with no session id)$"#)]
async fn ran_fresh(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let e = last_execute_of(s, &c[1]);
        assert_eq!(e["session_id"], Value::Null, "Task.SessionID of {e}");
        if &c[2] == "fresh" {
            assert_eq!(
                e["minted"], true,
                "a fresh visit starts a new transcript: {e}"
            );
        }
    })
    .await;
}

#[then(
    regex = r#"^node "(\w+)" resumed the session of (its first visit|node "(\w+)") at turn (\d+)$"#
)]
async fn resumed_session_of(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let source = c
            .get(3)
            .map_or(c[1].to_string(), |n| n.as_str().to_string());
        let first = s.drive().executes_of(&source);
        let first = first.first().or_harness("the source never ran").clone();
        // A first visit that asked has no output; its session is the interaction's.
        let id = match &first["output_session_id"] {
            Value::Null => s
                .drive()
                .visits
                .iter()
                .find(|v| v["execute"]["seq"] == first["seq"])
                .map(|v| v["interaction"]["session_id"].clone())
                .or_harness("the first visit's reply"),
            id => id.clone(),
        };
        let e = last_execute_of(s, &c[1]);
        assert_eq!(e["session_id"], id, "Task.SessionID of {e}");
        let turn: u64 = c[4].parse().or_harness("a turn");
        assert_eq!(
            e["turn"].as_u64(),
            Some(turn),
            "the conversation's turn: {e}"
        );
        assert_eq!(
            e["minted"], false,
            "the transcript was there (unpacked): {e}"
        );
    })
    .await;
}

#[then(regex = r#"^node "(\w+)" resumed session "([^"]+)"$"#)]
async fn resumed_session(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let e = last_execute_of(s, &c[1]);
        assert_eq!(
            e["session_id"].as_str(),
            Some(&c[2]),
            "Task.SessionID of {e}"
        );
    })
    .await;
}

#[then(regex = r#"^node "(\w+)" ran with (no fingerprint|the fingerprint "([^"]+)")$"#)]
async fn ran_with_fingerprint(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let e = last_execute_of(s, &c[1]);
        match c.get(3) {
            Some(f) => assert_eq!(
                e["fingerprint"].as_str(),
                Some(f.as_str()),
                "fingerprint of {e}"
            ),
            None => assert_eq!(e["fingerprint"], Value::Null, "fingerprint of {e}"),
        }
    })
    .await;
}

#[then(regex = r"^the ask_user error carries the session's blob$")]
async fn ask_user_carries_blob(w: &mut World) {
    w.run(&[], None, |s, _| {
        let r = s.drive().last_visit().clone();
        let i = &r["interaction"];
        assert!(
            i["blob_len"].as_u64().is_some_and(|n| n > 0),
            "no blob: {r}"
        );
        assert!(
            i["blob_sha256"].as_str().is_some_and(|h| h.len() == 64),
            "no digest: {r}"
        );
    })
    .await;
}

#[then(regex = r#"^the checkpoint names a pause ref of node "(\w+)", kept as "([A-Z])"$"#)]
async fn checkpoint_names_pause_ref(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let i = s.drive().inspect();
        let r = pause_ref(&i).unwrap_or_else(|| panic!("no pause ref: {}", i["checkpoint"]));
        assert!(
            r.starts_with(&format!("{}/pause/", &c[1])),
            "a pause ref of the node: {r}"
        );
        assert!(store_has(&i, &r), "the store holds no blob under {r}");
        // The checkpoint holds the ref, not the bytes.
        if let Some(len) = s.drive().last_visit()["interaction"]["blob_len"].as_u64() {
            let raw = i["checkpoint_raw_len"]
                .as_u64()
                .or_harness("checkpoint_raw_len");
            assert!(
                raw < len,
                "the checkpoint ({raw} B) is as large as the blob ({len} B)"
            );
        }
        s.kept.insert(c[2].to_string(), r);
    })
    .await;
}

#[then(regex = r"^the checkpoint names no pause ref$")]
async fn checkpoint_no_pause_ref(w: &mut World) {
    w.run(&[], None, |s, _| {
        let i = s.drive().inspect();
        assert_eq!(pause_ref(&i), None, "a pause ref: {}", i["checkpoint"]);
    })
    .await;
}

#[then(regex = r#"^the checkpoint's slot of node "(\w+)" is kept as "([A-Z])"$"#)]
async fn slot_kept(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let i = s.drive().inspect();
        let r = slot_ref(&i, &c[1]).unwrap_or_else(|| panic!("no slot: {}", i["checkpoint"]));
        assert!(
            store_has(&i, &r),
            "the store holds no blob under the slot {r}"
        );
        s.kept.insert(c[2].to_string(), r);
    })
    .await;
}

#[then(regex = r#"^the checkpoint has no slot for node "(\w+)"$"#)]
async fn no_slot(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let i = s.drive().inspect();
        assert_eq!(slot_ref(&i, &c[1]), None, "a slot: {}", i["checkpoint"]);
    })
    .await;
}

#[then(regex = r"^the checkpoint has no node sessions$")]
async fn no_node_sessions(w: &mut World) {
    w.run(&[], None, |s, _| {
        let i = s.drive().inspect();
        let ns = i["checkpoint"]["node_sessions"]
            .as_object()
            .or_harness("node_sessions");
        assert!(ns.is_empty(), "NodeSessions: {}", i["checkpoint"]);
    })
    .await;
}

#[then(regex = r#"^the checkpoint's status is "(\w+)"$"#)]
async fn checkpoint_status(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let i = s.drive().inspect();
        assert_eq!(
            i["checkpoint"]["status"].as_str(),
            Some(&c[1]),
            "{}",
            i["checkpoint"]
        );
    })
    .await;
}

#[then(regex = r#"^the store (holds|does not hold) "([A-Z])"$"#)]
async fn store_holds(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let r = s.kept(&c[2]);
        let i = s.drive().inspect();
        assert_eq!(
            store_has(&i, &r),
            &c[1] == "holds",
            "the store's keys: {}",
            i["store_keys"]
        );
    })
    .await;
}

#[then(regex = r#"^"([A-Z])" and "([A-Z])" differ$"#)]
async fn refs_differ(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        assert_ne!(s.kept(&c[1]), s.kept(&c[2]), "two puts, one ref")
    })
    .await;
}

#[then(regex = r#"^"([A-Z])" is "([A-Z])"$"#)]
async fn refs_same(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        assert_eq!(s.kept(&c[1]), s.kept(&c[2]), "the refs")
    })
    .await;
}

#[then(regex = r#"^the store holds (\d+) pause blobs? of node "(\w+)"$"#)]
async fn store_holds_pause_blobs(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let i = s.drive().inspect();
        let prefix = format!("{}/pause/", &c[2]);
        let n = i["store_keys"]
            .as_array()
            .or_harness("inspect's store_keys")
            .iter()
            .filter(|k| k.as_str().is_some_and(|k| k.starts_with(&prefix)))
            .count();
        assert_eq!(
            n.to_string(),
            c[1],
            "pause blobs in the store: {}",
            i["store_keys"]
        );
    })
    .await;
}

/// "… only after" alone: after a failed pack or put the seed keeps the blobs ("never
/// restore old; blobs kept"), so a runtime may leave the old one to DeleteRun; if it
/// deletes it, the deletion's checkpoint comes first.
#[then(
    regex = r#"^"([A-Z])" was deleted( if at all,)? only after a checkpoint without it committed$"#
)]
async fn deleted_after_commit(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let r = s.kept(&c[1]);
        let i = s.drive().inspect();
        let ops = ops(&i);
        let at = ops
            .iter()
            .position(|o| o["op"] == "store_delete" && o["ref"] == r.as_str());
        let delete = match at {
            Some(at) => at,
            None if c.get(2).is_some() => return,
            None => panic!("{r} was never deleted"),
        };
        let committed = ops[..delete].iter().rposition(|o| {
            o["ok"] == true
                && ["save_checkpoint", "pause_run", "fail_run_resumable"]
                    .contains(&o["op"].as_str().unwrap_or(""))
        });
        assert!(
            committed.is_some(),
            "{r} was deleted before any checkpoint committed"
        );
        let text = i["checkpoint"].to_string();
        assert!(
            !text.contains(&r),
            "the checkpoint still names the deleted {r}"
        );
    })
    .await;
}

#[then(regex = r"^nothing was deleted$")]
async fn nothing_deleted(w: &mut World) {
    w.run(&[], None, |s, _| {
        let i = s.drive().inspect();
        let deletes: Vec<Value> = ops(&i)
            .into_iter()
            .filter(|o| o["op"] == "store_delete")
            .collect();
        assert!(deletes.is_empty(), "deletes: {deletes:?}");
    })
    .await;
}

#[then(regex = r#"^the last visit read (nothing|only "([A-Z])") from the store$"#)]
async fn last_visit_read(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let mark = s.drive().mark;
        let i = s.drive().inspect();
        let gets: Vec<Value> = ops(&i)[mark..]
            .iter()
            .filter(|o| o["op"] == "store_get")
            .cloned()
            .collect();
        match c.get(2) {
            None => assert!(gets.is_empty(), "store reads: {gets:?}"),
            Some(name) => {
                let r = s.kept(name.as_str());
                assert!(
                    gets.len() == 1 && gets[0]["ref"] == r.as_str(),
                    "the visit must read {r} alone, read {gets:?}"
                );
            }
        }
    })
    .await;
}

#[then(regex = r"^the run store was loaded (\d+) times?$")]
async fn loaded_times(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let i = s.drive().inspect();
        let n = ops(&i).iter().filter(|o| o["op"] == "load_run").count();
        assert_eq!(n.to_string(), c[1], "LoadRun calls");
    })
    .await;
}

/// Where the seed says "warn", a visit without any warning fails; the code itself is
/// the drive protocol's (pin sp-pin-warnings). "…, as the kit reads it": a warning
/// the seed does not ask for, whose absence is non-strict.
#[then(regex = r#"^the last visit warned "([a-z_.]+)"(, as the kit reads it)?$"#)]
async fn last_visit_warned(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let r = s.drive().last_visit().clone();
        let warnings = r["warnings"].as_array().cloned().unwrap_or_default();
        if warnings.iter().any(|x| x == &c[1]) {
            return;
        }
        let kits_reading = c.get(2).is_some();
        if !kits_reading {
            crate::evidence::ensure(!warnings.is_empty(), None, || {
                (
                    "the visit warns, as the seed says".into(),
                    "a visit with no warning".into(),
                )
            });
        }
        crate::evidence::pin(
            "sp-pin-warnings",
            format!("the warning {:?}", &c[1]),
            format!("warnings {}", serde_json::Value::Array(warnings)),
        );
    })
    .await;
}

#[then(regex = r"^nothing the implementation showed carries a session state key or blob bytes$")]
async fn no_leaks(w: &mut World) {
    w.run(&[], None, |s, _| {
        let i = s.drive().inspect();
        // `_session_state` is the seed's input key for the blob an Execute unpacks
        // ("SessionStateKey _session_state input: blob to unpack"): a Task's input may
        // name it (and only it: `_session_state_ref` and `_session_state_blob` stay
        // judged there too).
        let mut executes = i["executes"].clone();
        for e in executes.as_array_mut().into_iter().flatten() {
            if let Some(keys) = e["input_keys"].as_array_mut() {
                keys.retain(|k| k != "_session_state");
            }
        }
        let mut parts = vec![
            ("checkpoint", i["checkpoint"].to_string()),
            ("ram", i["ram"].to_string()),
            ("events", i["events"].to_string()),
            ("executes", executes.to_string()),
        ];
        if let Some(f) = &s.forked {
            parts.push(("fork", f.to_string()));
        }
        for v in &s.drive().visits {
            parts.push(("a reply", v.to_string()));
        }
        for (what, text) in parts {
            for key in [
                "\"_session_state_ref\"",
                "\"_session_state_blob\"",
                "\"_session_state\"",
            ] {
                assert!(!text.contains(key), "{what} carries {key}");
            }
            assert!(
                !text.contains(TRANSCRIPT_MARKER),
                "{what} carries transcript bytes"
            );
        }
    })
    .await;
}

#[then(regex = r"^the fork's checkpoint has no node sessions and no pause ref$")]
async fn fork_clean(w: &mut World) {
    w.run(&[], None, |s, _| {
        let f = s.forked.clone().or_harness("no fork in this scenario");
        let ns = f["node_sessions"]
            .as_object()
            .or_harness("the fork's node_sessions");
        assert!(ns.is_empty(), "the fork copied NodeSessions: {f}");
        assert!(f["pause"].is_null(), "the fork copied the pause: {f}");
    })
    .await;
}
