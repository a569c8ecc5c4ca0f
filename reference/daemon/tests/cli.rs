//! The CLI generated from the manifest: docs, completions, usage errors, no daemon.

mod common;
use common::*;
use std::process::Command;

fn run(args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    env_for(&mut cmd, dir.path());
    cmd.args(args).output().unwrap()
}

fn doc(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/spec")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn spec_docs_embed_the_generated_tables() {
    let verbs = String::from_utf8(run(&["manifest", "--markdown"]).stdout).unwrap();
    assert!(
        doc("verbs.md").contains(&verbs),
        "docs/spec/verbs.md is stale: regenerate with `vxref manifest --markdown`"
    );
    let errors = String::from_utf8(run(&["manifest", "--errors"]).stdout).unwrap();
    assert!(
        doc("errors.md").contains(&errors),
        "docs/spec/errors.md is stale: regenerate with `vxref manifest --errors`"
    );
}

/// The binary prints the committed skill; only the negative control adds `@owner`.
#[test]
fn manifest_skill_prints_the_committed_skill() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/agent-skill.md");
    let committed = std::fs::read_to_string(path).unwrap();
    let out = run(&["manifest", "--skill"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout).unwrap() == committed,
        "docs/agent-skill.md is stale: regenerate with `vxref manifest --skill > docs/agent-skill.md`"
    );
    assert!(!committed.to_lowercase().contains("@owner"));
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    env_for(&mut cmd, dir.path());
    let control = cmd
        .env("VXREF_NEGATIVE_CONTROL", "skill-recommends-owner")
        .args(["manifest", "--skill"])
        .output()
        .unwrap();
    let text = String::from_utf8(control.stdout).unwrap();
    assert!(text.contains("VENOMX_TOKEN=@owner"), "{text}");
}

#[test]
fn manifest_json_lists_every_verb() {
    let out = run(&["manifest"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["verbs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["verb"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"pane.capture") && names.contains(&"config.reload"));
}

#[test]
fn completions_cover_verbs_and_flags() {
    let out = run(&["completions", "bash"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("capture") && text.contains("--min-cols"));
}

#[test]
fn usage_errors_exit_2_and_no_daemon_exits_6() {
    assert_eq!(run(&["pane", "capture"]).status.code(), Some(2));
    assert_eq!(
        run(&[
            "pane",
            "split",
            "--pane",
            "p0",
            "--axis",
            "cols",
            "--argv",
            "[not json"
        ])
        .status
        .code(),
        Some(2)
    );
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    env_for(&mut cmd, dir.path());
    let out = cmd
        .args([
            "--socket",
            dir.path().join("none.sock").to_str().unwrap(),
            "session",
            "list",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(6));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "unavailable.daemon");
}

#[test]
fn no_daemon_and_no_owner_token_name_the_path_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("none.sock");
    let run_with = |token: Option<&str>| {
        let mut cmd = Command::new(BIN);
        env_for(&mut cmd, dir.path());
        if let Some(t) = token {
            cmd.env("VENOMX_TOKEN", t);
        }
        cmd.arg("--socket")
            .arg(&socket)
            .args(["session", "list"])
            .output()
            .unwrap()
    };
    let out = run_with(None);
    assert_eq!(out.status.code(), Some(6));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("vxref: unavailable.daemon: ")
            && err.contains(&format!("vxref serve --socket {}", socket.display())),
        "{err}"
    );
    let out = run_with(Some("@owner"));
    assert_eq!(out.status.code(), Some(6));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("vxref: unavailable.owner_token: ")
            && err.contains(&format!("{}.owner", socket.display()))
            && err.contains("VENOMX_TOKEN"),
        "{err}"
    );
}

#[test]
fn default_socket_comes_from_xdg_runtime_dir_and_venomx_socket() {
    let d = Daemon::start();
    // VENOMX_SOCKET selects the socket when --socket is absent.
    let mut cmd = Command::new(BIN);
    env_for(&mut cmd, d.dir.path());
    let out = cmd
        .env("VENOMX_SOCKET", &d.socket)
        .args(["server", "info", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    // Without either, $XDG_RUNTIME_DIR/venomx/default.sock is used (nothing there).
    let mut cmd = Command::new(BIN);
    env_for(&mut cmd, d.dir.path());
    let out = cmd.args(["server", "info", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(6));
}

#[test]
fn a_verbs_long_help_lists_its_error_codes_with_exit_codes() {
    let help = String::from_utf8(run(&["pane", "relaunch", "--help"]).stdout).unwrap();
    for line in [
        "conflict.not_archive (exit 5)",
        "invalid_params.ack_orphans (exit 2)",
        "denied.spawn (exit 4)",
        "denied.write (exit 4)",
        "unavailable.spawn (exit 6)",
        "not_found.pane (exit 3)",
    ] {
        assert!(help.contains(line), "`pane relaunch --help` lacks {line}");
    }
    // The short help stays short; the JSON manifest carries the same list.
    let short = String::from_utf8(run(&["pane", "relaunch", "-h"]).stdout).unwrap();
    assert!(!short.contains("conflict.not_archive"));
    let v: serde_json::Value = serde_json::from_slice(&run(&["manifest"]).stdout).unwrap();
    let restore = v["verbs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["verb"] == "recovery.restore")
        .unwrap();
    let codes: Vec<&str> = restore["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    assert!(codes.contains(&"conflict.not_empty") && codes.contains(&"denied.admin"));
    assert!(!codes.contains(&"not_found.pane"), "{codes:?}");
}
