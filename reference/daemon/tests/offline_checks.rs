//! `vxref workspace check` / `vxref integration check`: offline, pinned JSON lines,
//! exit 0/1/2 like `vxcert validate`, lengths judged before reading.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

fn check(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(BIN);
    env_for(&mut cmd, dir);
    let out = cmd.current_dir(dir).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// phux's writer: schema 2 always, `active`/`cols`/`rows` always, f32 ratios.
const PHUX_ARCHIVE: &str = r#"{
  "schema_version": 2,
  "sessions": [{"name": "ops", "active": true, "windows": [{"name": "main", "active": true,
    "layout": {"kind": "split", "dir": "vertical", "ratio": 0.6, "left": {"kind": "pane", "pane": 1}, "right": {"kind": "pane", "pane": 0}},
    "panes": [{"active": true, "cwd": "/tmp", "agent_session": {"plugin_id": "com.phux.agents", "integration_id": "codex", "native_id": "thread-42"}, "cols": 80, "rows": 24},
              {"active": false, "cols": 0, "rows": 0}]}]}]
}"#;

const TEMPLATE: &str = r#"id = "codex"
[session_identity]
mode = "native-or-phux"
native_env = "PHUX_CODEX_SESSION_ID"
restore = "external-cli"
resume_args = ["resume", "${PHUX_AGENT_SESSION_ID}"]
[launch]
command = ["codex"]
"#;

#[test]
fn workspace_check_prints_pinned_lines_and_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("phux.json"), PHUX_ARCHIVE).unwrap();
    let smuggled = PHUX_ARCHIVE.replace("\"schema_version\": 2", "\"schema_version\": 1");
    std::fs::write(dir.path().join("smuggled.json"), smuggled).unwrap();

    let (code, out, _) = check(dir.path(), &["workspace", "check", "--json", "phux.json"]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out,
        "{\"file\":\"phux.json\",\"result\":\"valid\",\"rule\":null,\"reason\":null}\n"
    );

    let (code, out, _) = check(
        dir.path(),
        &[
            "--json",
            "workspace",
            "check",
            "phux.json",
            "smuggled.json",
            "missing.json",
        ],
    );
    assert_eq!(code, 1, "{out}");
    let lines: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1]["result"], "conflict.archive_corrupt");
    assert_eq!(lines[1]["rule"], "archive.schema1_record");
    assert_eq!(lines[2]["result"], "unavailable.file_io");
    assert_eq!(lines[2]["rule"], serde_json::Value::Null);
    for line in &lines {
        let keys: Vec<&String> = line.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["file", "reason", "result", "rule"]);
    }
    // Reasons name rules and paths, never content.
    assert!(!out.contains("thread-42") && !out.contains("ops"), "{out}");

    let (code, out, _) = check(dir.path(), &["workspace", "check", "smuggled.json"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with("smuggled.json: conflict.archive_corrupt: archive.schema1_record"),
        "{out}"
    );
}

#[test]
fn workspace_check_judges_the_length_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse: 16 MiB + 1 without writing them.
    let big = std::fs::File::create(dir.path().join("big.json")).unwrap();
    big.set_len(16 * 1024 * 1024 + 1).unwrap();
    let (code, out, _) = check(dir.path(), &["workspace", "check", "--json", "big.json"]);
    assert_eq!(code, 1);
    let line: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(line["rule"], "archive.size");
    assert_eq!(line["result"], "conflict.archive_corrupt");
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = check(dir.path(), &["workspace", "check"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = check(dir.path(), &["integration", "check", "--bogus", "x"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn integration_check() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("codex.toml"), TEMPLATE).unwrap();
    let evaluator = TEMPLATE.replace(r#"command = ["codex"]"#, r#"command = ["sh", "-c"]"#);
    std::fs::write(dir.path().join("evaluator.toml"), evaluator).unwrap();
    let (code, out, _) = check(
        dir.path(),
        &["integration", "check", "--json", "codex.toml"],
    );
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = check(
        dir.path(),
        &[
            "integration",
            "check",
            "--json",
            "codex.toml",
            "evaluator.toml",
        ],
    );
    assert_eq!(code, 1);
    let last: serde_json::Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
    assert_eq!(last["result"], "invalid_params.integration_template");
    assert_eq!(last["rule"], "template.shell");
    assert_eq!(last["file"], "evaluator.toml");
}

/// The binary gives every committed corpus file its expected verdict, in one run
/// per corpus (padded cases are left to the library's corpus test).
#[test]
fn checkers_agree_with_the_corpora() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
    for (dir, group) in [("workspace", "workspace"), ("integrations", "integration")] {
        let expected = std::fs::read_to_string(root.join(dir).join("expected.jsonl")).unwrap();
        let rows: Vec<serde_json::Value> = expected
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r.get("pad_to").is_none() && r["kind"] != "record")
            .collect();
        let files: Vec<String> = rows
            .iter()
            .map(|r| {
                root.join(dir)
                    .join(r["file"].as_str().unwrap())
                    .display()
                    .to_string()
            })
            .collect();
        let mut args = vec![group, "check", "--json"];
        args.extend(files.iter().map(String::as_str));
        let tmp = tempfile::tempdir().unwrap();
        let (code, out, _) = check(tmp.path(), &args);
        assert_eq!(code, 1, "each corpus has refused cases");
        let lines: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), rows.len());
        for (row, line) in rows.iter().zip(&lines) {
            assert_eq!(
                (&line["result"], &line["rule"]),
                (&row["result"], &row["rule"]),
                "{}",
                row["case"]
            );
        }
    }
}
