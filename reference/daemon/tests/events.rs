//! `events.subscribe` against real daemons: cursors (resume, source change, expiry,
//! invalid), grant filtering of events and snapshots, snapshot/mutation atomicity under
//! load, restore and relaunch order, and the `closed` reasons.

mod common;
use common::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const ENABLED: &str = ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000 } }";
const SLEEP: &str = r#"["/bin/sh","-c","exec sleep 600"]"#;

/// A connection as `token`'s principal (None: the owner) that sent `events.subscribe`;
/// returns it and the whole reply.
fn subscribe(d: &Daemon, token: Option<&str>, cursor: Option<Value>) -> (Wire, Value) {
    let mut w = d.wire();
    match token {
        None => w.login_owner(d),
        Some(t) => {
            let r = w.request(json!({"id":0,"verb":"auth.login","params":{"token":t}}));
            assert!(r.get("ok").is_some(), "{r}");
        }
    }
    let params = cursor.map_or(json!({}), |c| json!({ "cursor": c }));
    let r = w.request(json!({"id":1,"verb":"events.subscribe","params":params}));
    (w, r)
}

/// The next stream line, checked against the manifest's catalog when it is an event.
fn line(w: &mut Wire) -> Value {
    let v = w.reply().expect("a stream line");
    if let Some(e) = v.get("event") {
        check_catalog(e);
    }
    v
}

fn event(w: &mut Wire) -> Value {
    let v = line(w);
    v.get("event")
        .cloned()
        .unwrap_or_else(|| panic!("not an event: {v}"))
}

fn check_catalog(e: &Value) {
    let t = vxref::manifest::EVENTS
        .iter()
        .find(|t| e["type"] == t.name)
        .unwrap_or_else(|| panic!("type not in the catalog: {e}"));
    let kind = e["resource"].as_str().unwrap().split(':').next().unwrap();
    assert!(t.resource.split('|').any(|k| k == kind), "{e}");
    let data = e["data"].as_object().expect("data object");
    for (name, value) in data {
        let f = t
            .field(name)
            .unwrap_or_else(|| panic!("{name} not in catalog: {e}"));
        let ok = match f.kind {
            vxref::manifest::FieldKind::String => value.is_string(),
            vxref::manifest::FieldKind::Integer => value.is_i64() || value.is_u64(),
            vxref::manifest::FieldKind::Boolean => value.is_boolean(),
            vxref::manifest::FieldKind::Object => value.is_object(),
        };
        assert!(ok, "{name} has the wrong type: {e}");
    }
    for f in t.fields.iter().filter(|f| f.required) {
        assert!(data.contains_key(f.name), "{} missing: {e}", f.name);
    }
}

fn id(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .to_string()
}

fn err_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

/// `n` `session.rename`s pipelined on one connection (a writer thread, replies read
/// here), so bulk events cost no process per request.
fn renames(d: &Daemon, session: &str, n: usize) {
    let mut w = d.wire();
    w.login_owner(d);
    let mut out = w.stream.try_clone().unwrap();
    let frame = format!(
        "{}\n",
        json!({"id":2,"verb":"session.rename","params":{"session":session,"name":"n"}})
    );
    let writer = std::thread::spawn(move || {
        for _ in 0..n {
            out.write_all(frame.as_bytes()).unwrap();
        }
    });
    for _ in 0..n {
        assert!(w.reply().expect("reply").get("ok").is_some());
    }
    writer.join().unwrap();
}

#[test]
fn spec_doc_embeds_the_generated_event_catalog() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/spec/events.md");
    let doc = std::fs::read_to_string(path).unwrap();
    assert!(
        doc.contains(&vxref::docs_gen::events_markdown()),
        "docs/spec/events.md is stale: regenerate with `vxref manifest --events`"
    );
}

#[test]
fn a_cursor_resumes_exactly_after_its_event() {
    let d = Daemon::start();
    let (mut a, r) = subscribe(&d, None, None);
    let ok = &r["ok"];
    assert_eq!(ok["resumed"], false);
    assert!(ok.get("reason").is_none());
    assert_eq!(
        ok["snapshot"],
        json!({"sessions": [], "windows": [], "panes": []})
    );
    let source = id(ok, "source");
    assert_eq!(source, id(&d.ok(&["server", "info"]), "source"));
    let head = ok["sequence"].as_u64().unwrap();
    let mut sessions = Vec::new();
    for n in 0..3 {
        sessions.push(id(
            &d.ok(&["session", "create", "--name", &format!("s{n}")]),
            "session",
        ));
    }
    for (i, s) in sessions.iter().enumerate() {
        let e = event(&mut a);
        assert_eq!(e["sequence"].as_u64(), Some(head + 1 + i as u64));
        assert_eq!(e["source"], source.as_str());
        assert_eq!(e["type"], "session.created");
        assert_eq!(e["resource"], format!("session:{s}"));
        assert_eq!(e["data"], json!({"session": s, "name": format!("s{i}")}));
    }
    drop(a);
    d.ok(&[
        "session",
        "rename",
        "--session",
        &sessions[0],
        "--name",
        "x",
    ]);
    let cursor = json!({"source": source, "sequence": head + 1});
    let (mut b, r) = subscribe(&d, None, Some(cursor));
    assert_eq!(r["ok"]["resumed"], true, "{r}");
    assert_eq!(r["ok"]["sequence"].as_u64(), Some(head + 4));
    assert!(r["ok"].get("snapshot").is_none() && r["ok"].get("reason").is_none());
    let replayed: Vec<Value> = (0..3).map(|_| event(&mut b)).collect();
    let seqs: Vec<u64> = replayed
        .iter()
        .map(|e| e["sequence"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, vec![head + 2, head + 3, head + 4]);
    assert_eq!(replayed[2]["type"], "session.renamed");
    d.ok(&["session", "kill", "--session", &sessions[1]]);
    let live = event(&mut b);
    assert_eq!(
        (live["sequence"].as_u64(), &live["type"]),
        (Some(head + 5), &json!("session.removed"))
    );
    // Resuming at the head replays nothing; what the client sends is ignored.
    let (mut c, r) = subscribe(
        &d,
        None,
        Some(json!({"source": source, "sequence": head + 5})),
    );
    assert_eq!(r["ok"]["resumed"], true);
    c.send_raw(b"{\"id\":9,\"verb\":\"server.info\"}\n");
    d.ok(&["session", "create", "--name", "later"]);
    assert_eq!(event(&mut c)["sequence"].as_u64(), Some(head + 6));
}

#[test]
fn a_restart_changes_the_source() {
    let mut d = Daemon::start();
    d.ok(&["session", "create", "--name", "before"]);
    let (_, r) = subscribe(&d, None, None);
    let cursor = json!({"source": r["ok"]["source"], "sequence": r["ok"]["sequence"]});
    let (status, _) = d.stop();
    assert!(status.success());
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    let s = id(&d.ok(&["session", "create", "--name", "after"]), "session");
    let (_, r) = subscribe(&d, None, Some(cursor.clone()));
    let ok = &r["ok"];
    assert_ne!(ok["source"], cursor["source"]);
    assert_eq!(
        (&ok["resumed"], &ok["reason"]),
        (&json!(false), &json!("source_changed"))
    );
    assert_eq!(ok["sequence"], 1);
    assert_eq!(
        ok["snapshot"]["sessions"],
        json!([{"session": s, "name": "after", "windows": []}])
    );
}

#[test]
fn an_expired_cursor_gets_a_snapshot() {
    let d = Daemon::start();
    let s = id(&d.ok(&["session", "create", "--name", "s"]), "session");
    let (_, r) = subscribe(&d, None, None);
    let source = r["ok"]["source"].clone();
    let old = r["ok"]["sequence"].as_u64().unwrap();
    renames(&d, &s, 4200);
    let (_, r) = subscribe(&d, None, Some(json!({"source": source, "sequence": old})));
    let ok = &r["ok"];
    assert_eq!(
        (&ok["resumed"], &ok["reason"]),
        (&json!(false), &json!("cursor_expired"))
    );
    assert_eq!(ok["sequence"].as_u64(), Some(old + 4200));
    assert_eq!(ok["snapshot"]["sessions"][0]["name"], "n");
    // The oldest retained successor still resumes.
    let edge = old + 4200 - 4096;
    let (mut w, r) = subscribe(&d, None, Some(json!({"source": source, "sequence": edge})));
    assert_eq!(r["ok"]["resumed"], true, "{r}");
    assert_eq!(event(&mut w)["sequence"].as_u64(), Some(edge + 1));
}

#[test]
fn future_and_malformed_cursors_are_invalid_params() {
    let d = Daemon::start();
    d.ok(&["session", "create", "--name", "s"]);
    let (_, r) = subscribe(&d, None, None);
    let source = r["ok"]["source"].as_str().unwrap().to_string();
    let head = r["ok"]["sequence"].as_u64().unwrap();
    // (Non-integer and unsafe numbers never get here: the wire rejects them in any frame.)
    for cursor in [
        json!({"source": source, "sequence": head + 1}),
        json!(null),
        json!("venomx/x"),
        json!([source, head]),
        json!({"source": source}),
        json!({"sequence": 0}),
        json!({"source": source, "sequence": -1}),
        json!({"source": source, "sequence": "1"}),
        json!({"source": 7, "sequence": 0}),
        json!({"source": source, "sequence": 0, "extra": 1}),
    ] {
        let (mut w, r) = subscribe(&d, None, Some(cursor.clone()));
        assert_eq!(err_code(&r), "invalid_params.cursor", "{cursor}: {r}");
        assert_eq!(r["error"]["data"], json!({"param": "cursor"}));
        // No stream: the connection still answers requests.
        let info = w.request(json!({"id":3,"verb":"server.info"}));
        assert!(info.get("ok").is_some());
    }
}

#[test]
fn grants_filter_the_snapshot_and_the_events() {
    let d = Daemon::start();
    let x = id(&d.ok(&["session", "create", "--name", "x"]), "session");
    let y = id(&d.ok(&["session", "create", "--name", "y"]), "session");
    let wx = id(
        &d.ok(&["window", "create", "--session", &x, "--name", "wx"]),
        "window",
    );
    d.ok(&["window", "create", "--session", &y, "--name", "wy"]);
    let px = id(
        &d.ok(&["pane", "create", "--window", &wx, "--argv", SLEEP]),
        "pane",
    );
    let grants = format!(r#"["read@session:{x}"]"#);
    let issued = d.ok(&["grant", "issue", "--grants", &grants]);
    let token = id(&issued, "token");
    let (mut owner, _) = subscribe(&d, None, None);
    let (mut reader, r) = subscribe(&d, Some(&token), None);
    let snap = &r["ok"]["snapshot"];
    assert_eq!(snap["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(snap["sessions"][0]["session"], x.as_str());
    assert_eq!(
        snap["windows"],
        json!([d.ok(&["session", "list"])["sessions"][0]["windows"][0]])
    );
    assert_eq!(snap["panes"].as_array().unwrap().len(), 1);
    assert_eq!(snap["panes"][0]["pane"], px.as_str());

    d.ok(&["session", "rename", "--session", &y, "--name", "y2"]);
    let other = d.ok(&["grant", "issue", "--grants", "[]"]);
    d.ok(&["session", "rename", "--session", &x, "--name", "x2"]);
    d.ok(&["window", "create", "--session", &y, "--name", "wy2"]);
    d.ok(&["pane", "kill", "--pane", &px]);
    d.ok(&["session", "rename", "--session", &x, "--name", "done"]);

    let mut seen = Vec::new();
    loop {
        let e = event(&mut reader);
        seen.push((e["type"].as_str().unwrap().to_string(), id(&e, "resource")));
        if e["data"]["name"] == "done" {
            break;
        }
    }
    let expect: Vec<(String, String)> = [
        ("session.renamed", format!("session:{x}")),
        ("pane.removed", format!("pane:{px}")),
        ("principal.revoked", format!("pane:{px}")),
        ("window.layout_changed", format!("window:{wx}")),
        ("session.renamed", format!("session:{x}")),
    ]
    .into_iter()
    .map(|(t, r)| (t.to_string(), r))
    .collect();
    assert_eq!(seen, expect);
    // The owner sees everything, including the server-level issuance.
    let mut types = Vec::new();
    loop {
        let e = event(&mut owner);
        types.push(e["type"].as_str().unwrap().to_string());
        if e["type"] == "principal.issued" {
            assert_eq!(e["data"]["principal"], other["principal"]);
            assert_eq!(e["resource"], "server:root");
        }
        if e["data"]["name"] == "done" {
            break;
        }
    }
    assert_eq!(types.len(), 8, "{types:?}");
}

#[test]
fn closed_revoked_after_the_subscribers_principal_is_revoked() {
    let d = Daemon::start();
    let issued = d.ok(&["grant", "issue", "--grants", r#"["read@server:root"]"#]);
    let (mut w, r) = subscribe(&d, Some(&id(&issued, "token")), None);
    assert!(r.get("ok").is_some(), "{r}");
    d.ok(&["session", "create", "--name", "seen"]);
    assert_eq!(event(&mut w)["type"], "session.created");
    d.ok(&["grant", "revoke", "--principal", &id(&issued, "principal")]);
    assert_eq!(line(&mut w), json!({"closed": {"reason": "revoked"}}));
    assert!(w.reply().is_none(), "the stream ends after closed");
}

#[test]
fn closed_shutdown_when_the_daemon_stops() {
    let mut d = Daemon::start();
    let (mut w, _) = subscribe(&d, None, None);
    d.ok(&["session", "create", "--name", "s"]);
    assert_eq!(event(&mut w)["type"], "session.created");
    let (status, _) = d.stop();
    assert!(status.success());
    assert_eq!(line(&mut w), json!({"closed": {"reason": "shutdown"}}));
    assert!(w.reply().is_none());
}

#[test]
fn a_subscriber_that_never_reads_is_closed_as_lagging() {
    let d = Daemon::start();
    let s = id(&d.ok(&["session", "create", "--name", "s"]), "session");
    let (mut slow, r) = subscribe(&d, None, None);
    let first = r["ok"]["sequence"].as_u64().unwrap() + 1;
    // More than the daemon can hold for it: 4096 queued, at most 4096 being written,
    // and the socket buffers.
    renames(&d, &s, 16384);
    assert!(d.ok(&["server", "info"]).get("source").is_some());
    let mut expected = first;
    loop {
        let v = line(&mut slow);
        if let Some(e) = v.get("event") {
            assert_eq!(
                e["sequence"].as_u64(),
                Some(expected),
                "no gaps before closing"
            );
            expected += 1;
            continue;
        }
        assert_eq!(v, json!({"closed": {"reason": "lagging"}}));
        break;
    }
    assert!(expected < first + 16384, "some events were not queued");
    // The cursor of the last delivered event resumes (or expired, as the ring decides).
    let cursor = json!({"source": r["ok"]["source"], "sequence": expected - 1});
    let (_, r) = subscribe(&d, None, Some(cursor));
    assert!(
        r["ok"]["resumed"] == true || r["ok"]["reason"] == "cursor_expired",
        "{r}"
    );
}

/// Sessions, windows (session, revision) and panes (window) as the events tell them.
#[derive(Debug, Default, PartialEq)]
struct Model {
    sessions: BTreeMap<String, ()>,
    windows: BTreeMap<String, (String, u64)>,
    panes: BTreeMap<String, String>,
}

impl Model {
    fn from_snapshot(snap: &Value) -> Model {
        let mut m = Model::default();
        for s in snap["sessions"].as_array().unwrap() {
            m.sessions.insert(id(s, "session"), ());
        }
        for w in snap["windows"].as_array().unwrap() {
            let rev = w["revision"].as_u64().unwrap();
            m.windows.insert(id(w, "window"), (id(w, "session"), rev));
        }
        for p in snap["panes"].as_array().unwrap() {
            m.panes.insert(id(p, "pane"), id(p, "window"));
        }
        m
    }

    /// The daemon's state now, as the owner lists it.
    fn current(d: &Daemon) -> Model {
        let mut snap = json!({"windows": []});
        let sessions = d.ok(&["session", "list"])["sessions"].clone();
        for s in sessions.as_array().unwrap() {
            for w in s["windows"].as_array().unwrap() {
                snap["windows"].as_array_mut().unwrap().push(w.clone());
            }
        }
        snap["sessions"] = sessions;
        snap["panes"] = d.ok(&["pane", "list"])["panes"].clone();
        Model::from_snapshot(&snap)
    }

    /// Applies one event; a duplicate or a missing resource means the snapshot held
    /// part of a mutation whose events came after its head.
    fn apply(&mut self, e: &Value) {
        let d = &e["data"];
        match e["type"].as_str().unwrap() {
            "session.created" => {
                assert!(self.sessions.insert(id(d, "session"), ()).is_none(), "{e}")
            }
            "session.removed" => {
                let s = id(d, "session");
                assert!(self.sessions.remove(&s).is_some(), "{e}");
                assert!(self.windows.values().all(|(ws, _)| *ws != s), "{e}");
            }
            "window.created" => {
                let w = (id(d, "session"), 1);
                assert!(self.sessions.contains_key(&w.0), "{e}");
                assert!(self.windows.insert(id(d, "window"), w).is_none(), "{e}");
            }
            "window.removed" => {
                let w = id(d, "window");
                assert!(self.windows.remove(&w).is_some(), "{e}");
                assert!(self.panes.values().all(|pw| *pw != w), "{e}");
            }
            "window.layout_changed" => {
                let rev = d["revision"].as_u64().unwrap();
                let w = self
                    .windows
                    .get_mut(&id(d, "window"))
                    .expect("known window");
                assert!(rev > w.1, "revision goes forward: {e}");
                w.1 = rev;
            }
            "pane.created" => {
                assert!(self.windows.contains_key(&id(d, "window")), "{e}");
                assert!(
                    self.panes.insert(id(d, "pane"), id(d, "window")).is_none(),
                    "{e}"
                );
            }
            "pane.removed" => assert!(self.panes.remove(&id(d, "pane")).is_some(), "{e}"),
            "pane.placed" => {
                let p = self.panes.get_mut(&id(d, "pane")).expect("known pane");
                *p = id(d, "window");
            }
            _ => {}
        }
    }
}

#[test]
fn snapshots_and_events_reconstruct_the_state_under_concurrent_mutations() {
    let d = Arc::new(Daemon::start());
    let done = Arc::new(AtomicBool::new(false));
    let mutator = {
        let d = d.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            for round in 0..12 {
                let s = id(&d.ok(&["session", "create", "--name", "m"]), "session");
                let w = id(
                    &d.ok(&["window", "create", "--session", &s, "--name", "w"]),
                    "window",
                );
                let p = id(
                    &d.ok(&["pane", "create", "--window", &w, "--argv", SLEEP]),
                    "pane",
                );
                let q = id(
                    &d.ok(&[
                        "pane", "split", "--pane", &p, "--axis", "cols", "--argv", SLEEP,
                    ]),
                    "pane",
                );
                d.ok(&[
                    "pane", "split", "--pane", &q, "--axis", "rows", "--argv", SLEEP,
                ]);
                d.ok(&[
                    "window", "resize", "--window", &w, "--cols", "100", "--rows", "30",
                ]);
                let w2 = id(
                    &d.ok(&["window", "create", "--session", &s, "--name", "v"]),
                    "window",
                );
                d.ok(&["pane", "place", "--pane", &q, "--window", &w2]);
                d.ok(&["pane", "kill", "--pane", &p]);
                if round % 3 == 0 {
                    d.ok(&["session", "kill", "--session", &s]);
                } else if round % 3 == 1 {
                    d.ok(&["window", "kill", "--window", &w]);
                }
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let subscribers: Vec<_> = (0..3)
        .map(|t| {
            let d = d.clone();
            let done = done.clone();
            std::thread::spawn(move || {
                let mut subscriptions = 0;
                loop {
                    let finishing = done.load(Ordering::SeqCst);
                    let (mut w, r) = subscribe(&d, None, None);
                    subscriptions += 1;
                    let ok = &r["ok"];
                    let mut model = Model::from_snapshot(&ok["snapshot"]);
                    let marked = ok["snapshot"]["sessions"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|s| s["name"] == "marker");
                    if marked {
                        // Subscribed after the marker: the snapshot alone is final.
                        assert_eq!(model, Model::current(&d));
                        return subscriptions;
                    }
                    let head = ok["sequence"].as_u64().unwrap();
                    // Early subscriptions stop after a few events and subscribe again.
                    let budget = if finishing {
                        usize::MAX
                    } else {
                        1 + (subscriptions * 7 + t) % 25
                    };
                    for next in (head + 1..).take(budget) {
                        let e = event(&mut w);
                        assert_eq!(
                            e["sequence"].as_u64(),
                            Some(next),
                            "first live event is head+1, no gaps"
                        );
                        model.apply(&e);
                        if e["type"] == "session.created" && e["data"]["name"] == "marker" {
                            assert_eq!(model, Model::current(&d));
                            return subscriptions;
                        }
                    }
                }
            })
        })
        .collect();
    mutator.join().unwrap();
    d.ok(&["session", "create", "--name", "marker"]);
    for s in subscribers {
        assert!(s.join().unwrap() >= 1);
    }
}

/// A window with an exited tiled pane (exit 3), a running split and a float, plus an
/// empty session; checkpointed, then the daemon is stopped and started again.
fn checkpoint_and_restart(d: &mut Daemon) -> String {
    let s = id(&d.ok(&["session", "create", "--name", "a"]), "session");
    d.ok(&["session", "create", "--name", "b"]);
    let w = id(
        &d.ok(&["window", "create", "--session", &s, "--name", "w"]),
        "window",
    );
    let p = id(
        &d.ok(&[
            "pane",
            "create",
            "--window",
            &w,
            "--argv",
            r#"["/bin/sh","-c","exit 3"]"#,
        ]),
        "pane",
    );
    d.wait_exited(&p);
    d.ok(&[
        "pane", "split", "--pane", &p, "--axis", "cols", "--argv", SLEEP,
    ]);
    d.ok(&[
        "pane", "float", "--window", &w, "--width", "20", "--argv", SLEEP,
    ]);
    let cp = id(&d.ok(&["recovery", "checkpoint"]), "checkpoint");
    let (status, _) = d.stop();
    assert!(status.success());
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    cp
}

#[test]
fn restore_publishes_rfc_order_and_relaunch_its_own() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let cp = checkpoint_and_restart(&mut d);
    // Learn the next session id with a probe, so a principal can be granted read on
    // the first restored session before the restore.
    let probe = id(&d.ok(&["session", "create", "--name", "probe"]), "session");
    d.ok(&["session", "kill", "--session", &probe]);
    let first = format!("s{}", probe[1..].parse::<u64>().unwrap() + 1);
    let grants = format!(r#"["read@session:{first}"]"#);
    let token = id(&d.ok(&["grant", "issue", "--grants", &grants]), "token");
    let (mut owner, _) = subscribe(&d, None, None);
    let (mut reader, _) = subscribe(&d, Some(&token), None);
    let mapping = d.ok(&["recovery", "restore", "--checkpoint", &cp]);
    assert_eq!(mapping["sessions"][0]["current"], first.as_str());

    let mut events = Vec::new();
    loop {
        let e = event(&mut owner);
        let last = e["type"] == "recovery.restored";
        events.push(e);
        if last {
            break;
        }
    }
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let mut expect = vec!["session.created"; 2];
    expect.extend(["window.created"]);
    expect.extend(["pane.created"; 3]);
    expect.extend(["pane.exited"; 3]);
    expect.push("recovery.restored");
    assert_eq!(types, expect);
    let last = &events[9];
    assert_eq!(last["resource"], "server:root");
    assert_eq!(
        last["data"],
        json!({"checkpoint": cp, "cleanup_unverified": true})
    );
    let created = &events[3..6];
    assert!(
        created.iter().all(|e| e["data"].get("argv0").is_none()),
        "archives have no argv0"
    );
    let floats: Vec<&Value> = created
        .iter()
        .filter(|e| e["data"]["layer"] == "float")
        .collect();
    assert_eq!(floats.len(), 1);
    assert_eq!(floats[0]["data"]["float"]["geometry"]["cols"], 20);
    assert!(floats[0]["data"]["float"]["z"].is_u64());
    let codes: Vec<&Value> = events[6..9]
        .iter()
        .filter_map(|e| e["data"].get("exit_code"))
        .collect();
    assert_eq!(
        codes,
        vec![&json!(3)],
        "only the pane known to have exited has a code"
    );
    // The filtered principal saw its session's part and not the server-level event.
    let seen: Vec<Value> = (0..7).map(|_| event(&mut reader)).collect();
    assert!(seen
        .iter()
        .all(|e| e["type"] != "recovery.restored" && e["type"] != "principal.issued"));
    assert_eq!(seen[0]["data"]["session"], first.as_str());

    // Relaunch: principal, archive removal, new pane, layout (tiled) — none for a float.
    let tiled = id(&created[1]["data"], "pane");
    let float = id(&floats[0]["data"], "pane");
    let window = id(&created[1]["data"], "window");
    for (archive, is_float) in [(tiled, false), (float, true)] {
        let r = d.ok(&[
            "pane",
            "relaunch",
            "--pane",
            &archive,
            "--argv",
            SLEEP,
            "--ack-orphans=true",
        ]);
        let new = id(&r, "pane");
        d.ok(&["session", "rename", "--session", &first, "--name", "mark"]);
        let mut got = Vec::new();
        loop {
            let e = event(&mut owner);
            if e["type"] == "session.renamed" {
                break;
            }
            got.push((e["type"].as_str().unwrap().to_string(), id(&e, "resource")));
        }
        let mut want = vec![
            ("principal.issued".to_string(), format!("pane:{new}")),
            ("pane.removed".to_string(), format!("pane:{archive}")),
            ("pane.created".to_string(), format!("pane:{new}")),
        ];
        if !is_float {
            want.push((
                "window.layout_changed".to_string(),
                format!("window:{window}"),
            ));
        }
        assert_eq!(got, want);
    }
    // A failed relaunch emits nothing.
    let (code, _) = d.owner(&[
        "pane",
        "relaunch",
        "--pane",
        &id(&created[0]["data"], "pane"),
        "--argv",
        r#"["/missing/x"]"#,
        "--ack-orphans=true",
    ]);
    assert_eq!(code, 6);
    d.ok(&["session", "rename", "--session", &first, "--name", "after"]);
    assert_eq!(event(&mut owner)["type"], "session.renamed");
}
