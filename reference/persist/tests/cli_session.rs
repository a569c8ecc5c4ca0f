//! `vxpersist pack|unpack|has-session`: the commands a profile's `[persist]` table
//! runs, through the binary, with exit codes by error class.

use std::path::Path;
use std::process::{Command, Output};

fn run(verb: &str, backend: &str, root: &Path, id: &str, file: Option<&Path>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vxpersist"));
    cmd.args([verb, "--backend", backend, "--root"])
        .arg(root)
        .args(["--session-id", id]);
    if let Some(f) = file {
        cmd.arg(f);
    }
    cmd.output().unwrap()
}

fn has(root: &Path, id: &str) -> String {
    let out = run("has-session", "codex", root, id, None);
    assert_eq!(out.status.code(), Some(0));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[test]
fn pack_then_unpack_into_a_wiped_root() {
    let src = tempfile::tempdir().unwrap();
    let rel = "sessions/2025/05/07/rollout-2025-05-07T17-24-21-abc.jsonl";
    std::fs::create_dir_all(src.path().join("sessions/2025/05/07")).unwrap();
    std::fs::write(src.path().join(rel), b"turn\n").unwrap();
    std::fs::write(src.path().join("auth.json"), b"secret").unwrap();
    let blob_dir = tempfile::tempdir().unwrap();
    let blob = blob_dir.path().join("abc.tar");
    let out = run("pack", "codex", src.path(), "abc", Some(&blob));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let check = Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args(["blob", "check", "--backend", "codex", "--session-id", "abc"])
        .arg(&blob)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(0));

    let dst = tempfile::tempdir().unwrap();
    assert_eq!(has(dst.path(), "abc"), "false");
    let out = run("unpack", "codex", dst.path(), "zq9", Some(&blob));
    assert_eq!(out.status.code(), Some(5), "header mismatch is a conflict");
    // The blob's path is named (the user gave it, and here it holds the id); the ids
    // themselves never are.
    let stderr = String::from_utf8(out.stderr)
        .unwrap()
        .replace(&blob.display().to_string(), "BLOB");
    assert!(
        stderr.contains("FILE BLOB")
            && stderr.contains("blob.header")
            && !stderr.contains("abc")
            && !stderr.contains("zq9"),
        "{stderr}"
    );
    assert_eq!(
        run("unpack", "codex", dst.path(), "abc", Some(&blob))
            .status
            .code(),
        Some(0)
    );
    assert_eq!(has(dst.path(), "abc"), "true");
    assert_eq!(std::fs::read(dst.path().join(rel)).unwrap(), b"turn\n");
    assert!(!dst.path().join("auth.json").exists());
}

#[test]
fn bad_input_exits_by_class() {
    let dir = tempfile::tempdir().unwrap();
    let blob = dir.path().join("b.tar");
    assert_eq!(
        run("pack", "nope", dir.path(), "a", Some(&blob))
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run("pack", "kimi", dir.path(), "a", Some(&blob))
            .status
            .code(),
        Some(10)
    );
    assert_eq!(
        run("pack", "codex", dir.path(), "../a", Some(&blob))
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        run("pack", "codex", dir.path(), "a", Some(&blob))
            .status
            .code(),
        Some(3)
    );
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    assert_eq!(
        run("pack", "codex", &link, "a", Some(&blob)).status.code(),
        Some(6),
        "symlinked root"
    );
    assert!(!blob.exists());
}

#[test]
fn store_suite_passes_on_fs_and_refuses_other_stores() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("fs:{}", dir.path().join("persist").display());
    let out = Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args(["store-suite", "--json", "--store", &store])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    assert!(lines.iter().all(|l| l["verdict"] == "pass"));
    let out = Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args(["store-suite", "--store", "s3:http://127.0.0.1:1/b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_profile_layouts_file_replaces_the_builtin_whitelist() {
    let dir = tempfile::tempdir().unwrap();
    let layouts = dir.path().join("layouts.toml");
    std::fs::write(&layouts, "[auth]\nnever = [\"auth.json\"]\n[backend.codex]\ncapability = true\nkey = \"s/{id}.jsonl\"\nfiles = [\"s/{id}.jsonl\"]\n").unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("s")).unwrap();
    std::fs::write(root.join("s/abc.jsonl"), b"t\n").unwrap();
    let blob = dir.path().join("b.tar");
    let with = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_vxpersist"))
            .arg("--layouts")
            .arg(&layouts)
            .args(args)
            .output()
            .unwrap()
    };
    let root_s = root.to_str().unwrap();
    let blob_s = blob.to_str().unwrap();
    assert!(with(&[
        "pack",
        "--backend",
        "codex",
        "--root",
        root_s,
        "--session-id",
        "abc",
        blob_s
    ])
    .status
    .success());
    assert!(with(&["blob", "check", blob_s]).status.success());
    // The builtin codex layout does not whitelist s/abc.jsonl.
    assert_eq!(
        run("has-session", "codex", &root, "abc", None).stdout,
        b"false\n"
    );
    let check = Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args(["blob", "check", "--json", blob_s])
        .output()
        .unwrap();
    assert!(String::from_utf8(check.stdout)
        .unwrap()
        .contains("blob.not_session_file"));
    std::fs::write(&layouts, "not toml [").unwrap();
    assert_eq!(with(&["blob", "check", blob_s]).status.code(), Some(2));
}

#[test]
fn errors_name_the_flag_or_path_and_the_fix_but_never_the_session_id() {
    let root = tempfile::tempdir().unwrap();
    let stderr = |out: &Output| String::from_utf8_lossy(&out.stderr).into_owned();

    let out = run("pack", "no-such-backend", root.path(), "abc", None);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("vxpersist: --backend: invalid_params.backend") && err.contains("codex"),
        "{err}"
    );

    let out = run("pack", "codex", root.path(), "zq9", None);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("--root {}", root.path().display()))
            && err.contains("not_found.session")
            && err.contains("has-session"),
        "{err}"
    );
    assert!(!err.contains("zq9"), "the session id was echoed: {err}");

    let missing = root.path().join("no-such.tar");
    let out = run("unpack", "codex", root.path(), "abc", Some(&missing));
    assert_eq!(out.status.code(), Some(6));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("FILE {}", missing.display())) && err.contains("regular file"),
        "{err}"
    );

    let out = Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args([
            "store",
            "get",
            "--store",
            "nowhere:x",
            "--run",
            "r1",
            "--ref",
            "n/x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.starts_with("vxpersist: --store: invalid_params.store") && err.contains("fs:DIR"),
        "{err}"
    );

    let absent = root.path().join("no-state-dir");
    let out = Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args(["drive", "--state"])
        .arg(&absent)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("--state {}: ", absent.display())) && err.contains("create it"),
        "{err}"
    );
}
