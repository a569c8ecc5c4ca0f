//! What the `serve_*` tests share: a `vxbroker serve` on a temporary runtime dir with
//! three stand-in engines, a WebSocket viewer that collects what it sees, and plain
//! HTTP requests to the same socket.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

pub const BIN: &str = env!("CARGO_BIN_EXE_vxbroker");
pub const U: &str = "6a73c0de-1234-4abc-8def-0123456789ab";
pub const WAIT: Duration = Duration::from_secs(10);
pub const FP_A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
pub const FP_B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
pub const TAB: &str = "0123456789abcdef";

pub struct Broker {
    pub child: Child,
    pub _tmp: Option<tempfile::TempDir>,
    pub root: PathBuf,
    pub sock: PathBuf,
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
        // A master that does not answer its socket (stopping already, or wedged) is
        // killed by PID with its process group: one was left running after a CI run.
        kill_masters_under(&self.root);
    }
}

/// SIGKILLs every process whose command line names a path under `root` (the
/// broker's masters name their socket there), with its process group.
fn kill_masters_under(root: &Path) {
    let marker = root.as_os_str().as_encoded_bytes();
    let me = std::process::id();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in procs.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        if pid as u32 == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if cmdline.windows(marker.len()).any(|w| w == marker) {
            let pid = nix::unistd::Pid::from_raw(pid);
            let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

pub fn engines(root: &Path) -> PathBuf {
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
launch = ["/bin/sh", "-c", "read x; printf 'ses_One\\nses_Two\\n' >> {history}/index-pair; exec cat"]
resume = ["/bin/sh", "-c", "echo resumed {id} >> {history}/log; exec cat"]
index = "{history}/index-pair"
"#;
    std::fs::write(&file, text).unwrap();
    file
}

pub fn start() -> Broker {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let mut b = start_in(&root, "broker.sock", &[]);
    b._tmp = Some(tmp);
    b
}

/// A broker on `root`'s runtime and lock dirs, listening on `root/<name>`.
pub fn start_in(root: &Path, name: &str, extra: &[&str]) -> Broker {
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

pub type Ws = WebSocketStream<UnixStream>;

pub async fn ws(b: &Broker, path: &str) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
    let stream = UnixStream::connect(&b.sock).await.unwrap();
    tokio_tungstenite::client_async(format!("ws://localhost{path}"), stream)
        .await
        .map(|(ws, _)| ws)
}

/// Output and control frames seen on one viewer.
#[derive(Default)]
pub struct Seen {
    pub output: Vec<u8>,
    pub texts: Vec<Value>,
    pub close: Option<u16>,
}

impl Seen {
    pub fn has(&self, needle: &[u8]) -> usize {
        self.output
            .windows(needle.len())
            .filter(|w| w == &needle)
            .count()
    }
}

pub async fn read_until(w: &mut Ws, seen: &mut Seen, done: impl Fn(&Seen) -> bool) {
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

pub async fn input(w: &mut Ws, text: &str) {
    let frame = serde_json::json!({"t": "i", "d": text}).to_string();
    w.send(Message::Text(frame.into())).await.unwrap();
}

pub async fn http(b: &Broker, method: &str, path: &str) -> Value {
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

/// Asserts the engines' history log reads `expected`, waiting (bounded) for the
/// engine's own write: a viewer's first frame can come before the engine's shell
/// appends its line.
pub fn history_is(b: &Broker, expected: &[impl AsRef<str>], why: &str) {
    let want: Vec<&str> = expected.iter().map(AsRef::as_ref).collect();
    let deadline = Instant::now() + WAIT;
    loop {
        let lines = history_lines(b);
        if lines == want || Instant::now() > deadline {
            assert_eq!(lines, want, "{why}");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub fn history_lines(b: &Broker) -> Vec<String> {
    std::fs::read_to_string(b.root.join("run/history/log"))
        .map(|t| t.lines().map(String::from).collect())
        .unwrap_or_default()
}
