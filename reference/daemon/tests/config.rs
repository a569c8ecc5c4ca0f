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
    // set only persists; the effective config changes on reload.
    assert_eq!(
        d.ok(&["config", "get", "--key", "recovery.enabled"])["value"],
        false
    );
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
