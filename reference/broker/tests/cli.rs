//! The pinned offline checkers' surface: line shapes, exit codes 0/1/2, plain output,
//! and that no line carries input content beyond the subject it names.

use std::process::{Command, Output};

use serde_json::Value;

const U: &str = "6a73c0de-1234-4abc-8def-0123456789ab";

fn vxbroker(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vxbroker"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json_line(out: &Output) -> Value {
    serde_json::from_str(stdout(out).trim_end()).unwrap()
}

#[test]
fn key_check_lines_and_exit_codes() {
    let ok = vxbroker(&[
        "key",
        "check",
        "--json",
        &format!("claude:{U}"),
        "opencode:ses_A1",
    ]);
    assert_eq!(ok.status.code(), Some(0));
    let text = stdout(&ok);
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(
        first,
        serde_json::json!({"key": format!("claude:{U}"), "result": "valid", "rule": null,
                           "reason": null, "physical_key": format!("claude@{U}")})
    );

    let bad = vxbroker(&["key", "check", "--json", "opencode:ses_A1", "claude"]);
    assert_eq!(bad.status.code(), Some(1));
    let second: Value = serde_json::from_str(stdout(&bad).lines().nth(1).unwrap()).unwrap();
    assert_eq!(second["result"], "invalid_params.key");
    assert_eq!(second["rule"], "key.no_separator");
    assert!(second.get("physical_key").is_none());

    let plain = vxbroker(&["key", "check", "opencode:ses_A1", "codex:x"]);
    assert_eq!(
        stdout(&plain),
        "opencode:ses_A1: valid (opencode@ses_A1)\ncodex:x: not_found.engine: key.engine_unknown: engine is not configured\n"
    );
}

#[test]
fn key_check_engines_replace_the_default_table() {
    let out = vxbroker(&[
        "key",
        "check",
        "--json",
        "--engine",
        "codex=uuid",
        &format!("codex:{U}"),
        "opencode:ses_A1",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["result"], "valid");
    assert_eq!(lines[1]["result"], "not_found.engine");
    let placeholder = format!("kimi:new-{U}");
    let out = vxbroker(&[
        "key",
        "check",
        "--new",
        "--engine",
        "kimi=ses",
        &placeholder,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let out = vxbroker(&[
        "key",
        "check",
        "--new",
        "--engine",
        "kimi=ses:flag",
        &placeholder,
    ]);
    assert_eq!(out.status.code(), Some(1));
    for bad in ["kimi", "kimi=guid", "Kimi=ses", "kimi=ses:maybe"] {
        assert_eq!(
            vxbroker(&["key", "check", "--engine", bad, "kimi:ses_a"])
                .status
                .code(),
            Some(2),
            "{bad}"
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(vxbroker(&["key", "check"]).status.code(), Some(2));
    assert_eq!(vxbroker(&["sidecar", "check"]).status.code(), Some(2));
    assert_eq!(
        vxbroker(&["resume-plan", "--total", "1"]).status.code(),
        Some(2)
    );
    assert_eq!(vxbroker(&["nope"]).status.code(), Some(2));
    assert_eq!(vxbroker(&["--help"]).status.code(), Some(0));
}

#[test]
fn resume_plan_outputs() {
    let args = [
        "resume-plan",
        "--have",
        "100",
        "--gen",
        "1",
        "--total",
        "150",
        "--ring-len",
        "80",
        "--master-gen",
        "1",
    ];
    let out = vxbroker(&[&args[..], &["--json"]].concat());
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json_line(&out),
        serde_json::json!({"plan": "delta", "from": 100})
    );
    assert_eq!(stdout(&vxbroker(&args)), "delta from 100\n");

    let out = vxbroker(&[
        "resume-plan",
        "--json",
        "--total",
        "150",
        "--ring-len",
        "80",
        "--master-gen",
        "1",
    ]);
    assert_eq!(json_line(&out), serde_json::json!({"plan": "fresh"}));

    let out = vxbroker(&[
        "resume-plan",
        "--json",
        "--have",
        "-1",
        "--total",
        "1",
        "--ring-len",
        "0",
        "--master-gen",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        json_line(&out),
        serde_json::json!({"error": {"code": "invalid_params.have", "rule": "counter.syntax",
            "message": "counter.syntax: not a decimal integer without sign or leading zero",
            "data": {"param": "have"}}})
    );
}

#[test]
fn sidecar_check_reads_nothing_it_cannot_bound() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("aliases.json");
    std::fs::write(&good, "{\"version\":1,\"aliases\":{}}\n").unwrap();
    let secret = dir.path().join("opencode@ses_A1.owner");
    std::fs::write(&secret, "{\"fp\":\"TOPSECRET\"}").unwrap();
    let missing = dir.path().join("aliases.json.d").join("aliases.json");
    let out = vxbroker(&[
        "sidecar",
        "check",
        "--json",
        good.to_str().unwrap(),
        secret.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        !text.contains("TOPSECRET"),
        "file content leaked into a verdict"
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["result"], "valid");
    assert_eq!(lines[1]["result"], "conflict.sidecar_corrupt");
    assert_eq!(lines[1]["rule"], "schema.missing_field");
    assert_eq!(lines[2]["result"], "unavailable.sidecar_io");
    assert_eq!(lines[2]["rule"], "file.io");
}

#[test]
fn key_check_reads_an_engines_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("E.toml");
    std::fs::write(
        &file,
        "[engine.kimi]\npin = \"none\"\nid = \"ses\"\nlaunch = [\"a\"]\nresume = [\"a\", \"{id}\"]\nindex = \"{history}/i\"\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = vxbroker(&[
        "key",
        "check",
        "--engines",
        f,
        "kimi:ses_a",
        &format!("claude:{U}"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stdout(&out).lines().next(),
        Some("kimi:ses_a: valid (kimi@ses_a)")
    );
    std::fs::write(&file, "[engine.kimi]\npin = \"none\"\n").unwrap();
    let out = vxbroker(&["key", "check", "--json", "--engines", f, "kimi:ses_a"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_line(&out)["error"]["code"], "invalid_params.engines");
}

/// `vxbroker serve` refusing to start names the flag and the value it could not use.
#[test]
fn serve_setup_errors_name_the_flag_and_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let engines = dir.path().join("E.toml");
    std::fs::write(
        &engines,
        "[engine.kimi]\npin = \"none\"\nid = \"ses\"\nlaunch = [\"a\"]\nresume = [\"a\", \"{id}\"]\nindex = \"{history}/i\"\n",
    )
    .unwrap();
    let runtime = dir.path().join("run");
    let locks = dir.path().join("locks");
    let serve = |listen: &str, engines: &str| {
        let out = vxbroker(&[
            "serve",
            "--listen",
            listen,
            "--runtime-dir",
            runtime.to_str().unwrap(),
            "--lock-dir",
            locks.to_str().unwrap(),
            "--engines",
            engines,
        ]);
        assert_ne!(out.status.code(), Some(0));
        String::from_utf8(out.stderr).unwrap()
    };
    let missing = dir.path().join("absent.toml");
    let e = serve("127.0.0.1:0", missing.to_str().unwrap());
    assert!(
        e.contains(&format!("--engines {}: ", missing.display())),
        "{e}"
    );
    let e = serve("10.0.0.1:80", engines.to_str().unwrap());
    assert!(
        e.contains("--listen 10.0.0.1:80: invalid_params.listen"),
        "{e}"
    );
    let sock = dir.path().join("no-such-dir/b.sock");
    let e = serve(
        &format!("unix:{}", sock.display()),
        engines.to_str().unwrap(),
    );
    assert!(
        e.contains(&format!("--listen unix:{}: ", sock.display())),
        "{e}"
    );
}
