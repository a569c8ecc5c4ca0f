//! The recovery contract's crash-state checker (`vxcert crash-explore`, issue 18):
//! record the implementation publishing generation N+1 over a store holding a valid
//! generation N, then for every disk state a power cut could leave (the `vxfault`
//! crash explorer's model) start the implementation on that store and judge it.
//!
//! The judge of one state ([`check_state`]) runs in its own process (`vxcert
//! crash-explore --check-state DIR …`), started by the explorer for each distinct
//! state, so states are checked in parallel without sharing a daemon.

use super::probes::{create_pane, ENABLED};
use super::scenario::Scenario;
use crate::drivers::fault::Injection;
use crate::verdict::OrHarness;
use nix::sys::signal::Signal;
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use vxfault::crash::{self, Model, Recorder, Report};

/// The session each generation holds: restoring one must bring back exactly it.
pub const OLD_SESSION: &str = "generation-n";
pub const NEW_SESSION: &str = "generation-n-plus-1";

/// What the recorded workload does to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// `recovery.checkpoint` publishing N+1 over N.
    Checkpoint,
    /// `recovery.forget` of generation N while N+1 stays.
    Forget,
    /// `recovery.checkpoint` with `max_checkpoints = 1`: publishing N+1 prunes N.
    Prune,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Checkpoint => "checkpoint",
            Workload::Forget => "forget",
            Workload::Prune => "prune",
        }
    }

    /// The daemon's configuration for the recording and the judge.
    fn config(self) -> &'static str {
        match self {
            Workload::Prune => ".{ .recovery = .{ .enabled = true, .max_checkpoints = 1 } }\n",
            _ => ENABLED,
        }
    }
}

/// What the judge of a state must know about the recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    pub old_generation: u64,
    /// The generation the recorded checkpoint acknowledged: N + 1, or more when the
    /// daemon also checkpointed on its own first (a tick at activation, which the
    /// seed allows once a mutation activated it).
    pub new_generation: u64,
    pub workload: Workload,
    /// The recorded daemon's socket: checkpoints name it, so the judge starts the
    /// implementation on the same path (one state at a time).
    pub socket: PathBuf,
    /// `{"<generation>": shape}`: the topology each generation saved, as
    /// `session.list` showed it when its checkpoint was acknowledged ([`shape`]).
    pub topology: PathBuf,
}

impl Expect {
    /// The judge's arguments after `--check-state {root}`.
    fn args(&self) -> String {
        let w = self.workload.name();
        format!(
            "--old-generation {} --new-generation {} --workload {w} --socket {} --topology {}",
            self.old_generation,
            self.new_generation,
            quote(&self.socket),
            quote(&self.topology)
        )
    }
}

fn call(s: &mut Scenario, verb: &str, params: Value) -> Result<Value, Value> {
    let token = s.owner_token();
    let Value::Object(p) = params else {
        crate::harness_error!("params of {verb} are not an object")
    };
    s.wire(Some(&token), verb, p).result
}

fn ok(s: &mut Scenario, verb: &str, params: Value) -> Value {
    call(s, verb, params).unwrap_or_else(|e| panic!("{verb} failed: {e}"))
}

/// A scenario whose daemon has recovery enabled and holds one session.
fn started(s: &mut Scenario, session: &str, config: &str) {
    s.write_config(config);
    s.start();
    create_pane(
        s,
        session,
        vec!["/bin/sh".into(), "-c".into(), "sleep 60".into()],
    );
}

/// A topology as a restore must reproduce it: `session.list`'s answer with the ids
/// and revisions a restore mints anew taken out (names, window sizes, the split
/// tree's shape and ratios, floats stay).
pub fn shape(listed: &Value) -> Value {
    match listed {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| match k.as_str() {
                    "session" | "window" | "pane" | "revision" => (k.clone(), Value::Null),
                    _ => (k.clone(), shape(v)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(shape).collect()),
        other => other.clone(),
    }
}

/// Checkpoints now and keeps the topology of the generation it published.
fn checkpoint_keeping_topology(
    s: &mut Scenario,
    topology: &mut serde_json::Map<String, Value>,
) -> Value {
    let n = ok(s, "recovery.checkpoint", json!({}));
    let listed = ok(s, "session.list", json!({}));
    if let Some(g) = n["generation"].as_u64() {
        topology.insert(g.to_string(), shape(&listed));
    }
    n
}

/// Records the workload; the recording's directory and the judge's expectations.
pub fn record(s: &mut Scenario, workload: Workload, plan: &str) -> (PathBuf, Expect) {
    started(s, OLD_SESSION, workload.config());
    let mut topology = serde_json::Map::new();
    let n = checkpoint_keeping_topology(s, &mut topology);
    let old_generation = n["generation"].as_u64().or_harness("generation of N");
    let old_id = n["checkpoint"].as_str().unwrap_or_default().to_string();
    // SIGKILL: a clean stop would publish a shutdown checkpoint the recording
    // would then start from.
    s.stop(Signal::SIGKILL);
    if workload == Workload::Forget {
        // Forget needs the newer generation there first.
        s.start();
        create_pane(
            s,
            NEW_SESSION,
            vec!["/bin/sh".into(), "-c".into(), "sleep 60".into()],
        );
        checkpoint_keeping_topology(s, &mut topology);
        s.stop(Signal::SIGKILL);
    }
    let dir = s.dir.path().join("crash-recording");
    let rec = Recorder::with_plan(&dir, &s.ph.store, plan).or_harness("start the recording");
    // The profile's fault_backend: the preload's environment, or a seccomp filter
    // whose supervisor (a thread of vxcert) writes the log.
    let serve = crate::profile::context().profile.serve.clone();
    match Injection::recording(&s.ph, &serve, &rec, plan) {
        Injection::Preload(env) => s.extra_env.extend(env),
        seccomp => s.fault = Some(seccomp),
    }
    s.start();
    let new_generation = match workload {
        Workload::Checkpoint | Workload::Prune => {
            create_pane(
                s,
                NEW_SESSION,
                vec!["/bin/sh".into(), "-c".into(), "sleep 60".into()],
            );
            let acked = checkpoint_keeping_topology(s, &mut topology);
            acked["generation"]
                .as_u64()
                .or_harness("generation of the recorded checkpoint")
        }
        Workload::Forget => {
            ok(s, "recovery.forget", json!({ "checkpoint": old_id }));
            old_generation
        }
    };
    // The reply reached us before the daemon's trace line for it may be written:
    // wait until the log stops growing, then kill, so the reply is the last output
    // recorded and nothing follows it.
    settle(&dir.join("log.jsonl"));
    s.stop(Signal::SIGKILL);
    s.extra_env.clear();
    s.fault = None;
    if !s.supervisors.is_empty() {
        // The panes the recorded daemon started (and their children) are still under
        // its filter: the supervisor ends (its last log line written) once they are
        // gone too.
        s.kill_panes();
        for sup in s.supervisors.drain(..) {
            let _ = sup.finish_within(crate::drivers::scaled(10_000));
        }
    }
    rec.finish(137).or_harness("seal the recording");
    // Beside the recording, not in it: the explorer owns the recording's layout.
    let topology_file = s.dir.path().join("crash-topology.json");
    std::fs::write(&topology_file, Value::Object(topology).to_string())
        .or_harness("write the generations' topologies");
    (
        dir,
        Expect {
            old_generation,
            new_generation,
            workload,
            socket: s.ph.socket.clone(),
            topology: topology_file,
        },
    )
}

/// Waits (at most ~6 s) until `log` has not grown for 300 ms.
fn settle(log: &Path) {
    let size = || std::fs::metadata(log).map(|m| m.len()).unwrap_or(0);
    for _ in 0..20 {
        let before = size();
        std::thread::sleep(std::time::Duration::from_millis(300));
        if size() == before {
            return;
        }
    }
}

/// Explores the recording with the judge as checker.
pub fn explore(dir: &Path, expect: &Expect, model: Model) -> Result<Report, String> {
    // Absolute: the judge runs in each state's temporary directory.
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let bin_dir = &abs(&crate::profile::context().bin_dir);
    let profile = &abs(&crate::profile::context().profile_path);
    let vxcert = bin_dir.join("vxcert");
    let check = format!(
        "{} crash-explore --profile {} --bin-dir {} --check-state {{root}} {}",
        quote(&vxcert),
        quote(profile),
        quote(bin_dir),
        expect.args()
    );
    let checker = crash::Checker::new(&check).map_err(|e| e.to_string())?;
    let opts = crash::Options {
        model,
        checker,
        // Checkpoints name the socket: one daemon at a time can have its path.
        jobs: 1,
        only: None,
        timeout: crate::drivers::scaled(60_000),
    };
    crash::explore(dir, None, &opts).map_err(|e| e.to_string())
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.to_string_lossy().replace('\'', r"'\''"))
}

/// Whether a checkpoint id is a final name's id (never a temporary file's).
fn is_checkpoint_id(id: &str) -> bool {
    id.len() == 37
        && id.starts_with('c')
        && id[1..].chars().all(|c| c.is_ascii_hexdigit() || c == '-')
}

/// Judges one state: starts the implementation on it and checks what the recovery
/// contract requires. `Err` is the one-line reason.
pub fn check_state(state: &Path, expect: &Expect) -> Result<(), String> {
    let mut s = Scenario::new();
    s.ph.socket = expect.socket.clone();
    s.ph.store =
        s.ph.state_home
            .join("venomx/recovery")
            .join(super::scenario::socket_key(&expect.socket));
    // The store's parents as the implementation makes them: private.
    let recovery = s.ph.store.parent().or_harness("store parent").to_path_buf();
    std::fs::create_dir_all(&recovery).or_harness("store parent");
    for d in [recovery.parent().or_harness("venomx dir"), &recovery] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))
            .or_harness("store parent mode");
    }
    crash::copy_tree(state, &s.ph.store).or_harness("copy the state into the store");
    s.write_config(expect.workload.config());
    s.start();
    // Nothing is selected without being named: a start restores nothing by itself.
    let at_start = ok(&mut s, "session.list", json!({}));
    if at_start["sessions"]
        .as_array()
        .is_some_and(|a| !a.is_empty())
    {
        return Err("the implementation restored a checkpoint at start without being asked".into());
    }
    let listed = ok(&mut s, "recovery.list", json!({}));
    let entries = listed["checkpoints"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for e in &entries {
        let id = e["checkpoint"].as_str().unwrap_or("");
        if !is_checkpoint_id(id) {
            return Err(
                "recovery.list shows a candidate that is not a checkpoint id (a temporary file?)"
                    .into(),
            );
        }
    }
    // Publication is atomic: a crash never shows a partial file under a final name.
    if entries.iter().any(|e| e["status"] == "corrupt") {
        return Err("a partial checkpoint is visible under its final name (listed corrupt)".into());
    }
    let valid: Vec<(u64, String)> = entries
        .iter()
        .filter(|e| e["status"] == "valid")
        .filter_map(|e| {
            Some((
                e["generation"].as_u64()?,
                e["checkpoint"].as_str()?.to_string(),
            ))
        })
        .collect();
    let acked = crash::state_acknowledged();
    let (n, new) = (expect.old_generation, expect.new_generation);
    let newest = valid.iter().max().cloned();
    match expect.workload {
        Workload::Checkpoint | Workload::Prune => {
            let Some((g, _)) = &newest else {
                return Err(format!("no valid checkpoint: generation {n} was lost"));
            };
            if !(n..=new).contains(g) {
                return Err(format!(
                    "the newest valid generation is {g}, not one of {n} to {new}"
                ));
            }
            if acked && *g != new {
                return Err(format!(
                    "generation {new} was acknowledged but the newest valid one is {g}"
                ));
            }
        }
        Workload::Forget => {
            if !valid.iter().any(|(g, _)| *g > n) {
                return Err("forgetting generation N lost the newer generation".into());
            }
            if acked && valid.iter().any(|(g, _)| *g == n) {
                return Err(format!(
                    "generation {n} was forgotten (acknowledged) but is listed valid"
                ));
            }
        }
    }
    // Nothing that is not valid may be restored.
    for e in entries.iter().filter(|e| e["status"] != "valid") {
        let id = e["checkpoint"].as_str().unwrap_or("");
        if call(&mut s, "recovery.restore", json!({ "checkpoint": id })).is_ok() {
            return Err(format!(
                "a checkpoint listed {} was restored",
                e["status"].as_str().unwrap_or("?")
            ));
        }
    }
    let Some((g, id)) = newest else { return Ok(()) };
    if let Err(e) = call(&mut s, "recovery.restore", json!({ "checkpoint": id })) {
        return Err(format!("restoring the newest valid checkpoint failed: {e}"));
    }
    let want = if g > n { NEW_SESSION } else { OLD_SESSION };
    // A generation the daemon wrote on its own between N and the recorded one (at
    // activation) saved whatever the setup had made by then: it restores the new
    // session, and its panes and topology are not the recording's to judge.
    let own = g > n && g < new;
    let sessions = ok(&mut s, "session.list", json!({}));
    let names: Vec<&str> = sessions["sessions"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["name"].as_str()).collect())
        .unwrap_or_default();
    if names != [want] {
        return Err(format!(
            "restoring generation {g} brought back sessions {names:?}, not [{want:?}]"
        ));
    }
    if own {
        return Ok(());
    }
    let panes = ok(&mut s, "pane.list", json!({}));
    let count = panes["panes"].as_array().map_or(0, Vec::len);
    if count != 1 {
        return Err(format!(
            "restoring generation {g} brought back {count} panes, not 1"
        ));
    }
    let saved: Value = std::fs::read_to_string(&expect.topology)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .or_harness("the generations' topologies");
    let Some(want) = saved.get(g.to_string()) else {
        return Err(format!(
            "generation {g} was not one the recording published"
        ));
    };
    if shape(&sessions) != *want {
        return Err(format!(
            "restoring generation {g} brought back a topology other than the one it saved: {} (saved {want})",
            shape(&sessions)
        ));
    }
    Ok(())
}

/// The report as lines (counts per strategy, then each failing state).
pub fn summary(r: &Report) -> Vec<String> {
    let mut out = vec![format!(
        "model {}: {} ops; {}; {} states, {} distinct, {} failing ({:.1}s)",
        r.model.name(),
        r.ops,
        r.counts
            .iter()
            .map(|(s, n)| format!("{} {n}", s.name()))
            .collect::<Vec<_>>()
            .join(", "),
        r.states,
        r.checked,
        r.violations.len(),
        r.elapsed.as_secs_f64()
    )];
    for v in &r.violations {
        out.push(format!(
            "state {} ({}): {}: {}",
            v.state.id,
            v.state.strategy.name(),
            v.description,
            v.verdict.output.lines().next().unwrap_or("checker failed")
        ));
    }
    out
}
