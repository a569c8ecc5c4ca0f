//! Recovery against real daemons: checkpoints (explicit, periodic, final clean),
//! SIGKILL and clean restarts on the same socket, list/inspect/forget, restore into
//! archives, text capture and hydration, secret exclusion, grants and reload purge.

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;

const ENABLED: &str = ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000 } }";
const PLAIN: &str =
    ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000, .terminal_text = .plain } }";

/// The store directory of the daemon's socket (XDG_STATE_HOME is `<dir>/state`).
fn store_dir(d: &Daemon) -> PathBuf {
    let loc = vx_store::StoreLocation::resolve(
        Some(d.dir.path().join("state").as_os_str()),
        None,
        &d.socket,
    )
    .expect("store location");
    loc.dir()
}

fn checkpoint_files(d: &Daemon) -> Vec<PathBuf> {
    match std::fs::read_dir(store_dir(d)) {
        Err(_) => Vec::new(),
        Ok(rd) => {
            let mut v: Vec<PathBuf> = rd
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            v.sort();
            v
        }
    }
}

/// Kills the daemon with SIGKILL (no cleanup at all) and starts a new one on the same
/// socket and directories.
fn crash_and_restart(d: &mut Daemon) {
    let mut child = d.child.take().expect("running");
    signal(child.id(), "KILL");
    let _ = child.wait();
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
}

fn stop_and_restart(d: &mut Daemon) {
    let (status, _) = d.stop();
    assert!(status.success(), "clean stop: {status:?}");
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
}

fn err_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

/// A session with a tiled split (ratio 6250), an exited pane, a float with a preset
/// and a tagged pane. Returns ([left, right, float], pids of the running ones).
fn build_topology(d: &Daemon) -> (Vec<String>, Vec<i64>) {
    let s = d.ok(&["session", "create", "--name", "work"])["session"]
        .as_str()
        .unwrap()
        .to_string();
    let w = d.ok(&["window", "create", "--session", &s, "--name", "agents"])["window"]
        .as_str()
        .unwrap()
        .to_string();
    let left = d.ok(&[
        "pane",
        "create",
        "--window",
        &w,
        "--argv",
        r#"["/bin/sh","-c","trap '' HUP; echo left-ready; exec sleep 600"]"#,
    ]);
    let left_pid = left["pid"].as_i64().unwrap();
    let left = left["pane"].as_str().unwrap().to_string();
    let right = d.ok(&[
        "pane",
        "split",
        "--pane",
        &left,
        "--axis",
        "cols",
        "--ratio",
        "6250",
        "--argv",
        r#"["/bin/sh","-c","exit 3"]"#,
    ])["pane"]
        .as_str()
        .unwrap()
        .to_string();
    let float = d.ok(&[
        "pane",
        "float",
        "--window",
        &w,
        "--preset",
        "venom.settings",
        "--argv",
        r#"["/bin/sh","-c","trap '' HUP; exec sleep 600"]"#,
    ]);
    let float_pid = float["pid"].as_i64().unwrap();
    let float = float["pane"].as_str().unwrap().to_string();
    d.ok(&[
        "pane", "tag", "--pane", &left, "--key", "role", "--value", "agent",
    ]);
    d.wait_exited(&right);
    d.wait_text(&left, |r| r == "left-ready");
    (vec![left, right, float], vec![left_pid, float_pid])
}

fn kill_pid(pid: i64) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
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
fn plain_text_is_captured_from_the_primary_screen_and_hydrated_literally() {
    let mut d = Daemon::start_with_config(Some(PLAIN));
    let pane = d.pane(
        r#"["/bin/sh","-c","printf 'one\\ntwo\\n\\033[31mred\\033[0m \\344\\270\\226\\n'; printf '\\033[?1049h\\033[HALTSCREEN'; exec sleep 600"]"#,
    );
    d.wait_text(&pane, |r| r == "red 世");
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let file = std::fs::read_to_string(store_dir(&d).join(format!("{id}.json"))).unwrap();
    assert!(file.contains("red 世"), "plain rows are in the file");
    assert!(
        !file.contains("ALTSCREEN"),
        "the alternate screen is never saved"
    );
    assert!(!file.contains("[31m"), "no escape sequences");
    crash_and_restart(&mut d);
    let i = d.ok(&["recovery", "inspect", "--checkpoint", &id]);
    assert_eq!(
        (i["text_panes"].clone(), i["expired_text_panes"].clone()),
        (json!(1), json!(0))
    );
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let p = r["panes"][0]["current"].as_str().unwrap();
    let c = d.capture(p);
    assert_eq!(c["screen"][0], "one");
    assert_eq!(c["screen"][1], "two");
    assert_eq!(c["screen"][2], "red 世");
    assert_eq!(c["recovery"]["text_state"], "plain");
    assert_eq!(c["recovery"]["cut_rows"], 0);
}

#[test]
fn text_off_stores_no_terminal_bytes_and_secrets_never_reach_the_file() {
    let d = Daemon::start_with_config(Some(ENABLED));
    let s = d.ok(&["session", "create", "--name", "s"])["session"]
        .as_str()
        .unwrap()
        .to_string();
    let w = d.ok(&["window", "create", "--session", &s, "--name", "w"])["window"]
        .as_str()
        .unwrap()
        .to_string();
    let p = d.ok(&[
        "pane",
        "create",
        "--window",
        &w,
        "--argv",
        r#"["/bin/sh","-c","echo SCREEN-CANARY; exec sleep 600","ARGV-CANARY"]"#,
    ]);
    let pane = p["pane"].as_str().unwrap();
    let pid = p["pid"].as_i64().unwrap();
    let principal = p["principal"].as_str().unwrap();
    d.wait_text(pane, |r| r == "SCREEN-CANARY");
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let file = std::fs::read_to_string(store_dir(&d).join(format!("{id}.json"))).unwrap();
    let token = std::fs::read_to_string(format!("{}.owner", d.socket.display())).unwrap();
    for canary in [
        "SCREEN-CANARY",
        "ARGV-CANARY",
        "/bin/sh",
        token.trim(),
        &format!(":{pid},"),
        principal,
        d.dir.path().to_str().unwrap().trim_end_matches('/'),
    ] {
        // The socket path is the one allowed path (RFC §4 `socket`).
        let without_socket = file.replace(d.socket.to_str().unwrap(), "");
        assert!(!without_socket.contains(canary), "{canary} leaked");
    }
    assert!(file.contains("\\\"availability\\\":\\\"omitted\\\""));
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
fn reload_from_plain_to_off_purges_text_checkpoints_first() {
    let d = Daemon::start_with_config(Some(PLAIN));
    let pane = d.pane(r#"["/bin/sh","-c","echo hello; exec sleep 600"]"#);
    d.wait_text(&pane, |r| r == "hello");
    d.ok(&["recovery", "checkpoint"]);
    assert_eq!(checkpoint_files(&d).len(), 1);
    std::fs::write(d.config_path(), ENABLED).unwrap();
    d.ok(&["config", "reload"]);
    assert!(checkpoint_files(&d).is_empty(), "text checkpoints are gone");
    assert_eq!(
        d.ok(&["config", "get", "--key", "recovery.terminal_text"])["value"],
        "off"
    );
    // Topology-only checkpoints survive a later reload.
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"].clone();
    d.ok(&["config", "reload"]);
    assert_eq!(
        d.ok(&["recovery", "list"])["checkpoints"][0]["checkpoint"],
        id
    );
}

#[test]
fn a_failed_purge_fails_the_reload_and_keeps_the_config() {
    let d = Daemon::start_with_config(Some(PLAIN));
    let pane = d.pane(r#"["/bin/sh","-c","echo hello; exec sleep 600"]"#);
    d.wait_text(&pane, |r| r == "hello");
    d.ok(&["recovery", "checkpoint"]);
    // An unsafe entry (group-writable final file) may hold text and cannot be deleted
    // safely: the purge fails.
    let unsafe_file = store_dir(&d).join("c11111111-2222-4333-8444-555555555555.json");
    std::fs::write(&unsafe_file, b"x").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&unsafe_file, std::fs::Permissions::from_mode(0o660)).unwrap();
    std::fs::write(d.config_path(), ENABLED).unwrap();
    let (code, v) = d.owner(&["config", "reload"]);
    assert_eq!((code, err_code(&v)), (6, "unavailable.recovery_io"), "{v}");
    assert_eq!(
        d.ok(&["config", "get", "--key", "recovery.terminal_text"])["value"],
        "plain",
        "effective config unchanged"
    );
    assert!(unsafe_file.exists(), "unsafe entries are never removed");
}

/// Checkpoints a tiled pane and a float in an enabled daemon, crashes it and restores
/// into a fresh one. Returns (tiled archive, float archive, window).
fn restored_archives(d: &mut Daemon) -> (String, String, String) {
    let s = d.ok(&["session", "create", "--name", "s"])["session"]
        .as_str()
        .unwrap()
        .to_string();
    let w = d.ok(&["window", "create", "--session", &s, "--name", "w"])["window"]
        .as_str()
        .unwrap()
        .to_string();
    d.ok(&[
        "pane",
        "create",
        "--window",
        &w,
        "--argv",
        r#"["/bin/sh","-c","exit 0"]"#,
    ]);
    d.ok(&[
        "pane",
        "float",
        "--window",
        &w,
        "--width",
        "20",
        "--argv",
        r#"["/bin/sh","-c","exit 0"]"#,
    ]);
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    crash_and_restart(d);
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let cur = |i: usize| r["panes"][i]["current"].as_str().unwrap().to_string();
    (
        cur(0),
        cur(1),
        r["windows"][0]["current"].as_str().unwrap().to_string(),
    )
}

#[test]
fn relaunch_replaces_an_archive_leaf_with_a_fresh_pane() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let (tiled, float, w) = restored_archives(&mut d);
    // Checks, in order: ack, then archive lookup.
    let (code, v) = d.owner(&[
        "pane",
        "relaunch",
        "--pane",
        &tiled,
        "--argv",
        r#"["/bin/sh"]"#,
        "--ack-orphans=false",
    ]);
    assert_eq!((code, err_code(&v)), (2, "invalid_params.ack_orphans"));
    assert_eq!(v["error"]["data"], json!({"param": "ack_orphans"}));
    let (code, v) = d.owner(&[
        "pane",
        "relaunch",
        "--pane",
        "p999",
        "--argv",
        r#"["/bin/sh"]"#,
        "--ack-orphans=true",
    ]);
    assert_eq!((code, err_code(&v)), (3, "not_found.pane"));

    // A vanished executable fails without touching the archive.
    let (code, v) = d.owner(&[
        "pane",
        "relaunch",
        "--pane",
        &tiled,
        "--argv",
        r#"["/missing/program"]"#,
        "--ack-orphans=true",
    ]);
    assert_eq!((code, err_code(&v)), (6, "unavailable.spawn"), "{v}");
    assert_eq!(v["error"]["message"], "executable unavailable");
    assert_eq!(d.capture(&tiled)["recovery"]["process_state"], "exited");
    let before = d.ok(&["session", "list"]);
    assert_eq!(before["sessions"][0]["windows"][0]["revision"], 1);

    let r = d.ok(&[
        "pane",
        "relaunch",
        "--pane",
        &tiled,
        "--argv",
        r#"["/bin/sh","-c","echo relaunched; exec sleep 600"]"#,
        "--ack-orphans=true",
    ]);
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
    let (code, v) = d.owner(&[
        "pane",
        "relaunch",
        "--pane",
        &tiled,
        "--argv",
        r#"["/bin/sh"]"#,
        "--ack-orphans=true",
    ]);
    assert_eq!((code, err_code(&v)), (3, "not_found.pane"));
    // A live (or ordinary exited) pane is not an archive.
    let (code, v) = d.owner(&[
        "pane",
        "relaunch",
        "--pane",
        &new,
        "--argv",
        r#"["/bin/sh"]"#,
        "--ack-orphans=true",
    ]);
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
    let r = d.ok(&[
        "pane",
        "relaunch",
        "--pane",
        &float,
        "--argv",
        r#"["/bin/sh","-c","exec sleep 600"]"#,
        "--ack-orphans=true",
    ]);
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
    let args = [
        "pane",
        "relaunch",
        "--pane",
        &tiled,
        "--argv",
        r#"["/bin/sh"]"#,
        "--ack-orphans=true",
    ];
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
        &[
            "pane",
            "relaunch",
            "--pane",
            "p999",
            "--argv",
            r#"["/bin/sh"]"#,
            "--ack-orphans=true",
        ],
    ));
    assert_eq!(code, 4, "{v}");
    // The archive is still there.
    assert_eq!(d.capture(&tiled)["recovery"]["previous_pane"], "p0");
}

/// An enabled daemon under the fault injector.
fn start_faulty(plan: &str) -> Daemon {
    Daemon::start_faulty(Some(ENABLED), plan)
}

fn temp_files(d: &Daemon) -> usize {
    std::fs::read_dir(store_dir(d))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp-")
        })
        .count()
}

#[test]
fn a_failed_publish_reports_recovery_io_and_keeps_the_previous_generation() {
    let d = start_faulty("rename@*/recovery/*#2=EIO");
    d.ok(&["session", "create", "--name", "s"]);
    let first = d.ok(&["recovery", "checkpoint"]);
    let (code, v) = d.owner(&["recovery", "checkpoint"]);
    assert_eq!((code, err_code(&v)), (6, "unavailable.recovery_io"), "{v}");
    assert_eq!(v["error"]["data"], json!({}));
    assert_eq!(
        d.ok(&["recovery", "list"]),
        json!({"checkpoints": [{"checkpoint": first["checkpoint"], "status": "valid", "generation": 1}]})
    );
    assert_eq!(
        temp_files(&d),
        0,
        "the failed write's temporary file is gone"
    );
    // The live state was not rolled back and the next write succeeds.
    assert_eq!(d.ok(&["recovery", "checkpoint"])["generation"], 2);
    let trace = std::fs::read_to_string(d.dir.path().join("trace.jsonl")).unwrap();
    assert!(trace.contains("\"action\":\"EIO\""), "the fault fired");
}

#[test]
fn one_explicit_write_in_flight_and_the_reactor_stays_responsive() {
    let d = start_faulty("fsync@*/recovery/*=delay:1200");
    d.ok(&["session", "create", "--name", "s"]);
    std::thread::scope(|scope| {
        let slow = scope.spawn(|| d.owner(&["recovery", "checkpoint"]));
        std::thread::sleep(Duration::from_millis(600));
        let (code, v) = d.owner(&["recovery", "checkpoint"]);
        assert_eq!((code, err_code(&v)), (5, "conflict.recovery_busy"), "{v}");
        assert_eq!(v["error"]["data"], json!({}));
        // Encode and publish run off the reactor: a mutation answers meanwhile.
        let started = std::time::Instant::now();
        d.ok(&["session", "create", "--name", "t"]);
        assert!(started.elapsed() < Duration::from_millis(1000));
        let (code, v) = slow.join().unwrap();
        assert_eq!((code, v["generation"].clone()), (0, json!(1)), "{v}");
    });
}

#[test]
fn a_final_checkpoint_past_its_deadline_is_an_operational_failure() {
    let mut d = start_faulty("fsync@*/recovery/*=delay:2500");
    d.ok(&["session", "create", "--name", "s"]);
    let (status, elapsed) = d.stop();
    assert_eq!(
        status.code(),
        Some(1),
        "shutdown reports the failed persistence"
    );
    assert!(elapsed >= Duration::from_millis(2000), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(4000), "{elapsed:?}");
}

fn read_checkpoint(d: &Daemon, id: &str) -> vx_format::Checkpoint {
    let bytes = std::fs::read(store_dir(d).join(format!("{id}.json"))).unwrap();
    vx_format::read(&bytes, &vx_format::ReadContext::default())
        .expect("valid checkpoint")
        .checkpoint
}

fn plain_of(cp: &vx_format::Checkpoint, pane: usize) -> Option<vx_format::PlainText> {
    match &cp.panes[pane].text {
        vx_format::Text::Plain(t) => Some(t.clone()),
        _ => None,
    }
}

#[test]
fn archived_text_keeps_its_original_lifetime_and_expires_in_place() {
    let config = ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000, \
                  .terminal_text = .plain, .text_max_age_seconds = 8 } }";
    let mut d = Daemon::start_with_config(Some(config));
    let pane = d.pane(r#"["/bin/sh","-c","echo kept; exec sleep 600"]"#);
    d.wait_text(&pane, |r| r == "kept");
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let original = plain_of(&read_checkpoint(&d, &id), 0).expect("plain text");
    assert_eq!(original.expires_at.0 - original.saved_at.0, 8000);
    crash_and_restart(&mut d);
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let archive = r["panes"][0]["current"].as_str().unwrap().to_string();
    assert_eq!(d.capture(&archive)["screen"][0], "kept");
    // Recheckpointing the archive keeps saved_at/expires_at: never renewed.
    let again = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    let rewritten = plain_of(&read_checkpoint(&d, &again), 0).expect("still plain");
    assert_eq!(
        (rewritten.saved_at, rewritten.expires_at),
        (original.saved_at, original.expires_at)
    );
    assert_eq!(rewritten.screen[0], "kept");
    // Past the expiry the live archive's text is discarded.
    let wait = original.expires_at.0 - vx_store::clock::now().0 + 200;
    std::thread::sleep(Duration::from_millis(wait.max(0) as u64));
    let c = d.capture(&archive);
    assert_eq!(c["recovery"]["text_state"], "expired");
    assert!(c["screen"].as_array().unwrap().iter().all(|r| r == ""));
    assert!(c["history"].as_array().unwrap().is_empty());
    let last = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        read_checkpoint(&d, &last).panes[0].text,
        vx_format::Text::Expired
    );
    // Restoring the first checkpoint now: the topology comes back, the text does not.
    crash_and_restart(&mut d);
    let i = d.ok(&["recovery", "inspect", "--checkpoint", &id]);
    assert_eq!(
        (i["text_panes"].clone(), i["expired_text_panes"].clone()),
        (json!(0), json!(1))
    );
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let c = d.capture(r["panes"][0]["current"].as_str().unwrap());
    assert_eq!(c["recovery"]["text_state"], "expired");
    assert!(c["screen"].as_array().unwrap().iter().all(|r| r == ""));
}

/// Writes `cp` (socket and uid filled in for this daemon's store) as a 0600 file.
fn plant(d: &Daemon, mut cp: vx_format::Checkpoint, format: vx_format::Format) -> String {
    let loc = vx_store::StoreLocation::resolve(
        Some(d.dir.path().join("state").as_os_str()),
        None,
        &d.socket,
    )
    .unwrap();
    cp.socket = loc.socket.clone();
    cp.uid = vx_store::current_uid();
    let bytes = vx_format::write(&cp, format).expect("fixture encodes");
    let path = store_dir(d).join(cp.file_name());
    std::fs::write(&path, bytes).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    cp.checkpoint
}

fn fixture(panes: Vec<vx_format::Pane>, nodes: Vec<vx_format::Node>) -> vx_format::Checkpoint {
    vx_format::Checkpoint {
        checkpoint: "c0123abcd-89ab-4cde-8fab-0123456789ab".into(),
        generation: 7,
        socket: String::new(),
        uid: 0,
        captured_at: vx_store::clock::now(),
        shutdown: vx_format::Shutdown::Open,
        sessions: vec![vx_format::Session {
            id: 4,
            name: "old".into(),
        }],
        windows: vec![vx_format::Window {
            id: 9,
            session: 4,
            name: "win".into(),
            revision: 12,
            nodes,
        }],
        panes,
    }
}

fn record(id: u64, float_z: Option<u64>, tags: &[(&str, &str)]) -> vx_format::Pane {
    vx_format::Pane {
        id,
        window: 9,
        session: 4,
        cols: 40,
        rows: 10,
        state: vx_format::PaneState::Running,
        previous_state: None,
        float: float_z.map(|z| vx_format::FloatSpec {
            preset: Some("nobody.unknown".into()),
            z,
            ..Default::default()
        }),
        tags: tags
            .iter()
            .map(|(k, v)| vx_format::Tag {
                key: k.to_string(),
                value: v.to_string(),
            })
            .collect(),
        text: vx_format::Text::Omitted,
    }
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
fn an_unsafe_store_fails_startup_when_recovery_is_enabled() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let (status, _) = d.stop();
    assert!(status.success());
    let dir = store_dir(&d);
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = d.spawn_serve(&[]);
    let status = poll("serve exit", || child.try_wait().unwrap());
    assert_eq!(status.code(), Some(6));
    let mut err = String::new();
    use std::io::Read as _;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        !err.contains(dir.to_str().unwrap()),
        "no path in diagnostics: {err}"
    );
    assert!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777 == 0o755,
        "never repaired"
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

#[test]
fn rows_wider_than_the_saved_columns_are_cut_and_counted() {
    let d = Daemon::start_with_config(Some(PLAIN));
    d.ok(&["recovery", "list"]);
    let mut pane = record(0, None, &[]);
    pane.cols = 5;
    pane.rows = 2;
    let now = vx_store::clock::now();
    pane.text = vx_format::Text::Plain(vx_format::PlainText {
        saved_at: now,
        expires_at: vx_format::Timestamp(now.0 + 3_600_000),
        screen: vec!["[2J".into(), "abcdefgh".into()],
        history: vec!["界界界".into(), "ok".into()],
    });
    let id = plant(
        &d,
        fixture(vec![pane], vec![vx_format::Node::Pane { pane: 0 }]),
        vx_format::Format::V1,
    );
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let c = d.capture(r["panes"][0]["current"].as_str().unwrap());
    assert_eq!(c["screen"], json!(["[2J", "abcde"]));
    assert_eq!(
        c["history"],
        json!(["界界", "ok"]),
        "a wide cell never splits"
    );
    assert_eq!(c["recovery"]["cut_rows"], 2);
    assert_eq!(c["recovery"]["text_state"], "plain");
}

#[test]
fn starting_with_text_off_deletes_text_checkpoints_but_keeps_evidence() {
    let mut d = Daemon::start_with_config(Some(PLAIN));
    let s = d.ok(&["session", "create", "--name", "s"])["session"]
        .as_str()
        .unwrap()
        .to_string();
    // No pane yet: a checkpoint without text.
    let topology_only = d.ok(&["recovery", "checkpoint"])["checkpoint"].clone();
    let w = d.ok(&["window", "create", "--session", &s, "--name", "w"])["window"]
        .as_str()
        .unwrap()
        .to_string();
    let pane = d.ok(&[
        "pane",
        "create",
        "--window",
        &w,
        "--argv",
        r#"["/bin/sh","-c","echo hello; exec sleep 600"]"#,
    ])["pane"]
        .as_str()
        .unwrap()
        .to_string();
    d.wait_text(&pane, |r| r == "hello");
    d.ok(&["recovery", "checkpoint"]);
    let bad = store_dir(&d).join("c11111111-2222-4333-8444-555555555555.json");
    std::fs::write(&bad, b"{}").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert_eq!(checkpoint_files(&d).len(), 3);
    let mut child = d.child.take().unwrap();
    signal(child.id(), "KILL");
    let _ = child.wait();
    std::fs::write(d.config_path(), ENABLED).unwrap();
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    let list = d.ok(&["recovery", "list"]);
    assert_eq!(
        list["checkpoints"],
        json!([
            {"checkpoint": topology_only, "status": "valid", "generation": 1},
            {"checkpoint": "c11111111-2222-4333-8444-555555555555", "status": "corrupt"},
        ])
    );
}

/// The issue-14 report, as a user would try it: 300 nested `pane.split`s (a chain,
/// each splitting the newest pane), checkpoint, SIGKILL, and a new daemon restores
/// what `recovery list` calls valid (restore used to refuse trees deeper than 256).
#[test]
fn a_300_deep_split_chain_checkpoints_and_restores_after_sigkill() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let s = d.ok(&["session", "create", "--name", "deep"]);
    let w = d.ok(&[
        "window",
        "create",
        "--session",
        s["session"].as_str().unwrap(),
        "--name",
        "w",
        "--cols",
        "2000",
        "--rows",
        "2000",
    ]);
    let window = w["window"].as_str().unwrap().to_string();
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
