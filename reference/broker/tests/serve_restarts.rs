//! `vxbroker serve` across broker deaths and between brokers: a killed broker's
//! agent is attached by the next one, takeover through the owner file, an unsafe
//! runtime dir refused at start, and the scope wrapper.

mod support;

use serde_json::Value;
use std::process::Command;
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_broker_leaves_the_agent_and_a_new_broker_attaches() {
    let mut b = start();
    let mut w = ws(&b, &format!("/ws/term/claude/{U}?new=1")).await.unwrap();
    let mut seen = Seen::default();
    read_until(&mut w, &mut seen, |s| !s.texts.is_empty()).await;
    input(&mut w, "before\n").await;
    read_until(&mut w, &mut seen, |s| s.has(b"before") >= 2).await;
    let have = seen.output.len();

    // SIGKILL the broker: its master (own session) and agent live on.
    b.child.kill().unwrap();
    b.child.wait().unwrap();
    read_until(&mut w, &mut seen, |s| s.close.is_some()).await;
    let sock = b.root.join("run").join(format!("claude@{U}.sock"));
    assert_eq!(
        vx_broker::open::probe(&sock),
        vx_broker::open::Liveness::Live
    );

    // A new broker on the same dirs (its old socket is stale and replaced).
    let b = start_in(&b.root, "broker.sock", &[]);
    let mut again = ws(&b, &format!("/ws/term/claude/{U}?have={have}"))
        .await
        .unwrap();
    let mut seen2 = Seen::default();
    input(&mut again, "after\n").await;
    read_until(&mut again, &mut seen2, |s| s.has(b"after") >= 2).await;
    assert!(
        seen2.texts.is_empty(),
        "a delta after the restart: {:?}",
        seen2.texts
    );
    history_is(&b, &[format!("launched {U}")], "the new broker attached");
    http(&b, "POST", &format!("/api/sessions/claude:{U}/archive")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn takeover_arbitrates_across_two_brokers_through_the_owner_file() {
    let tmp = tempfile::tempdir().unwrap();
    let prod = start_in(tmp.path(), "prod.sock", &["--takeover"]);
    let staging = start_in(tmp.path(), "staging.sock", &["--takeover"]);
    let q = |fp: &str, tab: &str, extra: &str| {
        format!("/ws/term/claude/{U}?new=1&fp={fp}&tab={tab}{extra}")
    };
    let role = |s: &Seen| s.texts.iter().rev().find(|t| t["t"] == "role").cloned();

    let mut a = ws(&prod, &q(FP_A, TAB, "&label=desk")).await.unwrap();
    let mut sa = Seen::default();
    read_until(&mut a, &mut sa, |s| role(s).is_some()).await;
    assert_eq!(role(&sa).unwrap()["role"], "owner");
    let owner_file = tmp.path().join(format!("run/claude@{U}.owner"));
    let rec: Value = serde_json::from_slice(&std::fs::read(&owner_file).unwrap()).unwrap();
    assert_eq!(
        (rec["fp"].as_str(), rec["label"].as_str()),
        (Some(FP_A), Some("desk"))
    );

    // The other instance sees the same holder and streams read-only.
    let mut b = ws(&staging, &q(FP_B, TAB, "&label=phone")).await.unwrap();
    let mut sb = Seen::default();
    read_until(&mut b, &mut sb, |s| role(s).is_some()).await;
    let r = role(&sb).unwrap();
    assert_eq!(
        (r["role"].as_str(), r["holder"]["label"].as_str()),
        (Some("secondary"), Some("desk"))
    );
    input(&mut b, "zzz\n").await;
    input(&mut a, "ok\n").await;
    read_until(&mut a, &mut sa, |s| s.has(b"ok") >= 2).await;
    assert_eq!(sa.has(b"zzz"), 0, "a secondary on another broker wrote");

    // A second tab of the owner's browser is passive and never writes the file.
    let before = std::fs::read(&owner_file).unwrap();
    let mut a2 = ws(&staging, &q(FP_A, "fedcba9876543210", ""))
        .await
        .unwrap();
    let mut sa2 = Seen::default();
    read_until(&mut a2, &mut sa2, |s| role(s).is_some()).await;
    assert_eq!(role(&sa2).unwrap()["role"], "secondary");
    let after: Value = serde_json::from_slice(&std::fs::read(&owner_file).unwrap()).unwrap();
    let before: Value = serde_json::from_slice(&before).unwrap();
    assert_eq!(
        (after["fp"].clone(), after["tab"].clone()),
        (before["fp"].clone(), before["tab"].clone())
    );

    // Force from the other broker: the owner there is demoted in place within a beat.
    let mut c = ws(&staging, &q(FP_B, TAB, "&label=phone&force=1"))
        .await
        .unwrap();
    let mut sc = Seen::default();
    read_until(&mut c, &mut sc, |s| role(s).is_some()).await;
    assert_eq!(role(&sc).unwrap()["role"], "owner");
    read_until(&mut a, &mut sa, |s| {
        role(s).is_some_and(|r| r["role"] == "secondary")
    })
    .await;
    assert_eq!(role(&sa).unwrap()["holder"]["label"], "phone");
    input(&mut a, "nope\n").await;
    input(&mut c, "mine\n").await;
    read_until(&mut a, &mut sa, |s| s.has(b"mine") >= 2).await;
    assert_eq!(sa.has(b"nope"), 0, "a demoted owner wrote");
    http(&prod, "POST", &format!("/api/sessions/claude:{U}/archive")).await;
    assert!(!owner_file.exists(), "retire clears the lease");
    drop((b, a2));
}

/// A runtime directory open to others, or reached through a symlink, is refused at
/// start: exit 6, `unavailable.runtime_dir`, nothing listening.

#[test]
fn an_unsafe_runtime_dir_is_refused_at_start() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let shared = root.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o770)).unwrap();
    let real = root.join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&real, root.join("link")).unwrap();
    for (dir, reason) in [
        ("shared", "open to group or other"),
        ("link", "symbolic link"),
    ] {
        let sock = root.join(format!("{dir}.sock"));
        let out = Command::new(BIN)
            .arg("serve")
            .arg("--listen")
            .arg(format!("unix:{}", sock.display()))
            .arg("--runtime-dir")
            .arg(root.join(dir))
            .arg("--lock-dir")
            .arg(root.join("locks"))
            .arg("--engines")
            .arg(engines(root))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(6), "{dir}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("unavailable.runtime_dir"), "{dir}: {err}");
        assert!(err.contains(reason), "{dir}: {err}");
        assert!(!sock.exists(), "{dir}: the broker listened");
    }
}

/// `--scope-wrapper`: probed once, then each LAUNCH (never an attach) runs under it
/// with a unit name and only the strict properties, the lock descriptor passing
/// through; a wrapper whose probe fails means a plain spawn, never a refusal.

#[tokio::test(flavor = "multi_thread")]
async fn a_scope_wrapper_wraps_launches_only_and_falls_back_to_a_plain_spawn() {
    use std::os::unix::fs::PermissionsExt;
    // Process-wide, but only brokers started with --scope-wrapper read it.
    std::env::set_var(vx_broker::scope::PROPERTIES_ENV, "TasksMax=64 bad;token");
    for working in [true, false] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let log = root.join("wrap.log");
        let wrap = root.join("wrap");
        let body = if working {
            format!(
                "echo \"$* fd3=$([ -e /proc/$$/fd/3 ] && echo yes || echo no)\" >> '{}'\nwhile [ \"$1\" != -- ]; do shift; done; shift; exec \"$@\"",
                log.display()
            )
        } else {
            format!("echo \"$*\" >> '{}'; exit 1", log.display())
        };
        std::fs::write(&wrap, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&wrap, std::fs::Permissions::from_mode(0o755)).unwrap();
        let wrap_arg = wrap.display().to_string();
        let b = start_in(root, "b.sock", &["--scope-wrapper", &wrap_arg]);
        let mut first = ws(&b, &format!("/ws/term/claude/{U}?new=1")).await.unwrap();
        let mut seen = Seen::default();
        read_until(&mut first, &mut seen, |s| !s.texts.is_empty()).await;
        assert_eq!(seen.texts[0]["t"], "seq", "working={working}");
        input(&mut first, "hi\n").await;
        read_until(&mut first, &mut seen, |s| s.has(b"hi") >= 2).await;
        let mut second = ws(&b, &format!("/ws/term/claude/{U}")).await.unwrap();
        let mut again = Seen::default();
        read_until(&mut second, &mut again, |s| !s.texts.is_empty()).await;
        let lines: Vec<String> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        assert!(
            lines[0].starts_with("--user --scope --collect --quiet -- true"),
            "the probe: {lines:?}"
        );
        if working {
            assert_eq!(
                lines.len(),
                2,
                "one probe, one launch, no attach: {lines:?}"
            );
            let launch = &lines[1];
            assert!(launch.contains("--unit vx-claude-6a73c0de-"), "{launch}");
            assert!(launch.contains("-p TasksMax=64 --"), "{launch}");
            assert!(!launch.contains("bad"), "{launch}");
            assert!(
                launch.ends_with("fd3=yes"),
                "the lock fd passes through: {launch}"
            );
        } else {
            assert_eq!(lines.len(), 1, "a failed probe: plain spawns: {lines:?}");
        }
    }
}
