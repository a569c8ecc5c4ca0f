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

/// Records `sh -c SCRIPT` run in `root` with `backend`; the recording's directory.
fn record_sh(tmp: &Path, root: &Path, backend: &str, script: &str) -> PathBuf {
    let rec = tmp.join(format!("rec-{backend}"));
    let (code, _, err) = vxfault(&[
        "record",
        "--out",
        s(&rec),
        "--root",
        s(root),
        "--backend",
        backend,
        "--",
        "sh",
        "-c",
        &format!("cd '{}' && {script}", s(root)),
    ]);
    assert_eq!(code, 0, "{backend}: {err}");
    assert!(err.contains("the log reproduces the root"), "{err}");
    rec
}

/// `explore --list` under `model`.
fn list(rec: &Path, model: &str) -> String {
    let (code, out, err) = vxfault(&["explore", "--log", s(rec), "--list", "--model", model]);
    assert_eq!(code, 0, "{err}");
    out
}

/// The id of the state whose `--list` line contains `what`.
fn state_with(list: &str, what: &str) -> String {
    let line = list
        .lines()
        .find(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no state with `{what}` in:\n{list}"));
    line.trim_start_matches("state ")
        .split(' ')
        .next()
        .unwrap()
        .to_string()
}

/// Materializes state `id` of `model` into `dest`.
fn materialize(rec: &Path, model: &str, id: &str, dest: &Path) {
    let args = ["explore", "--log", s(rec), "--model", model, "--state", id];
    let (code, _, err) = vxfault(&[&args[..], &["--materialize", s(dest)]].concat());
    assert_eq!(code, 0, "{err}");
}

/// `ln -sfn b l`, the symlink flip of issue 46: listed as the temporary symlink and
/// its rename over `l`, replayed to `l -> b`; under posix the rename may be lost
/// (no directory fsync), leaving `l -> a`.
#[test]
fn ln_sfn_is_listed_as_a_symlink_and_its_rename_under_both_backends() {
    if program("ln").is_none() {
        return;
    }
    for backend in ["preload", "seccomp"] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("a"), b"A").unwrap();
        fs::write(root.join("b"), b"B").unwrap();
        std::os::unix::fs::symlink("a", root.join("l")).unwrap();
        let rec = record_sh(tmp.path(), &root, backend, "ln -sfn b l");
        let posix = list(&rec, "posix");
        let ops: Vec<&str> = posix.lines().filter(|l| l.starts_with("op ")).collect();
        assert_eq!(ops.len(), 2, "{backend}: {posix}");
        assert!(
            ops[0].contains(": symlink ") && ops[0].ends_with(" -> b"),
            "{posix}"
        );
        assert!(
            ops[1].contains(": rename ") && ops[1].ends_with(" -> l"),
            "{posix}"
        );
        let done = tmp.path().join("done");
        materialize(&rec, "prefix", "2", &done);
        assert_eq!(fs::read_link(done.join("l")).unwrap(), Path::new("b"));
        let lost = tmp.path().join("lost");
        let id = state_with(&posix, "crash after op 2 of 2; op 1 dropped (rename");
        materialize(&rec, "posix", &id, &lost);
        assert_eq!(fs::read_link(lost.join("l")).unwrap(), Path::new("a"));
    }
}

/// coreutils' mkfifo, chmod (a file and a directory), truncate -s, touch -d and
/// perl's truncate(2) on a path, recorded with both backends: each is an op of the
/// log, the complete state is what the run left (node, modes, sizes, the explicit
/// mtime), and under posix a state loses the unsynced chmod.
#[test]
fn mkfifo_chmod_truncate_and_touch_are_recorded_and_replayed_under_both_backends() {
    let progs = ["mkfifo", "chmod", "truncate", "touch", "perl"];
    if progs.iter().any(|p| program(p).is_none()) {
        return;
    }
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    for backend in ["preload", "seccomp"] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("d")).unwrap();
        fs::write(root.join("f"), b"hello world\n").unwrap();
        fs::write(root.join("g"), b"12345").unwrap();
        let script = "mkfifo p && chmod 600 f && chmod 700 d && truncate -s 3 f && \
                      touch -d @1577836800 f && perl -e 'truncate(q(g), 2) or die'";
        let rec = record_sh(tmp.path(), &root, backend, script);
        let posix = list(&rec, "posix");
        for op in [
            ": mknod p (p, ",
            ": chmod f 0600",
            ": chmod d 0700",
            ": truncate #1 to 3",
            ": set mtime of f to 1577836800.000000000",
            ": truncate #2 to 2",
        ] {
            assert!(posix.contains(op), "{backend}: no `{op}` in\n{posix}");
        }
        let n = posix.lines().filter(|l| l.starts_with("op ")).count();
        let done = tmp.path().join("done");
        materialize(&rec, "prefix", &n.to_string(), &done);
        for name in ["p", "f", "d", "g"] {
            let (a, b) = (
                fs::symlink_metadata(root.join(name)).unwrap(),
                fs::symlink_metadata(done.join(name)).unwrap(),
            );
            assert_eq!(
                (a.mode(), a.len()),
                (b.mode(), b.len()),
                "{backend}: {name}"
            );
        }
        assert!(fs::symlink_metadata(done.join("p"))
            .unwrap()
            .file_type()
            .is_fifo());
        assert_eq!(fs::metadata(done.join("f")).unwrap().mtime(), 1_577_836_800);
        let lost = tmp.path().join("lost");
        let last = format!("crash after op {n} of {n}; op 1 dropped (chmod f 0600)");
        materialize(&rec, "posix", &state_with(&posix, &last), &lost);
        assert_eq!(fs::metadata(lost.join("f")).unwrap().mode() & 0o7777, 0o644);
    }
}

/// A chmod followed by `sync f` (an fsync of the file) is never lost after the
/// fsync under posix; without the fsync a state at the end loses it.
#[test]
fn a_chmod_is_durable_under_posix_once_the_file_is_fsynced() {
    if program("chmod").is_none() || program("sync").is_none() {
        return;
    }
    for (script, lost) in [("chmod 600 f && sync f", false), ("chmod 600 f", true)] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("f"), b"x").unwrap();
        let rec = record_sh(tmp.path(), &root, "preload", script);
        let posix = list(&rec, "posix");
        let n = posix.lines().filter(|l| l.starts_with("op ")).count();
        let end = format!("crash after op {n} of {n}; op 0 dropped (chmod f 0600)");
        assert_eq!(posix.contains(&end), lost, "{script}: {posix}");
        assert!(posix.contains("crash after op 1 of"), "{posix}");
    }
}

/// What the log cannot model makes `record` fail naming it, with both backends: an
/// explicit time on a directory (touch -d) and a socket bound under the root.
#[test]
fn what_the_log_cannot_model_is_refused_naming_the_operation() {
    if program("touch").is_none() || program("perl").is_none() {
        return;
    }
    let cases = [
        (
            "touch -d @0 d",
            "sets an explicit modification time on d, which is not a regular file: the crash \
             log cannot model utimensat there",
        ),
        (
            "perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => q(s), Listen => 1) or die'",
            "s is a socket after the run but nothing when the log is replayed (a socket made by \
             bind(2) is not recorded",
        ),
    ];
    for backend in ["preload", "seccomp"] {
        for (script, says) in cases {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().join("root");
            fs::create_dir_all(root.join("d")).unwrap();
            let rec = tmp.path().join("rec");
            let (code, _, err) = vxfault(&[
                "record",
                "--out",
                s(&rec),
                "--root",
                s(&root),
                "--backend",
                backend,
                "--",
                "sh",
                "-c",
                &format!("cd '{}' && {script}", s(&root)),
            ]);
            assert_eq!(code, 2, "{backend}: {script}: {err}");
            assert!(err.contains(says), "{backend}: {script}: {err}");
        }
    }
}

/// An executable installed by write, `chmod 755`, `mv` (testdata/publish_tool.sh):
/// with no fsync, posix has a state where `tool` is published but its mode never
/// landed; fsynced (file and directory) before the rename, no state of either model
/// is bad.
#[test]
fn an_unsynced_chmod_before_a_rename_is_flagged_under_posix_and_clean_once_fsynced() {
    if ["chmod", "mv", "sync"].iter().any(|p| program(p).is_none()) {
        return;
    }
    let check = format!("{TESTDATA}/check_tool.sh {{root}}");
    for (mode, bad) in [("", true), ("sync", false)] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir(&root).unwrap();
        let script = format!("{TESTDATA}/publish_tool.sh . {mode}");
        let rec = record_sh(tmp.path(), &root, "preload", &script);
        for model in ["posix", "ext4-ordered"] {
            let args = ["explore", "--log", s(&rec), "--model", model];
            let (code, out, err) = vxfault(&[&args[..], &["--check", &check]].concat());
            let flagged = out.contains("tool is published but not executable");
            assert_eq!(code, i32::from(bad), "{mode:?} {model}: {out}{err}");
            // ext4 journals the mode before the rename: only posix loses it alone.
            assert_eq!(flagged, bad && model == "posix", "{mode:?} {model}: {out}");
        }
    }
}
