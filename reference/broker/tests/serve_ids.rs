//! `vxbroker serve` and engine ids: sixteen concurrent opens of one key run one
//! agent, and a placeholder key learns its engine's real id once, from the index.

mod support;

use serde_json::Value;
use std::time::{Duration, Instant};
use support::*;

#[tokio::test(flavor = "multi_thread")]
async fn sixteen_concurrent_opens_of_one_key_run_one_agent() {
    let b = start();
    let path = format!("/ws/term/claude/{U}?new=1");
    let opens = (0..16).map(|_| ws(&b, &path));
    let mut sockets = Vec::new();
    for w in futures_util::future::join_all(opens).await {
        sockets.push(w.unwrap());
    }
    // Every open attached or launched (BUSY would be close 4409); each saw a seq.
    for w in &mut sockets {
        let mut seen = Seen::default();
        read_until(w, &mut seen, |s| !s.texts.is_empty() || s.close.is_some()).await;
        assert_eq!(seen.close, None, "an open was refused");
        assert_eq!(seen.texts[0]["t"], "seq");
    }
    history_is(&b, &[format!("launched {U}")], "one agent for 16 opens");
    let list = http(&b, "GET", "/api/sessions").await;
    assert_eq!(list["sessions"][0]["viewers"], 16);
    http(&b, "POST", &format!("/api/sessions/claude:{U}/archive")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_placeholder_gets_its_real_id_once_and_is_found_by_it() {
    let b = start();
    let placeholder = format!("new-{U}");
    match ws(&b, &format!("/ws/term/opencode/{placeholder}")).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 400),
        _ => panic!("a placeholder without new=1 must be refused"),
    }
    let mut w = ws(&b, &format!("/ws/term/opencode/{placeholder}?new=1"))
        .await
        .unwrap();
    let mut seen = Seen::default();
    read_until(&mut w, &mut seen, |s| !s.texts.is_empty()).await;
    input(&mut w, "go\n").await;
    read_until(&mut w, &mut seen, |s| {
        s.texts.iter().any(|t| t["t"] == "id")
    })
    .await;
    let id = seen.texts.iter().find(|t| t["t"] == "id").unwrap();
    assert_eq!(id["sid"], "opencode:ses_Real1");
    let sidecar: Value =
        serde_json::from_slice(&std::fs::read(b.root.join("run/aliases.json")).unwrap()).unwrap();
    assert_eq!(
        sidecar["aliases"][format!("opencode@{placeholder}")],
        "opencode@ses_Real1"
    );

    let rows = http(&b, "GET", "/api/sessions").await;
    let rows = rows["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "one row per real session");
    assert_eq!(rows[0]["key"], "opencode:ses_Real1");
    assert_eq!(rows[0]["alias"], format!("opencode:{placeholder}"));
    assert_eq!(rows[0]["physical_key"], format!("opencode@{placeholder}"));

    // By its real id the session resolves to the placeholder's master: same agent.
    let mut real = ws(&b, "/ws/term/opencode/ses_Real1").await.unwrap();
    let mut seen_real = Seen::default();
    input(&mut real, "again\n").await;
    read_until(&mut real, &mut seen_real, |s| s.has(b"again") >= 2).await;
    history_is(&b, &["launched-oc"], "never relaunched or resumed");
    let retired = http(&b, "POST", "/api/sessions/opencode:ses_Real1/archive").await;
    assert_eq!(retired["stopped"], true);

    // Retired, its history stays: the engine's index still lists it, once, under its real id.
    let rows = http(&b, "GET", "/api/sessions").await;
    let rows = rows["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["key"], "opencode:ses_Real1");
    assert_eq!(rows[0]["state"], "stored");
    assert_eq!(rows[0]["alias"], format!("opencode:{placeholder}"));
    assert_eq!(rows[0]["physical_key"], format!("opencode@{placeholder}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn two_new_ids_keep_the_placeholder() {
    let b = start();
    let mut w = ws(&b, &format!("/ws/term/ocpair/new-{U}?new=1"))
        .await
        .unwrap();
    let mut seen = Seen::default();
    read_until(&mut w, &mut seen, |s| !s.texts.is_empty()).await;
    input(&mut w, "go\n").await;
    // `read x` takes the line: only the PTY's echo comes back.
    read_until(&mut w, &mut seen, |s| s.has(b"go") >= 1).await;
    let index = b.root.join("run/history/index-pair");
    let deadline = Instant::now() + WAIT;
    while std::fs::read_to_string(&index).map_or(0, |t| t.lines().count()) < 2 {
        assert!(Instant::now() < deadline, "the agent never wrote its ids");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Several polls later there is still no alias and no id frame.
    tokio::time::sleep(Duration::from_millis(500)).await;
    input(&mut w, "still\n").await;
    read_until(&mut w, &mut seen, |s| s.has(b"still") >= 2).await;
    assert!(
        seen.texts.iter().all(|t| t["t"] != "id"),
        "{:?}",
        seen.texts
    );
    assert!(!b.root.join("run/aliases.json").exists());
    // The list scans the index: both minted ids are stored rows beside the live placeholder.
    let rows = http(&b, "GET", "/api/sessions").await;
    let states: Vec<(String, String)> = rows["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().into(),
                r["state"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(states.len(), 3, "{states:?}");
    assert!(
        states.iter().all(|(k, _)| k.starts_with("ocpair:")),
        "{states:?}"
    );
    assert_eq!(
        states.iter().filter(|(_, s)| s == "stored").count(),
        2,
        "{states:?}"
    );
    assert!(states
        .iter()
        .any(|(k, s)| k == &format!("ocpair:new-{U}") && s != "stored"));
    http(&b, "POST", &format!("/api/sessions/ocpair:new-{U}/archive")).await;
}
