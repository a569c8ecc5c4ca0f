//! The `vxfault` binary: exit codes and messages.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn vxfault(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vxfault"))
        .args(args)
        .output()
        .expect("run vxfault")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("vxfault-cli-")
        .tempdir()
        .unwrap()
}

/// The absolute path of the C library this test runs with (a real shared library
/// that is not libvxfault.so).
fn libc_path() -> String {
    let maps = fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libc.so") || p.contains("/libc-"))
        .expect("libc in /proc/self/maps")
        .to_string()
}

fn sh_write(file: &Path) -> String {
    format!("echo hello > '{}'", file.display())
}

#[test]
fn a_bad_plan_stops_before_the_command_runs() {
    let d = tmp();
    let marker = d.path().join("ran");
    let o = vxfault(&[
        "run",
        "--plan",
        "write=EIO;fsync=EBOGUS",
        "--",
        "touch",
        marker.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(125));
    assert!(
        stderr(&o).contains("bad plan: rule 2 `fsync=EBOGUS`: unknown errno name"),
        "{}",
        stderr(&o)
    );
    assert!(!marker.exists(), "the command must not run");
    let o = vxfault(&["run", "--plan", "write=EIO"]);
    assert_eq!(o.status.code(), Some(125));
    assert!(stderr(&o).contains("needs a command after --"));
    let o = vxfault(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(125));
    let o = vxfault(&["check", "fsync@*/x#2=EIO;rename=crash"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("rule 2: rename=crash (op rename)"));
    let o = vxfault(&["check", "open=lie"]);
    assert_eq!(o.status.code(), Some(125));
}

#[test]
fn run_injects_traces_and_passes_the_exit_status() {
    let d = tmp();
    let f = d.path().join("f");
    let trace = d.path().join("trace.jsonl");
    let plan = format!("write@{}=ENOSPC", f.display());
    let o = vxfault(&[
        "run",
        "--plan",
        &plan,
        "--trace",
        trace.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        &sh_write(&f),
    ]);
    assert_ne!(o.status.code(), Some(0), "sh saw the failed write");
    assert!(stderr(&o).contains("matched 1, fired 1"), "{}", stderr(&o));
    assert_eq!(fs::read(&f).unwrap(), b"");
    let text = fs::read_to_string(&trace).unwrap();
    assert!(text.lines().next().unwrap().contains("\"op\":\"loaded\""));
    assert!(text.contains("\"action\":\"ENOSPC\""));
    // The plan can come from the environment; the command's status is passed through.
    let o = Command::new(env!("CARGO_BIN_EXE_vxfault"))
        .args([
            "run",
            "--",
            "sh",
            "-c",
            &format!("{}; exit 7", sh_write(&f)),
        ])
        .env("VXFAULT_PLAN", format!("write@{}=short:2", f.display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    // A crash is reported like a shell does: 128 + SIGKILL.
    let o = vxfault(&[
        "run",
        "--plan",
        &format!("open@{}=crash", f.display()),
        "--",
        "sh",
        "-c",
        &sh_write(&f),
    ]);
    assert_eq!(o.status.code(), Some(137), "{}", stderr(&o));
}

#[test]
fn not_injectable_is_never_a_pass() {
    let d = tmp();
    // The op never reached the hooks.
    let o = vxfault(&["run", "--plan", "fsync=EIO", "--", "true"]);
    assert_eq!(o.status.code(), Some(124));
    assert!(
        stderr(&o).contains("not injectable: rule 1 `fsync=EIO`: no fsync call reached the hooks"),
        "{}",
        stderr(&o)
    );
    // A static binary never loads the library (so `auto` does not choose it).
    let stat = vxfault::static_probe().unwrap();
    let out = d.path().join("s");
    let static_run = |backend: &str| {
        vxfault(&[
            "run",
            "--backend",
            backend,
            "--plan",
            &format!("write@{}=EIO", out.display()),
            "--",
            stat.to_str().unwrap(),
            out.to_str().unwrap(),
        ])
    };
    let o = static_run("preload");
    assert_eq!(o.status.code(), Some(124), "{}", stderr(&o));
    assert!(stderr(&o).contains("never loaded"), "{}", stderr(&o));
    let o = static_run("auto");
    assert!(
        stderr(&o).contains("backend seccomp (auto: ") && stderr(&o).contains("matched 1, fired 1"),
        "{}",
        stderr(&o)
    );
    // A library that is not libvxfault.so (no handshake) is caught the same way.
    let libc = libc_path();
    let o = vxfault(&[
        "run",
        "--lib",
        &libc,
        "--plan",
        "write=EIO",
        "--",
        "sh",
        "-c",
        "echo hi",
    ]);
    assert_eq!(o.status.code(), Some(124), "{}", stderr(&o));
    // --require-fire: reached but never fired.
    let f = d.path().join("f");
    let plan = format!("write@{}/nothing=EIO", d.path().display());
    let o = vxfault(&["run", "--plan", &plan, "--", "sh", "-c", &sh_write(&f)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = vxfault(&[
        "run",
        "--require-fire",
        "--plan",
        &plan,
        "--",
        "sh",
        "-c",
        &sh_write(&f),
    ]);
    assert_eq!(o.status.code(), Some(124));
    assert!(
        stderr(&o).contains("never fired (matched 0)"),
        "{}",
        stderr(&o)
    );
    // A command that cannot be started.
    let o = vxfault(&["run", "--plan", "write=EIO", "--", "/nonexistent/cmd"]);
    assert_eq!(o.status.code(), Some(127));
}

#[test]
fn points_and_lib() {
    let d = tmp();
    let f = d.path().join("f");
    let filter = format!("{}/*", d.path().display());
    let script = format!("{} ; echo again >> '{}'", sh_write(&f), f.display());
    let o = vxfault(&[
        "points", "--filter", &filter, "--op", "write", "--", "sh", "-c", &script,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let rules: Vec<&str> = text
        .lines()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    let g = vxfault::escape_glob(f.as_os_str().as_encoded_bytes());
    assert_eq!(
        rules,
        vec![format!("write@{g}##1"), format!("write@{g}##2")]
    );
    // Each point fails on its own.
    for (i, rule) in rules.iter().enumerate() {
        let trace = d.path().join(format!("t{i}"));
        let o = vxfault(&[
            "run",
            "--require-fire",
            "--plan",
            &format!("{rule}=EIO"),
            "--trace",
            trace.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ]);
        assert_ne!(o.status.code(), Some(124), "{}", stderr(&o));
        let recs = vxfault::read_trace(&trace).unwrap();
        let failed: Vec<_> = recs.iter().filter(|r| r.rule == Some(1)).collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].hit, Some(i as u64 + 1));
    }
    let o = vxfault(&["lib"]);
    assert_eq!(o.status.code(), Some(0));
    let p = String::from_utf8(o.stdout).unwrap();
    assert!(Path::new(p.trim()).is_file());
}

/// Runs `vxfault ARGS -- touch MARKER` and checks it was refused with 125 before the
/// command ran; returns stderr.
fn refused(d: &Path, args: &[&str]) -> String {
    let marker = d.join("ran");
    let mut all = args.to_vec();
    all.extend(["--", "touch", marker.to_str().unwrap()]);
    let o = vxfault(&all);
    assert_eq!(o.status.code(), Some(125), "{args:?}: {}", stderr(&o));
    assert!(!marker.exists(), "{args:?}: the command must not run");
    stderr(&o)
}

#[test]
fn a_trace_that_cannot_be_created_is_the_runners_error() {
    let d = tmp();
    let trace = d.path().join("missing/dir/t.jsonl");
    let e = refused(
        d.path(),
        &[
            "run",
            "--plan",
            "write=EIO",
            "--trace",
            trace.to_str().unwrap(),
        ],
    );
    let named = format!("cannot create the --trace file {}", trace.display());
    assert!(e.contains(&named), "the message names the path: {e}");
    assert!(
        e.contains("directory exists and is writable"),
        "and the fix: {e}"
    );
    assert!(!e.contains("cannot run"), "{e}");
    let e = refused(d.path(), &["points", "--trace", trace.to_str().unwrap()]);
    assert!(e.contains(&named), "{e}");
}

#[test]
fn a_repeated_option_is_refused() {
    let d = tmp();
    let e = refused(
        d.path(),
        &["run", "--plan", "write=EIO", "--plan", "fsync=EIO"],
    );
    assert!(e.contains("--plan given twice"), "{e}");
    let e = refused(
        d.path(),
        &["run", "--plan", "write=EIO", "--seed", "1", "--seed", "2"],
    );
    assert!(e.contains("--seed given twice"), "{e}");
}

#[test]
fn empty_plans_and_missing_libraries_never_run() {
    let d = tmp();
    for plan in ["", ";", " ; ;"] {
        let e = refused(d.path(), &["run", "--plan", plan]);
        assert!(e.contains("empty plan"), "{plan:?}: {e}");
    }
    let e = refused(d.path(), &["run"]);
    assert!(e.contains("empty plan"), "{e}");
    let e = refused(
        d.path(),
        &["run", "--plan", "write=EIO", "--lib", "/nonexistent.so"],
    );
    assert!(
        e.contains("cannot preload the --lib library /"),
        "names the path: {e}"
    );
    assert!(e.contains("libvxfault.so"), "and the fix: {e}");
    let o = vxfault(&["check", ";"]);
    assert_eq!(o.status.code(), Some(125));
    // A points filter is a glob like a plan's: a bad one is refused too.
    let e = refused(d.path(), &["points", "--filter", "/tmp/[abc"]);
    assert!(e.contains("--filter: unterminated '[' class"), "{e}");
}

#[test]
fn a_bad_plan_loaded_by_hand_stops_the_process_with_one_line() {
    let d = tmp();
    let marker = d.path().join("ran");
    let trace = d.path().join("t.jsonl");
    let lib = String::from_utf8(vxfault(&["lib"]).stdout).unwrap();
    let o = Command::new("sh")
        .args(["-c", &format!("touch '{}'", marker.display())])
        .env("LD_PRELOAD", lib.trim())
        .env("VXFAULT_PLAN", "write=EIOO")
        .env("VXFAULT_TRACE", &trace)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(125), "{}", stderr(&o));
    assert!(!marker.exists(), "nothing ran");
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("libvxfault: bad VXFAULT_PLAN: rule 1: unknown errno name"),
        "{e}"
    );
    let t = fs::read_to_string(&trace).unwrap();
    assert!(t.contains("\"op\":\"plan-error\""), "{t}");
    // A good plan by hand runs as before.
    let o = Command::new("sh")
        .args(["-c", &format!("touch '{}'", marker.display())])
        .env("LD_PRELOAD", lib.trim())
        .env("VXFAULT_PLAN", "fsync=EIO")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(marker.exists());
}

#[test]
fn each_rule_gets_a_summary_line_unless_quiet() {
    let d = tmp();
    let f = d.path().join("f");
    let plan = format!(
        "write@{}=EIO;fsync=EIO;open@{}#9=EIO",
        f.display(),
        f.display()
    );
    let o = vxfault(&["run", "--plan", &plan, "--", "sh", "-c", &sh_write(&f)]);
    let e = stderr(&o);
    assert!(
        e.contains(&format!(
            "rule 1 `write@{}=EIO`: matched 1, fired 1",
            f.display()
        )),
        "{e}"
    );
    assert!(e.contains("rule 2 `fsync=EIO`: matched 0, fired 0"), "{e}");
    assert!(e.contains("#9=EIO`: matched 1, fired 0"), "{e}");
    let o = vxfault(&[
        "run",
        "--quiet",
        "--plan",
        &plan,
        "--",
        "sh",
        "-c",
        &sh_write(&f),
    ]);
    assert!(!stderr(&o).contains("matched"), "{}", stderr(&o));
}
