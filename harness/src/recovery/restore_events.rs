//! Judging a restore through event streams (RFC §8): the events a restore must emit,
//! in order; the snapshot race ("all or none"); what a scoped subscriber may see.

use super::restored::Restored;
use super::scenario::Scenario;
use super::streams::WAIT_MS;
use crate::drivers::events::{self, types, Subscriber};
use crate::drivers::wire;
use serde_json::{json, Map, Value};
use std::collections::BTreeSet;

/// Creates and removes `n` panes, so the next pane IDs are past single digits and
/// numeric order differs from text order.
pub fn use_up_pane_ids(w: &mut Scenario, n: usize) {
    let token = w.owner_token();
    let call = |w: &mut Scenario, verb: &str, params: Value| -> Value {
        let Value::Object(p) = params else {
            unreachable!()
        };
        let r = w.wire(Some(&token), verb, p);
        r.result
            .unwrap_or_else(|e| crate::harness_error!("{verb} failed: {e}"))
    };
    let s = call(w, "session.create", json!({"name": "scratch"}));
    let session = s["session"].clone();
    // One tiled pane per window.
    for _ in 0..n {
        let win = call(
            w,
            "window.create",
            json!({"session": session, "name": "scratch"}),
        );
        call(
            w,
            "pane.create",
            json!({"window": win["window"], "argv": ["/bin/sh", "-c", "exit 0"]}),
        );
    }
    call(w, "session.kill", json!({"session": session}));
}

/// Does the event name one of `resources`, as its resource or in its data?
pub fn mentions(e: &Value, resources: &BTreeSet<String>) -> bool {
    if e["resource"]
        .as_str()
        .is_some_and(|r| resources.contains(r))
    {
        return true;
    }
    let Some(data) = e["data"].as_object() else {
        return false;
    };
    ["session", "window", "pane"].iter().any(|k| {
        data.get(*k)
            .and_then(Value::as_str)
            .is_some_and(|id| resources.contains(&format!("{k}:{id}")))
    })
}

/// RFC §8: created events in numeric session/window/pane order, then pane.exited per
/// archive, then recovery.restored; each naming the right resource, on the
/// subscription's source, with increasing sequences after its head.
/// Events before the restore's (an earlier mutation's) are left out.
pub fn check_restore_events(all: &[Value], r: &Restored, s: &Subscriber) {
    let want = r.expected_types();
    let end = all
        .iter()
        .position(|e| e["type"] == "recovery.restored")
        .map_or(all.len(), |i| i + 1);
    let start = end.saturating_sub(want.len());
    let evs = &all[start..end];
    assert_eq!(
        types(evs),
        want,
        "event types up to recovery.restored (all: {:?})",
        types(all)
    );
    let mut last = match start {
        0 => s.head,
        i => all[i - 1]["sequence"].as_u64().unwrap_or(s.head),
    };
    for e in evs {
        assert_eq!(e["source"], s.source.as_str(), "event source: {e}");
        let seq = e["sequence"]
            .as_u64()
            .unwrap_or_else(|| panic!("event without an integer sequence: {e}"));
        assert!(seq > last, "sequence {seq} does not follow {last}: {e}");
        last = seq;
    }
    let ns = r.sessions.len();
    let nw = r.windows.len();
    let np = r.panes.len();
    let expect = |e: &Value, kind: &str, id: &str| {
        assert_eq!(e["data"][kind], id, "{kind} of {e}");
        assert_eq!(
            e["resource"],
            format!("{kind}:{id}").as_str(),
            "resource of {e}"
        );
    };
    for (e, (_, id)) in evs.iter().zip(&r.sessions) {
        expect(e, "session", id);
    }
    // Containers before children: every parent named is one the restore created.
    let parent = |e: &Value, kind: &str, list: &[(String, String)]| {
        let id = e["data"][kind].as_str().unwrap_or("");
        assert!(
            list.iter().any(|(_, cur)| cur == id),
            "{kind} of {e} is not a restored {kind}"
        );
    };
    for (e, (_, id)) in evs[ns..].iter().zip(&r.windows) {
        expect(e, "window", id);
        parent(e, "session", &r.sessions);
    }
    for (e, (_, id)) in evs[ns + nw..].iter().zip(&r.panes) {
        expect(e, "pane", id);
        parent(e, "window", &r.windows);
        parent(e, "session", &r.sessions);
    }
    for (e, (_, id)) in evs[ns + nw + np..].iter().zip(&r.panes) {
        expect(e, "pane", id);
    }
    let done = evs.last().expect("events");
    assert_eq!(done["resource"], "server:root", "{done}");
    assert_eq!(
        done["data"],
        json!({"checkpoint": r.checkpoint, "cleanup_unverified": true}),
        "recovery.restored data"
    );
}

/// RFC §8 "Restore snapshot race exposes all or none": `n` owner subscriptions and
/// one restore, released together.
pub fn race(w: &mut Scenario, n: usize, checkpoint: &str) {
    let token = w.owner_token();
    let socket = w.ph.socket.clone();
    let barrier = std::sync::Barrier::new(n + 1);
    let (restore, subs) = std::thread::scope(|scope| {
        let restore = scope.spawn(|| {
            barrier.wait();
            let mut p = Map::new();
            p.insert("checkpoint".into(), Value::String(checkpoint.into()));
            wire::call(&socket, Some(&token), "recovery.restore", p)
        });
        let subs: Vec<_> = (0..n)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    events::subscribe(&socket, Some(&token), None)
                })
            })
            .collect();
        let restore = restore
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        let subs: Vec<_> = subs
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        (restore, subs)
    });
    w.transcript.extend_from_slice(&restore.1);
    for (i, (reply, bytes, s)) in subs.into_iter().enumerate() {
        w.transcript.extend_from_slice(&bytes);
        let s = s.unwrap_or_else(|| panic!("events.subscribe failed: {:?}", reply.result));
        let snapshot = reply.result.expect("ok")["snapshot"].clone();
        w.vars
            .insert(format!("race{i}_snapshot"), snapshot.to_string());
        w.streams.subs.insert(format!("race{i}"), s);
    }
    w.last = Some(restore.0);
}

pub fn judge_race(w: &mut Scenario, witness: &str) {
    let r = w.streams.restored();
    let all = r.resources();
    let wevs = w.streams.sub(witness).events();
    let seq_of = |ty: &str| -> u64 {
        wevs.iter()
            .find(|e| e["type"] == ty)
            .and_then(|e| e["sequence"].as_u64())
            .unwrap_or_else(|| panic!("{witness} has no {ty} event"))
    };
    let first = seq_of("session.created");
    let done = seq_of("recovery.restored");
    // A marker after the race: whatever a subscription receives before it is what
    // the restore gave it beyond its snapshot.
    let token = w.owner_token();
    let mut p = Map::new();
    p.insert("name".into(), Value::String("marker".into()));
    let (reply, bytes) = wire::call(&w.ph.socket, Some(&token), "session.create", p);
    w.transcript.extend_from_slice(&bytes);
    reply
        .result
        .unwrap_or_else(|e| panic!("session.create failed: {e}"));
    let names: Vec<String> = w
        .streams
        .subs
        .keys()
        .filter(|k| k.starts_with("race"))
        .cloned()
        .collect();
    for name in names {
        let snap: Value = serde_json::from_str(&w.vars[&format!("{name}_snapshot")]).unwrap();
        let seen = snapshot_resources(&snap);
        let shown = all.intersection(&seen).count();
        let s = w.streams.sub(&name);
        let evs = s.wait(
            "the marker's session.created",
            WAIT_MS,
            |r| r.events.iter().any(|e| e["data"]["name"] == "marker"),
            |r| r.events.clone(),
        );
        let got = types(&evs);
        if shown == 0 {
            assert!(
                s.head < first,
                "{name}: a snapshot without the restore has head {} at or after its first event {first}",
                s.head
            );
            let mut want = r.expected_types();
            want.push("session.created".into());
            assert_eq!(
                got, want,
                "{name}: events after a snapshot without the restore"
            );
        } else {
            assert_eq!(
                shown,
                all.len(),
                "{name}: the snapshot shows part of the restored graph: {snap}"
            );
            assert!(
                s.head >= done,
                "{name}: a snapshot with the restore has head {} before recovery.restored {done}",
                s.head
            );
            assert_eq!(
                got,
                ["session.created"],
                "{name}: events after a full snapshot"
            );
        }
    }
}

/// Resource names (`pane:p3`) of a snapshot's entities.
fn snapshot_resources(snap: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (list, kind) in [
        ("sessions", "session"),
        ("windows", "window"),
        ("panes", "pane"),
    ] {
        for e in snap[list].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(id) = e[kind].as_str() {
                out.insert(format!("{kind}:{id}"));
            }
        }
    }
    out
}
