//! Steps about streams: event subscriptions (`events.subscribe`) and attach viewers
//! (`pane.attach`) that stay open across steps, for the "Resume" and "Events/clients"
//! rows. A subscription's or an attach's reply becomes the scenario's last reply, so
//! the ordinary result and error steps read it.

use super::attach::{self, kinds, Viewer};
use super::events::{self, id_number, types, Subscriber};
use super::world::{wire_call, Inner};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

/// The open streams of one scenario, by the names the steps give them.
#[derive(Default)]
pub struct Streams {
    subs: BTreeMap<String, Subscriber>,
    viewers: BTreeMap<String, Viewer>,
    /// The last restore the steps judged: old and new IDs, by kind.
    restore: Option<Restored>,
    /// Streams that could not be opened, with the error, so later steps about them
    /// fail with the reason instead of a harness error.
    refused: BTreeMap<String, String>,
}

#[derive(Clone)]
struct Restored {
    checkpoint: String,
    /// (previous, current) of sessions, windows and panes, current in numeric order.
    sessions: Vec<(String, String)>,
    windows: Vec<(String, String)>,
    panes: Vec<(String, String)>,
}

impl Restored {
    fn from_result(v: &Value) -> Restored {
        let map = |kind: &str| -> Vec<(String, String)> {
            let mut out: Vec<(String, String)> = v[kind]
                .as_array()
                .unwrap_or_else(|| panic!("restore result has no {kind} mapping: {v}"))
                .iter()
                .map(|m| {
                    let s = |k: &str| {
                        m[k].as_str()
                            .unwrap_or_else(|| panic!("mapping entry without {k}: {m}"))
                            .to_string()
                    };
                    (s("previous"), s("current"))
                })
                .collect();
            out.sort_by_key(|(_, cur)| id_number(cur));
            out
        };
        Restored {
            checkpoint: v["checkpoint"].as_str().unwrap_or("").to_string(),
            sessions: map("sessions"),
            windows: map("windows"),
            panes: map("panes"),
        }
    }

    /// Every restored resource as an RFC resource name (`pane:p3`).
    fn resources(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (kind, list) in [
            ("session", &self.sessions),
            ("window", &self.windows),
            ("pane", &self.panes),
        ] {
            out.extend(list.iter().map(|(_, cur)| format!("{kind}:{cur}")));
        }
        out
    }

    fn current_of(&self, previous: &str) -> String {
        self.panes
            .iter()
            .find(|(p, _)| p == previous)
            .map(|(_, c)| c.clone())
            .unwrap_or_else(|| panic!("harness-error: the restore mapped no pane {previous}"))
    }

    /// The event types a restore must emit, in order (pane.exited in pane order).
    fn expected_types(&self) -> Vec<String> {
        let mut t = Vec::new();
        t.extend(self.sessions.iter().map(|_| "session.created".to_string()));
        t.extend(self.windows.iter().map(|_| "window.created".to_string()));
        t.extend(self.panes.iter().map(|_| "pane.created".to_string()));
        t.extend(self.panes.iter().map(|_| "pane.exited".to_string()));
        t.push("recovery.restored".into());
        t
    }
}

struct Re(regex::Regex);

fn re(cell: &'static OnceLock<Re>, pat: &str) -> &'static regex::Regex {
    &cell
        .get_or_init(|| Re(regex::Regex::new(pat).expect("step regex")))
        .0
}

macro_rules! step {
    ($text:expr, $pat:literal) => {{
        static CELL: OnceLock<Re> = OnceLock::new();
        re(&CELL, $pat).captures($text)
    }};
}

/// How long the suite waits for something a stream must deliver (scaled).
const WAIT_MS: u64 = 10_000;

/// Runs `t` (variables already substituted) if it is a stream step; false otherwise.
pub fn dispatch(w: &mut Inner, t: &str) -> bool {
    let handled = dispatch_inner(w, t);
    if handled {
        // Everything the streams carried counts for the secret-exclusion steps;
        // terminal bytes (S and O frames) are the panes' own content and stay out.
        for s in w.streams.subs.values() {
            let raw = s.take_raw();
            w.transcript.extend_from_slice(&raw);
        }
    }
    handled
}

fn token_of(w: &Inner, who: &str, token: Option<&str>) -> Option<String> {
    match who {
        "the owner" => Some(w.owner_token()),
        _ => token.map(String::from),
    }
}

fn sub<'a>(w: &'a Inner, name: &str) -> &'a Subscriber {
    w.streams.subs.get(name).unwrap_or_else(|| missing(w, name))
}

fn viewer<'a>(w: &'a Inner, name: &str) -> &'a Viewer {
    w.streams
        .viewers
        .get(name)
        .unwrap_or_else(|| missing(w, name))
}

fn missing(w: &Inner, name: &str) -> ! {
    match w.streams.refused.get(name) {
        Some(e) => panic!("the stream {name:?} was refused: {e}"),
        None => panic!("harness-error: no stream named {name:?}"),
    }
}

/// Keeps an opened stream, or the reason it was refused.
fn keep<T>(w: &mut Inner, name: &str, reply: &super::world::Reply, opened: Option<T>) -> Option<T> {
    if let Err(e) = &reply.result {
        w.streams.refused.insert(name.to_string(), e.to_string());
    }
    opened
}

fn restored(w: &Inner) -> Restored {
    w.streams
        .restore
        .clone()
        .expect("harness-error: no restore was judged in this scenario")
}

fn dispatch_inner(w: &mut Inner, t: &str) -> bool {
    // ---- subscriptions
    if let Some(c) = step!(
        t,
        r#"^(the owner|a client with token "([^"]*)") subscribes to events as "(\w+)"(?: from the cursor (\{.*\}))?$"#
    ) {
        let token = token_of(w, &c[1], c.get(2).map(|m| m.as_str()));
        let cursor = c.get(4).map(|m| {
            serde_json::from_str::<Value>(m.as_str())
                .unwrap_or_else(|_| panic!("harness-error: cursor is not JSON: {}", m.as_str()))
        });
        let (reply, bytes, s) = events::subscribe(&w.ph.socket, token.as_deref(), cursor);
        w.transcript.extend_from_slice(&bytes);
        if let Some(s) = keep(w, &c[3], &reply, s) {
            w.vars.insert(format!("{}_source", &c[3]), s.source.clone());
            w.streams.subs.insert(c[3].to_string(), s);
        }
        w.last = Some(reply);
        return true;
    }
    if let Some(c) = step!(t, r#"^the cursor of "(\w+)" is saved as \$(\w+)$"#) {
        let s = sub(w, &c[1]);
        let cursor = match s.events().last() {
            Some(e) => json!({"source": e["source"], "sequence": e["sequence"]}),
            None => json!({"source": s.source, "sequence": s.head}),
        };
        w.vars.insert(c[2].to_string(), cursor.to_string());
        return true;
    }
    if let Some(c) = step!(t, r#"^"(\w+)" receives a "([a-z_.]+)" event$"#) {
        let want = c[2].to_string();
        let got = sub(w, &c[1]).wait(
            &format!("a {want} event"),
            WAIT_MS,
            |r| r.events.iter().any(|e| e["type"] == want.as_str()),
            |r| r.events.iter().any(|e| e["type"] == want.as_str()),
        );
        assert!(got, "the event stream ended without a {want} event");
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the events of "(\w+)"(?: after its "([a-z_.]+)" event)? are, in order: ([a-z_., ]+)$"#
    ) {
        let after = c.get(2).map(|m| m.as_str().to_string());
        let want: Vec<String> = c[3].split(',').map(|s| s.trim().to_string()).collect();
        let tail = |evs: &[Value]| -> Vec<String> {
            let all = types(evs);
            match &after {
                None => all,
                Some(a) => match all.iter().position(|x| x == a) {
                    Some(i) => all[i + 1..].to_vec(),
                    None => Vec::new(),
                },
            }
        };
        let got = sub(w, &c[1]).wait(
            &format!("{} events", want.len()),
            WAIT_MS,
            |r| tail(&r.events).len() >= want.len(),
            |r| tail(&r.events),
        );
        assert_eq!(got, want, "event types received by {}", &c[1]);
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^"(\w+)" receives the restore's events in the RFC's order$"#
    ) {
        let reply = w.last().result.clone();
        let v = reply.unwrap_or_else(|e| panic!("the restore failed: {e}"));
        let r = Restored::from_result(&v);
        let s = sub(w, &c[1]);
        let evs = s.wait(
            "recovery.restored",
            WAIT_MS,
            |r| r.events.iter().any(|e| e["type"] == "recovery.restored"),
            |r| r.events.clone(),
        );
        check_restore_events(&evs, &r, s);
        w.streams.restore = Some(r);
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^in "(\w+)", the pane restored from "(\w+)" (exited with code (\d+)|exited with no code|was created with layer "(\w+)")$"#
    ) {
        let r = restored(w);
        let pane = r.current_of(&c[2]);
        let evs = sub(w, &c[1]).events();
        let kind = if c.get(5).is_some() {
            "pane.created"
        } else {
            "pane.exited"
        };
        let e = evs
            .iter()
            .find(|e| e["type"] == kind && e["data"]["pane"] == pane.as_str())
            .unwrap_or_else(|| panic!("no {kind} event for {pane} in {evs:?}"));
        match (c.get(4), c.get(5)) {
            (Some(code), _) => assert_eq!(
                e["data"]["exit_code"].to_string(),
                code.as_str(),
                "exit code in {e}"
            ),
            (None, Some(layer)) => {
                assert_eq!(e["data"]["layer"], layer.as_str(), "layer in {e}")
            }
            (None, None) => {
                let data = e["data"].as_object().expect("event data object");
                assert!(
                    !data.contains_key("exit_code") && !data.contains_key("signal"),
                    "an interrupted archive's pane.exited carries a status: {e}"
                );
            }
        }
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^"(\w+)" received no event about the restored resources and no "recovery.restored"$"#
    ) {
        let r = restored(w);
        let hidden = r.resources();
        for e in sub(w, &c[1]).events() {
            assert_ne!(e["type"], "recovery.restored", "delivered: {e}");
            assert!(
                !mentions(&e, &hidden),
                "an event about a restored resource was delivered: {e}"
            );
        }
        return true;
    }
    if let Some(c) = step!(t, r#"^the event stream of "(\w+)" ends$"#) {
        let ended = sub(w, &c[1]).wait("the end of the stream", WAIT_MS, |_| false, |r| r.eof);
        assert!(ended, "harness-error: wait returned before the end");
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^(\d+) owner subscriptions start while the owner restores "([^"]+)"$"#
    ) {
        race(w, c[1].parse().unwrap(), &c[2]);
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^every racing snapshot shows all or none of the restored resources, consistent with the events of "(\w+)"$"#
    ) {
        judge_race(w, &c[1]);
        return true;
    }

    if let Some(c) = step!(
        t,
        r"^the owner has used up (\d+) pane IDs and left the tree empty$"
    ) {
        use_up_pane_ids(w, c[1].parse().unwrap());
        return true;
    }

    // ---- attach
    if let Some(c) = step!(
        t,
        r#"^(the owner|a client with token "([^"]*)") attaches to pane "([^"]+)" as "(\w+)"(?: resuming source "([^"]*)" at offset (\d+))?$"#
    ) {
        let token = token_of(w, &c[1], c.get(2).map(|m| m.as_str()));
        let resume = c.get(5).map(|src| {
            let offset: u64 = c[6].parse().unwrap();
            json!({"source": src.as_str(), "offset": offset})
        });
        let (reply, bytes, v) = attach::attach(&w.ph.socket, token.as_deref(), &c[3], resume);
        w.transcript.extend_from_slice(&bytes);
        if let Some(v) = keep(w, &c[4], &reply, v) {
            w.streams.viewers.insert(c[4].to_string(), v);
        }
        w.last = Some(reply);
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the stream of "(\w+)" is a snapshot, READY, then EXIT$"#
    ) {
        let frames = viewer(w, &c[1]).wait(
            "an X frame",
            WAIT_MS,
            |f| f.frames.iter().any(|x| x.kind == b'X'),
            |f| f.frames.clone(),
        );
        let k = kinds(&frames);
        let x = frames
            .iter()
            .position(|f| f.kind == b'X')
            .unwrap_or_else(|| panic!("the stream ended without EXIT: frames {k}"));
        assert!(x >= 2, "frames {k}: want S, R, then X");
        assert_eq!(frames[0].kind, b'S', "frames {k}: the first must be S");
        assert_eq!(frames[1].kind, b'R', "frames {k}: READY must follow S");
        assert!(
            frames[2..x].iter().all(|f| f.kind == b'O'),
            "frames {k}: only output may come between READY and EXIT"
        );
        let json = frames[x].json();
        w.transcript.extend_from_slice(json.to_string().as_bytes());
        w.vars.insert(format!("{}_exit", &c[1]), json.to_string());
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the stream of "(\w+)" begins with a snapshot, then READY$"#
    ) {
        let frames = viewer(w, &c[1]).wait(
            "S and R frames",
            WAIT_MS,
            |f| f.frames.len() >= 2,
            |f| f.frames.clone(),
        );
        let k = kinds(&frames);
        assert!(
            frames.len() >= 2 && frames[0].kind == b'S' && frames[1].kind == b'R',
            "frames {k}: want S, then R"
        );
        return true;
    }
    if let Some(c) = step!(t, r#"^the EXIT of "(\w+)" has exit code (\d+)$"#) {
        let x = w
            .vars
            .get(&format!("{}_exit", &c[1]))
            .unwrap_or_else(|| panic!("harness-error: no EXIT was read from {}", &c[1]));
        let x: Value = serde_json::from_str(x).unwrap();
        assert_eq!(x["exit_code"].to_string(), &c[2], "EXIT {x}");
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the snapshot of "(\w+)" (contains|does not contain) (?:the bytes )?"([^"]+)"$"#
    ) {
        let needle = unescape(&c[3]);
        let snap = viewer(w, &c[1]).wait(
            "an S frame",
            WAIT_MS,
            |f| f.frames.iter().any(|x| x.kind == b'S'),
            |f| f.frames.iter().find(|x| x.kind == b'S').cloned(),
        );
        let snap = snap.unwrap_or_else(|| panic!("no S frame arrived on {}", &c[1]));
        let found = snap.payload.windows(needle.len()).any(|x| x == needle);
        assert_eq!(
            found,
            &c[2] == "contains",
            "the snapshot of {} {} {:?}",
            &c[1],
            if found { "contains" } else { "lacks" },
            &c[3]
        );
        return true;
    }
    if let Some(c) = step!(t, r#"^the stream of "(\w+)" closes with reason "(\w+)"$"#) {
        let frames = viewer(w, &c[1]).wait(
            "a C frame",
            WAIT_MS,
            |f| f.frames.iter().any(|x| x.kind == b'C'),
            |f| f.frames.clone(),
        );
        let close = frames
            .iter()
            .find(|f| f.kind == b'C')
            .unwrap_or_else(|| panic!("the stream ended without CLOSE: frames {}", kinds(&frames)));
        let json = close.json();
        w.transcript.extend_from_slice(json.to_string().as_bytes());
        assert_eq!(json["reason"], &c[2], "CLOSE {json}");
        return true;
    }
    false
}

/// Creates and removes `n` panes, so the next pane IDs are past single digits and
/// numeric order differs from text order.
fn use_up_pane_ids(w: &mut Inner, n: usize) {
    let token = w.owner_token();
    let call = |w: &mut Inner, verb: &str, params: Value| -> Value {
        let Value::Object(p) = params else {
            unreachable!()
        };
        let r = w.wire(Some(&token), verb, p);
        r.result
            .unwrap_or_else(|e| panic!("harness-error: {verb} failed: {e}"))
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
fn mentions(e: &Value, resources: &BTreeSet<String>) -> bool {
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
fn check_restore_events(all: &[Value], r: &Restored, s: &Subscriber) {
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
fn race(w: &mut Inner, n: usize, checkpoint: &str) {
    let token = w.owner_token();
    let socket = w.ph.socket.clone();
    let barrier = std::sync::Barrier::new(n + 1);
    let (restore, subs) = std::thread::scope(|scope| {
        let restore = scope.spawn(|| {
            barrier.wait();
            let mut p = Map::new();
            p.insert("checkpoint".into(), Value::String(checkpoint.into()));
            wire_call(&socket, Some(&token), "recovery.restore", p)
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

fn judge_race(w: &mut Inner, witness: &str) {
    let r = restored(w);
    let all = r.resources();
    let wevs = sub(w, witness).events();
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
    let (reply, bytes) = wire_call(&w.ph.socket, Some(&token), "session.create", p);
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
        let s = sub(w, &name);
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

/// `\e` and `\a` in a step's text stand for ESC and BEL.
fn unescape(s: &str) -> Vec<u8> {
    s.replace("\\e", "\u{1b}")
        .replace("\\a", "\u{7}")
        .into_bytes()
}
