//! Store failures under the fault injector, and an unsafe store.

use super::*;

fn temp_files(d: &Daemon) -> usize {
    std::fs::read_dir(store_dir(d))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp-")
        })
        .count()
}

/// An enabled daemon under the fault injector.
fn start_faulty(plan: &str) -> Daemon {
    Daemon::start_faulty(Some(ENABLED), plan)
}

#[test]
fn a_failed_purge_fails_the_reload_and_keeps_the_config() {
    let d = Daemon::start_with_config(Some(PLAIN));
    let pane = d.pane(r#"["/bin/sh","-c","echo hello; exec sleep 600"]"#);
    d.wait_text(&pane, |r| r == "hello");
    d.ok(&["recovery", "checkpoint"]);
    // An unsafe entry (group-writable final file) may hold text and cannot be deleted
    // safely: the purge fails.
    let unsafe_file = store_dir(&d).join("c11111111-2222-4333-8444-555555555555.json");
    std::fs::write(&unsafe_file, b"x").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&unsafe_file, std::fs::Permissions::from_mode(0o660)).unwrap();
    std::fs::write(d.config_path(), ENABLED).unwrap();
    let (code, v) = d.owner(&["config", "reload"]);
    assert_eq!((code, err_code(&v)), (6, "unavailable.recovery_io"), "{v}");
    assert_eq!(
        d.ok(&["config", "get", "--key", "recovery.terminal_text"])["value"],
        "plain",
        "effective config unchanged"
    );
    assert!(unsafe_file.exists(), "unsafe entries are never removed");
}

#[test]
fn a_failed_publish_reports_recovery_io_and_keeps_the_previous_generation() {
    let d = start_faulty("rename@*/recovery/*#2=EIO");
    d.ok(&["session", "create", "--name", "s"]);
    let first = d.ok(&["recovery", "checkpoint"]);
    let (code, v) = d.owner(&["recovery", "checkpoint"]);
    assert_eq!((code, err_code(&v)), (6, "unavailable.recovery_io"), "{v}");
    assert_eq!(v["error"]["data"], json!({}));
    assert_eq!(
        d.ok(&["recovery", "list"]),
        json!({"checkpoints": [{"checkpoint": first["checkpoint"], "status": "valid", "generation": 1}]})
    );
    assert_eq!(
        temp_files(&d),
        0,
        "the failed write's temporary file is gone"
    );
    // The live state was not rolled back and the next write succeeds.
    assert_eq!(d.ok(&["recovery", "checkpoint"])["generation"], 2);
    let trace = std::fs::read_to_string(d.dir.path().join("trace.jsonl")).unwrap();
    assert!(trace.contains("\"action\":\"EIO\""), "the fault fired");
}

#[test]
fn one_explicit_write_in_flight_and_the_reactor_stays_responsive() {
    let d = start_faulty("fsync@*/recovery/*=delay:1200");
    d.ok(&["session", "create", "--name", "s"]);
    std::thread::scope(|scope| {
        let slow = scope.spawn(|| d.owner(&["recovery", "checkpoint"]));
        std::thread::sleep(Duration::from_millis(600));
        let (code, v) = d.owner(&["recovery", "checkpoint"]);
        assert_eq!((code, err_code(&v)), (5, "conflict.recovery_busy"), "{v}");
        assert_eq!(v["error"]["data"], json!({}));
        // Encode and publish run off the reactor: a mutation answers meanwhile.
        let started = std::time::Instant::now();
        d.ok(&["session", "create", "--name", "t"]);
        assert!(started.elapsed() < Duration::from_millis(1000));
        let (code, v) = slow.join().unwrap();
        assert_eq!((code, v["generation"].clone()), (0, json!(1)), "{v}");
    });
}

#[test]
fn a_final_checkpoint_past_its_deadline_is_an_operational_failure() {
    let mut d = start_faulty("fsync@*/recovery/*=delay:2500");
    d.ok(&["session", "create", "--name", "s"]);
    let (status, elapsed) = d.stop();
    assert_eq!(
        status.code(),
        Some(1),
        "shutdown reports the failed persistence"
    );
    assert!(elapsed >= Duration::from_millis(2000), "{elapsed:?}");
    assert!(elapsed < Duration::from_millis(4000), "{elapsed:?}");
}

#[test]
fn an_unsafe_store_fails_startup_when_recovery_is_enabled() {
    let mut d = Daemon::start_with_config(Some(ENABLED));
    let (status, _) = d.stop();
    assert!(status.success());
    let dir = store_dir(&d);
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = d.spawn_serve(&[]);
    let status = poll("serve exit", || child.try_wait().unwrap());
    assert_eq!(status.code(), Some(6));
    let mut err = String::new();
    use std::io::Read as _;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(
        !err.contains(dir.to_str().unwrap()),
        "no path in diagnostics: {err}"
    );
    assert!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777 == 0o755,
        "never repaired"
    );
}
