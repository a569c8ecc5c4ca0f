//! `vxstub`, the stand-in program the suites observe: each mode does what it says.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn vxstub() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_vxstub"))
}

fn wait_for(path: &std::path::Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{path:?} never appeared"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn argv_dump_writes_argv_env_and_cwd_then_sleeps() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump.json");
    let mut child = Command::new(vxstub())
        .args(["argv-dump"])
        .arg(&dump)
        .args([
            "--env",
            "VX_ID",
            "--env",
            "VX_ABSENT",
            "--",
            "--resume",
            "a b; c",
        ])
        .env("VX_ID", "ses_1")
        .env_remove("VX_ABSENT")
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    wait_for(&dump);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dump).unwrap()).unwrap();
    let argv: Vec<&str> = v["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(argv.last(), Some(&"a b; c"), "one element: {argv:?}");
    assert!(argv.contains(&"--resume"));
    assert_eq!(v["env"]["VX_ID"], "ses_1");
    assert!(v["env"]["VX_ABSENT"].is_null());
    assert_eq!(
        v["cwd"].as_str().map(PathBuf::from),
        Some(std::fs::canonicalize(dir.path()).unwrap())
    );
    assert_eq!(v["pid"], child.id());
    // It sleeps after the dump.
    std::thread::sleep(Duration::from_millis(100));
    assert!(child.try_wait().unwrap().is_none());
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn print_writes_exactly_n_bytes() {
    let out = Command::new(vxstub())
        .args(["print", "100000", "--byte", "65"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), 100_000);
    assert!(out.stdout.iter().all(|b| *b == b'A'));
}

#[test]
fn exit_returns_the_code() {
    let s = Command::new(vxstub()).args(["exit", "7"]).status().unwrap();
    assert_eq!(s.code(), Some(7));
}

#[test]
fn hold_lock_holds_and_a_second_holder_exits_97() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("k.lock");
    let mut first = Command::new(vxstub())
        .arg("hold-lock")
        .arg(&lock)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(first.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "locked\n");
    let second = Command::new(vxstub())
        .arg("hold-lock")
        .arg(&lock)
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(97));
    first.kill().unwrap();
    first.wait().unwrap();
    // Released by the holder's death: a new holder gets it.
    let mut third = Command::new(vxstub())
        .arg("hold-lock")
        .arg(&lock)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(third.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "locked\n");
    third.kill().unwrap();
    third.wait().unwrap();
}
