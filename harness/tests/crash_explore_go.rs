//! `vxcert crash-explore --publish` records and explores a Go program's publish
//! (issue 33): the Go runtime makes raw system calls, so only the seccomp backend,
//! chosen by the profile's `fault_backend` (default `auto`), sees them. The correct
//! publish (temp file, write, fsync, rename, directory fsync) passes every crash
//! state; each wrong one is reported with the state that shows it.
//!
//! The program (`testdata/gopublish.go`) is built here with Debian's `go`. Without it
//! the tests say so and pass, unless `VXFAULT_REQUIRE_PROGRAMS=1` (set by `.ci/run`),
//! which makes a missing `go` a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const NEW: &str = "generation N+1\n";

fn build() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("crash-explore-go");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let out = dir.join("gopublish");
    // Another test process may be using the previous build: build aside, then rename.
    let partial = out.with_extension(std::process::id().to_string());
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/testdata/gopublish.go");
    let mut go = Command::new("go");
    go.arg("build")
        .arg("-o")
        .arg(&partial)
        .arg(&src)
        .env("CGO_ENABLED", "0")
        .env("GO111MODULE", "off")
        .env("GOFLAGS", "")
        .current_dir(&dir);
    if std::env::var_os("GOCACHE").is_none() {
        go.env("GOCACHE", dir.join("go-cache"));
    }
    let o = go.output().map_err(|e| format!("cannot run go: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "go build failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    std::fs::rename(&partial, &out).map_err(|e| e.to_string())?;
    Ok(out)
}

/// The built program, or `None` (a skip) when `go` is missing.
fn gopublish() -> Option<PathBuf> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match BUILT.get_or_init(build) {
        Ok(p) => Some(p.clone()),
        Err(why) => {
            assert!(
                std::env::var_os("VXFAULT_REQUIRE_PROGRAMS").is_none(),
                "{why} (VXFAULT_REQUIRE_PROGRAMS is set)"
            );
            eprintln!("note: skipped: {why}");
            None
        }
    }
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `vxcert crash-explore --publish state/current` of `gopublish MODE` with a profile
/// whose `fault_backend` is `backend` (none: the default), and `extra` arguments; a
/// relative `prog` is named from the build directory (vxcert's working directory).
fn explore(prog: &Path, backend: Option<&str>, mode: &str, extra: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.toml");
    let mut text =
        "name = \"go-publisher\"\nserve = [\"unused\"]\ncli = [\"unused\"]\n".to_string();
    if let Some(b) = backend {
        text.push_str(&format!("fault_backend = \"{b}\"\n"));
    }
    std::fs::write(&profile, text).unwrap();
    let built = Path::new(env!("CARGO_TARGET_TMPDIR")).join("crash-explore-go");
    let o = Command::new(env!("CARGO_BIN_EXE_vxcert"))
        .current_dir(built)
        .arg("crash-explore")
        .arg("--profile")
        .arg(&profile)
        .args(["--publish", "state/current"])
        .args(extra)
        .arg("--")
        .arg(prog)
        .args([mode, "{file}", NEW])
        .output()
        .unwrap();
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The number before `what` in the summary line (`14 states`, `0 failing`).
fn count(stdout: &str, what: &str) -> u64 {
    let line = stdout.lines().next().unwrap_or("");
    let words: Vec<&str> = line.split([' ', ',', ';']).collect();
    let at = words
        .iter()
        .position(|w| *w == what)
        .unwrap_or_else(|| panic!("no `{what}` in {line:?}"));
    words[at - 1].parse().unwrap()
}

#[test]
fn a_correct_go_publish_is_recorded_by_seccomp_and_passes_every_crash_state() {
    let Some(prog) = gopublish() else { return };
    let keep = tempfile::tempdir().unwrap();
    let kept = keep.path().join("rec");
    // The default backend, auto, picks seccomp for a Go program and says why.
    let r = explore(&prog, None, "correct", &["--keep", kept.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("backend seccomp (auto:") && r.stderr.contains("is a Go program"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.starts_with("model posix:"), "{}", r.stdout);
    assert!(count(&r.stdout, "states") >= 10, "{}", r.stdout);
    assert_eq!(count(&r.stdout, "failing"), 0, "{}", r.stdout);
    // The recording is the Go runtime's own calls, seen by the seccomp backend: the
    // temporary file's creation, its write and fsync, the rename, the directory fsync.
    let log = std::fs::read_to_string(kept.join("log.jsonl")).unwrap();
    assert!(log.contains(r#""backend":"seccomp""#), "{log}");
    let renames: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(r#""op":"rename""#))
        .collect();
    assert_eq!(renames.len(), 1, "{log}");
    assert!(
        renames[0].contains("/state/current.tmp") && renames[0].contains(r#""result":0"#),
        "{}",
        renames[0]
    );
    for op in ["open", "write", "fsync"] {
        assert!(
            log.lines()
                .any(|l| l.contains(&format!(r#""op":"{op}""#)) && l.contains("/state/current")),
            "no {op} of the published file in {log}"
        );
    }
    // An explicit seccomp backend does the same.
    let r = explore(&prog, Some("seccomp"), "correct", &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("backend seccomp (as requested)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_go_publish_without_the_file_fsync_is_a_violation() {
    let Some(prog) = gopublish() else { return };
    let r = explore(&prog, Some("seccomp"), "no-fsync", &[]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(count(&r.stdout, "failing") >= 1, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("holds neither the old nor the new generation (0 bytes)"),
        "the state with the write lost and the rename kept: {}",
        r.stdout
    );
    // The same wrong publisher made of the correct one by the plan: the fsync lies.
    let r = explore(
        &prog,
        Some("seccomp"),
        "correct",
        &["--plan", "fsync@*/state/current.tmp=lie"],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("holds neither the old nor the new generation"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_go_publish_that_renames_before_writing_is_a_violation_even_for_a_process_crash() {
    if gopublish().is_none() {
        return;
    }
    // Named by a relative path: the command runs in its root, the path is the caller's.
    let prog = Path::new("./gopublish");
    let r = explore(prog, None, "rename-first", &["--model", "prefix"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("(prefix): crash after op"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("a partial publish is visible under the final name"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_go_publish_without_the_directory_fsync_loses_an_acknowledged_generation() {
    let Some(prog) = gopublish() else { return };
    let r = explore(&prog, None, "no-dirsync", &[]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("holds the old generation after the command acknowledged the new one"),
        "{}",
        r.stdout
    );
}

#[test]
fn the_profiles_backend_decides_and_the_preload_cannot_see_go() {
    let Some(prog) = gopublish() else { return };
    let r = explore(&prog, Some("preload"), "correct", &[]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("not recordable: backend preload saw nothing"),
        "{}",
        r.stderr
    );
    let r = explore(&prog, Some("ptrace"), "correct", &[]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("fault_backend: unknown backend `ptrace`"),
        "{}",
        r.stderr
    );
}

#[test]
fn publish_needs_a_plain_relative_file_and_a_command() {
    let vxcert = env!("CARGO_BIN_EXE_vxcert");
    let o = Command::new(vxcert)
        .args(["crash-explore", "--publish", "../x", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--publish ../x: give a path relative"), "{e}");
    let o = Command::new(vxcert)
        .args(["crash-explore", "--publish", "f"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--publish needs the command after `--`"), "{e}");
}
