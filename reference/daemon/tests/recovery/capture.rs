//! Checkpoints: explicit, periodic and final clean ones; list, inspect and forget; admin grants; the disabled store.

use super::*;

fn stop_and_restart(d: &mut Daemon) {
    let (status, _) = d.stop();
    assert!(status.success(), "clean stop: {status:?}");
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
}

#[test]
fn disabled_recovery_refuses_checkpoint_and_restore_but_lists() {
    let d = Daemon::start();
    let (code, v) = d.owner(&["recovery", "checkpoint"]);
    assert_eq!((code, err_code(&v)), (6, "unavailable.recovery_disabled"));
    let id = "c01234567-89ab-4cde-8fab-0123456789ab";
    let (code, v) = d.owner(&["recovery", "restore", "--checkpoint", id]);
    assert_eq!((code, err_code(&v)), (6, "unavailable.recovery_disabled"));
    assert_eq!(d.ok(&["recovery", "list"]), json!({"checkpoints": []}));
    let (code, v) = d.owner(&["recovery", "inspect", "--checkpoint", id]);
    assert_eq!((code, err_code(&v)), (3, "not_found.checkpoint"));
    // A mutation on a disabled daemon writes nothing, not even at shutdown.
    d.pane(r#"["/bin/sh","-c","exec sleep 600"]"#);
    let mut d = d;
    let (status, _) = d.stop();
    assert!(status.success());
    assert!(checkpoint_files(&d).is_empty());
}

#[test]
fn recovery_verbs_need_admin_before_any_lookup_and_check_ids() {
    let d = Daemon::start_with_config(Some(ENABLED));
    let id = "c01234567-89ab-4cde-8fab-0123456789ab";
    for args in [
        vec!["recovery", "list"],
        vec!["recovery", "checkpoint"],
        vec!["recovery", "inspect", "--checkpoint", id],
        vec!["recovery", "restore", "--checkpoint", id],
        vec!["recovery", "forget", "--checkpoint", id],
        vec!["recovery", "inspect", "--checkpoint", "../../etc/passwd"],
    ] {
        let (code, v) = d.anon(&args);
        assert_eq!((code, err_code(&v)), (4, "denied.admin"), "{args:?}: {v}");
        assert_eq!(v["error"]["data"]["resource"], "server:root");
    }
    for verb in ["inspect", "restore", "forget"] {
        let (code, v) = d.owner(&["recovery", verb, "--checkpoint", "../x"]);
        assert_eq!(
            (code, err_code(&v)),
            (2, "invalid_params.checkpoint"),
            "{verb}"
        );
        assert_eq!(v["error"]["data"], json!({"param": "checkpoint"}));
        let (code, v) = d.owner(&["recovery", verb, "--checkpoint", id]);
        assert_eq!((code, err_code(&v)), (3, "not_found.checkpoint"), "{verb}");
        assert_eq!(v["error"]["data"], json!({}));
    }
}

#[test]
fn a_fresh_empty_daemon_writes_nothing_even_with_ticks_and_shutdown() {
    let config = ".{ .recovery = .{ .enabled = true, .interval_ms = 1000 } }";
    let mut d = Daemon::start_with_config(Some(config));
    std::thread::sleep(Duration::from_millis(2500));
    let (status, _) = d.stop();
    assert!(status.success());
    assert!(checkpoint_files(&d).is_empty());
    // With an archive on disk: an untouched start neither writes, prunes nor
    // overwrites it, through ticks and a clean stop.
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    d.ok(&["session", "create", "--name", "s"]);
    d.ok(&["recovery", "checkpoint"]);
    crash_and_restart(&mut d);
    let before = checkpoint_files(&d);
    assert_eq!(before.len(), 1);
    std::thread::sleep(Duration::from_millis(2500));
    let (status, _) = d.stop();
    assert!(status.success());
    assert_eq!(checkpoint_files(&d), before);
}

#[test]
fn periodic_ticks_write_after_the_first_mutation() {
    let config = ".{ .recovery = .{ .enabled = true, .interval_ms = 1000 } }";
    let d = Daemon::start_with_config(Some(config));
    d.ok(&["session", "create", "--name", "tick"]);
    let list = poll("a periodic checkpoint", || {
        let l = d.ok(&["recovery", "list"]);
        (!l["checkpoints"].as_array().unwrap().is_empty()).then_some(l)
    });
    assert_eq!(list["checkpoints"][0]["status"], "valid");
    let id = list["checkpoints"][0]["checkpoint"].as_str().unwrap();
    let i = d.ok(&["recovery", "inspect", "--checkpoint", id]);
    assert_eq!(i["shutdown"], "open");
    assert_eq!(i["sessions"], 1);
    // Unchanged topology: later ticks do not pile up generations.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(checkpoint_files(&d).len(), 1);
}

#[test]
fn clean_stop_writes_a_final_clean_checkpoint_with_known_exits() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let pane = d.pane(r#"["/bin/sh","-c","exec sleep 600"]"#);
    let (status, elapsed) = d.stop();
    assert!(status.success(), "{status:?}");
    assert!(elapsed < Duration::from_millis(4000), "{elapsed:?}");
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    let list = d.ok(&["recovery", "list"]);
    let rows = list["checkpoints"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let id = rows[0]["checkpoint"].as_str().unwrap();
    assert_eq!(
        d.ok(&["recovery", "inspect", "--checkpoint", id])["shutdown"],
        "clean"
    );
    d.ok(&["recovery", "restore", "--checkpoint", id]);
    let p = d.capture(&pane);
    assert_eq!(p["signal"], "SIGTERM", "the observed final exit is kept");
    assert_eq!(p["recovery"]["process_state"], "exited");
    // The restored daemon is active: its own clean stop writes generation 2.
    stop_and_restart(&mut d);
    let list = d.ok(&["recovery", "list"]);
    assert_eq!(list["checkpoints"].as_array().unwrap().len(), 2);
    assert_eq!(list["checkpoints"][1]["generation"], 2);
}

#[test]
fn forget_deletes_one_file_and_list_reports_invalid_files_without_payload() {
    let d = Daemon::start_with_config(Some(ENABLED));
    d.ok(&["session", "create", "--name", "s"]);
    let a = d.ok(&["recovery", "checkpoint"]);
    let b = d.ok(&["recovery", "checkpoint"]);
    assert_eq!(
        (a["generation"].clone(), b["generation"].clone()),
        (json!(1), json!(2))
    );
    let a = a["checkpoint"].as_str().unwrap().to_string();
    // A corrupt newest file is listed as corrupt; it is never silently skipped.
    let bad = "c11111111-2222-4333-8444-555555555555";
    let path = store_dir(&d).join(format!("{bad}.json"));
    std::fs::write(
        &path,
        b"{\"format\":3,\"payload\":\"{}\",\"sha256\":\"00\"}\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let list = d.ok(&["recovery", "list"]);
    let rows = list["checkpoints"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[2], json!({"checkpoint": bad, "status": "corrupt"}));
    let (code, v) = d.owner(&["recovery", "restore", "--checkpoint", bad]);
    // The daemon is not empty: the tree check comes before the file.
    assert_eq!((code, err_code(&v)), (5, "conflict.not_empty"));
    let (code, v) = d.owner(&["recovery", "inspect", "--checkpoint", bad]);
    assert_eq!((code, err_code(&v)), (5, "conflict.checkpoint_corrupt"));
    assert_eq!(
        d.ok(&["recovery", "forget", "--checkpoint", bad]),
        json!({})
    );
    assert_eq!(d.ok(&["recovery", "forget", "--checkpoint", &a]), json!({}));
    let (code, v) = d.owner(&["recovery", "forget", "--checkpoint", &a]);
    assert_eq!((code, err_code(&v)), (3, "not_found.checkpoint"));
    assert_eq!(
        d.ok(&["recovery", "list"])["checkpoints"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn enabling_by_reload_opens_the_store_and_disabling_deletes_nothing() {
    let d = Daemon::start();
    d.ok(&["session", "create", "--name", "s"]);
    d.ok(&["config", "reload"]);
    assert!(
        !store_dir(&d).exists(),
        "a disabled reload touches no store"
    );
    std::fs::create_dir_all(d.config_path().parent().unwrap()).unwrap();
    std::fs::write(d.config_path(), ENABLED).unwrap();
    d.ok(&["config", "reload"]);
    assert!(store_dir(&d).is_dir());
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"].clone();
    std::fs::write(d.config_path(), ".{}").unwrap();
    d.ok(&["config", "reload"]);
    let (code, v) = d.owner(&["recovery", "checkpoint"]);
    assert_eq!((code, err_code(&v)), (6, "unavailable.recovery_disabled"));
    assert_eq!(
        d.ok(&["recovery", "list"])["checkpoints"][0]["checkpoint"],
        id
    );
}

#[test]
fn back_to_back_explicit_checkpoints_never_see_the_previous_one_in_flight() {
    let d = Daemon::start_with_config(Some(ENABLED));
    d.ok(&["session", "create", "--name", "s"]);
    let mut w = d.wire();
    w.login_owner(&d);
    for n in 1..=20u64 {
        let r = w.request(json!({"id": n, "verb": "recovery.checkpoint", "params": {}}));
        assert_eq!(r["ok"]["generation"], n, "{r}");
    }
    // Count pruning keeps the newest three.
    let list = d.ok(&["recovery", "list"]);
    let gens: Vec<u64> = list["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["generation"].as_u64().unwrap())
        .collect();
    assert_eq!(gens, vec![18, 19, 20]);
}

#[test]
fn a_disabled_daemon_lists_but_never_prunes_archives() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    d.ok(&["session", "create", "--name", "s"]);
    d.ok(&["recovery", "checkpoint"]);
    d.ok(&["recovery", "checkpoint"]);
    let (status, _) = d.stop();
    assert!(status.success());
    assert_eq!(
        checkpoint_files(&d).len(),
        3,
        "two explicit and the final clean one"
    );
    std::fs::write(
        d.config_path(),
        ".{ .recovery = .{ .enabled = false, .max_checkpoints = 1 } }",
    )
    .unwrap();
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    assert_eq!(
        d.ok(&["recovery", "list"])["checkpoints"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    d.ok(&["config", "reload"]);
    assert_eq!(checkpoint_files(&d).len(), 3);
    // Enabling with the stricter count prunes before the reload succeeds.
    std::fs::write(
        d.config_path(),
        ".{ .recovery = .{ .enabled = true, .max_checkpoints = 1 } }",
    )
    .unwrap();
    d.ok(&["config", "reload"]);
    let list = d.ok(&["recovery", "list"]);
    assert_eq!(list["checkpoints"].as_array().unwrap().len(), 1);
    assert_eq!(list["checkpoints"][0]["generation"], 3);
}

#[test]
fn scoped_principals_without_admin_cannot_use_recovery() {
    let d = Daemon::start_with_config(Some(ENABLED));
    let issued = d.ok(&[
        "grant",
        "issue",
        "--grants",
        r#"["write@server:root","spawn@server:root","read@server:root"]"#,
    ]);
    let token = issued["token"].as_str().unwrap();
    for args in [
        vec!["recovery", "list"],
        vec!["recovery", "checkpoint"],
        vec![
            "recovery",
            "restore",
            "--checkpoint",
            "c01234567-89ab-4cde-8fab-0123456789ab",
        ],
    ] {
        let (code, v) = parse(d.cli_as(Some(token), &args));
        assert_eq!((code, err_code(&v)), (4, "denied.admin"), "{args:?}");
    }
}
