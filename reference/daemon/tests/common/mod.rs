//! A daemon in a temporary directory, driven through the CLI binary and the raw wire.
//! Every daemon is killed on drop; nothing touches the real home.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_vxref");
/// Generous: tests share two cores with other builds.
pub const TIMEOUT: Duration = Duration::from_secs(30);

pub struct Daemon {
    pub child: Option<Child>,
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
}

/// Polls `f` until it returns Some, or panics after [`TIMEOUT`].
pub fn poll<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < TIMEOUT, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn env_for(cmd: &mut Command, dir: &Path) {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir.join("home"))
        .env("XDG_RUNTIME_DIR", dir.join("run"))
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"));
}

impl Daemon {
    pub fn start() -> Daemon {
        Self::start_with_config(None)
    }

    pub fn start_with_config(config: Option<&str>) -> Daemon {
        let dir = tempfile::tempdir().expect("tempdir");
        if let Some(text) = config {
            let path = dir.path().join("config/venomx/config.zon");
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        let socket = dir.path().join("run/venomx/test.sock");
        let mut d = Daemon {
            child: None,
            dir,
            socket,
        };
        d.child = Some(d.spawn_serve(&[]));
        d.wait_ready();
        d
    }

    /// A daemon with `config` whose process runs under `libvxfault.so` with `plan`
    /// (per-process counters: the plan's `#N` triggers count this daemon's calls);
    /// the injector's trace is `<dir>/trace.jsonl`.
    pub fn start_faulty(config: Option<&str>, plan: &str) -> Daemon {
        let mut d = Daemon::start_with_config(config);
        let mut child = d.child.take().expect("running");
        signal(child.id(), "KILL");
        let _ = child.wait();
        vxfault::check_plan(plan).expect("plan");
        let lib = vxfault::preload_path().expect("libvxfault.so");
        let trace = d.dir.path().join("trace.jsonl");
        d.child = Some(d.spawn_serve_env(
            &[],
            &[
                ("LD_PRELOAD", lib.to_str().unwrap()),
                ("VXFAULT_PLAN", plan),
                ("VXFAULT_TRACE", trace.to_str().unwrap()),
            ],
        ));
        d.wait_ready();
        d
    }

    /// The injector's trace so far (empty when it wrote none).
    pub fn fault_trace(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("trace.jsonl")).unwrap_or_default()
    }

    pub fn spawn_serve(&self, extra: &[&str]) -> Child {
        self.spawn_serve_env(extra, &[])
    }

    /// `serve` with extra environment variables (for example a fault plan).
    pub fn spawn_serve_env(&self, extra: &[&str], vars: &[(&str, &str)]) -> Child {
        let mut cmd = Command::new(BIN);
        env_for(&mut cmd, self.dir.path());
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.arg("serve")
            .arg("--socket")
            .arg(&self.socket)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd.spawn().expect("spawn vxref serve")
    }

    pub fn wait_ready(&self) {
        poll("daemon readiness", || {
            UnixStream::connect(&self.socket).ok()
        });
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("config/venomx/config.zon")
    }

    /// Runs the CLI with `token` as `VENOMX_TOKEN` (None: unset).
    pub fn cli_as(&self, token: Option<&str>, args: &[&str]) -> Output {
        let mut cmd = Command::new(BIN);
        env_for(&mut cmd, self.dir.path());
        if let Some(t) = token {
            cmd.env("VENOMX_TOKEN", t);
        }
        cmd.arg("--socket")
            .arg(&self.socket)
            .args(args)
            .arg("--json");
        cmd.stdin(Stdio::null()).output().expect("run vxref")
    }

    /// As the owner; returns (exit code, stdout JSON).
    pub fn owner(&self, args: &[&str]) -> (i32, Value) {
        parse(self.cli_as(Some("@owner"), args))
    }

    /// As the owner, asserting success.
    pub fn ok(&self, args: &[&str]) -> Value {
        let (code, v) = self.owner(args);
        assert_eq!(code, 0, "{args:?} failed: {v}");
        v
    }

    pub fn anon(&self, args: &[&str]) -> (i32, Value) {
        parse(self.cli_as(None, args))
    }

    pub fn wire(&self) -> Wire {
        let stream = UnixStream::connect(&self.socket).expect("connect");
        stream.set_read_timeout(Some(TIMEOUT)).unwrap();
        Wire {
            reader: BufReader::new(stream.try_clone().unwrap()),
            stream,
        }
    }

    /// Sends SIGTERM and waits; returns the exit status and how long it took.
    pub fn stop(&mut self) -> (ExitStatus, Duration) {
        let mut child = self.child.take().expect("running");
        let start = Instant::now();
        signal(child.id(), "TERM");
        let status = poll("daemon exit", || child.try_wait().unwrap());
        (status, start.elapsed())
    }

    /// A pane's capture, as the owner.
    pub fn capture(&self, pane: &str) -> Value {
        self.ok(&["pane", "capture", "--pane", pane])
    }

    /// Polls the capture of `pane` until a screen or history row satisfies `pred`.
    pub fn wait_text(&self, pane: &str, pred: impl Fn(&str) -> bool) -> Value {
        poll("pane text", || {
            let c = self.capture(pane);
            let rows = c["screen"]
                .as_array()
                .unwrap()
                .iter()
                .chain(c["history"].as_array().unwrap());
            let hit = rows.clone().any(|r| pred(r.as_str().unwrap()));
            hit.then_some(c)
        })
    }

    pub fn wait_exited(&self, pane: &str) -> Value {
        poll("pane exit", || {
            let c = self.capture(pane);
            (c["exited"] == true).then_some(c)
        })
    }

    /// Creates session + window + first pane running `argv`; returns the pane id.
    pub fn pane(&self, argv: &str) -> String {
        self.topology("t", "w").pane(argv).id
    }

    /// A new session named `session` with a window named `window`, for building on.
    pub fn topology(&self, session: &str, window: &str) -> Topology<'_> {
        self.topology_sized(session, window, &[])
    }

    /// As [`Daemon::topology`], with extra `window create` flags (`--cols`, `--rows`).
    pub fn topology_sized(&self, session: &str, window: &str, flags: &[&str]) -> Topology<'_> {
        let s = self.ok(&["session", "create", "--name", session]);
        let session = s["session"].as_str().expect("session id").to_string();
        let mut args = vec!["window", "create", "--session", &session, "--name", window];
        args.extend_from_slice(flags);
        let w = self.ok(&args);
        let window = w["window"].as_str().expect("window id").to_string();
        Topology {
            d: self,
            session,
            window,
        }
    }
}

/// A session and window built through the CLI, and the panes started in it.
pub struct Topology<'a> {
    d: &'a Daemon,
    pub session: String,
    pub window: String,
}

/// A started pane: its id and process id.
pub struct Started {
    pub id: String,
    pub pid: i64,
    pub reply: Value,
}

impl Started {
    fn from(reply: Value) -> Started {
        Started {
            id: reply["pane"].as_str().expect("pane id").to_string(),
            pid: reply["pid"].as_i64().unwrap_or(-1),
            reply,
        }
    }
}

impl Topology<'_> {
    /// `pane.create`: the window's first tiled pane.
    pub fn pane(&self, argv: &str) -> Started {
        self.pane_with(argv, &[])
    }

    /// `pane.create` with extra flags (`--agent-session`, `--grants`, …).
    pub fn pane_with(&self, argv: &str, flags: &[&str]) -> Started {
        let mut args = vec!["pane", "create", "--window", &self.window, "--argv", argv];
        args.extend_from_slice(flags);
        Started::from(self.d.ok(&args))
    }

    /// `pane.split` of `pane` along `axis`, with extra flags (`--ratio`, `--before`).
    pub fn split(&self, pane: &str, axis: &str, argv: &str, flags: &[&str]) -> Started {
        let mut args = vec![
            "pane", "split", "--pane", pane, "--axis", axis, "--argv", argv,
        ];
        args.extend_from_slice(flags);
        Started::from(self.d.ok(&args))
    }

    /// `pane.float` in the window, with extra flags (`--preset`, `--width`, …).
    pub fn float(&self, argv: &str, flags: &[&str]) -> Started {
        let mut args = vec!["pane", "float", "--window", &self.window, "--argv", argv];
        args.extend_from_slice(flags);
        Started::from(self.d.ok(&args))
    }
}

impl Drop for Daemon {
    /// A stop, as its user would ask for one: the daemon ends its panes' process
    /// groups on SIGTERM. A SIGKILL alone left every pane (each in a session of its
    /// own) running after the tests. SIGKILL only after a bounded wait.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub fn signal(pid: u32, name: &str) {
    let sig = match name {
        "TERM" => nix::sys::signal::Signal::SIGTERM,
        "INT" => nix::sys::signal::Signal::SIGINT,
        "KILL" => nix::sys::signal::Signal::SIGKILL,
        other => panic!("unsupported signal {other}"),
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), sig).expect("signal");
}

pub fn parse(out: Output) -> (i32, Value) {
    let text = String::from_utf8(out.stdout).expect("utf-8 stdout");
    let v = serde_json::from_str(text.trim()).unwrap_or(Value::Null);
    let status = out.status.code().unwrap_or(-1);
    if let Some(exit) = check_error(&v) {
        assert_eq!(status, exit, "exit code of {v}");
    }
    (status, v)
}

/// Every error the daemon or CLI emits is one of the typed codes, with its exit code.
/// Returns that exit code for an error reply (`{"error": ...}`), None otherwise.
pub fn check_error(reply: &Value) -> Option<i32> {
    let code = reply.get("error")?.get("code")?.as_str()?;
    let typed = vxref::manifest::parse_error_code(code)
        .unwrap_or_else(|| panic!("{code} is not in the error table"));
    Some(typed.exit_code())
}

pub struct Wire {
    pub stream: UnixStream,
    pub reader: BufReader<UnixStream>,
}

impl Wire {
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// Next reply line, or None on EOF.
    pub fn reply(&mut self) -> Option<Value> {
        let mut line = String::new();
        let n = self.reader.read_line(&mut line).ok()?;
        let reply: Value = (n > 0).then(|| serde_json::from_str(&line).expect("reply is JSON"))?;
        check_error(&reply);
        Some(reply)
    }

    pub fn request(&mut self, frame: Value) -> Value {
        let mut bytes = serde_json::to_vec(&frame).unwrap();
        bytes.push(b'\n');
        self.send_raw(&bytes);
        self.reply().expect("reply")
    }

    pub fn login_owner(&mut self, d: &Daemon) {
        let token = std::fs::read_to_string(format!("{}.owner", d.socket.display())).unwrap();
        let r = self.request(
            serde_json::json!({"id":0,"verb":"auth.login","params":{"token":token.trim()}}),
        );
        assert_eq!(r["ok"]["principal"], "owner");
    }
}

pub fn process_alive(pid: i64) -> bool {
    // A zombie counts as gone: it has exited.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}
