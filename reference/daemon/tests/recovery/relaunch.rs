//! `pane.relaunch`: an archive replaced by a fresh process, and the grants it needs.

use super::*;

/// `pane relaunch` of `pane` with `argv` (JSON text) and the orphan acknowledgement.
fn relaunch<'a>(pane: &'a str, argv: &'a str, ack: &'a str) -> [&'a str; 7] {
    ["pane", "relaunch", "--pane", pane, "--argv", argv, ack]
}

#[test]
fn relaunch_replaces_an_archive_leaf_with_a_fresh_pane() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let (tiled, float, w) = restored_archives(&mut d);
    // Checks, in order: ack, then archive lookup.
    let (code, v) = d.owner(&relaunch(&tiled, r#"["/bin/sh"]"#, "--ack-orphans=false"));
    assert_eq!((code, err_code(&v)), (2, "invalid_params.ack_orphans"));
    assert_eq!(v["error"]["data"], json!({"param": "ack_orphans"}));
    let (code, v) = d.owner(&relaunch("p999", r#"["/bin/sh"]"#, "--ack-orphans=true"));
    assert_eq!((code, err_code(&v)), (3, "not_found.pane"));

    // A vanished executable fails without touching the archive.
    let (code, v) = d.owner(&relaunch(
        &tiled,
        r#"["/missing/program"]"#,
        "--ack-orphans=true",
    ));
    assert_eq!((code, err_code(&v)), (6, "unavailable.spawn"), "{v}");
    assert_eq!(v["error"]["message"], "executable unavailable");
    assert_eq!(d.capture(&tiled)["recovery"]["process_state"], "exited");
    let before = d.ok(&["session", "list"]);
    assert_eq!(before["sessions"][0]["windows"][0]["revision"], 1);

    let r = d.ok(&relaunch(
        &tiled,
        r#"["/bin/sh","-c","echo relaunched; exec sleep 600"]"#,
        "--ack-orphans=true",
    ));
    let new = r["pane"].as_str().unwrap().to_string();
    assert_ne!(new, tiled, "a fresh pane id");
    assert_eq!(r["window"], w.as_str());
    assert!(r["pid"].as_i64().unwrap() > 0);
    let c = d.wait_text(&new, |row| row == "relaunched");
    assert!(
        c.get("recovery").is_none(),
        "a live pane has no recovery object"
    );
    assert_eq!(c["exited"], false);
    let after = d.ok(&["session", "list"]);
    let win = &after["sessions"][0]["windows"][0];
    assert_eq!(
        win["revision"], 2,
        "leaf replacement increments the revision"
    );
    assert_eq!(win["nodes"], json!([{"kind": "pane", "pane": new}]));
    let listed = d.ok(&["pane", "list"]);
    let entry = listed["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pane"] == new.as_str())
        .unwrap()
        .clone();
    assert_eq!(entry["argv0"], "sh");
    assert_eq!(entry["tags"], json!([{"key": "owner", "value": "venomx"}]));

    // A retry names the removed archive: it cannot launch again.
    let (code, v) = d.owner(&relaunch(&tiled, r#"["/bin/sh"]"#, "--ack-orphans=true"));
    assert_eq!((code, err_code(&v)), (3, "not_found.pane"));
    // A live (or ordinary exited) pane is not an archive.
    let (code, v) = d.owner(&relaunch(&new, r#"["/bin/sh"]"#, "--ack-orphans=true"));
    assert_eq!((code, err_code(&v)), (5, "conflict.not_archive"));

    // A float archive keeps its layer, spec and z; the tree and revision do not change.
    let z = |list: &Value, id: &str| {
        list["panes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["pane"] == id)
            .map(|p| p["float"]["z"].clone())
            .unwrap()
    };
    let old_z = z(&listed, &float);
    let r = d.ok(&relaunch(
        &float,
        r#"["/bin/sh","-c","exec sleep 600"]"#,
        "--ack-orphans=true",
    ));
    let new_float = r["pane"].as_str().unwrap().to_string();
    let listed = d.ok(&["pane", "list"]);
    assert_eq!(z(&listed, &new_float), old_z);
    let win = &d.ok(&["session", "list"])["sessions"][0]["windows"][0];
    assert_eq!(win["revision"], 2);
    assert_eq!(win["floats"], json!([new_float]));
}

#[test]
fn relaunch_needs_spawn_and_write_before_any_lookup() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let (tiled, _, w) = restored_archives(&mut d);
    let args = relaunch(&tiled, r#"["/bin/sh"]"#, "--ack-orphans=true");
    let (code, v) = d.anon(&args);
    assert_eq!((code, err_code(&v)), (4, "denied.spawn"));
    let spawn_only = d.ok(&[
        "grant",
        "issue",
        "--grants",
        &format!(r#"["spawn@window:{w}"]"#),
    ]);
    let token = spawn_only["token"].as_str().unwrap();
    let (code, v) = parse(d.cli_as(Some(token), &args));
    assert_eq!((code, err_code(&v)), (4, "denied.write"), "{v}");
    // Missing panes are denied the same way: no existence disclosure.
    let (code, v) = parse(d.cli_as(
        Some(token),
        &relaunch("p999", r#"["/bin/sh"]"#, "--ack-orphans=true"),
    ));
    assert_eq!(code, 4, "{v}");
    // The archive is still there.
    assert_eq!(d.capture(&tiled)["recovery"]["previous_pane"], "p0");
}
