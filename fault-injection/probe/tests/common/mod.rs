//! Helpers: run `vxfault-probe` under a plan and collect what happened.
#![allow(dead_code)]

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;

use vxfault::{Injector, Outcome, TraceRecord};

pub fn probe() -> &'static str {
    env!("CARGO_BIN_EXE_vxfault-probe")
}

/// One line the probe reported.
#[derive(Debug, Clone)]
pub struct Step {
    pub pid: i64,
    pub step: String,
    pub ret: i64,
    pub errno: i64,
}

pub struct Run {
    pub outcome: Outcome,
    pub steps: Vec<Step>,
    pub trace: Vec<TraceRecord>,
    pub stderr: String,
}

impl Run {
    /// The signal that ended the probe, if any.
    pub fn signal(&self) -> Option<i32> {
        self.outcome.status.signal()
    }

    pub fn step(&self, prefix: &str) -> &Step {
        self.steps
            .iter()
            .find(|s| s.step.starts_with(prefix))
            .unwrap_or_else(|| {
                panic!(
                    "no step {prefix} in {:?}\nstderr: {}",
                    self.steps, self.stderr
                )
            })
    }

    /// The return values of the steps whose name starts with `prefix`, in order.
    pub fn rets(&self, prefix: &str) -> Vec<i64> {
        self.steps
            .iter()
            .filter(|s| s.step.starts_with(prefix))
            .map(|s| s.ret)
            .collect()
    }

    /// Trace lines of calls (not load events).
    pub fn calls(&self) -> Vec<&TraceRecord> {
        self.trace.iter().filter(|r| r.is_call()).collect()
    }

    /// Trace lines on which rule `n` (1-based) acted.
    pub fn fired(&self, n: usize) -> Vec<&TraceRecord> {
        self.trace.iter().filter(|r| r.rule == Some(n)).collect()
    }
}

pub fn parse_steps(stdout: &[u8]) -> Vec<Step> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("bad probe line {l:?}: {e}"));
            Step {
                pid: v["pid"].as_i64().unwrap(),
                step: v["step"].as_str().unwrap().to_string(),
                ret: v["ret"].as_i64().unwrap(),
                errno: v["errno"].as_i64().unwrap(),
            }
        })
        .collect()
}

/// Runs the probe in `dir` with `steps` under `plan`, with a trace.
pub fn run_in(plan: &str, dir: &Path, steps: &[String]) -> Run {
    run_with(Injector::new(plan).expect("plan"), dir, steps)
}

pub fn run_with(inj: Injector, dir: &Path, steps: &[String]) -> Run {
    let mut cmd = Command::new(probe());
    cmd.args(steps).current_dir(dir);
    let (outcome, out) = inj.output(&mut cmd).expect("run probe");
    let trace = outcome.records().expect("trace");
    Run {
        steps: parse_steps(&out.stdout),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        outcome,
        trace,
    }
}

/// `format!` for step lists.
#[macro_export]
macro_rules! steps {
    ($($s:expr),* $(,)?) => { <[String]>::into_vec(Box::new([$($s.to_string()),*])) };
}

pub fn glob(p: &Path) -> String {
    vxfault::escape_glob(p.as_os_str().as_encoded_bytes())
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("vxfault-test-")
        .tempdir()
        .expect("tempdir")
}
