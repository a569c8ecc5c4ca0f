//! The fault injector driver: a plan (optionally traced) reaches the implementation
//! through the profile's `fault_backend`: `libvxfault.so` preloaded, or a seccomp
//! filter answered by a supervisor thread of vxcert (docs/fault-injection.md).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The injector library for this scenario: the profile's `fault_preload`, expanded (one
/// that does not exist is a harness error naming it), else the copy packed inside
/// vxcert (`assets::fault_preload`), so a copied or installed vxcert needs no build of
/// `vxfault-preload` beside it.
fn preload_library(ph: &super::sandbox::Placeholders) -> String {
    let Some(t) = crate::profile::context().profile.fault_preload.clone() else {
        return match crate::assets::fault_preload() {
            Ok(path) => path.display().to_string(),
            Err(e) => crate::harness_error!("{e}"),
        };
    };
    let path = ph.expand(&t);
    if !Path::new(&path).is_file() {
        crate::harness_error!(
            "fault_preload: {path} not found (build it: cargo build -p vxfault-preload, or \
             leave fault_preload out to use the copy inside vxcert)"
        );
    }
    path
}

/// The profile's `fault_backend` (default `auto`); a value that is not a backend is a
/// harness error naming it.
pub fn backend() -> vxfault::Backend {
    let v = crate::profile::context().profile.fault_backend.as_deref();
    v.unwrap_or("auto")
        .parse()
        .unwrap_or_else(|e| crate::harness_error!("fault_backend: {e}"))
}

/// The backend the profile's `fault_backend` resolves to for `template`'s program
/// (`auto` reads the program's ELF file, as `vxfault run` does).
pub fn choice(ph: &super::sandbox::Placeholders, template: &[String]) -> vxfault::Choice {
    let prog = template.first().map(|p| ph.expand(p)).unwrap_or_default();
    vxfault::seccomp::choose(backend(), Path::new(&prog))
}

/// How a fault plan reaches one program, as the profile's backend resolves for it.
#[derive(Debug, Clone)]
pub enum Injection {
    /// `LD_PRELOAD=libvxfault.so` and the `VXFAULT_*` variables.
    Preload(Vec<(String, String)>),
    /// A seccomp filter installed in the child between fork and exec, answered by a
    /// supervisor thread of vxcert (`vxfault::seccomp`).
    Seccomp(SeccompPlan),
}

/// What the seccomp supervisor needs.
#[derive(Debug, Clone)]
pub struct SeccompPlan {
    pub plan: String,
    /// The families the filter watches: the plan's, or every one when recording.
    pub ops: Vec<vxfault::Op>,
    pub trace: Option<PathBuf>,
    /// A recording's data file (then the trace is its log).
    pub data: Option<PathBuf>,
    /// The counter file the supervisor counts into ([`Injection::counted`]).
    pub counters: Option<vxfault::Counters>,
}

impl Injection {
    /// `plan` (traced into `trace`) for `template`'s program, under the profile's
    /// backend. A plan the seccomp backend cannot honour is a harness error naming it.
    pub fn plan(
        ph: &super::sandbox::Placeholders,
        template: &[String],
        plan: &str,
        trace: Option<&Path>,
    ) -> Injection {
        if choice(ph, template).backend != vxfault::Backend::Seccomp {
            return Injection::Preload(env(&preload_library(ph), plan, trace));
        }
        let rules = vxfault::check_plan(plan)
            .unwrap_or_else(|e| crate::harness_error!("fault plan {plan:?}: {e}"));
        vxfault::seccomp::check_rules(&rules, plan)
            .unwrap_or_else(|e| crate::harness_error!("fault plan {plan:?}: {e}"));
        Injection::Seccomp(SeccompPlan {
            plan: plan.to_string(),
            // An empty plan only traces: every family is watched, as `vxfault run` does.
            ops: vxfault::seccomp::families(&rules, rules.is_empty()),
            trace: trace.map(Path::to_path_buf),
            data: None,
            counters: None,
        })
    }

    /// Records `template`'s program into `rec` (run under `plan`, which `rec` was made
    /// with), under the profile's backend.
    pub fn recording(
        ph: &super::sandbox::Placeholders,
        template: &[String],
        rec: &vxfault::crash::Recorder,
        plan: &str,
    ) -> Injection {
        if choice(ph, template).backend != vxfault::Backend::Seccomp {
            return Injection::Preload(rec.env(Path::new(&preload_library(ph))));
        }
        Injection::Seccomp(SeccompPlan {
            plan: plan.to_string(),
            ops: vxfault::seccomp::families(&[], true),
            trace: Some(rec.dir().join("log.jsonl")),
            data: Some(rec.dir().join("data.bin")),
            counters: Some(rec.counters().clone()),
        })
    }

    /// Counts the plan's matches into `counters` (made for the same plan), under
    /// either backend: every preloaded process maps it, the seccomp supervisor counts
    /// into it. Read them with [`vxfault::Counters::read`] while or after the program
    /// runs.
    pub fn counted(mut self, counters: &vxfault::Counters) -> Injection {
        match &mut self {
            Injection::Preload(env) => env.push((
                "VXFAULT_SHM".into(),
                counters.path().to_string_lossy().into_owned(),
            )),
            Injection::Seccomp(p) => p.counters = Some(counters.clone()),
        }
        self
    }

    /// Prepares `cmd` to run under the injection. Under seccomp the returned
    /// supervisor must be told when the spawn happened ([`Supervised::spawned`]).
    /// Set `cmd`'s standard streams after this call: a command that was to start
    /// through `vxcert`'s trampoline is rebuilt without it
    /// ([`super::start_state::without_trampoline`]).
    pub fn apply(&self, cmd: &mut Command) -> Option<Supervised> {
        super::start_state::without_trampoline(cmd);
        match self {
            Injection::Preload(env) => {
                cmd.envs(env.iter().map(|(k, v)| (k, v)));
                None
            }
            Injection::Seccomp(p) => {
                let setup = vxfault::seccomp::Setup {
                    plan: &p.plan,
                    ops: &p.ops,
                    seed: 0,
                    trace: p.trace.as_deref(),
                    data: p.data.as_deref(),
                    counters: p.counters.as_ref(),
                };
                let att = vxfault::seccomp::attach(cmd, &setup)
                    .unwrap_or_else(|e| crate::harness_error!("set up the seccomp filter: {e}"));
                Some(Supervised(att))
            }
        }
    }
}

/// For a program started and waited for in one call: the spawn is over, and the
/// trace complete once nothing is left under the filter (at most 5 s).
pub fn spawned_and_done(sup: Option<Supervised>) {
    if let Some(mut sup) = sup {
        sup.spawned();
        let _ = sup.finish_within(crate::drivers::scaled(5_000));
    }
}

/// The seccomp supervisor of one started program (and its children).
pub struct Supervised(vxfault::seccomp::Attached);

impl Supervised {
    /// After the spawn, whether it succeeded or not.
    pub fn spawned(&mut self) {
        self.0.spawned();
    }

    /// Waits at most `limit` until no process of the program's tree is left under the
    /// filter (the trace is then complete); `None` when some still are (a pane the
    /// daemon started outlives it), and the supervisor goes on answering them.
    pub fn finish_within(self, limit: Duration) -> Option<vxfault::seccomp::Stats> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(self.0.finish());
        });
        rx.recv_timeout(limit).ok().and_then(Result::ok)
    }
}

/// The environment that runs a program under `plan` (and traces it into `trace`).
/// An empty plan only traces and sets no `VXFAULT_PLAN`, so a plan the profile's
/// `[env]` gives the implementation stays in force (the negative control of the
/// traced publication row relies on it).
pub fn env(library: &str, plan: &str, trace: Option<&Path>) -> Vec<(String, String)> {
    let mut env = vec![("LD_PRELOAD".to_string(), library.to_string())];
    if !plan.is_empty() {
        env.push(("VXFAULT_PLAN".to_string(), plan.to_string()));
    }
    if let Some(t) = trace {
        env.push(("VXFAULT_TRACE".into(), t.to_string_lossy().into_owned()));
    }
    env
}

/// The calls of a trace file, in order (lines that are not JSON objects are skipped:
/// a process killed mid-line leaves a torn last line).
pub fn read_trace(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}
