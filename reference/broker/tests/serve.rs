//! `vxbroker serve` over a Unix socket with a real WebSocket client: LAUNCH then
//! ATTACH (never relaunch), delta resume, BUSY as close 4409, bad keys refused before
//! the upgrade, owner/secondary roles with the input gate, force demoting in place,
//! the session list and retire.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

const BIN: &str = env!("CARGO_BIN_EXE_vxbroker");
const U: &str = "6a73c0de-1234-4abc-8def-0123456789ab";
const WAIT: Duration = Duration::from_secs(10);
const FP_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const FP_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const TAB: &str = "0123456789abcdef";

struct Broker {
    child: Child,
    _tmp: Option<tempfile::TempDir>,
    root: PathBuf,
    sock: PathBuf,
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Masters live in their own sessions and outlive the broker by design: stop
        // any a failed test left behind through their sockets.
        if let Ok(entries) = std::fs::read_dir(self.root.join("run")) {
            for e in entries.flatten() {
                vx_broker::master::request_stop(&e.path());
            }
        }
    }
}

fn engines(root: &Path) -> PathBuf {
    let file = root.join("E.toml");
    let text = r#"
[engine.claude]
pin = "flag"
id = "uuid"
launch = ["/bin/sh", "-c", "echo launched {id} >> {history}/log; exec cat"]
resume = ["/bin/sh", "-c", "echo resumed {id} >> {history}/log; exec cat"]

[engine.opencode]
pin = "none"
id = "ses"
launch = ["/bin/sh", "-c", "echo launched-oc >> {history}/log; read x; echo ses_Real1 >> {history}/index; exec cat"]
resume = ["/bin/sh", "-c", "echo resumed {id} >> {history}/log; exec cat"]
index = "{history}/index"

[engine.ocpair]
pin = "none"
id = "ses"
launch = ["/bin/sh", "-c", "read x; printf 'ses_One\\nses_Two\\n' >> {history}/index; exec cat"]
resume = ["/bin/sh", "-c", "echo resumed {id} >> {history}/log; exec cat"]
index = "{history}/index"
"#;
    std::fs::write(&file, text).unwrap();
    file
}

fn start() -> Broker {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let mut b = start_in(&root, "broker.sock", &[]);
    b._tmp = Some(tmp);
    b
}

/// A broker on `root`'s runtime and lock dirs, listening on `root/<name>`.
fn start_in(root: &Path, name: &str, extra: &[&str]) -> Broker {
    let sock = root.join(name);
    let mut cmd = Command::new(BIN);
    cmd.arg("serve")
        .arg("--listen")
        .arg(format!("unix:{}", sock.display()));
    cmd.arg("--runtime-dir").arg(root.join("run"));
    cmd.arg("--lock-dir").arg(root.join("locks"));
    cmd.arg("--engines").arg(engines(root));
    cmd.args(extra);
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let child = cmd.spawn().unwrap();
    let deadline = Instant::now() + WAIT;
    while std::os::unix::net::UnixStream::connect(&sock).is_err() {
        assert!(Instant::now() < deadline, "broker never accepted");
        std::thread::sleep(Duration::from_millis(10));
    }
    Broker {
        child,
        _tmp: None,
        root: root.to_path_buf(),
        sock,
    }
}

type Ws = WebSocketStream<UnixStream>;

async fn ws(b: &Broker, path: &str) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
    let stream = UnixStream::connect(&b.sock).await.unwrap();
    tokio_tungstenite::client_async(format!("ws://localhost{path}"), stream)
        .await
        .map(|(ws, _)| ws)
}

/// Output and control frames seen on one viewer.
#[derive(Default)]
struct Seen {
    output: Vec<u8>,
    texts: Vec<Value>,
    close: Option<u16>,
}

impl Seen {
    fn has(&self, needle: &[u8]) -> usize {
        self.output
            .windows(needle.len())
            .filter(|w| w == &needle)
            .count()
    }
}

async fn read_until(w: &mut Ws, seen: &mut Seen, done: impl Fn(&Seen) -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !done(seen) {
        let msg = tokio::time::timeout_at(deadline, w.next())
            .await
            .expect("timed out");
        match msg {
            Some(Ok(Message::Binary(b))) => seen.output.extend_from_slice(&b),
            Some(Ok(Message::Text(t))) => {
                seen.texts.push(serde_json::from_str(t.as_str()).unwrap())
            }
            Some(Ok(Message::Close(f))) => {
                seen.close = Some(f.map_or(1005, |f| u16::from(f.code)));
                return;
            }
            Some(Ok(_)) => {}
            Some(Err(_)) | None => return,
        }
    }
}

async fn input(w: &mut Ws, text: &str) {
    let frame = serde_json::json!({"t": "i", "d": text}).to_string();
    w.send(Message::Text(frame.into())).await.unwrap();
}

async fn http(b: &Broker, method: &str, path: &str) -> Value {
    let mut s = UnixStream::connect(&b.sock).await.unwrap();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).await.unwrap();
    let body = resp.split_once("\r\n\r\n").unwrap().1;
    serde_json::from_str(body).unwrap()
}

fn history_lines(b: &Broker) -> Vec<String> {
    std::fs::read_to_string(b.root.join("run/history/log"))
        .map(|t| t.lines().map(String::from).collect())
        .unwrap_or_default()
}

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
    assert_eq!(
        history_lines(&b),
        [format!("launched {U}")],
        "never relaunched"
    );

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

    // The next open of the retired key resumes from history: a new master, once.
    let mut third = ws(&b, &format!("/ws/term/claude/{U}")).await.unwrap();
    let mut seen3 = Seen::default();
    read_until(&mut third, &mut seen3, |s| !s.texts.is_empty()).await;
    assert_eq!(
        history_lines(&b),
        [format!("launched {U}"), format!("resumed {U}")]
    );
    http(&b, "POST", &format!("/api/sessions/claude:{U}/archive")).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn busy_closes_4409_and_bad_requests_are_refused_before_the_upgrade() {
    let b = start();
    let uid = u64::from(nix::unistd::geteuid().as_raw());
    let locks = vx_broker::lock::LockDir::open(&b.root.join("locks"), uid).unwrap();
    let key = vx_broker::key::parse_key(
        &format!("claude:{U}"),
        &vx_broker::key::EngineTable::seed(),
        false,
    )
    .unwrap();
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
    assert_eq!(
        history_lines(&b),
        [format!("launched {U}")],
        "never relaunched"
    );
    c.take_over().await.unwrap();
    assert!(c.last_path().contains("force=1"));
    c.connect().await.unwrap();
    assert!(
        !c.last_path().contains("force"),
        "only the deliberate take-over forces"
    );
    http(&b, "POST", &format!("/api/sessions/claude:{U}/archive")).await;
}

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
    assert_eq!(
        history_lines(&b),
        [format!("launched {U}")],
        "one agent for 16 opens"
    );
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
    assert_eq!(
        history_lines(&b),
        ["launched-oc"],
        "never relaunched or resumed"
    );
    let retired = http(&b, "POST", "/api/sessions/opencode:ses_Real1/archive").await;
    assert_eq!(retired["stopped"], true);
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
    let index = b.root.join("run/history/index");
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
    http(&b, "POST", &format!("/api/sessions/ocpair:new-{U}/archive")).await;
}

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
    assert_eq!(
        history_lines(&b),
        [format!("launched {U}")],
        "the new broker attached"
    );
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
