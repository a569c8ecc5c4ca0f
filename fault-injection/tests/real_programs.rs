//! Programs nobody here wrote, under the injector: sqlite3 committing under fsync EIO,
//! git writing its index under rename EIO, cp copying under a write fault, flock(1)
//! under EWOULDBLOCK, chmod, touch -d, mkfifo and perl's truncate(2) under the
//! attribute families' errors. Each runs when the program is installed; with
//! `VXFAULT_REQUIRE_PROGRAMS=1` (set by `.ci/run`) a missing program is a failure.
//! Every check runs under the preload and under the seccomp backend.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use vxfault::{escape_glob, Backend, Injector, Outcome, TraceRecord};

mod common;
use common::program;

fn tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("vxfault-real-")
        .tempdir()
        .unwrap()
}

fn glob(p: &Path) -> String {
    escape_glob(p.as_os_str().as_encoded_bytes())
}

/// A command that never reads the real home or system config.
fn cmd(prog: &Path, home: &Path) -> Command {
    let mut c = Command::new(prog);
    c.env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .stdin(Stdio::null());
    c
}

fn ok(mut c: Command) -> String {
    let o = c.output().unwrap();
    assert!(
        o.status.success(),
        "{:?}: {}",
        c,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs `c` under `plan` and returns what happened, the output and the trace.
fn under(backend: Backend, plan: &str, mut c: Command) -> (Outcome, Output, Vec<TraceRecord>) {
    let (outcome, out) = Injector::new(plan)
        .unwrap()
        .backend(backend)
        .output(&mut c)
        .unwrap();
    assert_eq!(outcome.backend, backend, "{}", outcome.backend_reason);
    outcome
        .injectable()
        .unwrap_or_else(|e| panic!("not injectable: {e}"));
    let trace = outcome.records().unwrap();
    (outcome, out, trace)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn sqlite3_commit_under_fsync_eio_is_rolled_back_cleanly_under(backend: Backend) {
    let Some(sqlite) = program("sqlite3") else {
        return;
    };
    let d = tmp();
    let db = d.path().join("db.sqlite");
    let mut c = cmd(&sqlite, d.path());
    c.arg(&db)
        .arg("create table t(x); insert into t values (1);");
    ok(c);
    let mut c = cmd(&sqlite, d.path());
    c.arg(&db).arg("insert into t values (2);");
    let (outcome, out, trace) = under(backend, &format!("fsync@{}*=EIO", glob(d.path())), c);
    assert_ne!(out.status.code(), Some(0), "sqlite3 saw the failed fsync");
    assert!(stderr(&out).contains("disk I/O error"), "{}", stderr(&out));
    assert!(outcome.rules[0].fired >= 1);
    assert!(trace.iter().any(|r| r.op == "fsync" && r.action == "EIO"));
    // The commit that could not be made durable is not there; the database is intact.
    let mut c = cmd(&sqlite, d.path());
    c.arg(&db)
        .arg("pragma integrity_check; select count(*) from t;");
    assert_eq!(ok(c), "ok\n1\n");
}

fn git_add_under_rename_eio_leaves_a_sound_repository_under(backend: Backend) {
    let Some(git) = program("git") else { return };
    let d = tmp();
    let repo = d.path().join("repo");
    let mut c = cmd(&git, d.path());
    c.args(["init", "-q"]).arg(&repo);
    ok(c);
    fs::write(repo.join("f"), b"hello\n").unwrap();
    let mut c = cmd(&git, d.path());
    c.current_dir(&repo).args(["add", "f"]);
    let plan = format!("rename@{}/.git/*=EIO", glob(&repo));
    let (outcome, out, trace) = under(backend, &plan, c);
    assert_ne!(out.status.code(), Some(0), "git saw the failed rename");
    assert!(outcome.rules[0].fired >= 1);
    let renamed: Vec<&TraceRecord> = trace.iter().filter(|r| r.op == "rename").collect();
    assert!(
        renamed.iter().any(|r| r.action == "EIO"
            && r.path2
                .as_deref()
                .is_some_and(|p| p.ends_with("/.git/index"))),
        "{renamed:#?}"
    );
    assert!(
        !repo.join(".git/index.lock").exists(),
        "git removed its lock"
    );
    let mut c = cmd(&git, d.path());
    c.current_dir(&repo).args(["fsck", "--no-progress"]);
    ok(c);
    let mut c = cmd(&git, d.path());
    c.current_dir(&repo).args(["status", "--porcelain"]);
    assert_eq!(ok(c), "?? f\n", "the add did not happen");
}

fn cp_under_a_write_fault_fails_through_copy_file_range_under(backend: Backend) {
    let Some(cp) = program("cp") else { return };
    let d = tmp();
    let (src, dst) = (d.path().join("src"), d.path().join("dst"));
    fs::write(&src, vec![b'x'; 100_000]).unwrap();
    let mut c = cmd(&cp, d.path());
    c.arg(&src).arg(&dst);
    let (outcome, out, trace) = under(backend, &format!("write@{}=EIO", glob(&dst)), c);
    assert_ne!(out.status.code(), Some(0), "cp saw the failed write");
    assert!(
        stderr(&out).contains("Input/output error"),
        "{}",
        stderr(&out)
    );
    assert_eq!(outcome.rules[0].fired, 1);
    let fired: Vec<&TraceRecord> = trace.iter().filter(|r| r.rule == Some(1)).collect();
    assert_eq!(fired.len(), 1);
    assert!(
        matches!(
            fired[0].call.as_str(),
            "copy_file_range" | "write" | "sendfile"
        ),
        "{fired:?}"
    );
    // Without the fault the same copy succeeds.
    let mut c = cmd(&cp, d.path());
    c.arg(&src).arg(&dst);
    ok(c);
    assert_eq!(fs::read(&dst).unwrap().len(), 100_000);
}

fn flock_cli_under_ewouldblock_reports_the_lock_as_taken_under(backend: Backend) {
    let Some(flock) = program("flock") else {
        return;
    };
    let d = tmp();
    let lock = d.path().join("lock");
    let marker = d.path().join("ran");
    let mut c = cmd(&flock, d.path());
    c.arg("-n").arg(&lock).arg("touch").arg(&marker);
    let (outcome, out, trace) = under(backend, &format!("flock@{}=EWOULDBLOCK", glob(&lock)), c);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        !marker.exists(),
        "the command must not run without the lock"
    );
    assert_eq!(outcome.rules[0].fired, 1);
    let f = trace.iter().find(|r| r.rule == Some(1)).unwrap();
    assert_eq!(
        (f.call.as_str(), f.lock.as_deref()),
        ("flock", Some("EX|NB"))
    );
    // Without the fault it takes the lock and runs the command.
    let mut c = cmd(&flock, d.path());
    c.arg("-n").arg(&lock).arg("touch").arg(&marker);
    ok(c);
    assert!(marker.exists());
}

// Each check under both backends: the seccomp one sees the same calls as system calls.

#[test]
fn sqlite3_commit_under_fsync_eio_is_rolled_back_cleanly() {
    sqlite3_commit_under_fsync_eio_is_rolled_back_cleanly_under(Backend::Preload);
    sqlite3_commit_under_fsync_eio_is_rolled_back_cleanly_under(Backend::Seccomp);
}

#[test]
fn git_add_under_rename_eio_leaves_a_sound_repository() {
    git_add_under_rename_eio_leaves_a_sound_repository_under(Backend::Preload);
    git_add_under_rename_eio_leaves_a_sound_repository_under(Backend::Seccomp);
}

#[test]
fn cp_under_a_write_fault_fails_through_copy_file_range() {
    cp_under_a_write_fault_fails_through_copy_file_range_under(Backend::Preload);
    cp_under_a_write_fault_fails_through_copy_file_range_under(Backend::Seccomp);
}

#[test]
fn flock_cli_under_ewouldblock_reports_the_lock_as_taken() {
    flock_cli_under_ewouldblock_reports_the_lock_as_taken_under(Backend::Preload);
    flock_cli_under_ewouldblock_reports_the_lock_as_taken_under(Backend::Seccomp);
}

/// The attribute families under a plan, with both backends: coreutils' chmod fails
/// with EPERM, touch -d with EACCES, mkfifo with EDQUOT and perl's truncate(2) with
/// EIO, each leaving the file as it was; `after:EIO` on chmod makes the change and
/// still reports the error.
#[test]
fn chmod_touch_mkfifo_and_truncate_fail_as_the_plan_says_under_both_backends() {
    let progs = ["chmod", "touch", "mkfifo", "perl"];
    if progs.iter().any(|p| program(p).is_none()) {
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let cases: [(&str, &str, &[&str], &str); 5] = [
        ("chmod", "EPERM", &["600", "f"], "Operation not permitted"),
        ("utimens", "EACCES", &["-d", "@5", "f"], "Permission denied"),
        ("mkdir", "EDQUOT", &["p"], "Disk quota exceeded"),
        (
            "ftruncate",
            "EIO",
            &["-e", "truncate(q(f), 1) or die $!"],
            "Input/output error",
        ),
        ("chmod", "after:EIO", &["600", "f"], "Input/output error"),
    ];
    let progs_of = ["chmod", "touch", "mkfifo", "perl", "chmod"];
    for backend in [Backend::Preload, Backend::Seccomp] {
        for ((op, action, args, says), prog) in cases.iter().zip(progs_of) {
            let dir = tmp();
            let f = dir.path().join("f");
            fs::write(&f, b"abc").unwrap();
            fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
            let before = fs::metadata(&f).unwrap();
            let plan = format!("{op}@{}/*={action}", glob(dir.path()));
            let mut c = cmd(&program(prog).unwrap(), dir.path());
            c.current_dir(dir.path()).args(*args);
            let (outcome, out, _) = under(backend, &plan, c);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{backend:?} {plan}: {err}");
            assert!(err.contains(says), "{backend:?} {plan}: {err}");
            assert_eq!(outcome.rules[0].fired, 1, "{backend:?} {plan}");
            let after = fs::metadata(&f).unwrap();
            let mode = if *action == "after:EIO" { 0o600 } else { 0o644 };
            assert_eq!(after.mode() & 0o7777, mode, "{backend:?} {plan}");
            assert_eq!(
                (after.len(), after.mtime()),
                (before.len(), before.mtime()),
                "{backend:?} {plan}"
            );
            assert!(!dir.path().join("p").exists(), "{backend:?} {plan}");
        }
    }
}
