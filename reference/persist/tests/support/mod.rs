//! Drives `vxpersist drive` (the real binary) with `vxstub cli` as its executor,
//! one temporary state directory per test. Replies are awaited with a deadline; the
//! child is killed by its PID on drop.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

const REPLY_DEADLINE: Duration = Duration::from_secs(60);

/// The executor: `$VXPERSIST_VXSTUB`, else `vxstub` beside `vxpersist` (built on
/// demand: it belongs to the harness crate).
pub fn vxstub() -> PathBuf {
    if let Some(p) = std::env::var_os("VXPERSIST_VXSTUB") {
        return PathBuf::from(p);
    }
    let dir = Path::new(env!("CARGO_BIN_EXE_vxpersist"))
        .parent()
        .unwrap()
        .to_owned();
    let stub = dir.join("vxstub");
    if !stub.is_file() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "vxcert", "--bin", "vxstub"])
            .status()
            .expect("cargo runs");
        assert!(
            status.success(),
            "cargo build -p vxcert --bin vxstub failed"
        );
    }
    assert!(stub.is_file(), "vxstub is not beside vxpersist");
    stub
}

pub struct Drive {
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<String>,
    pub dir: tempfile::TempDir,
}

impl Drive {
    pub fn start() -> Drive {
        Drive::start_with(&vxstub())
    }

    /// A drive whose executor is `stub` (a missing one shows the fail-stop).
    pub fn start_with(stub: &Path) -> Drive {
        Drive::spawn(stub, &[])
    }

    /// A drive run under the fault injector with `plan` (the real `libvxfault.so`).
    pub fn start_under(plan: &str) -> Drive {
        let lib = vxfault::preload_path().expect("libvxfault.so is built");
        let env = [
            ("LD_PRELOAD".to_string(), lib.to_string_lossy().into_owned()),
            ("VXFAULT_PLAN".to_string(), plan.to_string()),
        ];
        Drive::spawn(&vxstub(), &env)
    }

    fn spawn(stub: &Path, env: &[(String, String)]) -> Drive {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_vxpersist"))
            .args(["drive", "--state"])
            .arg(dir.path())
            .arg("--vxstub")
            .arg(stub)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, replies) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Drive {
            child,
            stdin,
            replies,
            dir,
        }
    }

    pub fn state(&self) -> &Path {
        self.dir.path()
    }

    pub fn send_raw(&mut self, line: &[u8]) -> Value {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        let reply = self
            .replies
            .recv_timeout(REPLY_DEADLINE)
            .expect("the drive replies in time");
        serde_json::from_str(&reply).expect("a reply is JSON")
    }

    pub fn send(&mut self, req: Value) -> Value {
        self.send_raw(req.to_string().as_bytes())
    }

    /// Sends a request that must succeed.
    pub fn ok(&mut self, req: Value) -> Value {
        let reply = self.send(req.clone());
        assert_eq!(reply["ok"], true, "request {req} failed: {reply}");
        reply
    }

    pub fn run_to(&mut self, node: &str) -> Value {
        self.ok(json!({"cmd": "run_to", "node": node}))
    }

    pub fn ask(&mut self, node: &str, question: &str) -> Value {
        self.ok(json!({"cmd": "run_to", "node": node, "ask": question}))
    }

    pub fn answer(&mut self, text: &str) -> Value {
        self.ok(json!({"cmd": "answer", "text": text}))
    }

    pub fn inject(&mut self, op: &str, mode: &str) {
        self.ok(json!({"cmd": "inject", "op": op, "mode": mode}));
    }

    pub fn wipe(&mut self) {
        self.ok(json!({"cmd": "wipe_root"}));
    }

    /// A new pod whose roots start empty: every visit's root is wiped first.
    pub fn new_pod(&mut self, pod: &str) {
        self.ok(json!({"cmd": "switch_pod", "pod": pod}));
        self.ok(json!({"cmd": "wipe_root"}));
    }

    pub fn inspect(&mut self) -> Value {
        self.ok(json!({"cmd": "inspect"}))
    }

    /// Plants a transcript for `id` in the current pod's pi root (HasSession true).
    pub fn plant_pi_session(&self, pod: &str, id: &str) {
        let dir = self.state().join("pods").join(pod).join("pi/sessions/vx");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("20260101_{id}.jsonl")),
            "{\"turn\":1,\"marker\":\"planted\"}\n",
        )
        .unwrap();
    }

    /// sha256 (hex) of the blob stored under `r` for run `run`.
    pub fn stored_blob_sha256(&self, run: &str, r: &str) -> String {
        use sha2::{Digest, Sha256};
        let bytes = std::fs::read(self.state().join("persist/runs").join(run).join(r)).unwrap();
        Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

impl Drop for Drive {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The index in `ops` of the first op matching `op` (and `r` when given).
pub fn op_index(inspect: &Value, op: &str, r: Option<&str>) -> Option<usize> {
    inspect["ops"]
        .as_array()
        .unwrap()
        .iter()
        .position(|o| o["op"] == op && r.is_none_or(|r| o["ref"] == r) && o["ok"] == true)
}

pub fn ops_named<'a>(inspect: &'a Value, op: &str) -> Vec<&'a Value> {
    inspect["ops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["op"] == op)
        .collect()
}

pub fn warnings(reply: &Value) -> Vec<String> {
    reply["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect()
}

/// Nothing a test can see may carry blob bytes, a transcript or a ref key.
pub fn assert_no_leaks(inspect: &Value) {
    for part in ["events", "checkpoint", "executes", "ram"] {
        let text = inspect[part].to_string();
        // Quoted: the pause's `backend_session_state_ref` field is not the key.
        assert!(
            !text.contains("\"_session_state_ref\""),
            "{part} has _session_state_ref"
        );
        assert!(
            !text.contains("\"_session_state_blob\""),
            "{part} has _session_state_blob"
        );
        assert!(
            !text.contains("VXTRANSCRIPT"),
            "{part} has transcript bytes"
        );
        assert!(
            !text.contains("\"_session_state\""),
            "{part} has _session_state"
        );
    }
}

pub fn slot_ref(inspect: &Value, node: &str) -> Option<String> {
    inspect["checkpoint"]["node_sessions"][node]["state_ref"]
        .as_str()
        .map(str::to_owned)
}

pub fn node(id: &str, backend: &str, session: &str) -> Value {
    json!({"id": id, "backend": backend, "session": session})
}

pub fn edge(from: &str, to: &str, map: Value) -> Value {
    json!({"from": from, "to": to, "map": map})
}

pub fn graph(d: &mut Drive, nodes: Vec<Value>, edges: Vec<Value>) {
    d.ok(json!({"cmd": "graph", "nodes": nodes, "edges": edges}));
}
