//! The crash explorer on programs nobody here wrote: bash saving to a new file and
//! flipping a symlink with `ln -sf` (testdata/save_and_flip.sh), sqlite3 committing
//! in both journal modes with `synchronous=FULL`, and the 0-byte save a full disk
//! leaves. Each runs when the program is installed; with `VXFAULT_REQUIRE_PROGRAMS=1`
//! (set by `.ci/run`) a missing program is a failure.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use vxfault::{escape_glob, Backend, Injector};

const TESTDATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata");

mod common;
use common::program;

fn vxfault(args: &[&str]) -> (i32, String, String) {
    let args: Vec<OsString> = args.iter().map(OsString::from).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = vxfault::cli::run(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A root holding a complete earlier save that `last` points to.
fn saved_root(tmp: &Path) -> PathBuf {
    let root = tmp.join("root");
    fs::create_dir(&root).unwrap();
    fs::write(root.join("save.0"), b"line 1 of the saved state\nend\n").unwrap();
    std::os::unix::fs::symlink("save.0", root.join("last")).unwrap();
    root
}

/// Records save_and_flip.sh (3 lines) with `backend`; the recording's directory.
fn record_save(tmp: &Path, backend: &str, mode: &str) -> PathBuf {
    let root = saved_root(tmp);
    let rec = tmp.join("rec");
    let script = format!("{TESTDATA}/save_and_flip.sh");
    let (code, _, err) = vxfault(&[
        "record",
        "--out",
        s(&rec),
        "--root",
        s(&root),
        "--backend",
        backend,
        "--",
        "env",
        "SAVE_LINES=3",
        &script,
        s(&root),
        mode,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("the log reproduces the root"), "{err}");
    rec
}

fn explore_save(rec: &Path, model: &str) -> (i32, String) {
    let check = format!("{TESTDATA}/check_save.sh {{root}}");
    let (code, out, err) = vxfault(&[
        "explore",
        "--log",
        s(rec),
        "--model",
        model,
        "--check",
        &check,
        "--jobs",
        "2",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    (code, out)
}

/// The reported bug: `last` pointing at an empty file after a power cut. Found under
/// posix with either backend; the completed run's state has `last` on the new save.
#[test]
fn a_save_flipped_with_ln_sf_is_flagged_under_posix_with_the_empty_file() {
    if program("bash").is_none() || program("ln").is_none() {
        return;
    }
    for backend in ["preload", "seccomp"] {
        let tmp = tempfile::tempdir().unwrap();
        let rec = record_save(tmp.path(), backend, "");
        let (code, list, _) = vxfault(&["explore", "--log", s(&rec), "--list"]);
        assert_eq!(code, 0);
        assert!(list.contains("symlink "), "{backend}: {list}");
        let last_op = list.lines().filter(|l| l.starts_with("op ")).count();
        let dest = tmp.path().join("complete");
        let (code, _, err) = vxfault(&[
            "explore",
            "--log",
            s(&rec),
            "--model",
            "prefix",
            "--state",
            &last_op.to_string(),
            "--materialize",
            s(&dest),
        ]);
        assert_eq!(code, 0, "{err}");
        let target = fs::read_link(dest.join("last")).unwrap();
        assert_ne!(
            target,
            Path::new("save.0"),
            "{backend}: the flip is replayed"
        );
        assert_eq!(
            fs::read(dest.join(&target)).unwrap(),
            fs::read(tmp.path().join("root").join(&target)).unwrap()
        );
        let (code, out) = explore_save(&rec, "posix");
        assert_eq!(code, 1, "{backend}: {out}");
        assert!(out.contains("last points to an empty file"), "{out}");
        assert!(out.contains("strategy lose-writes: "), "{out}");
        // A process crash alone never shows it: the page cache survives.
        assert_eq!(explore_save(&rec, "prefix").0, 0);
    }
}

/// With the save and its directory fsynced before the flip, no posix state is bad.
#[test]
fn the_save_is_clean_once_it_and_its_directory_are_fsynced_before_the_flip() {
    if program("bash").is_none() || program("sync").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let rec = record_save(tmp.path(), "preload", "sync-dir");
    let (code, out) = explore_save(&rec, "posix");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("failing 0"), "{out}");
    // The save fsynced but not its directory: its data is safe, its name is not.
    let tmp = tempfile::tempdir().unwrap();
    let rec = record_save(tmp.path(), "seccomp", "sync");
    let (code, out) = explore_save(&rec, "posix");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("last points to a missing file"), "{out}");
    assert!(!out.contains("empty file"), "{out}");
    assert_eq!(explore_save(&rec, "ext4-ordered").0, 0);
}

/// A full disk: every write under the root fails with ENOSPC. The save still exits 0,
/// with an empty file that `last` points to, under both backends (the preload sees
/// the bytes bash's stdio writes when it flushes).
#[test]
fn a_full_disk_leaves_an_empty_save_that_last_points_to_under_both_backends() {
    if program("bash").is_none() {
        return;
    }
    for backend in [Backend::Preload, Backend::Seccomp] {
        let tmp = tempfile::tempdir().unwrap();
        let root = saved_root(tmp.path());
        let plan = format!(
            "write@{}/*=ENOSPC",
            escape_glob(root.as_os_str().as_encoded_bytes())
        );
        let mut c = Command::new(format!("{TESTDATA}/save_and_flip.sh"));
        c.arg(&root).env("SAVE_LINES", "3");
        let (outcome, out) = Injector::new(&plan)
            .unwrap()
            .backend(backend)
            .output(&mut c)
            .unwrap();
        assert_eq!(outcome.backend, backend);
        assert_eq!(out.status.code(), Some(0), "{backend:?}");
        assert!(
            outcome.rules[0].fired >= 4,
            "{backend:?}: every write failed"
        );
        let target = fs::read_link(root.join("last")).unwrap();
        assert_ne!(target, Path::new("save.0"));
        assert_eq!(
            fs::read(root.join(&target)).unwrap().len(),
            0,
            "{backend:?}"
        );
    }
}

/// sqlite3 committing one transaction with `sync` (`full`, `off`) in `mode` (delete or
/// wal), explored under `model`: the exit code and report of a checker that wants an
/// intact database holding the transaction whole or not at all.
fn sqlite_explored(mode: &str, sync: &str, model: &str) -> Option<(i32, String)> {
    let sqlite = program("sqlite3")?;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    fs::create_dir(&root).unwrap();
    let db = root.join("db");
    let setup = format!("pragma journal_mode={mode}; create table t(x); insert into t values (1);");
    let o = Command::new(&sqlite).arg(&db).arg(&setup).output().unwrap();
    assert!(o.status.success());
    let rec = tmp.path().join("rec");
    let (code, _, err) = vxfault(&[
        "record",
        "--out",
        s(&rec),
        "--root",
        s(&root),
        "--",
        s(&sqlite),
        s(&db),
        &format!("pragma synchronous={sync}; insert into t values (2);"),
    ]);
    assert_eq!(code, 0, "{err}");
    let check = format!("{TESTDATA}/check_sqlite.sh {} {{root}}", s(&sqlite));
    let (code, out, err) = vxfault(&[
        "explore",
        "--log",
        s(&rec),
        "--model",
        model,
        "--check",
        &check,
        "--jobs",
        "2",
    ]);
    assert!(code == 0 || code == 1, "{mode} {sync} {model}: {err}");
    Some((code, out))
}

fn sqlite_stays_clean(mode: &str) {
    for model in ["posix", "ext4-ordered"] {
        let Some((code, out)) = sqlite_explored(mode, "full", model) else {
            return;
        };
        assert_eq!(code, 0, "{mode} {model}: {out}");
        assert!(out.contains("failing 0"), "{out}");
    }
}

/// The negative control: without its fsyncs sqlite3 can be left corrupt or with a
/// torn transaction, and the same checker says so.
#[test]
fn sqlite3_with_synchronous_off_is_flagged_under_posix() {
    let Some((code, out)) = sqlite_explored("delete", "off", "posix") else {
        return;
    };
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("database: "), "{out}");
}

#[test]
fn sqlite3_with_synchronous_full_stays_clean_in_rollback_mode() {
    sqlite_stays_clean("delete");
}

#[test]
fn sqlite3_with_synchronous_full_stays_clean_in_wal_mode() {
    sqlite_stays_clean("wal");
}

/// A run whose result the log cannot reproduce is refused, naming what it missed:
/// chmod(1) changes a mode, which neither backend records.
#[test]
fn a_run_the_log_cannot_reproduce_is_refused_naming_the_operation() {
    let Some(chmod) = program("chmod") else {
        return;
    };
    for backend in ["preload", "seccomp"] {
        let tmp = tempfile::tempdir().unwrap();
        let root = saved_root(tmp.path());
        let rec = tmp.path().join("rec");
        let f = root.join("save.0");
        let (code, _, err) = vxfault(&[
            "record",
            "--out",
            s(&rec),
            "--root",
            s(&root),
            "--backend",
            backend,
            "--",
            s(&chmod),
            "600",
            s(&f),
        ]);
        assert_eq!(code, 2, "{backend}: {err}");
        assert!(
            err.contains("does not reproduce the run: save.0 is a file of 30 bytes and mode 0600"),
            "{backend}: {err}"
        );
        assert!(err.contains("chmod/fchmod"), "{backend}: {err}");
    }
}
