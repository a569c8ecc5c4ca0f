//! `config.get/set/check/reload` against a real file in a temporary XDG config dir.

mod common;
use common::*;
use serde_json::json;

#[test]
fn defaults_follow_rfc_section_2() {
    let d = Daemon::start();
    let c = d.ok(&["config", "get"]);
    assert_eq!(
        c["config"]["recovery"],
        json!({
            "enabled": false, "interval_ms": 30000, "max_checkpoints": 3,
            "max_checkpoint_bytes": 16777216, "max_age_seconds": 604800,
            "terminal_text": "off", "text_max_rows": 10000, "text_max_bytes": 1048576,
            "text_max_age_seconds": 86400
        })
    );
    assert_eq!(
        d.ok(&["config", "get", "--key", "recovery.interval_ms"])["value"],
        30000
    );
    assert_eq!(d.owner(&["config", "get", "--key", "recovery.nope"]).0, 2);
}

#[test]
fn set_persists_zon_and_reload_activates_it() {
    let d = Daemon::start();
    d.ok(&[
        "config",
        "set",
        "--key",
        "recovery.terminal_text",
        "--value",
        r#""plain""#,
    ]);
    d.ok(&[
        "config",
        "set",
        "--key",
        "recovery.enabled",
        "--value",
        "true",
    ]);
    let text = std::fs::read_to_string(d.config_path()).unwrap();
    assert!(text.contains(".terminal_text = .plain,"), "{text}");
    assert!(text.contains(".enabled = true,"), "{text}");
    // set only persists; reload (or the file watcher, which may already have) activates.
    d.ok(&["config", "reload"]);
    assert_eq!(
        d.ok(&["config", "get", "--key", "recovery.enabled"])["value"],
        true
    );
    assert_eq!(
        d.ok(&["config", "get", "--key", "recovery.terminal_text"])["value"],
        "plain"
    );
}

#[test]
fn invalid_values_point_at_the_field_without_echoing_and_change_nothing() {
    let d = Daemon::start();
    let (code, v) = d.owner(&[
        "config",
        "set",
        "--key",
        "recovery.interval_ms",
        "--value",
        "999",
    ]);
    assert_eq!(code, 2);
    assert_eq!(v["error"]["code"], "invalid_params.config");
    assert_eq!(v["error"]["data"]["field"], ".recovery.interval_ms");
    assert_eq!(v["error"]["data"]["problem"], "out of range");
    assert!(!v.to_string().contains("999"));
    assert!(!d.config_path().exists(), "nothing written");
    let (code, v) = d.owner(&[
        "config",
        "set",
        "--key",
        "recovery.terminal_text",
        "--value",
        r#""html""#,
    ]);
    assert_eq!(
        (code, v["error"]["data"]["problem"].as_str()),
        (2, Some("unknown enum value"))
    );

    // A bad file fails check and reload; the effective config stays as it was.
    std::fs::create_dir_all(d.config_path().parent().unwrap()).unwrap();
    std::fs::write(
        d.config_path(),
        ".{ .recovery = .{ .max_age_seconds = 10, .text_max_age_seconds = 20 } }",
    )
    .unwrap();
    let (code, v) = d.owner(&["config", "check"]);
    assert_eq!(code, 2);
    assert_eq!(
        v["error"]["data"]["field"],
        ".recovery.text_max_age_seconds"
    );
    let (code, _) = d.owner(&["config", "reload"]);
    assert_eq!(code, 2);
    assert_eq!(
        d.ok(&["config", "get", "--key", "recovery.max_age_seconds"])["value"],
        604800
    );
    std::fs::write(
        d.config_path(),
        ".{ .recovery = .{ .enabled = secret-value } }",
    )
    .unwrap();
    let (code, v) = d.owner(&["config", "check"]);
    assert_eq!(code, 2);
    assert_eq!(v["error"]["data"]["line"], 1);
    assert!(!v.to_string().contains("secret"));
}

#[test]
fn check_accepts_text_and_unknown_may_check_but_not_set() {
    let d = Daemon::start();
    let ok = d.anon(&[
        "config",
        "check",
        "--text",
        ".{ .recovery = .{ .interval_ms = 1000 } }",
    ]);
    assert_eq!(ok, (0, json!({"valid": true})));
    assert_eq!(
        d.anon(&[
            "config",
            "set",
            "--key",
            "recovery.enabled",
            "--value",
            "true"
        ])
        .0,
        4
    );
}

#[test]
fn a_daemon_refuses_to_start_on_an_invalid_config() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config/venomx/config.zon");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, ".{ .recovery = .{ .interval_ms = 1 } }").unwrap();
    let mut cmd = std::process::Command::new(BIN);
    env_for(&mut cmd, dir.path());
    let out = cmd
        .arg("serve")
        .arg("--socket")
        .arg(dir.path().join("s.sock"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(".recovery.interval_ms"), "{err}");
    assert!(!dir.path().join("s.sock").exists());
}

fn effective(d: &Daemon, key: &str) -> serde_json::Value {
    d.ok(&["config", "get", "--key", key])["value"].clone()
}

#[test]
fn the_watcher_activates_a_valid_edit_without_an_explicit_reload() {
    let d = Daemon::start_with_config(Some(".{ .recovery = .{ .interval_ms = 30000 } }\n"));
    // An in-place rewrite (what many editors do) and a rename over the file (what
    // config.set and others do) are both seen.
    std::fs::write(
        d.config_path(),
        ".{ .recovery = .{ .interval_ms = 45000 } }\n",
    )
    .unwrap();
    poll("in-place edit activated", || {
        (effective(&d, "recovery.interval_ms") == 45000).then_some(())
    });
    let tmp = d.config_path().with_extension("new");
    std::fs::write(&tmp, ".{ .recovery = .{ .interval_ms = 50000 } }\n").unwrap();
    std::fs::rename(&tmp, d.config_path()).unwrap();
    poll("renamed file activated", || {
        (effective(&d, "recovery.interval_ms") == 50000).then_some(())
    });
}

#[test]
fn a_watched_invalid_edit_changes_nothing_and_doctor_reports_it() {
    let d = Daemon::start_with_config(Some(".{ .recovery = .{ .interval_ms = 45000 } }\n"));
    std::fs::write(
        d.config_path(),
        ".{ .recovery = .{ .interval_ms = 999 } }\n",
    )
    .unwrap();
    let check = poll("doctor reports the failed reload", || {
        let doctor = d.ok(&["doctor"]);
        let config = doctor["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "config")
            .cloned()
            .unwrap();
        config["last_reload_error"].is_string().then_some(config)
    });
    assert_eq!(check["last_reload_error"], "invalid_params.config");
    assert!(!check.to_string().contains("999"));
    assert_eq!(effective(&d, "recovery.interval_ms"), 45000);
    // Fixing the file clears the error through the same path.
    std::fs::write(
        d.config_path(),
        ".{ .recovery = .{ .interval_ms = 60000 } }\n",
    )
    .unwrap();
    poll("fixed file activated", || {
        (effective(&d, "recovery.interval_ms") == 60000).then_some(())
    });
}

#[test]
fn a_config_directory_created_after_start_is_watched() {
    let d = Daemon::start();
    assert!(!d.config_path().parent().unwrap().exists());
    std::fs::create_dir_all(d.config_path().parent().unwrap()).unwrap();
    std::fs::write(
        d.config_path(),
        ".{ .recovery = .{ .interval_ms = 45000 } }\n",
    )
    .unwrap();
    poll("file in a new directory activated", || {
        (effective(&d, "recovery.interval_ms") == 45000).then_some(())
    });
}

/// The reactor never waits on the config file: while the injector holds the fsync of
/// `config.set`'s atomic write for 2 s, `server.info` (a reactor turn) answers at once,
/// and `config.set` answers only after its write is durable.
#[test]
fn a_config_set_held_in_fsync_never_blocks_the_reactor() {
    // The atomic write fsyncs its temporary file (`.config.zon.tmp-<uuid>`) before the
    // rename; that fsync is the one that makes the write wait.
    let d = Daemon::start_faulty(None, "fsync@*/.config.zon.tmp-*=delay:2000");
    let mut setter = d.wire();
    setter.login_owner(&d);
    let mut info = d.wire();
    info.login_owner(&d);
    let held = std::time::Instant::now();
    setter.send_raw(
        b"{\"id\":1,\"verb\":\"config.set\",\"params\":{\"key\":\"recovery.interval_ms\",\"value\":5000}}\n",
    );
    // Give the worker time to reach the fsync (the trace line is written only after
    // the held call returns, so it cannot be waited for).
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut worst = std::time::Duration::ZERO;
    for n in 0..5 {
        let asked = std::time::Instant::now();
        let r = info.request(json!({"id": 10 + n, "verb": "server.info", "params": {}}));
        worst = worst.max(asked.elapsed());
        assert!(r["ok"]["source"].is_string(), "{r}");
    }
    let during = held.elapsed();
    assert!(
        during < std::time::Duration::from_millis(1500),
        "server.info answered while the fsync was held ({during:?} since config.set)"
    );
    assert!(
        worst < std::time::Duration::from_millis(250),
        "server.info took {worst:?} while config.set was in its fsync"
    );
    eprintln!("server.info during a held config fsync: worst {worst:?}");
    let r = setter.reply().expect("config.set reply");
    assert!(
        d.fault_trace().contains("\"action\":\"delay:2000\""),
        "the fsync was held"
    );
    assert_eq!(r["ok"], json!({}), "{r}");
    assert!(
        held.elapsed() >= std::time::Duration::from_millis(2000),
        "config.set answers after its fsync"
    );
    assert_eq!(
        d.ok(&["config", "check"]),
        json!({"valid": true}),
        "the written file is whole"
    );
}
