//! `vxfault record` and `vxfault explore`.
//!
//! ```text
//! vxfault record --out DIR [--root DIR] [--backend preload|seccomp|auto] -- CMD ARGS…
//! vxfault explore --log DIR [--model prefix|posix|ext4-ordered] --check 'CMD {root}'
//!                 [--root DIR] [--jobs N] [--timeout SECS] [--state N]
//! vxfault explore --log DIR [--model M] --state N --materialize DIR
//! vxfault explore --log DIR [--model M] --list
//! ```
//!
//! Exit codes: record returns the command's; explore 0 when every state passes, 1
//! when one fails; both 2 for bad input (one line on stderr, nothing materialized).

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::explore::{explore, materialize, Checker, Options, Report};
use super::model::Model;

/// Exit code for bad input.
pub const EXIT_BAD_INPUT: i32 = 2;

fn bad(err: &mut dyn Write, msg: impl std::fmt::Display) -> i32 {
    let _ = writeln!(err, "vxfault: {msg}");
    EXIT_BAD_INPUT
}

fn value(it: &mut impl Iterator<Item = OsString>, flag: &str) -> Result<OsString, String> {
    it.next().ok_or_else(|| format!("{flag} needs a value"))
}

fn number(v: OsString, flag: &str) -> Result<usize, String> {
    v.to_str()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("{flag}: not a number"))
}

/// `vxfault record`.
pub fn record(args: &[OsString], err: &mut dyn Write) -> i32 {
    let mut out = None;
    let mut root = None;
    let mut backend = crate::Backend::Auto;
    let mut cmd = Vec::new();
    let mut it = args.iter().cloned();
    while let Some(a) = it.next() {
        let r = match a.to_str() {
            Some("--out") => value(&mut it, "--out").map(|v| out = Some(PathBuf::from(v))),
            Some("--root") => value(&mut it, "--root").map(|v| root = Some(PathBuf::from(v))),
            Some("--backend") => value(&mut it, "--backend").and_then(|v| {
                backend = v
                    .to_str()
                    .unwrap_or("")
                    .parse()
                    .map_err(|e| format!("--backend: {e}"))?;
                Ok(())
            }),
            Some("--") => {
                cmd = it.by_ref().collect();
                Ok(())
            }
            _ => Err("unknown option for `vxfault record` (put the command after --)".into()),
        };
        if let Err(e) = r {
            return bad(err, e);
        }
    }
    let (Some(out), false) = (out, cmd.is_empty()) else {
        return bad(
            err,
            "`vxfault record` needs --out DIR and a command after --",
        );
    };
    let root = root.unwrap_or_else(|| PathBuf::from("."));
    if !root.is_dir() {
        return bad(err, "--root is not a directory");
    }
    let mut c = Command::new(&cmd[0]);
    c.args(&cmd[1..]);
    let choice = crate::seccomp::choose(backend, std::path::Path::new(&cmd[0]));
    let _ = writeln!(
        err,
        "vxfault: backend {} ({})",
        choice.backend.name(),
        choice.reason
    );
    match super::record_with(&out, &root, &mut c, backend) {
        Ok(r) => {
            if let Some(why) = &r.switched {
                let _ = writeln!(err, "vxfault: {why}; recorded again with seccomp");
            }
            let _ = writeln!(
                err,
                "vxfault: recorded {} lines, {} data bytes with the {} backend; replayed, \
                 the log reproduces the root the run left",
                r.meta.lines,
                r.meta.data_bytes,
                r.backend.name()
            );
            r.meta.exit_code
        }
        Err(e) => bad(err, format!("cannot record: {e}")),
    }
}

/// `vxfault explore`.
pub fn explore_cmd(args: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut log = None;
    let mut model = "posix".to_string();
    let mut check = None;
    let mut root = None;
    let mut jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut timeout = 120usize;
    let mut state = None;
    let mut dest = None;
    let mut list = false;
    let mut it = args.iter().cloned();
    while let Some(a) = it.next() {
        let flag = a.to_str().unwrap_or("");
        let r: Result<(), String> = (|| {
            match flag {
                "--log" => log = Some(PathBuf::from(value(&mut it, flag)?)),
                "--model" => {
                    model = value(&mut it, flag)?
                        .into_string()
                        .map_err(|_| "--model: not UTF-8")?
                }
                "--check" => {
                    check = Some(
                        value(&mut it, flag)?
                            .into_string()
                            .map_err(|_| "--check: not UTF-8")?,
                    )
                }
                "--root" => root = Some(PathBuf::from(value(&mut it, flag)?)),
                "--jobs" => jobs = number(value(&mut it, flag)?, flag)?,
                "--timeout" => timeout = number(value(&mut it, flag)?, flag)?,
                "--state" => state = Some(number(value(&mut it, flag)?, flag)?),
                "--materialize" => dest = Some(PathBuf::from(value(&mut it, flag)?)),
                "--list" => list = true,
                _ => return Err("unknown option for `vxfault explore`".into()),
            }
            Ok(())
        })();
        if let Err(e) = r {
            return bad(err, e);
        }
    }
    let Ok(model) = model.parse::<Model>() else {
        return bad(err, format!("unknown model (known: {})", Model::NAMES));
    };
    let Some(log) = log else {
        return bad(err, "`vxfault explore` needs --log DIR");
    };
    if list {
        return match super::explore::list(&log, model) {
            Ok(lines) => {
                for l in lines {
                    let _ = writeln!(out, "{l}");
                }
                0
            }
            Err(e) => bad(err, e),
        };
    }
    if let Some(dest) = dest {
        let Some(id) = state else {
            return bad(err, "--materialize needs --state N");
        };
        return match materialize(&log, model, id, &dest) {
            Ok(()) => 0,
            Err(e) => bad(err, e),
        };
    }
    let Some(check) = check else {
        return bad(err, "`vxfault explore` needs --check 'CMD {root}'");
    };
    let checker = match Checker::new(&check) {
        Ok(c) => c,
        Err(e) => return bad(err, e),
    };
    let opts = Options {
        model,
        checker,
        jobs,
        only: state,
        timeout: Duration::from_secs(timeout as u64),
    };
    let report = match explore(&log, root.as_deref(), &opts) {
        Ok(r) => r,
        Err(e) => return bad(err, e),
    };
    print_report(&report, &log, &check, out);
    if report.violations.is_empty() {
        0
    } else {
        1
    }
}

fn print_report(r: &Report, log: &std::path::Path, check: &str, out: &mut dyn Write) {
    let _ = writeln!(out, "model {}: {} ops", r.model.name(), r.ops);
    for (s, n) in &r.counts {
        let _ = writeln!(out, "strategy {}: {n} states", s.name());
    }
    let _ = writeln!(
        out,
        "states {}, distinct {}, failing {} ({:.2}s)",
        r.states,
        r.checked,
        r.violations.len(),
        r.elapsed.as_secs_f64()
    );
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let repro = |id: usize| {
        format!(
            "vxfault explore --log {} --model {} --check {} --state {id}",
            quote(&log.display().to_string()),
            r.model.name(),
            quote(check)
        )
    };
    for v in &r.violations {
        let _ = writeln!(
            out,
            "FAIL state {} ({}): {}; {} output(s) before the crash; checker exit {}",
            v.state.id,
            v.state.strategy.name(),
            v.description,
            v.outputs,
            v.verdict
                .code
                .map_or("none (signal or timeout)".to_string(), |c| c.to_string())
        );
        for line in v.verdict.output.lines().take(5) {
            let _ = writeln!(out, "  | {line}");
        }
    }
    for v in r.minimal() {
        let _ = writeln!(
            out,
            "minimal reproducer ({}): {}",
            v.verdict.output.lines().next().unwrap_or("checker failed"),
            repro(v.state.id)
        );
    }
}
