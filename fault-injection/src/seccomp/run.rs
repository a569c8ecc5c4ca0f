//! `Injector::run`/`output` under the seccomp backend.

use std::fs;
use std::io;
use std::process::{Command, Output};

use super::{check_rules, families, spawn, Choice, Setup};
use crate::{absolute, Backend, Injector, Outcome, RuleOutcome, SetupError};

/// Runs `cmd` under the filter; with `capture`, its stdout and stderr are returned.
pub fn run(
    inj: &Injector,
    cmd: &mut Command,
    choice: Choice,
    capture: bool,
) -> io::Result<(Outcome, Option<Output>)> {
    check_rules(&inj.rules, &inj.plan).map_err(|e| {
        SetupError::wrap(
            "use the seccomp backend with this plan",
            io::Error::new(io::ErrorKind::InvalidInput, e.to_string()),
        )
    })?;
    let dir = tempfile::Builder::new()
        .prefix("vxfault-run-")
        .tempdir()
        .map_err(|e| SetupError::wrap("create the run's temporary directory", e))?;
    let trace = match &inj.trace {
        Some(t) => {
            absolute(t).map_err(|e| SetupError::wrap_path("resolve the --trace path", t, e))?
        }
        None => dir.path().join("trace.jsonl"),
    };
    fs::write(&trace, b"")
        .map_err(|e| SetupError::wrap_path("create the --trace file", &trace, e))?;
    let seed = inj.effective_seed();
    // An empty plan traces everything (`points`); a plan, only its own families.
    let ops = families(&inj.rules, inj.rules.is_empty());
    let setup = Setup {
        plan: &inj.plan,
        ops: &ops,
        seed,
        trace: Some(&trace),
        data: None,
        // The outcome is read from the supervisor's own counts when the run is over.
        counters: None,
    };
    if capture {
        use std::process::Stdio;
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    let (child, att) = spawn(cmd, &setup).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied => e,
        _ if e.raw_os_error().is_some() => e,
        _ => SetupError::wrap("set up the seccomp filter", e),
    })?;
    let (status, output) = if capture {
        let out = child.wait_with_output()?;
        (out.status, Some(out))
    } else {
        let mut child = child;
        (child.wait()?, None)
    };
    let stats = att.finish()?;
    let rules = inj
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| RuleOutcome {
            text: r.text.clone(),
            op: r.op,
            reached: stats.seen[r.op as usize],
            matched: stats.matched.get(i).copied().unwrap_or(0),
            fired: stats.fired.get(i).copied().unwrap_or(0),
            kills: r.kills,
        })
        .collect();
    Ok((
        Outcome {
            status,
            loaded: stats.loaded,
            plan_mismatch: 0,
            plan_errors: 0,
            trace_errors: stats.trace_errors,
            rules,
            seed,
            trace_path: trace,
            backend: Backend::Seccomp,
            backend_reason: choice.reason,
            _dir: dir,
        },
        output,
    ))
}
