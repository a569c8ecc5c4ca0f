//! `vxref serve`: readiness, identity, the lock, the owner file and shutdown.

mod common;
use common::*;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

#[test]
fn serves_with_fresh_identity_and_a_private_owner_token() {
    let mut d = Daemon::start();
    let owner = std::fs::metadata(format!("{}.owner", d.socket.display())).unwrap();
    assert_eq!(owner.permissions().mode() & 0o777, 0o600);
    let first = d.ok(&["server", "info"]);
    let source = first["source"].as_str().unwrap().to_string();
    assert!(
        source.starts_with("venomx/") && source.len() == "venomx/".len() + 36,
        "{source}"
    );
    let old_token = std::fs::read_to_string(format!("{}.owner", d.socket.display())).unwrap();

    let (status, _) = d.stop();
    assert!(status.success(), "{status:?}");
    assert!(!d.socket.exists(), "socket removed");
    assert!(!std::path::Path::new(&format!("{}.owner", d.socket.display())).exists());

    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
    let second = d.ok(&["server", "info"]);
    assert_ne!(second["source"], first["source"], "fresh source per start");
    // The previous start's owner token is worthless now.
    let (code, v) = parse(d.cli_as(Some(old_token.trim()), &["session", "list"]));
    assert_eq!(code, 4);
    assert_eq!(v["error"]["code"], "denied.token");
}

#[test]
fn prints_nothing_on_stdout() {
    let mut d = Daemon::start();
    d.ok(&["session", "create", "--name", "x"]);
    let mut child = d.child.take().unwrap();
    signal(child.id(), "TERM");
    let status = poll("exit", || child.try_wait().unwrap());
    assert!(status.success());
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(out, "");
}

#[test]
fn second_daemon_on_the_same_socket_refuses_and_touches_nothing() {
    let d = Daemon::start();
    let owner_before = std::fs::read(format!("{}.owner", d.socket.display())).unwrap();
    let mut second = d.spawn_serve(&[]);
    let status = poll("second daemon exit", || second.try_wait().unwrap());
    assert_eq!(status.code(), Some(6));
    let mut err = String::new();
    second
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("already serving"), "{err}");
    // The first daemon still serves, with its own owner token.
    assert_eq!(
        std::fs::read(format!("{}.owner", d.socket.display())).unwrap(),
        owner_before
    );
    d.ok(&["session", "list"]);
}

#[test]
fn shutdown_kills_a_child_that_ignores_sigterm_within_the_deadline() {
    let mut d = Daemon::start();
    let pane = d.pane(r#"["sh","-c","trap '' TERM; echo armed; while :; do sleep 1; done"]"#);
    d.wait_text(&pane, |r| r == "armed");
    let pid = d.ok(&["pane", "list"])["panes"][0]["pane"].clone();
    assert_eq!(pid, pane);
    let (status, took) = d.stop();
    assert!(status.success(), "cleanup reported failure: {status:?}");
    // SIGTERM was ignored, so only the SIGKILL at 1500 ms ended it; all within 2000 ms
    // plus process start/exit slack on a loaded machine.
    assert!(took >= Duration::from_millis(1400), "took {took:?}");
    assert!(took < Duration::from_millis(4000), "took {took:?}");
    assert!(!d.socket.exists());
}

#[test]
fn shutdown_reaps_children_and_their_group() {
    let mut d = Daemon::start();
    let created = d
        .topology("t", "w")
        .pane(r#"["sh","-c","sleep 300 & echo started; wait"]"#)
        .reply;
    let pane = created["pane"].as_str().unwrap();
    d.wait_text(pane, |r| r == "started");
    let leader = created["pid"].as_i64().unwrap();
    assert!(process_alive(leader));
    let (status, _) = d.stop();
    assert!(status.success());
    assert!(!process_alive(leader));
    // The background `sleep` shared the group and was terminated with it.
    let stragglers = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i64>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit(')')
                        .next()
                        .map(|rest| rest.split_whitespace().nth(2) == Some(&leader.to_string()))
                })
                .unwrap_or(false)
                && process_alive(*pid)
        })
        .count();
    assert_eq!(stragglers, 0);
}

#[test]
fn mutations_are_refused_while_stopping_but_reads_work() {
    let mut d = Daemon::start();
    let pane = d.pane(r#"["sh","-c","trap '' TERM; echo armed; while :; do sleep 1; done"]"#);
    d.wait_text(&pane, |r| r == "armed");
    let mut w = d.wire();
    w.login_owner(&d);
    signal(d.child.as_ref().unwrap().id(), "TERM");
    // The child ignores SIGTERM, so the daemon stays in its stopping phase for ~1.5 s.
    let refused = poll("shutdown refusal", || {
        let r =
            w.request(serde_json::json!({"id":1,"verb":"session.create","params":{"name":"late"}}));
        (r["error"]["code"] == "unavailable.shutdown").then_some(r)
    });
    assert_eq!(refused["id"], 1);
    let listed = w.request(serde_json::json!({"id":2,"verb":"session.list"}));
    assert!(listed["ok"]["sessions"].is_array());
    let mut child = d.child.take().unwrap();
    let status = poll("exit", || child.try_wait().unwrap());
    assert!(status.success());
}

#[test]
fn on_demand_daemon_stops_after_the_last_session_and_the_grace() {
    let mut d = Daemon::start();
    let (status, _) = d.stop();
    assert!(status.success());
    let mut child = d.spawn_serve(&["--on-demand"]);
    d.wait_ready();
    d.ok(&["session", "create", "--name", "keep"]);
    // With a session it outlives the grace.
    std::thread::sleep(Duration::from_millis(5600));
    assert!(
        child.try_wait().unwrap().is_none(),
        "stopped while a session existed"
    );
    d.ok(&["session", "kill", "--session", "s0"]);
    let start = std::time::Instant::now();
    let status = poll("on-demand exit", || child.try_wait().unwrap());
    assert!(status.success());
    assert!(
        start.elapsed() >= Duration::from_millis(4500),
        "grace not honoured"
    );
    assert!(!d.socket.exists());
}

/// An on-demand daemon with a stopped default daemon's files out of the way.
fn on_demand() -> (Daemon, std::process::Child) {
    let mut d = Daemon::start();
    let (status, _) = d.stop();
    assert!(status.success());
    let child = d.spawn_serve(&["--on-demand"]);
    d.wait_ready();
    (d, child)
}

#[test]
fn a_session_created_during_the_grace_keeps_an_on_demand_daemon_alive() {
    let (d, mut child) = on_demand();
    // The daemon starts awaiting its first session, inside its grace.
    std::thread::sleep(Duration::from_millis(2500));
    let created = d.owner(&["session", "create", "--name", "late"]);
    assert_eq!(created.0, 0, "{}", created.1);
    // Past the end of the first grace: the session cancelled it.
    std::thread::sleep(Duration::from_millis(3500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "stopped with a session"
    );
    d.ok(&[
        "session",
        "kill",
        "--session",
        created.1["session"].as_str().unwrap(),
    ]);
    let status = poll("on-demand exit", || child.try_wait().unwrap());
    assert!(status.success());
}

#[test]
fn session_creation_and_grace_expiry_serialize() {
    let (d, mut child) = on_demand();
    // Create sessions back to back across the expiry. Each attempt either wins (and
    // then the daemon must not stop while that session exists) or loses to the
    // stopping commit with unavailable.shutdown (and the daemon stops).
    std::thread::sleep(Duration::from_millis(4950));
    let mut won = None;
    for _ in 0..200 {
        let (code, v) = d.owner(&["session", "create", "--name", "racer"]);
        if code == 0 {
            won = Some(v["session"].as_str().unwrap().to_string());
            break;
        }
        let err = v["error"]["code"].as_str().unwrap_or("").to_string();
        // After the stopping commit the daemon removes its owner token, then its
        // socket: a client that starts then finds one of them gone.
        let gone = err == "unavailable.daemon" || err == "unavailable.owner_token";
        assert!(
            err == "unavailable.shutdown" || gone,
            "a losing create must be refused as shutdown, got {v}"
        );
        if gone {
            break;
        }
    }
    match won {
        Some(session) => {
            std::thread::sleep(Duration::from_millis(5500));
            assert!(
                child.try_wait().unwrap().is_none(),
                "stopped with a session"
            );
            d.ok(&["session", "kill", "--session", &session]);
        }
        None => {
            // Lost: no session may exist, and the daemon stops on its own.
        }
    }
    let status = poll("on-demand exit", || child.try_wait().unwrap());
    assert!(status.success());
}
