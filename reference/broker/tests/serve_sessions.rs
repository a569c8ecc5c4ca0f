//! `vxbroker serve` over a Unix socket with a real WebSocket client: LAUNCH then
//! ATTACH (never relaunch), delta resume, BUSY as close 4409, bad keys refused before
//! the upgrade, owner/secondary roles with the input gate, force demoting in place,
//! the session list and retire.

mod support;

use serde_json::Value;
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn launch_attach_delta_list_and_retire() {
    let b = start();
    let mut first = ws(&b, &format!("/ws/term/claude/{U}?new=1")).await.unwrap();
    let mut seen = Seen::default();
    read_until(&mut first, &mut seen, |s| !s.texts.is_empty()).await;
    assert_eq!(seen.texts[0]["t"], "seq");
    assert_eq!(seen.texts[0]["n"], 0);
    assert!(seen.texts[0]["gen"].as_u64().is_some());
    input(&mut first, "hi\n").await;
    read_until(&mut first, &mut seen, |s| s.has(b"hi") >= 2).await;
    let have = seen.output.len();
    drop(first);

    // Reconnect with have: the same agent, a delta (no seq), input still flows.
    let mut second = ws(&b, &format!("/ws/term/claude/{U}?have={have}"))
        .await
        .unwrap();
    let mut again = Seen::default();
    input(&mut second, "yo\n").await;
    read_until(&mut second, &mut again, |s| s.has(b"yo") >= 2).await;
    assert!(
        again.texts.is_empty(),
        "a delta sends no seq: {:?}",
        again.texts
    );
    assert!(
        !again.output.starts_with(b"hi"),
        "nothing before have is replayed"
    );
    history_is(&b, &[format!("launched {U}")], "never relaunched");

    let list = http(&b, "GET", "/api/sessions").await;
    let rows = list["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["key"], format!("claude:{U}"));
    assert_eq!(rows[0]["physical_key"], format!("claude@{U}"));
    assert_eq!(
        (rows[0]["alive"].as_bool(), rows[0]["viewers"].as_u64()),
        (Some(true), Some(1))
    );
    assert_eq!(rows[0]["state"], "attached");

    let retired = http(&b, "POST", &format!("/api/sessions/claude:{U}/archive")).await;
    assert_eq!(retired["stopped"], true);
    read_until(&mut second, &mut again, |s| s.close.is_some()).await;
    assert_eq!(again.close, Some(1000));
    assert!(http(&b, "GET", "/api/sessions").await["sessions"]
        .as_array()
        .unwrap()
        .is_empty());

    // Retire waits until the master stops answering, not until it has exited: its
    // lock is released with its exit, and an open while it is held is BUSY, as the
    // contract says. So the next open waits for the lock (seen held in CI).
    lock_freed(&b);
    // The next open of the retired key resumes from history: a new master, once.
    let mut third = ws(&b, &format!("/ws/term/claude/{U}")).await.unwrap();
    let mut seen3 = Seen::default();
    read_until(&mut third, &mut seen3, |s| !s.texts.is_empty()).await;
    history_is(
        &b,
        &[format!("launched {U}"), format!("resumed {U}")],
        "the engine history",
    );
    http(&b, "POST", &format!("/api/sessions/claude:{U}/archive")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn busy_closes_4409_and_bad_requests_are_refused_before_the_upgrade() {
    let b = start();
    let (locks, key) = claude_lock(&b);
    let vx_broker::lock::Acquired::Won(held) = locks.acquire(&key).unwrap() else {
        panic!("held")
    };
    let mut w = ws(&b, &format!("/ws/term/claude/{U}")).await.unwrap();
    let mut seen = Seen::default();
    read_until(&mut w, &mut seen, |s| s.close.is_some()).await;
    assert_eq!(seen.close, Some(4409));
    assert!(history_lines(&b).is_empty(), "BUSY spawns nothing");
    held.release().unwrap();

    for (path, code) in [
        (format!("/ws/term/claude/{U}x"), "invalid_params.key"),
        (format!("/ws/term/codex/{U}"), "not_found.engine"),
        (
            format!("/ws/term/claude/{U}?have=-1"),
            "invalid_params.have",
        ),
        (
            format!("/ws/term/claude/{U}?have=1.5"),
            "invalid_params.have",
        ),
        (
            format!("/ws/term/claude/{U}?fp=xyz&tab={TAB}"),
            "invalid_params.fp",
        ),
        (
            format!("/ws/term/claude/{U}?fp={FP_A}"),
            "invalid_params.tab",
        ),
        (
            format!("/ws/term/claude/{U}?force=2"),
            "invalid_params.force",
        ),
        (
            format!("/ws/term/claude/{U}?have=1&have=2"),
            "invalid_params.have",
        ),
    ] {
        match ws(&b, &path).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
                let body: Value = serde_json::from_slice(resp.body().as_deref().unwrap()).unwrap();
                assert_eq!(body["error"]["code"], code, "{path}");
            }
            other => panic!(
                "{path}: expected an HTTP refusal, got {:?}",
                other.map(|_| ())
            ),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn secondaries_are_gated_and_force_demotes_in_place() {
    let b = start();
    let q = |fp: &str, extra: &str| format!("/ws/term/claude/{U}?new=1&fp={fp}&tab={TAB}{extra}");
    let mut a = ws(&b, &q(FP_A, "")).await.unwrap();
    let mut sa = Seen::default();
    read_until(&mut a, &mut sa, |s| {
        s.texts.iter().any(|t| t["t"] == "role")
    })
    .await;
    assert!(sa
        .texts
        .contains(&serde_json::json!({"t": "role", "role": "owner"})));

    let mut bb = ws(&b, &q(FP_B, "")).await.unwrap();
    let mut sb = Seen::default();
    read_until(&mut bb, &mut sb, |s| {
        s.texts.iter().any(|t| t["t"] == "role")
    })
    .await;
    assert!(sb
        .texts
        .contains(&serde_json::json!({"t": "role", "role": "secondary"})));
    input(&mut bb, "zzz\n").await;
    input(&mut a, "ok\n").await;
    read_until(&mut a, &mut sa, |s| s.has(b"ok") >= 2).await;
    // The secondary still sees output, but its input never reached the agent.
    read_until(&mut bb, &mut sb, |s| s.has(b"ok") >= 2).await;
    assert_eq!(sa.has(b"zzz"), 0, "secondary input reached the agent");

    // Force: B takes over; A is demoted in place and keeps streaming read-only.
    let mut c = ws(&b, &q(FP_B, "&force=1")).await.unwrap();
    let mut sc = Seen::default();
    read_until(&mut c, &mut sc, |s| {
        s.texts.iter().any(|t| t["t"] == "role")
    })
    .await;
    assert!(sc
        .texts
        .contains(&serde_json::json!({"t": "role", "role": "owner"})));
    read_until(&mut a, &mut sa, |s| {
        s.texts.iter().any(|t| t["role"] == "secondary")
    })
    .await;
    input(&mut a, "nope\n").await;
    input(&mut c, "mine\n").await;
    read_until(&mut a, &mut sa, |s| s.has(b"mine") >= 2).await;
    assert_eq!(
        sa.has(b"nope"),
        0,
        "a demoted owner's input reached the agent"
    );
    http(&b, "POST", &format!("/api/sessions/claude:{U}/archive")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_client_resumes_by_delta_and_never_forces_on_its_own() {
    use vx_broker::client::{Client, Event, Options, Transport};
    let b = start();
    let opts = Options {
        transport: Transport::Unix(b.sock.clone()),
        engine: "claude".into(),
        id: U.into(),
        new: true,
        cwd: None,
        claim: Some((FP_A.into(), TAB.into())),
    };
    let mut c = Client::new(opts);
    c.connect().await.unwrap();
    assert!(c.last_path().contains("new=1") && !c.last_path().contains("force"));
    let (mut gen, mut owner) = (None, false);
    while gen.is_none() || !owner {
        match tokio::time::timeout(WAIT, c.next()).await.unwrap() {
            Event::Seq { n: 0, gen: g } => gen = g,
            Event::Role { owner: true, .. } => owner = true,
            other => panic!("unexpected {other:?}"),
        }
    }
    // Twenty transient drops: each reconnect sends have and gen, no new, no force,
    // gets a delta (no seq, nothing replayed) and reaches the same agent.
    for i in 0..20 {
        let word = format!("w{i}x");
        c.input(&format!("{word}\n")).await.unwrap();
        let mut out = Vec::new();
        while out
            .windows(word.len())
            .filter(|w| *w == word.as_bytes())
            .count()
            < 2
        {
            match tokio::time::timeout(WAIT, c.next()).await.unwrap() {
                Event::Output(b) => out.extend_from_slice(&b),
                Event::Seq { .. } => panic!("reconnect {i} was not a delta"),
                _ => {}
            }
        }
        assert!(
            !out.starts_with(b"w0x") || i == 0,
            "replayed old output on reconnect {i}"
        );
        c.drop_connection();
        c.connect().await.unwrap();
        let path = c.last_path().to_string();
        assert!(path.contains(&format!("have={}", c.have())), "{path}");
        assert!(path.contains(&format!("gen={}", gen.unwrap())), "{path}");
        assert!(!path.contains("new=1") && !path.contains("force"), "{path}");
    }
    history_is(&b, &[format!("launched {U}")], "never relaunched");
    c.take_over().await.unwrap();
    assert!(c.last_path().contains("force=1"));
    c.connect().await.unwrap();
    assert!(
        !c.last_path().contains("force"),
        "only the deliberate take-over forces"
    );
    http(&b, "POST", &format!("/api/sessions/claude:{U}/archive")).await;
}

/// Waits (bounded) until the lock of `claude:{U}` can be taken, and lets it go.
fn lock_freed(b: &Broker) {
    let (locks, key) = claude_lock(b);
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        match locks.acquire(&key).unwrap() {
            vx_broker::lock::Acquired::Won(lock) => return lock.release().unwrap(),
            vx_broker::lock::Acquired::Held if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            vx_broker::lock::Acquired::Held => {
                panic!("the retired master still holds its lock after {WAIT:?}")
            }
        }
    }
}

/// The broker's lock directory and the key `claude:{U}`.
fn claude_lock(b: &Broker) -> (vx_broker::lock::LockDir, vx_broker::key::SessionKey) {
    let uid = u64::from(nix::unistd::geteuid().as_raw());
    let locks = vx_broker::lock::LockDir::open(&b.root.join("locks"), uid).unwrap();
    let key = vx_broker::key::parse_key(
        &format!("claude:{U}"),
        &vx_broker::key::EngineTable::seed(),
        false,
    )
    .unwrap();
    (locks, key)
}
