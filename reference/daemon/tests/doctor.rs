//! `doctor` against real daemons: the checks and their statuses (store and config
//! first), the `recovery` check's fields after writes, failed writes, failed prunes,
//! an unsafe store and restores, the archive check, the admin grant, and redaction
//! (no path, name, argv, token or terminal text in any reply).

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::PathBuf;

const ENABLED: &str = ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000 } }";

fn store_dir(d: &Daemon) -> PathBuf {
    vx_store::StoreLocation::resolve(
        Some(d.dir.path().join("state").as_os_str()),
        None,
        &d.socket,
    )
    .expect("store location")
    .dir()
}

fn doctor(d: &Daemon) -> Value {
    let v = d.ok(&["doctor"]);
    let names: Vec<&str> = v["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["store", "config", "recovery", "recovery.archives"],
        "store and config come first: {v}"
    );
    for c in v["checks"].as_array().unwrap() {
        assert!(
            ["ok", "info", "warning", "error"].contains(&c["status"].as_str().unwrap()),
            "{c}"
        );
        assert!(c["summary"].is_string(), "{c}");
    }
    // Redaction: nothing from the file system or the daemon's environment.
    let text = v.to_string();
    let dir = d.dir.path().to_str().unwrap();
    assert!(!text.contains(dir), "no path: {text}");
    assert!(!text.contains('/'), "no path-like text at all: {text}");
    let owner = std::fs::read_to_string(format!("{}.owner", d.socket.display())).unwrap();
    assert!(!text.contains(owner.trim()), "no token");
    assert!(!text.contains("cleanup_verified"), "never claims cleanup");
    v
}

fn check<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no {name} check in {v}"))
}

fn status<'a>(v: &'a Value, name: &str) -> &'a str {
    check(v, name)["status"].as_str().unwrap()
}

fn start_faulty(plan: &str, config: &str) -> Daemon {
    let mut d = Daemon::start_with_config(Some(config));
    let mut child = d.child.take().unwrap();
    signal(child.id(), "KILL");
    let _ = child.wait();
    vxfault::check_plan(plan).expect("plan");
    let lib = vxfault::preload_path().expect("libvxfault.so");
    d.child = Some(d.spawn_serve_env(
        &[],
        &[
            ("LD_PRELOAD", lib.to_str().unwrap()),
            ("VXFAULT_PLAN", plan),
        ],
    ));
    d.wait_ready();
    d
}

#[test]
fn a_disabled_daemon_is_informational_and_doctor_creates_nothing() {
    let d = Daemon::start();
    let v = doctor(&d);
    assert_eq!(status(&v, "store"), "info");
    assert_eq!(check(&v, "store")["store"], "not_opened");
    assert_eq!(status(&v, "config"), "ok");
    assert_eq!(status(&v, "recovery"), "info");
    assert_eq!(check(&v, "recovery")["enabled"], false);
    assert_eq!(check(&v, "recovery")["retained"], Value::Null);
    assert_eq!(status(&v, "recovery.archives"), "ok");
    assert!(
        !d.dir.path().join("state/venomx").exists(),
        "doctor never opens a disabled store"
    );
}

#[test]
fn an_enabled_daemon_reports_bounds_writes_and_counts_without_user_content() {
    let d = Daemon::start_with_config(Some(ENABLED));
    let v = doctor(&d);
    assert_eq!(status(&v, "store"), "ok");
    let r = check(&v, "recovery");
    assert_eq!(r["status"], "ok", "{v}");
    assert_eq!(r["store"], "safe");
    assert_eq!(r["writable"], true);
    assert_eq!(
        r["last_attempt"],
        Value::Null,
        "a fresh daemon wrote nothing"
    );
    assert_eq!(r["retained"], 0);
    assert_eq!(r["bounds"]["max_checkpoints"], 3, "the default");
    assert_eq!(r["bounds"]["interval_ms"], 3600000);
    assert_eq!(r["bounds"]["terminal_text"], "off");
    assert!(
        r["bounds"]["effective_max_checkpoint_bytes"]
            .as_u64()
            .unwrap()
            <= 64 << 20
    );

    d.ok(&["session", "create", "--name", "NAME-CANARY-3"]);
    d.pane(r#"["/bin/sh","-c","echo TEXT-CANARY-5; exec sleep 60","ARG-CANARY-4"]"#);
    d.ok(&["recovery", "checkpoint"]);
    let v = doctor(&d);
    let r = check(&v, "recovery");
    assert_eq!(r["status"], "ok", "{v}");
    assert_eq!(
        (r["retained"].clone(), r["invalid"].clone()),
        (json!(1), json!(0))
    );
    assert!(r["bytes"].as_u64().unwrap() > 0);
    let at = r["last_success"].as_str().expect("a durable success time");
    assert!(vx_store::clock::parse_rfc3339(at).is_some(), "{at}");
    assert_eq!(r["last_attempt"], r["last_success"]);
    assert_eq!(r["last_error"], Value::Null);
    let text = v.to_string();
    for canary in [
        "NAME-CANARY-3",
        "ARG-CANARY-4",
        "TEXT-CANARY-5",
        "sleep",
        "/bin/sh",
    ] {
        assert!(!text.contains(canary), "{canary} in {text}");
    }
}

#[test]
fn doctor_needs_admin_on_the_server() {
    let d = Daemon::start_with_config(Some(ENABLED));
    let (code, v) = d.anon(&["doctor"]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (4, Some("denied.admin"))
    );
    let token = d.ok(&["grant", "issue", "--grants", r#"["write@server:root"]"#])["token"]
        .as_str()
        .unwrap()
        .to_string();
    let (code, v) = parse(d.cli_as(Some(&token), &["doctor"]));
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (4, Some("denied.admin"))
    );
    assert!(!v.to_string().contains(&token));
}

#[test]
fn a_failed_write_is_an_error_with_its_code_and_the_success_time_stays() {
    let d = start_faulty("rename@*/recovery/*#2=EIO", ENABLED);
    d.ok(&["session", "create", "--name", "s"]);
    d.ok(&["recovery", "checkpoint"]);
    let first = check(&doctor(&d), "recovery")["last_success"].clone();
    assert!(first.is_string());
    let (code, _) = d.owner(&["recovery", "checkpoint"]);
    assert_eq!(code, 6);
    let v = doctor(&d);
    let r = check(&v, "recovery");
    assert_eq!(r["status"], "error", "{v}");
    assert_eq!(r["last_error"], "unavailable.recovery_io");
    assert_eq!(r["writable"], false);
    assert_eq!(r["last_success"], first, "the last durable success is kept");
    assert_eq!(r["retained"], 1);
    // A later success clears the error.
    d.ok(&["recovery", "checkpoint"]);
    assert_eq!(status(&doctor(&d), "recovery"), "ok");
}

#[test]
fn a_prune_failure_keeps_the_checkpoint_and_is_an_error() {
    let config =
        ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000, .max_checkpoints = 1 } }";
    let d = start_faulty("unlink@*/c*.json=EIO", config);
    d.ok(&["session", "create", "--name", "s"]);
    d.ok(&["recovery", "checkpoint"]);
    assert_eq!(status(&doctor(&d), "recovery"), "ok");
    d.ok(&["recovery", "checkpoint"]);
    let v = doctor(&d);
    let r = check(&v, "recovery");
    assert_eq!(r["status"], "error", "{v}");
    assert_eq!(r["last_cleanup_error"], "unavailable.recovery_io");
    assert_eq!(r["last_error"], Value::Null, "the publish itself succeeded");
    assert_eq!(r["retained"], 2, "nothing was deleted");
}

#[test]
fn an_enabled_store_made_unsafe_is_an_error() {
    let d = Daemon::start_with_config(Some(ENABLED));
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(store_dir(&d), std::fs::Permissions::from_mode(0o755)).unwrap();
    let v = doctor(&d);
    assert_eq!(status(&v, "store"), "error");
    assert_eq!(check(&v, "store")["store"], "unsafe");
    assert_eq!(status(&v, "recovery"), "error");
    assert_eq!(check(&v, "recovery")["writable"], false);
}

fn float_record(id: u64, preset: &str, z: u64) -> vx_format::Pane {
    vx_format::Pane {
        id,
        window: 9,
        session: 4,
        cols: 5,
        rows: 2,
        state: vx_format::PaneState::Running,
        previous_state: None,
        float: Some(vx_format::FloatSpec {
            preset: Some(preset.into()),
            z,
            ..Default::default()
        }),
        tags: vec![],
        text: vx_format::Text::Omitted,
    }
}

#[test]
fn restores_report_cleanup_unverified_cut_rows_and_unknown_presets() {
    let d = Daemon::start_with_config(Some(
        ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000, .terminal_text = .plain } }",
    ));
    assert_eq!(
        check(&doctor(&d), "recovery.archives")["cleanup_unverified"],
        false
    );
    let now = vx_store::clock::now();
    // Pane 0: rows wider than its 5 saved columns (2 cut rows); panes 1 and 2: floats,
    // one with a preset this daemon does not know.
    let mut cut = float_record(0, "x.y", 1);
    cut.float = None;
    cut.text = vx_format::Text::Plain(vx_format::PlainText {
        saved_at: now,
        expires_at: vx_format::Timestamp(now.0 + 3_600_000),
        screen: vec!["abcdefgh".into(), "ok".into()],
        history: vec!["界界界".into()],
    });
    let cp = vx_format::Checkpoint {
        checkpoint: "c0123abcd-89ab-4cde-8fab-0123456789ab".into(),
        generation: 7,
        socket: vx_store::StoreLocation::resolve(
            Some(d.dir.path().join("state").as_os_str()),
            None,
            &d.socket,
        )
        .unwrap()
        .socket,
        uid: vx_store::current_uid(),
        captured_at: now,
        shutdown: vx_format::Shutdown::Open,
        sessions: vec![vx_format::Session {
            id: 4,
            name: "SESSION-CANARY".into(),
        }],
        windows: vec![vx_format::Window {
            id: 9,
            session: 4,
            name: "WINDOW-CANARY".into(),
            revision: 3,
            nodes: vec![vx_format::Node::Pane { pane: 0 }],
        }],
        panes: vec![
            cut,
            float_record(1, "nobody.unknownpreset", 2),
            float_record(2, "nobody.otherpreset", 3),
        ],
    };
    let path = store_dir(&d).join(cp.file_name());
    std::fs::write(&path, vx_format::write(&cp, vx_format::Format::V2).unwrap()).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let r = d.ok(&["recovery", "restore", "--checkpoint", &cp.checkpoint]);
    let v = doctor(&d);
    let a = check(&v, "recovery.archives");
    assert_eq!(a["status"], "warning", "{v}");
    assert_eq!(a["archives"], 3);
    assert_eq!(a["cut_rows"], 2);
    assert_eq!(a["unknown_presets"], 2);
    assert_eq!(a["cleanup_unverified"], true);
    let rc = check(&v, "recovery");
    assert_eq!(rc["status"], "warning");
    assert_eq!(
        (rc["archives"].clone(), rc["cut_rows"].clone()),
        (json!(3), json!(2))
    );
    assert_eq!(rc["cleanup_unverified"], true);
    let text = v.to_string();
    for canary in ["CANARY", "unknownpreset", "c0123abcd", "abcde", "界"] {
        assert!(!text.contains(canary), "{canary} in {text}");
    }
    // The sum follows the retained archives; the restore's uncertainty stays.
    let cut_pane = r["panes"][0]["current"].as_str().unwrap();
    d.ok(&["pane", "kill", "--pane", cut_pane]);
    let a = check(&doctor(&d), "recovery.archives").clone();
    assert_eq!(
        (a["archives"].clone(), a["cut_rows"].clone()),
        (json!(2), json!(0))
    );
    assert_eq!(a["cleanup_unverified"], true);
    assert_eq!(a["status"], "warning");
}

#[test]
fn an_invalid_config_file_and_a_failed_reload_are_warnings() {
    let d = Daemon::start_with_config(Some(ENABLED));
    std::fs::write(d.config_path(), ".{ .recovery = .{ .enabled = 7 } }").unwrap();
    let v = doctor(&d);
    let c = check(&v, "config");
    assert_eq!(c["status"], "warning", "{v}");
    assert_eq!(c["file"], "invalid");
    assert!(c["code"].as_str().unwrap().starts_with("invalid_params."));
    let (code, _) = d.owner(&["config", "reload"]);
    assert_eq!(code, 2);
    std::fs::write(d.config_path(), ENABLED).unwrap();
    let c = check(&doctor(&d), "config").clone();
    assert_eq!(
        c["status"], "warning",
        "the failed reload is still the last one"
    );
    assert!(c["last_reload_error"].is_string());
    d.ok(&["config", "reload"]);
    let c = check(&doctor(&d), "config").clone();
    assert_eq!(
        (c["status"].clone(), c["last_reload_error"].clone()),
        (json!("ok"), Value::Null)
    );
}

#[test]
fn doctor_is_not_a_mutation_and_writes_nothing() {
    let d = Daemon::start_with_config(Some(ENABLED));
    for _ in 0..3 {
        doctor(&d);
    }
    let files = std::fs::read_dir(store_dir(&d)).unwrap().count();
    assert_eq!(files, 0, "doctor never writes a checkpoint");
    assert_eq!(check(&doctor(&d), "recovery")["last_attempt"], Value::Null);
}
