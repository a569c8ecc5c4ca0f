//! The live rows' state: one scenario's broker sandbox (brokers, shared lock dir),
//! its named viewers with the offset each has consumed, and what the suite noted
//! (an agent's PID, a held lock, a copy of a history).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use nix::fcntl::Flock;
use serde_json::Value;

use super::templates::{templates, Templates};
use crate::drivers::broker::BrokerSandbox;
use crate::drivers::broker_ws::{Refused, Viewer};
use crate::drivers::scaled;
use crate::profile::context;
use crate::verdict::OrHarness;

/// How long a broker may take to accept, and most waits for an effect (scaled).
pub const WAIT_MS: u64 = 10_000;

/// The terminal route of `key` given without its engine: the text from `{engine}`
/// to the end of `{id}` in `ws_path` is the key alone (`/ws/term/{engine}/{id}` and
/// `/ws/term/{engine}:{id}` both give `/ws/term/<key>`).
fn bare_key_route(ws_path: &str, key: &str) -> String {
    match (ws_path.find("{engine}"), ws_path.find("{id}")) {
        (Some(e), Some(i)) if e < i => {
            format!("{}{key}{}", &ws_path[..e], &ws_path[i + "{id}".len()..])
        }
        _ => ws_path.replace("{engine}", "").replace("{id}", key),
    }
}

/// One named viewer and the stream offset its connection started at.
pub struct Tracked {
    pub viewer: Viewer,
    /// The `have` this connection was opened with (0 for a non-delta open).
    pub base: u64,
    /// The generation the viewer last learned from a `seq` frame.
    pub gen: Option<u64>,
    /// The key and broker it was opened on, for reconnects.
    pub key: String,
    pub query: String,
    pub broker: usize,
}

impl Tracked {
    /// Bytes of the session's output this viewer has consumed: from the last `seq`
    /// frame on (a non-delta open), else from the `have` it opened with.
    pub fn offset(&self) -> u64 {
        match self
            .viewer
            .texts
            .iter()
            .rev()
            .find(|(_, v)| v["t"] == "seq")
        {
            Some((at, v)) => {
                let n = v["n"].as_u64().or_harness("a seq frame's n");
                n + (self.viewer.output.len() - at) as u64
            }
            None => self.base + self.viewer.output.len() as u64,
        }
    }

    pub fn learned_gen(&self) -> Option<u64> {
        self.viewer
            .frames("seq")
            .last()
            .and_then(|v| v["gen"].as_u64())
            .or(self.gen)
    }
}

/// What a dropped viewer reconnects with.
pub struct Gone {
    pub have: u64,
    pub gen: Option<u64>,
    pub key: String,
    pub query: String,
    pub broker: usize,
}

pub struct Live {
    pub sb: BrokerSandbox,
    pub t: Templates,
    /// Broker instances by role: `0` the first (and its restarts), `1` the second.
    pub brokers: BTreeMap<usize, usize>,
    pub viewers: BTreeMap<String, Tracked>,
    pub dropped: BTreeMap<String, Gone>,
    pub refused: BTreeMap<String, Refused>,
    /// The viewers of one "at once" step, in order.
    pub crowd: Vec<Result<Viewer, Refused>>,
    pub noted: BTreeMap<String, i32>,
    pub held: Option<Flock<std::fs::File>>,
    pub history_copy: Option<Vec<u8>>,
    /// The real key an `id` frame told.
    pub minted: Option<String>,
    /// An open still in flight on its own thread (sw-recheck), by viewer name.
    pub opening: Option<(String, std::thread::JoinHandle<Result<Viewer, Refused>>)>,
    /// A listener of the suite's own at a socket path, and that path's inode.
    pub listener: Option<super::steps::SuiteListener>,
    /// A command of the implementation the suite started (a master, a client).
    pub running: Option<KillOnDrop>,
    /// What a command started on a terminal wrote to it (`master_tty`), read as it
    /// comes so the command never blocks on a full terminal.
    pub running_tty: Option<std::sync::Arc<std::sync::Mutex<Vec<u8>>>>,
    /// What was at a path the suite prepared (inode, a regular file's bytes).
    pub noted_path: Option<Option<(u64, Option<Vec<u8>>)>>,
    /// The suite's stand-in terminal route for a client under test.
    pub route_stand_in: Option<super::steps::DroppingRoute>,
    /// The agents running once a refusal's valid twin (its control) had opened.
    pub agents_after_control: Option<Vec<i32>>,
    /// The counter file of the fault plan the broker runs under, and the plan's rules.
    pub fault_counts: Option<(vxfault::Counters, Vec<vxfault::RuleInfo>)>,
    /// What the side-effect rows noted or watch (a forked process, the index's opens).
    pub effects: super::effects::Effects,
    /// The sandbox as it stood when the suite first addressed a broker: a failed
    /// row's evidence lists what changed since.
    pub tree_before: Option<BTreeMap<String, crate::drivers::tree::Node>>,
}

impl Live {
    /// Starts one of the implementation's commands in the sandbox (stdin and stdout
    /// closed, stderr kept for a "fails loud" check) as the scenario's running one;
    /// with `tty`, on a terminal of its own instead (its controlling terminal, in a
    /// session of its own), whose output is kept for that check.
    pub fn start_command(&mut self, words: &[String], what: &str, tty: bool) {
        let mut cmd = self.sb.command(words);
        if tty {
            let output = super::terminal::attach(&mut cmd)
                .unwrap_or_else(|e| crate::harness_error!("a terminal for {what}: {e}"));
            self.running_tty = Some(output);
        } else {
            cmd.stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped());
            self.running_tty = None;
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| crate::harness_error!("starting {what}: {e}"));
        self.running = Some(KillOnDrop(child));
    }
}

/// A child process the suite started, killed and reaped by PID when dropped.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `engine:id` → its physical name: the kit's `engine@id`, or the spelling the
/// profile declares (`[single_writer.pins] physical_key`).
pub fn physical(key: &str) -> String {
    super::pins::physical_of(key)
}

/// How the suite's stand-in agent (`vxstub agent`) names the session of
/// `engine:id` in its command line and history files (`engine@id`): the fixture's
/// own name, whatever physical key the broker uses.
pub fn stub_name(key: &str) -> String {
    let (engine, id) = key.split_once(':').unwrap_or((key, ""));
    format!("{engine}@{id}")
}

/// The query of a feature, with one-letter `fp`/`tab` values widened to the seed's
/// lengths (`fp=a` → 32 × `a`, `tab=1` → 16 × `1`).
/// The rows' `label=` goes under the profile's `label_param`, or is dropped.
fn widen(query: &str, label_param: &str) -> String {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|p| match p.split_once('=') {
            Some(("fp", v)) if v.len() == 1 => Some(format!("fp={}", v.repeat(32))),
            Some(("tab", v)) if v.len() == 1 => Some(format!("tab={}", v.repeat(16))),
            Some(("label", v)) => {
                Some(format!("{label_param}={v}")).filter(|_| !label_param.is_empty())
            }
            _ => Some(p.to_string()),
        })
        .collect::<Vec<_>>()
        .join("&")
}

impl Live {
    pub fn new() -> Live {
        let t = templates();
        let env = context()
            .profile
            .env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut sb = BrokerSandbox::new(
            context().bin_dir.clone(),
            t.broker.clone(),
            env,
            crate::drivers::broker::Hooks {
                setup: t.setup.clone(),
                teardown: t.teardown.clone(),
                missing_engine: t.missing_program_engine.clone(),
            },
        );
        sb.listen_tcp = t.listen == "tcp";
        Live {
            sb,
            t,
            brokers: BTreeMap::new(),
            viewers: BTreeMap::new(),
            dropped: BTreeMap::new(),
            refused: BTreeMap::new(),
            crowd: Vec::new(),
            noted: BTreeMap::new(),
            held: None,
            history_copy: None,
            minted: None,
            opening: None,
            listener: None,
            running: None,
            running_tty: None,
            noted_path: None,
            route_stand_in: None,
            agents_after_control: None,
            fault_counts: None,
            effects: Default::default(),
            tree_before: None,
        }
    }

    /// A failed row's evidence: every broker (argv, exit or still running, stderr's
    /// end) and the sandbox's files created, changed or removed since the suite first
    /// addressed a broker.
    pub fn record_failure(&mut self) {
        for run in self.sb.instance_runs() {
            crate::evidence::process(run);
        }
        if let Some(before) = &self.tree_before {
            let now =
                crate::drivers::tree::listing(&self.sb.root, crate::drivers::broker::STDERR_PREFIX);
            crate::evidence::files(crate::evidence::diff(before, &now));
        }
    }

    /// Starts (or restarts) broker `role` on its own runtime dir and socket.
    pub fn start_broker(&mut self, role: usize) {
        let at = self.sb.start(role, scaled(WAIT_MS));
        self.brokers.insert(role, at);
    }

    /// Starts broker `role` with take-over on, in broker 0's runtime directory when
    /// `role` is not 0.
    pub fn start_takeover_broker(&mut self, role: usize) {
        let template = self.t.broker_takeover.clone();
        let at = self.sb.start_with(
            role,
            role != 0,
            ("broker_takeover", &template),
            scaled(WAIT_MS),
        );
        self.brokers.insert(role, at);
    }

    /// Starts broker 0 with the profile's per-launch scope wrapper, the suite's
    /// stand-in for `systemd-run` in `mode`, and `properties` in the variable the
    /// profile names.
    pub fn start_scoped_broker(&mut self, mode: &str, properties: &str) {
        self.sb.write_scope_wrapper(mode);
        let var = self.t.scope_properties_env.clone();
        if !var.is_empty() {
            self.sb.next_env.push((var, properties.to_string()));
        }
        let template = self.t.broker_scopes.clone();
        let at = self
            .sb
            .start_with(0, false, ("broker_scopes", &template), scaled(WAIT_MS));
        self.brokers.insert(0, at);
    }

    /// Where broker `role` listens (its socket, or its loopback port).
    pub fn broker_socket(&mut self, role: usize) -> crate::drivers::broker_ws::Endpoint {
        if self.tree_before.is_none() {
            self.tree_before = Some(crate::drivers::tree::listing(
                &self.sb.root,
                crate::drivers::broker::STDERR_PREFIX,
            ));
        }
        let at = *self
            .brokers
            .get(&role)
            .or_harness("that broker never started");
        self.sb.instance(at).endpoint.clone()
    }

    /// The master socket of `key` under broker `role`'s runtime directory.
    pub fn session_socket(&mut self, key: &str, role: usize) -> PathBuf {
        let at = *self
            .brokers
            .get(&role)
            .or_harness("that broker never started");
        let runtime = self.sb.instance(at).runtime_dir.clone();
        let key = &self.t.engines().live_key(key);
        PathBuf::from(super::templates::session_path(
            &self.t.session_socket,
            key,
            &physical(key),
            &[("runtime_dir", &runtime.to_string_lossy())],
        ))
    }

    /// The lock file of `key` (the profile's `lock_path`).
    pub fn lock_file(&self, key: &str) -> PathBuf {
        let key = &self.t.engines().live_key(key);
        PathBuf::from(super::templates::session_path(
            &self.t.lock_path,
            key,
            &physical(key),
            &[("lock_dir", &self.sb.lock_dir.to_string_lossy())],
        ))
    }

    /// The broker's alias sidecar (the profile's `alias_sidecar`).
    pub fn alias_sidecar(&mut self, role: usize) -> PathBuf {
        let at = *self
            .brokers
            .get(&role)
            .or_harness("that broker never started");
        let runtime = self.sb.instance(at).runtime_dir.clone();
        PathBuf::from(
            self.t
                .alias_sidecar
                .replace("{runtime_dir}", &runtime.to_string_lossy()),
        )
    }

    /// The key a feature names as the profile's engines spell it (the fixture's
    /// `ghost` and `nosuch`: `engines::Engines::live_key`), said in the evidence
    /// when it differs.
    pub fn own_key(&self, key: &str) -> String {
        let own = self.t.engines().live_key(key);
        if own != key {
            crate::evidence::note(format!(
                "the key {key:?} is opened as {own:?} (the profile's missing_program_engine, or a name its known_engines lacks)"
            ));
        }
        own
    }

    pub fn route(&self, key: &str, query: &str) -> String {
        let key = &self.own_key(key);
        let path = match key.split_once(':') {
            Some((engine, id)) => self
                .t
                .ws_path
                .replace("{engine}", engine)
                .replace("{id}", id),
            // A key without its engine (a bare id, which the broker must refuse):
            // the route's whole key part is that text alone.
            None => bare_key_route(&self.t.ws_path, key),
        };
        let mut q = widen(query, &self.t.label_param);
        if !self.t.ws_query.is_empty() {
            q = [q, self.t.ws_query.clone()]
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join("&");
        }
        if q.is_empty() {
            path
        } else {
            format!("{path}?{q}")
        }
    }

    /// Opens `key` as viewer `name` on broker `role`; a refusal is kept by name.
    pub fn open(&mut self, name: &str, key: &str, query: &str, role: usize, base: u64) {
        let socket = self.broker_socket(role);
        let route = self.route(key, query);
        self.viewers.remove(name);
        self.dropped.remove(name);
        self.refused.remove(name);
        let asked = std::time::Instant::now();
        match Viewer::open(&socket, &route) {
            Ok(mut viewer) => {
                // The first frame says what the open did: a role, a replay, a seq,
                // or a close; a delta with nothing missed says nothing.
                let answered = viewer.pump(Duration::from_millis(300), |v| {
                    v.close.is_some() || !v.texts.is_empty() || !v.output.is_empty()
                });
                if answered {
                    crate::evidence::reply_took(asked.elapsed());
                }
                self.viewers.insert(
                    name.to_string(),
                    Tracked {
                        viewer,
                        base,
                        gen: None,
                        key: key.to_string(),
                        query: query.to_string(),
                        broker: role,
                    },
                );
            }
            Err(r) => {
                self.refused.insert(name.to_string(), r);
            }
        }
    }

    /// Closes viewer `name` from its side (a transient drop or a tab closing),
    /// keeping what a reconnect sends.
    pub fn drop_viewer(&mut self, name: &str) {
        let old = self.viewers.remove(name).or_harness("no such viewer");
        let gone = Gone {
            have: old.offset(),
            gen: old.learned_gen(),
            key: old.key.clone(),
            query: old.query.clone(),
            broker: old.broker,
        };
        old.viewer.close_now();
        self.dropped.insert(name.to_string(), gone);
    }

    /// Reconnects a dropped viewer with `have` = its offset and the `gen` it learned
    /// (what `vx_broker::client` and the seed's clients send; never `force=1`).
    pub fn reconnect(&mut self, name: &str) {
        let old = self
            .dropped
            .remove(name)
            .or_harness("that viewer did not drop");
        let (have, gen) = (old.have, old.gen);
        let (key, broker) = (old.key.clone(), old.broker);
        let mut query = old
            .query
            .split('&')
            .filter(|p| {
                !p.is_empty() && !["have=", "gen=", "new="].iter().any(|f| p.starts_with(f))
            })
            .map(str::to_string)
            .collect::<Vec<_>>();
        query.retain(|p| p != "force=1");
        query.push(format!("have={have}"));
        if let Some(g) = gen {
            query.push(format!("gen={g}"));
        }
        self.open(name, &key, &query.join("&"), broker, have);
        if let Some(t) = self.viewers.get_mut(name) {
            t.gen = gen;
        }
    }

    pub fn viewer(&mut self, name: &str) -> &mut Tracked {
        self.viewers
            .get_mut(name)
            .unwrap_or_else(|| match self.refused.get(name) {
                Some(r) => panic!("viewer {name} was refused: {r}"),
                None => crate::harness_error!("no viewer named {name}"),
            })
    }

    /// The session list's rows for `key` (listed by key or by alias).
    pub fn rows_of(&mut self, key: &str) -> Vec<Value> {
        let socket = self.broker_socket(0);
        let path = self.t.sessions_path.clone();
        let (status, body) = crate::drivers::broker_ws::http(&socket, "GET", &path)
            .or_harness("the session list request");
        assert_eq!(status, 200, "the session list answered {status}: {body}");
        let shape = &self.t.list;
        shape
            .rows(&body)
            .unwrap_or_else(|| {
                panic!(
                    "the session list has no array of rows at {:?} (the profile's [single_writer.list] rows): {body}",
                    shape.rows
                )
            })
            .into_iter()
            .filter(|r| r["key"] == key || r.get("alias").is_some_and(|a| a == key))
            .collect()
    }

    /// What a broker that should have crashed left to see, for a timeout's report:
    /// how often each rule of its fault plan matched and acted, the sidecar's size,
    /// the ids in the engine's index, the running agents and the sessions with a
    /// history (names and sizes only, never a turn's text).
    pub fn what_the_broker_left(&mut self) -> String {
        let sidecar = self.alias_sidecar(0);
        let sidecar = match std::fs::read(&sidecar) {
            Ok(b) => format!("{} holds {} bytes", sidecar.display(), b.len()),
            Err(e) => format!("{}: {e}", sidecar.display()),
        };
        let index = std::fs::read_to_string(self.sb.engine_index()).unwrap_or_default();
        let ids: Vec<&str> = index.lines().filter_map(|l| l.split('\t').next()).collect();
        let agents: Vec<String> = self
            .sb
            .agents()
            .iter()
            .map(|a| format!("pid {} {}", a.pid, a.physical))
            .collect();
        let histories = self.sb.histories();
        let counts = match &self.fault_counts {
            Some((c, rules)) => match c.read(rules) {
                Ok(n) => n
                    .rules
                    .iter()
                    .map(|r| {
                        format!(
                            "{:?} matched {} calls, acted on {}; ",
                            r.text, r.matched, r.fired
                        )
                    })
                    .collect(),
                Err(e) => format!("the fault plan's counter file: {e}; "),
            },
            None => String::new(),
        };
        format!(
            "{counts}{sidecar}; the engine's index lists {ids:?}; running agents: \
             {agents:?}; sessions with a history: {histories:?}"
        )
    }

    pub fn retire(&mut self, key: &str) -> (u16, Value) {
        let socket = self.broker_socket(0);
        let path = self.t.archive_path.replace("{key}", key);
        crate::drivers::broker_ws::http(&socket, "POST", &path).or_harness("the retire request")
    }
}
