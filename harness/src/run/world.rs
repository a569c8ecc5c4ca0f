//! The cucumber World: one implementation instance per scenario, in its own temporary
//! XDG directories and socket, and the drivers that observe it (wire, CLI, store
//! probes, process probes, lifecycle control). Steps run on blocking threads so that
//! independent scenarios proceed in parallel.

use super::fixtures::Fixture;
use super::profile::{Placeholders, Profile};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// What every scenario of this run shares.
pub struct RunContext {
    pub profile: Profile,
    pub bin_dir: PathBuf,
}

pub static CONTEXT: OnceLock<RunContext> = OnceLock::new();

fn ctx() -> &'static RunContext {
    CONTEXT
        .get()
        .expect("run context set before the suite starts")
}

/// A reply from the implementation, through either driver.
#[derive(Debug, Clone)]
pub struct Reply {
    pub result: Result<Value, Value>,
    /// CLI exit code (None for wire calls).
    pub exit: Option<i32>,
}

pub struct Inner {
    pub dir: tempfile::TempDir,
    pub ph: Placeholders,
    pub daemon: Option<Child>,
    /// Status and duration of the last stop.
    pub stopped: Option<(ExitStatus, Duration)>,
    pub second: Option<(Option<ExitStatus>, Duration)>,
    pub last: Option<Reply>,
    /// Replies of the last concurrent burst.
    pub burst: Vec<Reply>,
    pub vars: BTreeMap<String, String>,
    /// Every byte the implementation sent back in this scenario (wire and CLI).
    pub transcript: Vec<u8>,
    pub unrelated: Option<Child>,
    pub stderr_files: Vec<PathBuf>,
    /// Environment added by steps, applied after the profile's.
    pub extra_env: Vec<(String, String)>,
    /// PIDs of pane processes created by the suite, killed when the scenario ends
    /// (a crashed daemon can leave them behind by design).
    pub pane_pids: Vec<i32>,
    /// Event subscriptions and attach streams kept open across steps.
    pub streams: super::steps::streams::Streams,
}

#[derive(cucumber::World)]
#[world(init = Self::new)]
pub struct World {
    pub inner: Arc<Mutex<Inner>>,
    pub created: Instant,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("World")
    }
}

impl World {
    fn new() -> World {
        let dir = tempfile::Builder::new()
            .prefix("vxc")
            .tempdir_in("/tmp")
            .expect("harness-error: tempdir");
        let root = dir.path().to_path_buf();
        for sub in ["home", "run", "run/venomx", "config", "state"] {
            let p = root.join(sub);
            std::fs::create_dir_all(&p).expect("harness-error: mkdir");
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))
                .expect("harness-error: chmod");
        }
        let socket = root.join("run/venomx/s.sock");
        let store = root.join("state/venomx/recovery").join(socket_key(&socket));
        let ph = Placeholders {
            socket,
            state_home: root.join("state"),
            config_home: root.join("config"),
            runtime_dir: root.join("run"),
            home: root.join("home"),
            bin_dir: ctx().bin_dir.clone(),
            store,
        };
        World {
            inner: Arc::new(Mutex::new(Inner {
                dir,
                ph,
                daemon: None,
                stopped: None,
                second: None,
                last: None,
                burst: Vec::new(),
                vars: BTreeMap::new(),
                transcript: Vec::new(),
                unrelated: None,
                stderr_files: Vec::new(),
                extra_env: Vec::new(),
                streams: Default::default(),
                pane_pids: Vec::new(),
            })),
            created: Instant::now(),
        }
    }
}

/// Lowercase hex SHA-256 of the absolute socket path with its parent resolved.
pub fn socket_key(socket: &Path) -> String {
    let parent = socket.parent().expect("socket has a parent");
    let resolved = std::fs::canonicalize(parent)
        .unwrap_or_else(|_| parent.to_path_buf())
        .join(socket.file_name().expect("socket file name"));
    Sha256::digest(resolved.to_string_lossy().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Scales a suite deadline by the profile's multiplier.
pub fn scaled(ms: u64) -> Duration {
    Duration::from_millis((ms as f64 * ctx().profile.timeout_multiplier) as u64)
}

fn poll<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        if start.elapsed() > limit {
            panic!("timeout: waiting for {what}");
        }
        std::thread::sleep(Duration::from_millis(15));
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Panes are process-group leaders on their PTY: take their groups too (a
        // crashed daemon leaves them behind by design).
        for pid in &self.pane_pids {
            let pid = nix::unistd::Pid::from_raw(*pid);
            if process_alive(pid.as_raw()) {
                let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        }
        for child in [self.daemon.take(), self.unrelated.take()]
            .into_iter()
            .flatten()
        {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Inner {
    fn env(&self, cmd: &mut Command) {
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.ph.home)
            .env("XDG_RUNTIME_DIR", &self.ph.runtime_dir)
            .env("XDG_CONFIG_HOME", &self.ph.config_home)
            .env("XDG_STATE_HOME", &self.ph.state_home);
        for (k, v) in &ctx().profile.env {
            cmd.env(k, self.ph.expand(v));
        }
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
        cmd.current_dir(self.dir.path());
    }

    fn command(&self, template: &[String]) -> Command {
        let words: Vec<String> = template.iter().map(|w| self.ph.expand(w)).collect();
        let mut cmd = Command::new(&words[0]);
        cmd.args(&words[1..]);
        self.env(&mut cmd);
        cmd
    }

    pub fn write_config(&self, zon: &str) {
        let path = self.ph.config_home.join("venomx/config.zon");
        std::fs::create_dir_all(path.parent().unwrap()).expect("harness-error: mkdir config");
        std::fs::write(&path, zon).expect("harness-error: write config");
    }

    pub fn spawn_daemon(&mut self) -> Child {
        self.spawn_with(&ctx().profile.serve.clone())
    }

    pub fn spawn_with(&mut self, template: &[String]) -> Child {
        let n = self.stderr_files.len();
        let log = self.dir.path().join(format!("daemon-{n}.stderr"));
        let err = std::fs::File::create(&log).expect("harness-error: log file");
        self.stderr_files.push(log);
        let mut cmd = self.command(template);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(err));
        cmd.spawn()
            .unwrap_or_else(|e| panic!("harness-error: cannot start the implementation: {e}"))
    }

    pub fn start(&mut self) {
        self.start_with(&ctx().profile.serve.clone());
    }

    pub fn start_on_demand(&mut self) {
        let t = ctx().profile.serve_on_demand.clone();
        if t.is_empty() {
            panic!("harness-error: the profile has no serve_on_demand command");
        }
        self.start_with(&t);
    }

    pub fn start_with(&mut self, template: &[String]) {
        assert!(
            self.daemon.is_none(),
            "harness-error: daemon already running"
        );
        let mut child = self.spawn_with(template);
        let limit = scaled(ctx().profile.readiness.timeout_ms);
        let socket = self.ph.socket.clone();
        let ready_file = ctx()
            .profile
            .readiness
            .path
            .as_ref()
            .map(|p| PathBuf::from(self.ph.expand(p)));
        let ready = poll("daemon readiness", limit, || {
            if let Ok(Some(status)) = child.try_wait() {
                return Some(Err(status));
            }
            if let Some(f) = &ready_file {
                if !f.exists() {
                    return None;
                }
            }
            UnixStream::connect(&socket).ok().map(|_| Ok(()))
        });
        if let Err(status) = ready {
            let log = self
                .stderr_files
                .last()
                .and_then(|p| std::fs::read(p).ok())
                .unwrap_or_default();
            let tail = String::from_utf8_lossy(&log[log.len().saturating_sub(600)..]).into_owned();
            panic!("the implementation exited before becoming ready: {status}; stderr: {tail}");
        }
        self.daemon = Some(child);
    }

    pub fn owner_token(&self) -> String {
        let mut p = self.ph.socket.clone().into_os_string();
        p.push(".owner");
        std::fs::read_to_string(PathBuf::from(p))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|e| panic!("owner token file unreadable: {e}"))
    }

    /// Substitutes `$name` variables.
    pub fn subst(&self, text: &str) -> String {
        let mut out = text.to_string();
        // Longest names first so `$pane2` is not read as `$pane` + `2`.
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        for name in names {
            out = out.replace(&format!("${name}"), &self.vars[name]);
        }
        out
    }

    /// One request over the wire, after `auth.login` when a token is given.
    pub fn wire(&mut self, token: Option<&str>, verb: &str, params: Map<String, Value>) -> Reply {
        let (reply, bytes) = wire_call(&self.ph.socket, token, verb, params);
        self.transcript.extend_from_slice(&bytes);
        self.note_pid(&reply);
        reply
    }

    /// Remembers the process a reply says was started, to clean it up at the end.
    pub fn note_pid(&mut self, reply: &Reply) {
        if let Ok(v) = &reply.result {
            if let Some(pid) = v.get("pid").and_then(Value::as_i64) {
                self.pane_pids.push(pid as i32);
            }
        }
    }

    /// The CLI with `words`, `--json`, and `VENOMX_TOKEN` (None: unset).
    pub fn cli(&mut self, token: Option<&str>, words: &[String]) -> Reply {
        let mut cmd = self.command(&ctx().profile.cli);
        cmd.args(words).arg("--json");
        if let Some(t) = token {
            cmd.env("VENOMX_TOKEN", t);
        }
        let out = cmd
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("harness-error: cannot run the CLI: {e}"));
        self.transcript.extend_from_slice(&out.stdout);
        self.transcript.extend_from_slice(&out.stderr);
        let code = out.status.code().unwrap_or(-1);
        let text = String::from_utf8_lossy(&out.stdout);
        let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|_| {
            panic!(
                "CLI stdout is not one JSON value (exit {code}): {:?}",
                text.chars().take(300).collect::<String>()
            )
        });
        let result = match v.get("error") {
            Some(e) if v.as_object().is_some_and(|o| o.len() == 1) => Err(e.clone()),
            _ => Ok(v),
        };
        Reply {
            result,
            exit: Some(code),
        }
    }

    pub fn stop(&mut self, signal: nix::sys::signal::Signal) {
        let mut child = self
            .daemon
            .take()
            .expect("harness-error: no daemon is running");
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let start = Instant::now();
        // It may be gone already (a fault plan can crash it): then only reap it.
        let _ = nix::sys::signal::kill(pid, signal);
        let limit = scaled(15_000);
        let status = poll("daemon exit", limit, || child.try_wait().ok().flatten());
        self.stopped = Some((status, start.elapsed()));
    }

    /// Entries of the implementation's store directory (empty when it does not exist).
    pub fn store_entries(&self) -> Vec<(String, std::fs::Metadata)> {
        let mut out = Vec::new();
        let Ok(rd) = std::fs::read_dir(&self.ph.store) else {
            return out;
        };
        for e in rd.flatten() {
            if let Ok(m) = std::fs::symlink_metadata(e.path()) {
                out.push((e.file_name().to_string_lossy().into_owned(), m));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Every regular file under the state and runtime homes (not the config).
    pub fn all_files(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            if let Ok(rd) = std::fs::read_dir(dir) {
                for e in rd.flatten() {
                    let p = e.path();
                    match std::fs::symlink_metadata(&p) {
                        Ok(m) if m.is_dir() => walk(&p, out),
                        Ok(m) if m.is_file() => out.push(p),
                        _ => {}
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.ph.state_home, &mut out);
        walk(&self.ph.runtime_dir, &mut out);
        walk(&self.ph.home, &mut out);
        out
    }

    pub fn plant(&mut self, name: &str, fixture: &Fixture, defect: &str) {
        let store = self.ph.store.clone();
        self.plant_in(&store, name, fixture, defect)
    }

    pub fn plant_in(&mut self, store: &Path, name: &str, fixture: &Fixture, defect: &str) {
        let bytes = fixture.bytes(defect).unwrap_or_else(|e| panic!("{e}"));
        let store = store.to_path_buf();
        let mut p = PathBuf::from("/");
        let rel = store.strip_prefix("/").unwrap();
        for c in rel.components() {
            p.push(c);
            if !p.exists() {
                std::fs::create_dir(&p).expect("harness-error: mkdir store");
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))
                    .expect("harness-error: chmod store");
            }
        }
        let file = store.join(format!("{}.json", fixture.checkpoint));
        let planted = bytes.clone();
        std::fs::write(&file, bytes).expect("harness-error: plant");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
            .expect("harness-error: chmod");
        // Remember the planted text's timestamps, to compare with what is rewritten.
        if let Ok(env) = serde_json::from_slice::<Value>(&planted) {
            if let Some(p) = env["payload"]
                .as_str()
                .and_then(|p| serde_json::from_str::<Value>(p).ok())
            {
                for k in ["saved_at", "expires_at"] {
                    if let Some(t) = p["panes"][0]["text"][k].as_str() {
                        self.vars.insert(format!("{name}_{k}"), t.to_string());
                    }
                }
            }
        }
        self.vars.insert(name.into(), fixture.checkpoint.clone());
        self.vars
            .insert(format!("{name}_file"), file.to_string_lossy().into_owned());
    }

    pub fn fixture(&self, format: u32, generation: u64, offset: i64) -> Fixture {
        let parent = self.ph.socket.parent().unwrap();
        let socket = std::fs::canonicalize(parent)
            .expect("harness-error: socket dir")
            .join(self.ph.socket.file_name().unwrap());
        Fixture {
            checkpoint: super::fixtures::new_checkpoint_id(),
            generation,
            socket: socket.to_string_lossy().into_owned(),
            uid: nix::unistd::geteuid().as_raw(),
            captured_offset_s: offset,
            format,
        }
    }

    pub fn last(&self) -> &Reply {
        self.last
            .as_ref()
            .expect("harness-error: no call was made in this scenario")
    }

    pub fn daemon_alive(&mut self) -> bool {
        match self.daemon.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    pub fn meta_of(&self, var: &str) -> std::fs::Metadata {
        let path = self
            .vars
            .get(&format!("{var}_file"))
            .unwrap_or_else(|| panic!("harness-error: no file for {var}"));
        std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }
}

pub const DEFAULT_FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// The libfaketime the profile names (or Debian's), when it exists.
pub fn faketime_preload() -> Option<String> {
    let p = ctx()
        .profile
        .faketime_preload
        .clone()
        .unwrap_or_else(|| DEFAULT_FAKETIME.into());
    Path::new(&p).is_file().then_some(p)
}

/// The injector library named by the profile, which must exist.
pub fn fault_preload(w: &Inner) -> String {
    let t = ctx()
        .profile
        .fault_preload
        .clone()
        .unwrap_or_else(|| "{bin_dir}/libvxfault.so".into());
    let path = w.ph.expand(&t);
    if !Path::new(&path).is_file() {
        panic!("harness-error: fault injector library {path} not found (build -p vxfault-preload)");
    }
    path
}

/// One request on its own connection, after `auth.login` when a token is given:
/// the reply and the raw bytes received.
pub fn wire_call(
    socket: &Path,
    token: Option<&str>,
    verb: &str,
    params: Map<String, Value>,
) -> (Reply, Vec<u8>) {
    let limit = scaled(10_000);
    let mut seen = Vec::new();
    let stream = UnixStream::connect(socket)
        .unwrap_or_else(|e| panic!("cannot connect to the implementation's socket: {e}"));
    stream.set_read_timeout(Some(limit)).ok();
    let mut w = stream.try_clone().expect("harness-error: clone stream");
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if let Some(t) = token {
        let req = json!({"id": 1, "verb": "auth.login", "params": {"token": t}});
        writeln!(w, "{req}").expect("write auth.login");
        reader
            .read_line(&mut line)
            .expect("timeout: reading auth.login reply");
        seen.extend_from_slice(line.as_bytes());
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("auth.login reply is not JSON: {line:?}"));
        if let Some(e) = v.get("error") {
            let reply = Reply {
                result: Err(e.clone()),
                exit: None,
            };
            return (reply, seen);
        }
    }
    let req = json!({"id": 2, "verb": verb, "params": params});
    writeln!(w, "{req}").expect("write request");
    line.clear();
    let n = reader
        .read_line(&mut line)
        .unwrap_or_else(|e| panic!("timeout: no reply to {verb}: {e}"));
    seen.extend_from_slice(line.as_bytes());
    if n == 0 {
        panic!("the implementation closed the connection without replying to {verb}");
    }
    let v: Value = serde_json::from_str(&line)
        .unwrap_or_else(|_| panic!("reply to {verb} is not JSON: {line:?}"));
    let result = match (v.get("ok"), v.get("error")) {
        (Some(ok), None) => Ok(ok.clone()),
        (None, Some(e)) => Err(e.clone()),
        _ => panic!("reply to {verb} has neither ok nor error: {line}"),
    };
    (Reply { result, exit: None }, seen)
}

/// Alive and not a zombie.
pub fn process_alive(pid: i32) -> bool {
    let path = std::path::PathBuf::from(format!("/proc/{pid}/stat"));
    match super::pids::stat_fields(&path) {
        None => false,
        Some(fields) => !matches!(
            fields.first().map(String::as_str),
            Some("Z") | Some("X") | None
        ),
    }
}

/// Direct children of `pid` (all its threads).
pub fn children_of(pid: u32) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in rd.flatten() {
            let list = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            out.extend(
                list.split_whitespace()
                    .filter_map(|x| x.parse::<i32>().ok()),
            );
        }
    }
    out.retain(|p| process_alive(*p));
    out
}

/// JSON value at a dotted path (`panes.0.argv0`).
pub fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    if path.is_empty() {
        return Some(cur);
    }
    for part in path.split('.') {
        cur = match cur {
            Value::Object(o) => o.get(part)?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

pub fn mode_of(m: &std::fs::Metadata) -> u32 {
    m.mode() & 0o7777
}
