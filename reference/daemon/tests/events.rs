//! `events.subscribe` against real daemons, the stream side: cursors (resume, source
//! change, expiry, invalid), grant filtering of events and snapshots, and the `closed`
//! reasons. Emission per verb, restore/relaunch order and atomicity under load are in
//! `events_emission.rs`.

mod common;
mod events_support;
use common::*;
use events_support::*;
use serde_json::{json, Value};

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
    // and what the socket buffers (the daemon's send buffer, net.core.wmem_default,
    // bounds it; every line is longer than 100 bytes).
    let wmem: usize = std::fs::read_to_string("/proc/sys/net/core/wmem_default")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(212_992);
    let n = (2 * 4096 + wmem / 100 + 1024).max(16384);
    renames(&d, &s, n);
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
    assert!(expected < first + n as u64, "some events were not queued");
    // The cursor of the last delivered event resumes (or expired, as the ring decides).
    let cursor = json!({"source": r["ok"]["source"], "sequence": expected - 1});
    let (_, r) = subscribe(&d, None, Some(cursor));
    assert!(
        r["ok"]["resumed"] == true || r["ok"]["reason"] == "cursor_expired",
        "{r}"
    );
}
