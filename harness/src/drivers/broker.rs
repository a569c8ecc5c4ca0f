//! A broker under test (the single-writer contract's `[single_writer].broker`): its
//! sandbox (temporary XDG dirs, a shared lock directory, one runtime directory and
//! socket per instance), the engines file the suite writes (every engine runs
//! `vxstub agent`), and the probes that look from outside: live `vxstub agent`
//! processes per session by PID (from `/proc`), the per-key lock from the suite's
//! own process (a non-blocking `flock`), the agents' history and violation files.
//!
//! Cleanup is by PID: the brokers this driver started, then every process whose
//! command line names this sandbox (masters and agents outlive brokers by design).

use super::broker_ws::Endpoint;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::sandbox::{self, Placeholders};
use crate::verdict::OrHarness;

/// One started broker.
/// The name prefix of the files in the sandbox's root holding the brokers' stderr
/// (the suite's own files, left out of what the implementation changed).
pub const STDERR_PREFIX: &str = ".vxcert-broker-";

pub struct Instance {
    pub child: Child,
    /// Where it listens: its socket, or under `listen = "tcp"` a loopback port.
    pub endpoint: Endpoint,
    pub runtime_dir: PathBuf,
    /// Its argv as started, where its stderr goes, and when it started (evidence).
    argv: Vec<String>,
    stderr: PathBuf,
    started: Instant,
}

/// One live `vxstub agent` of this sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    pub pid: i32,
    /// `engine@id`, or `engine@` for an agent that has not minted its id yet.
    pub physical: String,
}

/// Whether a lock is held, from a non-blocking `flock` of the suite's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockState {
    Held,
    Free,
}

/// The sandbox of one scenario's brokers.
pub struct BrokerSandbox {
    _dir: crate::drivers::sandbox::SandboxDir,
    pub root: PathBuf,
    pub ph: Placeholders,
    pub lock_dir: PathBuf,
    pub history: PathBuf,
    pub engines: PathBuf,
    template: Vec<String>,
    env: Vec<(String, String)>,
    /// Environment for the next start only, then cleared.
    pub next_env: Vec<(String, String)>,
    /// A fault plan for the next start only, through the profile's `fault_backend`.
    pub next_fault: Option<super::fault::Injection>,
    /// The seccomp supervisors of brokers started under a fault plan.
    supervisors: Vec<super::fault::Supervised>,
    instances: Vec<Instance>,
    /// The profile's `teardown` hook, run when the sandbox goes.
    teardown: Vec<String>,
    /// `listen = "tcp"`: brokers listen on a loopback port, one per instance number
    /// (a restart reuses it), given as `{listen}` (`127.0.0.1:PORT`) and `{port}`.
    pub listen_tcp: bool,
    ports: std::collections::BTreeMap<usize, super::loopback_port::ReservedPort>,
}

/// The profile's setup hooks (`[single_writer] setup`, `teardown`): commands run in
/// the sandbox with its directories, the stand-in agent and the fixture's facts as
/// placeholders, so an implementation writes its own engines or state format.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    pub setup: Vec<String>,
    pub teardown: Vec<String>,
    /// The name the engines file gives the engine whose program does not exist
    /// (the profile's `missing_program_engine`; `ghost` when empty).
    pub missing_engine: String,
}

/// The stand-in agents' history files end in this (`<physical>.jsonl`).
const HISTORY_SUFFIX: &str = ".jsonl";
/// The self-minting engine's id index, in the history directory.
const INDEX_NAME: &str = "index";

/// The engines file in `vxbroker`'s format: every engine runs `stub agent`.
/// `claude` pins uuids, `opencode` mints `ses_…` ids, `missing_engine` (`ghost`)
/// names a program that does not exist (a launch that fails before the master serves).
fn engines_text(stub: &Path, history: &Path, missing: &Path, missing_engine: &str) -> String {
    let (s, h, m) = (stub.display(), history.display(), missing.display());
    format!(
        r#"[engine.claude]
pin = "flag"
id = "uuid"
launch = ["{s}", "agent", "--engine", "claude", "--id", "{{id}}", "--history", "{h}"]
resume = ["{s}", "agent", "--engine", "claude", "--id", "{{id}}", "--history", "{h}", "--resume"]

[engine.opencode]
pin = "none"
id = "ses"
launch = ["{s}", "agent", "--engine", "opencode", "--history", "{h}", "--index", "{h}/{INDEX_NAME}"]
resume = ["{s}", "agent", "--engine", "opencode", "--id", "{{id}}", "--history", "{h}", "--resume"]
index = "{h}/{INDEX_NAME}"

[engine.{missing_engine}]
pin = "flag"
id = "uuid"
launch = ["{m}", "--id", "{{id}}"]
resume = ["{m}", "--id", "{{id}}"]
"#
    )
}

fn mkdir_private(p: &Path) {
    std::fs::create_dir_all(p).or_harness("mkdir in the broker sandbox");
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700))
        .or_harness("chmod in the broker sandbox");
}

impl BrokerSandbox {
    /// A sandbox for `template` (the profile's `broker`), with `env` for every broker.
    pub fn new(
        bin_dir: PathBuf,
        template: Vec<String>,
        env: Vec<(String, String)>,
        hooks: Hooks,
    ) -> Self {
        if template.is_empty() {
            crate::harness_error!("the profile's [single_writer] table has no `broker` command");
        }
        let (dir, ph) = sandbox::create(bin_dir.clone());
        let root = dir.path().to_path_buf();
        let lock_dir = root.join("locks");
        let history = root.join("history");
        mkdir_private(&lock_dir);
        mkdir_private(&history);
        let engines = root.join("engines.toml");
        let missing_engine = match hooks.missing_engine.as_str() {
            "" => "ghost",
            name => name,
        };
        let text = engines_text(
            &bin_dir.join("vxstub"),
            &history,
            &root.join("no-such-program"),
            missing_engine,
        );
        std::fs::write(&engines, text).or_harness("writing the engines file");
        let sb = BrokerSandbox {
            _dir: dir,
            root,
            ph,
            lock_dir,
            history,
            engines,
            template,
            env,
            next_env: Vec::new(),
            next_fault: None,
            supervisors: Vec::new(),
            instances: Vec::new(),
            teardown: hooks.teardown,
            listen_tcp: false,
            ports: Default::default(),
        };
        if !hooks.setup.is_empty() {
            let out = sb
                .hook(&hooks.setup)
                .stdin(Stdio::null())
                .output()
                .unwrap_or_else(|e| {
                    panic!(
                        "the profile's setup hook {:?} did not start: {e}",
                        hooks.setup
                    )
                });
            assert!(
                out.status.success(),
                "the profile's setup hook {:?} failed ({}): {}",
                hooks.setup,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        sb
    }

    /// A hook of the profile: the sandbox's placeholders, `{lock_dir}`, `{engines}`
    /// (the suite's engines file), `{history}` (where the stand-in agents write),
    /// `{agent}` (the stand-in agent program: `{agent} agent --engine E --id I
    /// --history H [--resume] [--index F]`) and `{missing_program}` (the fixture's
    /// engine whose program does not exist).
    pub fn hook(&self, template: &[String]) -> std::process::Command {
        let words: Vec<String> = template
            .iter()
            .map(|w| {
                w.replace("{lock_dir}", &self.lock_dir.to_string_lossy())
                    .replace("{engines}", &self.engines.to_string_lossy())
                    .replace("{history}", &self.history.to_string_lossy())
                    .replace("{agent}", &self.ph.bin_dir.join("vxstub").to_string_lossy())
                    .replace(
                        "{missing_program}",
                        &self.root.join("no-such-program").to_string_lossy(),
                    )
            })
            .collect();
        sandbox::command(&self.ph, &words, &self.env, &self.root)
    }

    /// The runtime directory and socket of instance `n` (0 is the sandbox's own).
    fn place(&mut self, n: usize) -> (PathBuf, PathBuf, Endpoint) {
        let (run, socket) = if n == 0 {
            (self.ph.runtime_dir.clone(), self.ph.socket.clone())
        } else {
            let run = self.root.join(format!("run{n}"));
            mkdir_private(&run);
            mkdir_private(&run.join("venomx"));
            (run.clone(), run.join("venomx/s.sock"))
        };
        if !self.listen_tcp {
            return (run, socket.clone(), Endpoint::Unix(socket));
        }
        let port = self
            .ports
            .entry(n)
            .or_insert_with(super::loopback_port::reserve)
            .port;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        (run, socket, Endpoint::Tcp(addr))
    }

    /// Starts a broker on instance `n`'s runtime dir and socket (a restart reuses
    /// both), waiting until its socket accepts.
    pub fn start(&mut self, n: usize, within: Duration) -> usize {
        let place = self.place(n);
        let template = self.template.clone();
        self.start_at(place, &template, within)
    }

    /// Starts a broker of another profile command (`broker_takeover`,
    /// `broker_scopes`, named by `key` in the error when the profile has none) on
    /// instance `n`'s socket, in the runtime directory of instance 0 when
    /// `beside_first` (brokers that share one runtime directory, as the seed's
    /// take-over across instances has them). `{scope_wrapper}` is filled here.
    pub fn start_with(
        &mut self,
        n: usize,
        beside_first: bool,
        (key, template): (&str, &[String]),
        within: Duration,
    ) -> usize {
        if template.is_empty() {
            crate::harness_error!("the profile's [single_writer] table has no `{key}` command");
        }
        let (mut runtime_dir, socket, endpoint) = self.place(n);
        if beside_first {
            runtime_dir = self.ph.runtime_dir.clone();
        }
        let wrapper = self.scope_wrapper().to_string_lossy().into_owned();
        let template: Vec<String> = template
            .iter()
            .map(|w| w.replace("{scope_wrapper}", &wrapper))
            .collect();
        self.start_at((runtime_dir, socket, endpoint), &template, within)
    }

    fn start_at(
        &mut self,
        (runtime_dir, socket, endpoint): (PathBuf, PathBuf, Endpoint),
        template: &[String],
        within: Duration,
    ) -> usize {
        let mut ph = self.ph.clone();
        ph.runtime_dir = runtime_dir.clone();
        ph.socket = socket.clone();
        let (listen, port) = match &endpoint {
            Endpoint::Tcp(a) => (a.to_string(), a.port().to_string()),
            Endpoint::Unix(p) => (p.to_string_lossy().into_owned(), String::new()),
        };
        let words: Vec<String> = template
            .iter()
            .map(|w| {
                w.replace("{lock_dir}", &self.lock_dir.to_string_lossy())
                    .replace("{engines}", &self.engines.to_string_lossy())
                    .replace("{history}", &self.history.to_string_lossy())
                    .replace("{listen}", &listen)
                    .replace("{port}", &port)
            })
            .collect();
        let mut env = self.env.clone();
        env.append(&mut self.next_env);
        let mut cmd = sandbox::command(&ph, &words, &env, &self.root);
        let mut sup = self.next_fault.take().and_then(|f| f.apply(&mut cmd));
        // Its stderr is kept in the sandbox for a failed row's evidence (a traceback
        // is what its author needs).
        let stderr = self
            .root
            .join(format!("{STDERR_PREFIX}{}.stderr", self.instances.len()));
        let err_file = std::fs::File::create(&stderr).or_harness("the broker's stderr file");
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(err_file));
        let (program, args) = crate::drivers::start_state::shown_argv(&cmd);
        let argv = std::iter::once(program)
            .chain(args)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let child = cmd.spawn();
        if let Some(s) = sup.as_mut() {
            s.spawned();
        }
        let child = child.or_harness("starting the broker");
        self.supervisors.extend(sup);
        let pid = child.id();
        self.instances.push(Instance {
            child,
            endpoint: endpoint.clone(),
            runtime_dir,
            argv,
            stderr,
            started: Instant::now(),
        });
        let at = self.instances.len() - 1;
        let until = Instant::now() + within;
        while endpoint.connect().is_err() {
            if let Ok(Some(status)) = self.instances[at].child.try_wait() {
                panic!("the broker (pid {pid}) exited before it listened: {status}");
            }
            if Instant::now() >= until {
                crate::timed_out!("the broker's socket to accept");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        at
    }

    /// Every broker this sandbox started, as it stands: argv, exit or signal (neither
    /// while it runs), the end of its stderr.
    pub fn instance_runs(&mut self) -> Vec<crate::evidence::CommandRun> {
        self.instances
            .iter_mut()
            .map(|i| {
                let status = i.child.try_wait().ok().flatten();
                let stderr = std::fs::read(&i.stderr).unwrap_or_default();
                crate::evidence::CommandRun::of_process(i.argv.clone(), status, i.started, &stderr)
            })
            .collect()
    }

    pub fn instance(&mut self, at: usize) -> &mut Instance {
        self.instances
            .get_mut(at)
            .or_harness("no such broker instance")
    }

    /// One of the implementation's other commands (`words`, already expanded but for
    /// the sandbox's placeholders), with the environment every broker gets.
    pub fn command(&self, words: &[String]) -> std::process::Command {
        sandbox::command(&self.ph, words, &self.env, &self.root)
    }

    /// Signals a broker and waits until it is gone.
    pub fn stop(&mut self, at: usize, signal: Signal) {
        let i = self.instance(at);
        let _ = kill(Pid::from_raw(i.child.id() as i32), signal);
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(_)) = i.child.try_wait() {
                return;
            }
            if Instant::now() >= until {
                let _ = i.child.kill();
                let _ = i.child.wait();
                panic!("the broker did not exit on {signal:?} within 10 s");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The live `vxstub agent`s whose history is this sandbox's.
    pub fn agents(&self) -> Vec<Agent> {
        let mut found = Vec::new();
        for (pid, argv) in super::process::argvs() {
            let is_stub = argv
                .first()
                .is_some_and(|a| Path::new(a).file_name().is_some_and(|n| n == "vxstub"));
            if !is_stub || argv.get(1).map(String::as_str) != Some("agent") {
                continue;
            }
            let flag = |name: &str| {
                argv.iter()
                    .position(|a| a == name)
                    .and_then(|i| argv.get(i + 1))
                    .cloned()
            };
            if flag("--history").as_deref() != Some(&*self.history.to_string_lossy()) {
                continue;
            }
            if !super::process::alive(pid) {
                continue;
            }
            let physical = format!(
                "{}@{}",
                flag("--engine").unwrap_or_default(),
                flag("--id").unwrap_or_default()
            );
            found.push(Agent { pid, physical });
        }
        found.sort_by_key(|a| a.pid);
        found
    }

    /// The agents of one session.
    pub fn agents_of(&self, physical: &str) -> Vec<i32> {
        self.agents()
            .into_iter()
            .filter(|a| a.physical == physical)
            .map(|a| a.pid)
            .collect()
    }

    /// The agents of `engine`, whatever their ids (a self-minting engine's command
    /// line names none).
    pub fn agents_of_engine(&self, engine: &str) -> Vec<i32> {
        let prefix = format!("{engine}@");
        self.agents()
            .into_iter()
            .filter(|a| a.physical.starts_with(&prefix))
            .map(|a| a.pid)
            .collect()
    }

    /// The lock at `file` (a session's lock file, from the profile's `lock_path`),
    /// seen from the suite: never call it while an open of that key is in flight (the
    /// probe's own moment of holding would make it BUSY).
    pub fn lock_state(&self, file: &Path) -> LockState {
        let Ok(f) = std::fs::File::open(file) else {
            return LockState::Free;
        };
        match Flock::lock(f, FlockArg::LockExclusiveNonblock) {
            Ok(held) => {
                let _ = held.unlock();
                LockState::Free
            }
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => LockState::Held,
            Err((_, e)) => crate::harness_error!("flock on the lock file: {e}"),
        }
    }

    /// Holds the lock at `file` from the suite's own process until dropped.
    pub fn hold_lock(&self, file: &Path) -> Flock<std::fs::File> {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(file)
            .or_harness("opening the lock file");
        Flock::lock(f, FlockArg::LockExclusiveNonblock)
            .map_err(|(_, e)| e)
            .or_harness("the suite could not take the lock")
    }

    /// Files the agents wrote because they found another writer of their session.
    pub fn violations(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.history)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| n.contains(".violation."))
            .collect();
        v.sort();
        v
    }

    /// The turns the agent of `physical` logged, parsed.
    pub fn turns(&self, physical: &str) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.history_file(physical))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn history_file(&self, physical: &str) -> PathBuf {
        self.history.join(format!("{physical}{HISTORY_SUFFIX}"))
    }

    /// The sessions that have a history file ([`Self::history_file`]), sorted.
    pub fn histories(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.history)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                Some(name.strip_suffix(HISTORY_SUFFIX)?.to_string())
            })
            .collect();
        names.sort();
        names
    }

    /// The self-minting engine's id index (the `index` of [`engines_text`]).
    pub fn engine_index(&self) -> PathBuf {
        self.history.join(INDEX_NAME)
    }

    /// Kills (SIGKILL) every process whose command line names this sandbox: masters
    /// and agents, the stand-in for a reboot. Brokers started here are left alone.
    pub fn kill_sessions(&mut self) {
        let brokers: Vec<i32> = self.instances.iter().map(|i| i.child.id() as i32).collect();
        kill_naming(&self.root, &brokers);
    }
}

/// Kills (SIGKILL) and reaps every process but ours and `spare` whose command line
/// names `root`: what a sandbox's implementation left running (masters, agents, a
/// daemonized master).
pub fn kill_naming(root: &Path, spare: &[i32]) {
    let root = root.to_string_lossy().into_owned();
    let me = std::process::id() as i32;
    for (pid, argv) in super::process::argvs() {
        if pid != me && !spare.contains(&pid) && argv.iter().any(|a| a.contains(&root)) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            reap(pid);
        }
    }
}

/// Reaps `pid` if it is our child (the run is a subreaper of orphaned masters).
fn reap(pid: i32) {
    use nix::sys::wait::{waitpid, WaitPidFlag};
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        match waitpid(Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG)) {
            Ok(nix::sys::wait::WaitStatus::StillAlive) => {
                std::thread::sleep(Duration::from_millis(5))
            }
            _ => return,
        }
    }
}

impl Drop for BrokerSandbox {
    fn drop(&mut self) {
        if !self.teardown.is_empty() {
            let _ = self
                .hook(&self.teardown.clone())
                .stdin(Stdio::null())
                .output();
        }
        for i in &mut self.instances {
            let _ = i.child.kill();
            let _ = i.child.wait();
        }
        self.kill_sessions();
    }
}
