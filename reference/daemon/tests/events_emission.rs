//! Which events each mutation publishes, in which order (every mutation verb, restore
//! and relaunch per RFC §6/§8), and snapshot/mutation atomicity under concurrent load.

mod common;
mod events_support;
use common::*;
use events_support::*;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const ENABLED: &str = ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000 } }";

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

#[test]
fn every_mutation_verb_emits_its_catalog_events() {
    let d = Daemon::start_with_config(Some(".{}"));
    let m = id(&d.ok(&["session", "create", "--name", "marker"]), "session");
    let s = id(&d.ok(&["session", "create", "--name", "s"]), "session");
    let w = id(
        &d.ok(&["window", "create", "--session", &s, "--name", "w"]),
        "window",
    );
    let (mut sub, _) = subscribe(&d, None, None);
    let (sr, wr) = (format!("session:{s}"), format!("window:{w}"));
    macro_rules! ev {
        ($args:expr) => {
            types(events_of(&d, &mut sub, &m, $args))
        };
    }

    assert_eq!(
        ev!(&["session", "rename", "--session", &s, "--name", "s2"]),
        pairs(&[("session.renamed", &sr)])
    );
    assert_eq!(
        ev!(&["window", "rename", "--window", &w, "--name", "w2"]),
        pairs(&[("window.renamed", &wr)])
    );
    let got = ev!(&[
        "pane",
        "create",
        "--window",
        &w,
        "--argv",
        r#"["/bin/sh","-c","read x; exit 7"]"#,
    ]);
    let p = got[1].1.strip_prefix("pane:").unwrap().to_string();
    let pr = format!("pane:{p}");
    assert_eq!(
        got,
        pairs(&[
            ("principal.issued", &pr),
            ("pane.created", &pr),
            ("window.layout_changed", &wr)
        ])
    );
    let got = ev!(&["pane", "split", "--pane", &p, "--axis", "rows", "--argv", SLEEP,]);
    let q = got[1].1.strip_prefix("pane:").unwrap().to_string();
    let qr = format!("pane:{q}");
    assert_eq!(
        got,
        pairs(&[
            ("principal.issued", &qr),
            ("pane.created", &qr),
            ("window.layout_changed", &wr)
        ])
    );
    // pane.send emits nothing itself; the exit it causes does.
    d.ok(&["pane", "send", "--pane", &p, "--text", "go\n"]);
    d.wait_exited(&p);
    let got = events_of(
        &d,
        &mut sub,
        &m,
        &["pane", "tag", "--pane", &q, "--key", "k", "--value", "v"],
    );
    assert_eq!(got.len(), 2);
    assert_eq!(
        (&got[0]["type"], &got[0]["data"]),
        (&json!("pane.exited"), &json!({"pane": p, "exit_code": 7}))
    );
    assert_eq!(got[1]["type"], "pane.tagged");
    assert_eq!(
        ev!(&["window", "ratio", "--window", &w, "--node", "0", "--ratio", "3000"]),
        pairs(&[("window.layout_changed", &wr)])
    );
    assert_eq!(
        ev!(&["window", "resize", "--window", &w, "--cols", "90", "--rows", "30"]),
        pairs(&[("window.layout_changed", &wr)])
    );
    assert_eq!(
        ev!(&["pane", "resize", "--pane", &q, "--rows", "12"]),
        pairs(&[("pane.resized", &qr), ("window.layout_changed", &wr)])
    );
    assert_eq!(
        ev!(&["pane", "tag", "--pane", &q, "--key", "role", "--value", "x"]),
        pairs(&[("pane.tagged", &qr)])
    );
    let got = ev!(&["pane", "float", "--window", &w, "--width", "20", "--argv", SLEEP,]);
    let f = got[1].1.strip_prefix("pane:").unwrap().to_string();
    let fr = format!("pane:{f}");
    assert_eq!(
        got,
        pairs(&[("principal.issued", &fr), ("pane.created", &fr)])
    );
    assert_eq!(
        ev!(&["pane", "resize", "--pane", &f, "--cols", "10"]),
        pairs(&[("pane.resized", &fr)])
    );

    let w2 = id(
        &d.ok(&["window", "create", "--session", &s, "--name", "v"]),
        "window",
    );
    let w2r = format!("window:{w2}");
    assert_eq!(
        ev!(&["pane", "place", "--pane", &q, "--window", &w2]),
        pairs(&[
            ("window.created", &w2r),
            ("pane.placed", &qr),
            ("window.layout_changed", &wr),
            ("window.layout_changed", &w2r)
        ])
    );
    assert_eq!(
        ev!(&["pane", "kill", "--pane", &p]),
        pairs(&[
            ("pane.removed", &pr),
            ("principal.revoked", &pr),
            ("window.layout_changed", &wr)
        ])
    );
    let got = ev!(&["grant", "issue", "--grants", "[]"]);
    assert_eq!(got, pairs(&[("principal.issued", "server:root")]));
    let t = id(&d.ok(&["grant", "issue", "--grants", "[]"]), "principal");
    assert_eq!(
        ev!(&["grant", "revoke", "--principal", &t]),
        pairs(&[
            ("principal.issued", "server:root"),
            ("principal.revoked", "server:root")
        ])
    );
    assert_eq!(
        ev!(&["config", "reload"]),
        pairs(&[("config.reloaded", "server:root")])
    );
    assert_eq!(
        ev!(&["window", "kill", "--window", &w2]),
        pairs(&[
            ("pane.removed", &qr),
            ("principal.revoked", &qr),
            ("window.removed", &w2r)
        ])
    );
    assert_eq!(
        ev!(&["session", "kill", "--session", &s]),
        pairs(&[
            ("pane.removed", &fr),
            ("principal.revoked", &fr),
            ("window.removed", &wr),
            ("session.removed", &sr)
        ])
    );
    // Failed mutations emit nothing.
    assert_eq!(d.owner(&["session", "kill", "--session", &s]).0, 3);
    assert_eq!(ev!(&["session", "create", "--name", "last"]).len(), 1);
}
