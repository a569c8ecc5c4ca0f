//! `vxpersist blob check` (pinned in surface.md): one JSON line per file with the
//! keys file, result, rule, reason; exit 0 all valid, 1 otherwise, 2 on usage errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../corpus/persist/blobs")
        .join(name)
}

fn check(args: &[&str], files: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vxpersist"))
        .args(["blob", "check"])
        .args(args)
        .args(files)
        .output()
        .unwrap()
}

fn lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn one_line_per_file_in_pinned_key_order() {
    let (valid, bad) = (corpus("valid-codex.tar"), corpus("path-dotdot.tar"));
    let out = check(&["--json"], &[&valid, &bad]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("{\"file\":")
            && first.contains("\"result\":\"valid\",\"rule\":null,\"reason\":null}"),
        "{first}"
    );
    let l = lines(&out);
    assert_eq!(l.len(), 2);
    assert_eq!(l[1]["result"], "conflict.blob_corrupt");
    assert_eq!(l[1]["rule"], "blob.path");
    assert_eq!(l[1]["file"], bad.display().to_string());
    assert!(
        !l[1]["reason"].as_str().unwrap().contains("../x"),
        "no path content in reasons"
    );
    assert_eq!(check(&["--json"], &[&valid]).status.code(), Some(0));
}

#[test]
fn expectation_and_header_member_flags() {
    let valid = corpus("valid-codex.tar");
    let out = check(
        &["--json", "--backend", "codex", "--session-id", "other"],
        &[&valid],
    );
    assert_eq!(
        (out.status.code(), lines(&out)[0]["rule"].as_str()),
        (Some(1), Some("blob.header"))
    );
    let out = check(
        &["--json", "--backend", "codex", "--session-id", "0193-ab"],
        &[&valid],
    );
    assert_eq!(out.status.code(), Some(0));
    let out = check(
        &["--json", "--header-member", ".iterion-session.json"],
        &[&valid],
    );
    assert_eq!(lines(&out)[0]["rule"], "blob.header");
}

#[test]
fn usage_errors_exit_2() {
    let valid = corpus("valid-codex.tar");
    assert_eq!(
        check(&["--backend", "codex"], &[&valid]).status.code(),
        Some(2)
    );
    assert_eq!(check(&["--json"], &[]).status.code(), Some(2));
    assert_eq!(
        check(&["--header-member", "a/b"], &[&valid]).status.code(),
        Some(2)
    );
    assert_eq!(
        check(&["--header-member", ".."], &[&valid]).status.code(),
        Some(2)
    );
}

#[test]
fn oversized_file_is_size_before_reading_and_odd_files_are_io() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.tar");
    // Sparse: the length alone decides, nothing is read.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(32 * 1024 * 1024 + 64 * 1024 + 1)
        .unwrap();
    let link = dir.path().join("link.tar");
    std::os::unix::fs::symlink(corpus("valid-codex.tar"), &link).unwrap();
    let missing = dir.path().join("missing.tar");
    let out = check(&["--json"], &[&big, &link, &missing, dir.path()]);
    let l = lines(&out);
    assert_eq!(
        (l[0]["result"].as_str(), l[0]["rule"].as_str()),
        (Some("unsupported.blob_size"), Some("blob.size"))
    );
    for v in &l[1..] {
        assert_eq!(
            (v["result"].as_str(), v["rule"].as_str()),
            (Some("unavailable.persist_io"), None),
            "{v}"
        );
    }
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_unknown_backend_is_a_usage_error_naming_the_flag_before_any_verdict() {
    let valid = corpus("valid-codex.tar");
    for backend in ["no-such-backend", "kimi"] {
        let out = check(
            &["--json", "--backend", backend, "--session-id", "abc"],
            &[&valid],
        );
        assert_eq!(out.status.code(), Some(2), "{backend}");
        assert!(out.stdout.is_empty(), "a verdict was printed for {backend}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("vxpersist: --backend: invalid_params.backend: "),
            "{err}"
        );
        assert!(
            err.contains("codex") && err.contains("claude"),
            "no fix: {err}"
        );
        assert!(!err.contains("kimi,"), "kimi cannot pack: {err}");
    }
}

#[test]
fn a_layouts_file_that_cannot_be_read_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("layouts.toml");
    let out = check(
        &["--layouts", missing.to_str().unwrap()],
        &[&corpus("valid-codex.tar")],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!("--layouts {}", missing.display()))
            && err.contains("invalid_params.layouts")
            && err.contains("does not exist"),
        "{err}"
    );
}
