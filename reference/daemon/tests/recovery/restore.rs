//! Restore into archives: after SIGKILL, of planted files in every format, concurrent and refused restores, the on-demand lifetime, deep trees.

use super::*;

fn kill_pid(pid: i64) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// A session with a tiled split (ratio 6250), an exited pane, a float with a preset
/// and a tagged pane. Returns ([left, right, float], pids of the running ones).
fn build_topology(d: &Daemon) -> (Vec<String>, Vec<i64>) {
    let t = d.topology("work", "agents");
    let left = t.pane(r#"["/bin/sh","-c","trap '' HUP; echo left-ready; exec sleep 600"]"#);
    let (left_pid, left) = (left.pid, left.id);
    let right = t
        .split(
            &left,
            "cols",
            r#"["/bin/sh","-c","exit 3"]"#,
            &["--ratio", "6250"],
        )
        .id;
    let float = t.float(
        r#"["/bin/sh","-c","trap '' HUP; exec sleep 600"]"#,
        &["--preset", "venom.settings"],
    );
    let (float_pid, float) = (float.pid, float.id);
    d.ok(&[
        "pane", "tag", "--pane", &left, "--key", "role", "--value", "agent",
    ]);
    d.wait_exited(&right);
    d.wait_text(&left, |r| r == "left-ready");
    (vec![left, right, float], vec![left_pid, float_pid])
}

#[test]
fn sigkill_then_restore_reproduces_topology_as_archives() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let (panes, pids) = build_topology(&d);
    let cp = d.ok(&["recovery", "checkpoint"]);
    assert_eq!(cp["generation"], 1);
    let id = cp["checkpoint"].as_str().unwrap().to_string();
    crash_and_restart(&mut d);

    let list = d.ok(&["recovery", "list"]);
    assert_eq!(
        list,
        json!({"checkpoints": [{"checkpoint": id, "status": "valid", "generation": 1}]})
    );
    let i = d.ok(&["recovery", "inspect", "--checkpoint", &id]);
    assert_eq!(
        i,
        json!({"checkpoint": id, "generation": 1, "shutdown": "open", "sessions": 1,
               "windows": 1, "panes": 3, "text_panes": 0, "expired_text_panes": 0})
    );
    // Nothing was restored implicitly.
    assert_eq!(d.ok(&["session", "list"])["sessions"], json!([]));

    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    assert_eq!(r["checkpoint"], id.as_str());
    assert_eq!(r["sessions"], json!([{"previous": "s0", "current": "s0"}]));
    assert_eq!(r["windows"], json!([{"previous": "w0", "current": "w0"}]));
    let mapped: Vec<(String, String)> = r["panes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["previous"].as_str().unwrap().to_string(),
                m["current"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        mapped.iter().map(|m| m.0.clone()).collect::<Vec<_>>(),
        panes
    );

    let sessions = d.ok(&["session", "list"]);
    let w = &sessions["sessions"][0]["windows"][0];
    assert_eq!(sessions["sessions"][0]["name"], "work");
    assert_eq!(w["name"], "agents");
    assert_eq!(w["revision"], 1, "revisions restart at 1");
    assert_eq!(w["nodes"][0]["ratio"], 6250, "ratio kept");
    assert_eq!(w["floats"], json!([mapped[2].1]));
    // RFC §7: the old children were orphaned by the crash; neither startup nor restore
    // signalled, adopted or waited on them.
    for pid in &pids {
        assert!(process_alive(*pid), "orphan {pid} was touched");
        kill_pid(*pid);
    }

    let list = d.ok(&["pane", "list"]);
    let by_id = |id: &str| {
        list["panes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pane"] == id)
            .cloned()
            .unwrap()
    };
    let left = by_id(&mapped[0].1);
    assert_eq!(left["state"], "exited");
    assert!(left.get("exit_code").is_none(), "interrupted: no exit code");
    assert!(left.get("argv0").is_none(), "archives have no argv0");
    assert_eq!(
        left["recovery"],
        json!({"checkpoint": id, "previous_pane": panes[0], "process_state": "interrupted",
               "text_state": "omitted", "cut_rows": 0})
    );
    assert_eq!(
        left["tags"],
        json!([{"key": "owner", "value": "venomx"}, {"key": "role", "value": "agent"}])
    );
    let right = by_id(&mapped[1].1);
    assert_eq!(right["exit_code"], 3);
    assert_eq!(right["recovery"]["process_state"], "exited");
    let float = by_id(&mapped[2].1);
    assert_eq!(float["layer"], "float");
    assert_eq!(float["float"]["preset"], "venom.settings");
    assert_eq!(float["recovery"]["process_state"], "interrupted");

    let c = d.capture(&mapped[0].1);
    assert_eq!(c["exited"], true);
    assert_eq!(c["recovery"]["text_state"], "omitted");
    assert!(c["screen"].as_array().unwrap().iter().all(|r| r == ""));

    // Archives cannot take input; a second restore fails without duplicates.
    let (code, v) = d.owner(&["pane", "send", "--pane", &mapped[0].1, "--text", "x"]);
    assert_eq!((code, err_code(&v)), (5, "conflict.exited"));
    let (code, v) = d.owner(&["recovery", "restore", "--checkpoint", &id]);
    assert_eq!((code, err_code(&v)), (5, "conflict.not_empty"));
    assert_eq!(
        d.ok(&["session", "list"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // The restored state checkpoints again, archives keep their history.
    let again = d.ok(&["recovery", "checkpoint"]);
    assert_eq!(again["generation"], 2);
    let id2 = again["checkpoint"].as_str().unwrap().to_string();
    crash_and_restart(&mut d);
    let r2 = d.ok(&["recovery", "restore", "--checkpoint", &id2]);
    let first = r2["panes"][0]["current"].as_str().unwrap().to_string();
    let p = d.capture(&first);
    assert_eq!(p["recovery"]["process_state"], "interrupted");
    assert_eq!(p["recovery"]["previous_pane"], mapped[0].1.as_str());
}

#[test]
fn a_format_1_file_restores_tiled_with_the_restoring_owner() {
    let d = Daemon::start_with_config(Some(ENABLED));
    // Make the store exist, then plant a format-1 file written by another writer.
    d.ok(&["recovery", "list"]);
    let cp = fixture(
        vec![record(3, None, &[]), record(8, None, &[])],
        vec![
            vx_format::Node::Split {
                axis: vx_format::Axis::Rows,
                first: 1,
                second: 2,
                ratio: None,
            },
            vx_format::Node::Pane { pane: 3 },
            vx_format::Node::Pane { pane: 8 },
        ],
    );
    let id = plant(&d, cp, vx_format::Format::V1);
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    assert_eq!(r["sessions"], json!([{"previous": "s4", "current": "s0"}]));
    assert_eq!(r["windows"], json!([{"previous": "w9", "current": "w0"}]));
    assert_eq!(
        r["panes"],
        json!([{"previous": "p3", "current": "p0"}, {"previous": "p8", "current": "p1"}])
    );
    let w = &d.ok(&["session", "list"])["sessions"][0]["windows"][0];
    assert_eq!(w["revision"], 1);
    assert!(
        w["nodes"][0].get("ratio").is_none(),
        "format 1: equal split"
    );
    assert_eq!(
        (w["cols"].clone(), w["rows"].clone()),
        (json!(40), json!(21))
    );
    for p in d.ok(&["pane", "list"])["panes"].as_array().unwrap() {
        assert_eq!(p["tags"], json!([{"key": "owner", "value": "venomx"}]));
        assert!(p.get("layer").is_none());
        assert_eq!(p["recovery"]["process_state"], "interrupted");
    }
    // The next checkpoint is written in the current format.
    let again = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let bytes = std::fs::read(store_dir(&d).join(format!("{again}.json"))).unwrap();
    assert!(bytes.starts_with(b"{\"format\":3,"));
}

#[test]
fn restored_floats_get_fresh_z_above_the_counter_in_saved_order() {
    let d = Daemon::start_with_config(Some(ENABLED));
    // Advance the z counter, then empty the daemon again.
    let s = d.ok(&["session", "create", "--name", "tmp"])["session"]
        .as_str()
        .unwrap()
        .to_string();
    let w = d.ok(&["window", "create", "--session", &s, "--name", "w"])["window"]
        .as_str()
        .unwrap()
        .to_string();
    let z0 = d.ok(&[
        "pane",
        "float",
        "--window",
        &w,
        "--argv",
        r#"["/bin/sh","-c","exit 0"]"#,
    ])["z"]
        .as_u64()
        .unwrap();
    d.ok(&["session", "kill", "--session", &s]);
    // Saved z: p5 above p2 (z 9 vs 4), p7 tied with p5 (ties by source id).
    let cp = fixture(
        vec![
            record(2, Some(4), &[("owner", "venom")]),
            record(5, Some(9), &[("role", "control")]),
            record(7, Some(9), &[]),
        ],
        vec![],
    );
    let id = plant(&d, cp, vx_format::Format::V2);
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let cur = |i: usize| r["panes"][i]["current"].as_str().unwrap().to_string();
    let list = d.ok(&["pane", "list"]);
    let get = |id: &str| {
        list["panes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pane"] == id)
            .cloned()
            .unwrap()
    };
    let zs: Vec<u64> = (0..3)
        .map(|i| get(&cur(i))["float"]["z"].as_u64().unwrap())
        .collect();
    assert_eq!(zs, vec![z0 + 1, z0 + 2, z0 + 3]);
    let f = get(&cur(0));
    assert_eq!(f["layer"], "float");
    assert_eq!(f["float"]["preset"], "nobody.unknown");
    // An unknown preset resolves like a new pane.float: `.floats.default` (80% x 60%).
    assert_eq!(f["float"]["geometry"]["cols"], 64);
    assert_eq!(
        f["tags"],
        json!([{"key": "owner", "value": "venom"}]),
        "owner kept"
    );
    assert_eq!(
        get(&cur(1))["tags"],
        json!([{"key": "owner", "value": "venomx"}, {"key": "role", "value": "control"}])
    );
    let win = &d.ok(&["session", "list"])["sessions"][0]["windows"][0];
    assert_eq!(win["nodes"], json!([]));
    assert_eq!(win["floats"], json!([cur(0), cur(1), cur(2)]));
}

#[test]
fn concurrent_restores_and_relaunches_commit_at_most_once() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    d.ok(&["session", "create", "--name", "s"]);
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    crash_and_restart(&mut d);
    let results: Vec<(i32, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| d.owner(&["recovery", "restore", "--checkpoint", &id])))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        results.iter().filter(|(c, _)| *c == 0).count(),
        1,
        "{results:?}"
    );
    for (code, v) in results.iter().filter(|(c, _)| *c != 0) {
        assert_eq!((*code, err_code(v)), (5, "conflict.not_empty"));
    }
    assert_eq!(
        d.ok(&["session", "list"])["sessions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let (tiled, _, _) = {
        crash_and_restart(&mut d);
        restored_archives(&mut d)
    };
    let results: Vec<(i32, Value)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                scope.spawn(|| {
                    d.owner(&[
                        "pane",
                        "relaunch",
                        "--pane",
                        &tiled,
                        "--argv",
                        r#"["/bin/sh","-c","exec sleep 600"]"#,
                        "--ack-orphans=true",
                    ])
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        results.iter().filter(|(c, _)| *c == 0).count(),
        1,
        "{results:?}"
    );
    for (code, v) in results.iter().filter(|(c, _)| *c != 0) {
        assert_eq!((*code, err_code(v)), (3, "not_found.pane"));
    }
    let live = d.ok(&["pane", "list"])["panes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["state"] == "running")
        .count();
    assert_eq!(live, 1, "launched once");
}

#[test]
fn future_and_duplicate_generation_files_are_refused_for_restore() {
    let d = Daemon::start_with_config(Some(ENABLED));
    d.ok(&["recovery", "list"]);
    let mut future = fixture(
        vec![record(0, None, &[])],
        vec![vx_format::Node::Pane { pane: 0 }],
    );
    future.captured_at = vx_format::Timestamp(vx_store::clock::now().0 + 3_600_000);
    let future_id = plant(&d, future, vx_format::Format::V3);
    let list = d.ok(&["recovery", "list"]);
    assert_eq!(
        list["checkpoints"],
        json!([{"checkpoint": future_id, "status": "future", "generation": 7}])
    );
    let (code, v) = d.owner(&["recovery", "restore", "--checkpoint", &future_id]);
    assert_eq!((code, err_code(&v)), (5, "conflict.checkpoint_expired"));
    d.ok(&["recovery", "forget", "--checkpoint", &future_id]);

    let a = fixture(
        vec![record(0, None, &[])],
        vec![vx_format::Node::Pane { pane: 0 }],
    );
    let mut b = a.clone();
    b.checkpoint = "c0123abcd-89ab-4cde-8fab-0123456789ac".into();
    let a = plant(&d, a, vx_format::Format::V3);
    let b = plant(&d, b, vx_format::Format::V3);
    for id in [&a, &b] {
        let (code, v) = d.owner(&["recovery", "restore", "--checkpoint", id]);
        assert_eq!((code, err_code(&v)), (5, "conflict.checkpoint_corrupt"));
    }
    assert_eq!(
        d.ok(&["session", "list"])["sessions"],
        json!([]),
        "nothing restored"
    );
}

#[test]
fn on_demand_restore_counts_as_sessions_and_grace_expiry_writes_the_final_checkpoint() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    d.ok(&["session", "create", "--name", "kept"]);
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let mut child = d.child.take().unwrap();
    signal(child.id(), "KILL");
    let _ = child.wait();
    let mut child = d.spawn_serve(&["--on-demand"]);
    d.wait_ready();
    // Disk checkpoints alone do not keep it alive, but a restore before the grace
    // ends makes it active.
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let session = r["sessions"][0]["current"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(5600));
    assert!(
        child.try_wait().unwrap().is_none(),
        "restored sessions keep it alive"
    );
    d.ok(&["session", "kill", "--session", &session]);
    let status = poll("on-demand exit", || child.try_wait().unwrap());
    assert!(status.success(), "{status:?}");
    // The grace-expiry shutdown wrote a clean checkpoint of the (now empty) state.
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    let list = d.ok(&["recovery", "list"]);
    let rows = list["checkpoints"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let last = rows[1]["checkpoint"].as_str().unwrap();
    let i = d.ok(&["recovery", "inspect", "--checkpoint", last]);
    assert_eq!(
        (i["shutdown"].clone(), i["sessions"].clone()),
        (json!("clean"), json!(0))
    );
}

/// The issue-14 report, as a user would try it: 300 nested `pane.split`s (a chain,
/// each splitting the newest pane), checkpoint, SIGKILL, and a new daemon restores
/// what `recovery list` calls valid (restore used to refuse trees deeper than 256).
#[test]
fn a_300_deep_split_chain_checkpoints_and_restores_after_sigkill() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let t = d.topology_sized("deep", "w", &["--cols", "2000", "--rows", "2000"]);
    let window = t.window.clone();
    let mut wire = d.wire();
    wire.login_owner(&d);
    let argv = json!(["sleep", "3600"]);
    let r = wire.request(json!({"id": 1, "verb": "pane.create",
        "params": {"window": window, "argv": argv}}));
    let mut newest = r["ok"]["pane"].as_str().expect("pane.create").to_string();
    for n in 0..300 {
        let axis = if n % 2 == 0 { "cols" } else { "rows" };
        let r = wire.request(json!({"id": n + 2, "verb": "pane.split",
            "params": {"pane": newest, "axis": axis, "argv": argv}}));
        newest = r["ok"]["pane"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"))
            .to_string();
    }
    let nodes_before = d.ok(&["session", "list"])["sessions"][0]["windows"][0]["nodes"].clone();
    assert_eq!(nodes_before.as_array().map(Vec::len), Some(601));
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    drop(wire);
    crash_and_restart(&mut d);
    let list = d.ok(&["recovery", "list"]);
    assert_eq!(list["checkpoints"][0]["status"], "valid");
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    assert_eq!(r["panes"].as_array().map(Vec::len), Some(301));
    let after = d.ok(&["session", "list"]);
    let restored = &after["sessions"][0]["windows"][0]["nodes"];
    // Fresh ids in numeric source order: the same numbers on a fresh daemon.
    assert_eq!(restored, &nodes_before);
}

/// The RFC's own example of every format (vx-format's shared fixture), planted as the
/// daemon's store would hold it, restores with its nodes, ratios, floats and tags.
#[test]
fn every_rfc_example_restores_with_its_layout_floats_and_tags() {
    for format in vx_format::Format::ALL {
        let d = Daemon::start_with_config(Some(ENABLED));
        d.ok(&["recovery", "list"]); // opens the store directory
        let mut cp = vx_format::testing::rfc_example(format);
        cp.captured_at = vx_store::clock::now();
        let saved = cp.clone();
        let id = plant(&d, cp, format);
        let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
        assert_eq!(
            r["panes"].as_array().map(Vec::len),
            Some(saved.panes.len()),
            "format {}",
            format.number()
        );
        let w = &d.ok(&["session", "list"])["sessions"][0]["windows"][0];
        assert_eq!(w["name"], saved.windows[0].name.as_str());
        let ratios: Vec<Value> = w["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.get("ratio").cloned().unwrap_or(Value::Null))
            .collect();
        let saved_ratios: Vec<Value> = saved.windows[0]
            .nodes
            .iter()
            .map(|n| match n {
                vx_format::Node::Split { ratio: Some(r), .. } => json!(r),
                _ => Value::Null,
            })
            .collect();
        assert_eq!(ratios, saved_ratios, "format {}", format.number());
        let panes = d.ok(&["pane", "list"])["panes"].as_array().unwrap().clone();
        for (restored, saved) in panes.iter().zip(&saved.panes) {
            assert_eq!(
                restored["layer"] == "float",
                saved.float.is_some(),
                "format {}: layer of p{}",
                format.number(),
                saved.id
            );
            for tag in &saved.tags {
                let pair = json!({"key": tag.key, "value": tag.value});
                let tags = restored["tags"].as_array().cloned().unwrap_or_default();
                assert!(tags.contains(&pair), "{pair} kept in {tags:?}");
            }
        }
    }
}
