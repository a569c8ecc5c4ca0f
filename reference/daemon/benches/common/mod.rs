//! What the daemon benches share: a `vxref serve` in a temporary XDG tree (stopped
//! with SIGTERM when dropped) and an authenticated JSON-lines connection to it.
#![allow(dead_code)] // each bench uses its own subset

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const VXREF: &str = env!("CARGO_BIN_EXE_vxref");

/// The vxref binary a bench measures: `VXBENCH_VXREF` (another build, for A/B runs
/// of two commits with the same client), else this build's.
pub fn vxref() -> String {
    std::env::var("VXBENCH_VXREF").unwrap_or_else(|_| VXREF.to_string())
}

/// The daemon's CPU time so far: the sum over its threads of the scheduler's
/// on-CPU nanoseconds (`/proc/<pid>/task/*/schedstat`), far finer than clock ticks.
pub fn cpu(pid: u32) -> Duration {
    let mut ns = 0u64;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            ns += stat
                .split_whitespace()
                .next()
                .and_then(|t| t.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Duration::from_nanos(ns)
}

pub struct Served {
    pub child: Child,
    pub dir: PathBuf,
    pub socket: PathBuf,
}

impl Served {
    /// Starts `bin` on `<dir>/run/vx.sock` with `config` (ZON) as its config file, and
    /// waits until it accepts connections.
    pub fn start(bin: &str, dir: &Path, config: Option<&str>) -> Served {
        if let Some(text) = config {
            let cfg = dir.join("config/venomx/config.zon");
            std::fs::create_dir_all(cfg.parent().unwrap()).unwrap();
            std::fs::write(&cfg, text).unwrap();
        }
        let socket = dir.join("run/vx.sock");
        let child = Command::new(bin)
            .args(["serve", "--socket"])
            .arg(&socket)
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_STATE_HOME", dir.join("state"))
            .stdout(Stdio::null())
            .spawn()
            .expect("start vxref");
        let start = Instant::now();
        while UnixStream::connect(&socket).is_err() {
            assert!(start.elapsed() < Duration::from_secs(30), "vxref not ready");
            std::thread::sleep(Duration::from_millis(10));
        }
        Served {
            child,
            dir: dir.to_path_buf(),
            socket,
        }
    }

    pub fn owner_token(&self) -> String {
        std::fs::read_to_string(format!("{}.owner", self.socket.display()))
            .unwrap()
            .trim()
            .to_string()
    }

    /// A connection logged in as the owner.
    pub fn connect(&self) -> Conn {
        let out = UnixStream::connect(&self.socket).expect("connect");
        let mut c = Conn {
            lines: BufReader::new(out.try_clone().unwrap()),
            out,
            next_id: 1,
        };
        c.call("auth.login", json!({"token": self.owner_token()}));
        c
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.child.wait();
    }
}

pub struct Conn {
    out: UnixStream,
    lines: BufReader<UnixStream>,
    next_id: u64,
}

impl Conn {
    /// One request; panics unless the reply is `ok`, which it returns.
    pub fn call(&mut self, verb: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"id": id, "verb": verb, "params": params}).to_string());
        let v: Value = serde_json::from_str(&self.line()).unwrap();
        v.get("ok")
            .cloned()
            .unwrap_or_else(|| panic!("{verb} failed: {v}"))
    }

    pub fn send(&mut self, frame: &str) {
        let mut line = Vec::with_capacity(frame.len() + 1);
        line.extend_from_slice(frame.as_bytes());
        line.push(b'\n');
        self.out.write_all(&line).unwrap();
    }

    pub fn line(&mut self) -> String {
        let mut l = String::new();
        assert!(
            self.lines.read_line(&mut l).unwrap() > 0,
            "connection closed"
        );
        l
    }
}
