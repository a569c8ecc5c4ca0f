//! One recovery scenario's state: the implementation instance in its own temporary
//! XDG directories and socket, what it replied, and what the steps remembered. The
//! drivers (`crate::drivers`) do the I/O; this type composes them the way the
//! recovery RFC's pins place things (socket, store, config, owner token).

use super::fixtures::Fixture;
use super::streams::Streams;
use crate::drivers::sandbox::Placeholders;
use crate::drivers::wire::Reply;
use crate::drivers::{cli, lifecycle, process, sandbox, wire};
use crate::profile::{context, Profile};
use crate::verdict::OrHarness;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

/// The profile of this run.
pub fn profile() -> &'static Profile {
    &context().profile
}

pub struct Scenario {
    pub dir: crate::drivers::sandbox::SandboxDir,
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
    /// The last daemon's argv and when it started (a failed row's evidence).
    daemon_argv: Vec<String>,
    daemon_started: Option<std::time::Instant>,
    /// Environment added by steps, applied after the profile's.
    pub extra_env: Vec<(String, String)>,
    /// A fault plan every later start of the daemon runs under, when the profile's
    /// backend is seccomp (under the preload it is in `extra_env`): [`Scenario::inject`].
    pub fault: Option<crate::drivers::fault::Injection>,
    /// The tree-wide counts of the last fault plan (`##N` rules count there), and
    /// the plan: [`Scenario::restart_fault_counts`].
    pub fault_counts: Option<(vxfault::Counters, String)>,
    /// The seccomp supervisors of the daemons started under `fault`.
    pub supervisors: Vec<crate::drivers::fault::Supervised>,
    /// PIDs of pane processes created by the suite, killed when the scenario ends
    /// (a crashed daemon can leave them behind by design).
    pub pane_pids: Vec<i32>,
    /// Event subscriptions and attach streams kept open across steps.
    pub streams: Streams,
    /// What the profile's `skill` command printed (`super::skill`).
    pub skill: Option<String>,
    /// Planted fixtures and the valid twins of the damaged ones (`super::twins`).
    pub(crate) twins: super::twins::Twins,
    /// The last request a principal made, for a refusal's control (`steps::controls`).
    pub(crate) last_request: Option<super::twins::Request>,
    /// The request the last refusal step judged, which its control repeats.
    pub(crate) refused: Option<super::twins::Request>,
    /// The daemon's descendants once it was ready (a `serve` wrapper's daemon, a
    /// helper it keeps): the child-process rows count only processes started later.
    pub daemon_baseline: Vec<crate::drivers::process::Proc>,
    /// PIDs of the processes started under libfaketime, whose leftovers in /dev/shm
    /// go when the scenario ends ([`crate::drivers::clock::remove_leftovers`]).
    faketime_pids: Vec<u32>,
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

impl Scenario {
    /// Kills the panes the daemon started, with their process groups: panes are
    /// process-group leaders on their PTY, and a pane's shell may have children (`sh
    /// -c 'sleep 60'` forks the sleep), which a crashed daemon leaves behind by design.
    pub fn kill_panes(&mut self) {
        for pid in self.pane_pids.drain(..) {
            let pid = nix::unistd::Pid::from_raw(pid);
            if process::alive(pid.as_raw()) {
                let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        }
    }
}

impl Drop for Scenario {
    fn drop(&mut self) {
        self.kill_panes();
        for child in [self.daemon.take(), self.unrelated.take()]
            .into_iter()
            .flatten()
        {
            let mut child = child;
            let _ = child.kill();
            let _ = child.wait();
        }
        for pid in self.faketime_pids.drain(..) {
            if !process::alive(pid as i32) {
                crate::drivers::clock::remove_leftovers(pid);
            }
        }
    }
}

impl Scenario {
    /// A scenario in a fresh sandbox; no implementation runs yet.
    pub fn new() -> Scenario {
        let (dir, mut ph) = sandbox::create(context().bin_dir.clone());
        ph.store = ph
            .state_home
            .join("venomx/recovery")
            .join(socket_key(&ph.socket));
        Scenario {
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
            daemon_argv: Vec::new(),
            daemon_started: None,
            extra_env: Vec::new(),
            fault: None,
            supervisors: Vec::new(),
            streams: Streams::default(),
            pane_pids: Vec::new(),
            skill: None,
            twins: Default::default(),
            last_request: None,
            refused: None,
            daemon_baseline: Vec::new(),
            fault_counts: None,
            faketime_pids: Vec::new(),
        }
    }

    /// `template` in this scenario's sandbox, with the profile's and the steps' env.
    pub(crate) fn command(&self, template: &[String]) -> Command {
        let mut env: Vec<(String, String)> = profile()
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        env.extend(self.extra_env.iter().cloned());
        sandbox::command(&self.ph, template, &env, self.dir.path())
    }

    /// The last daemon as it stands, for a failed row's evidence: its argv, exit or
    /// signal (neither while it runs) and the end of its stderr.
    pub fn daemon_run(&mut self) -> Option<crate::evidence::CommandRun> {
        let log = self.stderr_files.last()?.clone();
        let status = match self.daemon.as_mut() {
            Some(c) => c.try_wait().ok().flatten(),
            None => self.stopped.map(|(s, _)| s),
        };
        Some(crate::evidence::CommandRun::of_process(
            self.daemon_argv.clone(),
            status,
            self.daemon_started?,
            &std::fs::read(&log).unwrap_or_default(),
        ))
    }

    pub fn write_config(&self, zon: &str) {
        let path = self.ph.config_home.join("venomx/config.zon");
        std::fs::create_dir_all(path.parent().unwrap()).or_harness("mkdir config");
        std::fs::write(&path, zon).or_harness("write config");
    }

    pub fn spawn_daemon(&mut self) -> Child {
        self.spawn_with(&profile().serve.clone())
    }

    pub fn spawn_with(&mut self, template: &[String]) -> Child {
        let n = self.stderr_files.len();
        let log = self.dir.path().join(format!("daemon-{n}.stderr"));
        self.stderr_files.push(log.clone());
        let mut cmd = self.command(template);
        let (program, args) = crate::drivers::start_state::shown_argv(&cmd);
        self.daemon_argv = std::iter::once(program)
            .chain(args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        self.daemon_started = Some(std::time::Instant::now());
        let sup = self.fault.as_ref().and_then(|f| f.apply(&mut cmd));
        let child =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lifecycle::spawn(cmd, &log)));
        if let Some(mut sup) = sup {
            sup.spawned();
            self.supervisors.push(sup);
        }
        let child = child.unwrap_or_else(|p| std::panic::resume_unwind(p));
        if self.extra_env.iter().any(|(k, _)| k == "FAKETIME") {
            self.faketime_pids.push(child.id());
        }
        child
    }

    /// Every later start of the daemon runs under the fault plan `plan` (traced into
    /// `trace`), through the profile's `fault_backend`: the preload's environment, or
    /// a seccomp filter with vxcert as its supervisor.
    pub fn inject(&mut self, plan: &str, trace: Option<&Path>) {
        let serve = profile().serve.clone();
        let counts = vxfault::Counters::create(&self.dir.path().join("fault.counts"), plan)
            .or_harness("the fault plan's counter file");
        let injection =
            crate::drivers::fault::Injection::plan(&self.ph, &serve, plan, trace).counted(&counts);
        self.fault_counts = Some((counts, plan.to_string()));
        match injection {
            crate::drivers::fault::Injection::Preload(env) => self.extra_env.extend(env),
            seccomp => self.fault = Some(seccomp),
        }
    }

    /// A `##N` rule of the fault plan counts from now on (the setup's own calls,
    /// an activation's checkpoint among them, are not counted).
    pub fn restart_fault_counts(&mut self) {
        if let Some((counts, plan)) = &self.fault_counts {
            counts
                .restart(plan)
                .or_harness("restarting the fault plan's counts");
        }
    }

    pub fn start(&mut self) {
        self.start_with(&profile().serve.clone());
    }

    pub fn start_on_demand(&mut self) {
        let t = profile().serve_on_demand.clone();
        if t.is_empty() {
            crate::harness_error!("the profile has no serve_on_demand command");
        }
        self.start_with(&t);
    }

    pub fn start_with(&mut self, template: &[String]) {
        if self.daemon.is_some() {
            crate::harness_error!("a daemon is already running");
        }
        let mut child = self.spawn_with(template);
        let readiness = &profile().readiness;
        let ready = lifecycle::Readiness {
            socket: self.ph.socket.clone(),
            file: readiness
                .path
                .as_ref()
                .map(|p| PathBuf::from(self.ph.expand(p))),
            timeout_ms: readiness.timeout_ms,
        };
        if let Err(status) = lifecycle::wait_ready(&mut child, &ready) {
            let tail = self
                .stderr_files
                .last()
                .map(|p| lifecycle::log_tail(p, 600))
                .unwrap_or_default();
            panic!("the implementation exited before becoming ready: {status}; stderr: {tail}");
        }
        self.daemon_baseline = crate::drivers::process::descendants_of(child.id());
        self.daemon = Some(child);
    }

    /// The daemon's live descendants started after it was ready, and of those the
    /// ones whose parent is not among them (one per launch: `sh -c` and what it
    /// forks are one).
    pub fn new_descendants(&self) -> (Vec<crate::drivers::process::Proc>, Vec<i32>) {
        let pid = self.daemon.as_ref().or_harness("no daemon is running").id();
        let new: Vec<_> = crate::drivers::process::descendants_of(pid)
            .into_iter()
            .filter(|p| !self.daemon_baseline.contains(p))
            .collect();
        let roots = new
            .iter()
            .filter(|p| !new.iter().any(|q| q.pid == p.ppid))
            .map(|p| p.pid)
            .collect();
        (new, roots)
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
        // A name no step saved would be compared as its own text, and a row like
        // `is not "$x"` would pass whatever came back: the row is broken, not the
        // implementation.
        static UNSAVED: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let unsaved = UNSAVED.get_or_init(|| regex::Regex::new(r"\$[a-z][a-z0-9_]*").unwrap());
        if let Some(m) = unsaved.find(&out) {
            crate::harness_error!(
                "the row uses {}, which no earlier step of the scenario saved",
                m.as_str()
            );
        }
        out
    }

    /// One request over the wire, after `auth.login` when a token is given.
    pub fn wire(&mut self, token: Option<&str>, verb: &str, params: Map<String, Value>) -> Reply {
        let (reply, bytes) = wire::call(&self.ph.socket, token, verb, params);
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
        let cmd = self.cli_command(token, words);
        let (reply, bytes) = cli::run_json(cmd);
        self.transcript.extend_from_slice(&bytes);
        reply
    }

    /// The CLI with `words` and `--json`, its stdout not yet read as JSON.
    pub fn cli_run(&mut self, token: Option<&str>, words: &[String]) -> cli::Run {
        let cmd = self.cli_command(token, words);
        let (run, bytes) = cli::run(cmd);
        self.transcript.extend_from_slice(&bytes);
        run
    }

    fn cli_command(&self, token: Option<&str>, words: &[String]) -> std::process::Command {
        let mut cmd = self.command(&profile().cli);
        cmd.args(words).arg("--json");
        if let Some(t) = token {
            cmd.env("VENOMX_TOKEN", t);
        }
        cmd
    }

    pub fn stop(&mut self, signal: nix::sys::signal::Signal) {
        let child = self.daemon.take().or_harness("no daemon is running");
        self.stopped = Some(lifecycle::stop(child, signal));
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

    /// Every regular file under the state and runtime homes and `HOME` (not the config).
    pub fn all_files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for dir in [&self.ph.state_home, &self.ph.runtime_dir, &self.ph.home] {
            crate::drivers::probe::walk_files(dir, &mut out);
        }
        out
    }

    pub fn plant(&mut self, name: &str, fixture: &Fixture, defect: &str) {
        let store = self.ph.store.clone();
        self.plant_in(&store, name, fixture, defect)
    }

    pub fn plant_in(&mut self, store: &Path, name: &str, fixture: &Fixture, defect: &str) {
        let bytes = fixture.bytes(defect).or_harness("planting a fixture");
        self.plant_bytes(store, name, &fixture.checkpoint, bytes);
    }

    /// Writes `bytes` as `<checkpoint>.json` in `store` (made private on the way) and
    /// remembers it as `$name`, `$name_file` and the planted text's timestamps.
    /// Before a request that judges a damaged file: its pending valid twins are
    /// planted intact, listed and removed, and judged as the scenario's control
    /// (`twins.rs`).
    pub fn before_request(&mut self, verb: &str, words: &str) {
        let pending = self.twins.due(verb, words, self.daemon.is_some());
        if pending.is_empty() {
            return;
        }
        let store = self.ph.store.clone();
        let mut files = Vec::new();
        for (i, (_, _, twin)) in pending.iter().enumerate() {
            let bytes = twin
                .bytes("intact")
                .unwrap_or_else(|e| crate::harness_error!("the twin fixture: {e}"));
            self.plant_bytes(&store, &format!("twin{i}"), &twin.checkpoint, bytes);
            files.push(store.join(format!("{}.json", twin.checkpoint)));
        }
        let token = self.owner_token();
        let reply = self.wire(Some(&token), "recovery.list", Map::new());
        for f in files {
            let _ = std::fs::remove_file(f);
        }
        super::twins::Twins::judge(&pending, &reply);
    }

    pub fn plant_bytes(&mut self, store: &Path, name: &str, checkpoint: &str, bytes: Vec<u8>) {
        let store = store.to_path_buf();
        let mut p = PathBuf::from("/");
        let rel = store.strip_prefix("/").unwrap();
        for c in rel.components() {
            p.push(c);
            if !p.exists() {
                std::fs::create_dir(&p).or_harness("mkdir store");
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))
                    .or_harness("chmod store");
            }
        }
        let file = store.join(format!("{checkpoint}.json"));
        let planted = bytes.clone();
        std::fs::write(&file, bytes).or_harness("plant");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).or_harness("chmod");
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
        self.vars.insert(name.into(), checkpoint.to_string());
        self.vars
            .insert(format!("{name}_file"), file.to_string_lossy().into_owned());
    }

    pub fn fixture(&self, format: u32, generation: u64, offset: i64) -> Fixture {
        let parent = self.ph.socket.parent().unwrap();
        let socket = std::fs::canonicalize(parent)
            .or_harness("socket dir")
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
            .or_harness("no call was made in this scenario")
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
            .unwrap_or_else(|| crate::harness_error!("no file for {var}"));
        std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario::new()
    }
}

/// The libfaketime of this run, when installed.
pub fn faketime_preload() -> Option<String> {
    context().faketime.clone()
}

impl Scenario {
    /// Copies what the event streams carried into the transcript, for the
    /// secret-exclusion steps (attach's terminal bytes are the panes' own and stay out).
    pub fn collect_stream_bytes(&mut self) {
        for s in self.streams.subs.values() {
            let raw = s.take_raw();
            self.transcript.extend_from_slice(&raw);
        }
    }
}
