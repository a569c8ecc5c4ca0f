//! The `vxfault` command line.
//!
//! ```text
//! vxfault run [--plan PLAN] [--trace FILE] [--seed N] [--lib PATH] [--require-fire] [--quiet] -- CMD ARGS…
//! vxfault points [--trace FILE] [--lib PATH] [--all] [--filter GLOB] [--op OP]… [--json] -- CMD ARGS…
//! vxfault check PLAN
//! vxfault lib
//! vxfault record --out DIR [--root DIR] -- CMD ARGS…     (crash::cli)
//! vxfault explore --log DIR --model M --check 'CMD {root}' (crash::cli)
//! ```
//!
//! Exit codes: the command's own (128+N when killed by signal N), 124 when the run was
//! not injectable (or, with `--require-fire`, a rule never fired), 125 for a bad plan
//! or bad usage, 126/127 when the command could not be started.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::Command;

use crate::{
    check_plan, Backend, Injector, Op, PointFilter, SetupError, EXIT_NOT_INJECTABLE, EXIT_USAGE,
};

const USAGE: &str = "\
usage: vxfault run [--plan PLAN] [--backend preload|seccomp|auto] [--trace FILE] [--seed N] [--lib PATH] [--require-fire] [--quiet] -- CMD ARGS...
       vxfault points [--backend B] [--trace FILE] [--lib PATH] [--all] [--filter GLOB] [--op OP]... [--json] -- CMD ARGS...
       vxfault check PLAN
       vxfault lib
       vxfault record --out DIR [--root DIR] [--backend B] -- CMD ARGS...
       vxfault explore --log DIR [--model prefix|posix|ext4-ordered] --check 'CMD {root}' [--root DIR] [--jobs N] [--timeout SECS] [--state N]
       vxfault explore --log DIR [--model M] --state N --materialize DIR
       vxfault explore --log DIR [--model M] --list

PLAN (also from $VXFAULT_PLAN): rules separated by ';'
  rule    := op ['@' glob] [trigger] '=' action
  op      := open | write | fsync | rename | unlink | rmdir | mkdir | link | close | flock
           | ftruncate | fallocate | chmod | utimens
  trigger := '#' N | '#' N '+' | '%' P      (per process; '##' N counts across the process tree)
  action  := ERRNO | short:N | torn:N | crash | crash-after | delay:MS | lie | after:ERRNO
BACKEND: preload (LD_PRELOAD, libc's wrappers), seccomp (the system calls themselves:
  Go, static binaries), auto (default: preload for a dynamic program that calls libc's
  file functions, seccomp otherwise); the choice is said on stderr
exit: the command's status (128+signal), 124 not injectable, 125 bad plan/usage";

/// Options that take one value and may be given once: a second one is refused rather
/// than silently replacing the first.
const ONCE: &[&str] = &[
    "--plan",
    "--trace",
    "--lib",
    "--seed",
    "--filter",
    "--backend",
];

#[derive(Default)]
struct Opts {
    plan: Option<String>,
    trace: Option<PathBuf>,
    seed: Option<u64>,
    lib: Option<PathBuf>,
    backend: Backend,
    require_fire: bool,
    quiet: bool,
    all: bool,
    filter: Option<String>,
    ops: Vec<Op>,
    json: bool,
    cmd: Vec<OsString>,
}

fn text(v: Option<OsString>, flag: &str) -> Result<String, String> {
    v.ok_or_else(|| format!("{flag} needs a value"))?
        .into_string()
        .map_err(|_| format!("{flag}: not UTF-8"))
}

fn parse_opts(args: &[OsString], sub: &str) -> Result<Opts, String> {
    let mut o = Opts::default();
    let mut it = args.iter().cloned();
    let mut given: Vec<&str> = Vec::new();
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else {
            return Err("unexpected argument (put the command after --)".to_string());
        };
        if ONCE.contains(&s) {
            if given.contains(&s) {
                return Err(if s == "--plan" {
                    "--plan given twice: put all rules in one plan, separated by ';'".into()
                } else {
                    format!("{s} given twice")
                });
            }
            given.push(ONCE.iter().copied().find(|o| *o == s).unwrap_or(""));
        }
        match s {
            "--" => {
                o.cmd = it.collect();
                break;
            }
            "--plan" if sub == "run" => o.plan = Some(text(it.next(), s)?),
            "--trace" => o.trace = Some(PathBuf::from(it.next().ok_or("--trace needs a value")?)),
            "--lib" => o.lib = Some(PathBuf::from(it.next().ok_or("--lib needs a value")?)),
            "--seed" if sub == "run" => {
                let v = text(it.next(), s)?;
                o.seed = Some(
                    v.parse()
                        .map_err(|_| format!("--seed: not a number: {v}"))?,
                );
            }
            "--backend" => {
                let v = text(it.next(), s)?;
                o.backend = v.parse().map_err(|e| format!("--backend: {e}"))?;
            }
            "--require-fire" if sub == "run" => o.require_fire = true,
            "--quiet" | "-q" => o.quiet = true,
            "--all" if sub == "points" => o.all = true,
            "--json" if sub == "points" => o.json = true,
            "--filter" if sub == "points" => o.filter = Some(text(it.next(), s)?),
            "--op" if sub == "points" => {
                let v = text(it.next(), s)?;
                o.ops
                    .push(Op::from_name(v.as_bytes()).ok_or(format!("--op: unknown op {v}"))?);
            }
            _ => {
                return Err(format!(
                    "unknown option {s} for `vxfault {sub}` (put the command after --)"
                ))
            }
        }
    }
    if o.cmd.is_empty() {
        return Err(format!("`vxfault {sub}` needs a command after --"));
    }
    Ok(o)
}

fn command(o: &Opts) -> Command {
    let mut c = Command::new(&o.cmd[0]);
    c.args(&o.cmd[1..]);
    c
}

fn spawn_error(err: &mut dyn Write, o: &Opts, e: &io::Error) -> i32 {
    if let Some(setup) = SetupError::of(e) {
        // The runner's own file, not the command: nothing was started.
        let _ = writeln!(err, "vxfault: {setup}");
        return EXIT_USAGE;
    }
    let _ = writeln!(err, "vxfault: cannot run {:?}: {e}", o.cmd[0]);
    if e.kind() == io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

/// Runs the CLI with `args` (without the program name); messages go to `err`,
/// `points` output to `out`. Returns the exit code.
pub fn run(args: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let Some(sub) = args.first().and_then(|a| a.to_str()) else {
        let _ = writeln!(err, "{USAGE}");
        return EXIT_USAGE;
    };
    let rest = &args[1..];
    match sub {
        "run" => cmd_run(rest, err),
        "record" => crate::crash::cli::record(rest, err),
        "explore" => crate::crash::cli::explore_cmd(rest, out, err),
        "points" => cmd_points(rest, out, err),
        "check" => match rest.first().and_then(|a| a.to_str()) {
            Some(plan) => match check_plan(plan) {
                Ok(rules) if rules.is_empty() => {
                    let _ = writeln!(err, "vxfault: empty plan: no rules");
                    EXIT_USAGE
                }
                Ok(rules) => {
                    for (i, r) in rules.iter().enumerate() {
                        let _ = writeln!(out, "rule {}: {} (op {})", i + 1, r.text, r.op.name());
                    }
                    0
                }
                Err(e) => {
                    let _ = writeln!(err, "vxfault: {e}");
                    EXIT_USAGE
                }
            },
            None => {
                let _ = writeln!(err, "vxfault check needs a PLAN");
                EXIT_USAGE
            }
        },
        "lib" => match crate::preload_path() {
            Ok(p) => {
                let _ = writeln!(out, "{}", p.display());
                0
            }
            Err(e) => {
                let _ = writeln!(err, "vxfault: cannot provide libvxfault.so: {e}");
                1
            }
        },
        "--help" | "-h" | "help" => {
            let _ = writeln!(out, "{USAGE}");
            0
        }
        "--version" | "-V" => {
            let _ = writeln!(out, "vxfault {}", env!("CARGO_PKG_VERSION"));
            0
        }
        other => {
            let _ = writeln!(err, "vxfault: unknown command {other}\n{USAGE}");
            EXIT_USAGE
        }
    }
}

fn injector(o: &Opts, plan: &str, err: &mut dyn Write) -> Result<Injector, i32> {
    let mut inj = match Injector::new(plan) {
        Ok(i) => i,
        Err(e) => {
            let _ = writeln!(err, "vxfault: {e}");
            return Err(EXIT_USAGE);
        }
    };
    if let Some(t) = &o.trace {
        inj = inj.trace(t);
    }
    if let Some(l) = &o.lib {
        inj = inj.lib(l);
    }
    if let Some(s) = o.seed {
        inj = inj.seed(s);
    }
    inj = inj.backend(o.backend);
    let choice = inj.choice(&command(o));
    if !o.quiet {
        let _ = writeln!(
            err,
            "vxfault: backend {} ({})",
            choice.backend.name(),
            choice.reason
        );
    }
    if choice.backend == Backend::Seccomp {
        if let Err(e) = crate::seccomp::check_rules(inj.rules(), plan) {
            let _ = writeln!(err, "vxfault: {e}");
            return Err(EXIT_USAGE);
        }
    }
    Ok(inj)
}

fn cmd_run(args: &[OsString], err: &mut dyn Write) -> i32 {
    let o = match parse_opts(args, "run") {
        Ok(o) => o,
        Err(e) => {
            let _ = writeln!(err, "vxfault: {e}\n{USAGE}");
            return EXIT_USAGE;
        }
    };
    let plan = o
        .plan
        .clone()
        .or_else(|| std::env::var("VXFAULT_PLAN").ok())
        .unwrap_or_default();
    let inj = match injector(&o, &plan, err) {
        Ok(i) => i,
        Err(code) => return code,
    };
    if inj.rules().is_empty() {
        let _ = writeln!(
            err,
            "vxfault: empty plan: nothing would be injected (give --plan or VXFAULT_PLAN; \
             `vxfault points` traces without a plan)"
        );
        return EXIT_USAGE;
    }
    let outcome = match inj.run(&mut command(&o)) {
        Ok(x) => x,
        Err(e) => return spawn_error(err, &o, &e),
    };
    if !o.quiet {
        if inj.rules().iter().any(|r| r.random) {
            let _ = writeln!(err, "vxfault: seed {}", outcome.seed);
        }
        for (i, r) in outcome.rules.iter().enumerate() {
            let _ = writeln!(
                err,
                "vxfault: rule {} `{}`: matched {}, fired {}",
                i + 1,
                r.text,
                r.matched,
                r.fired
            );
        }
        if outcome.plan_mismatch > 0 {
            let _ = writeln!(
                err,
                "vxfault: warning: {} process(es) ran with a different VXFAULT_PLAN; their calls are not counted here",
                outcome.plan_mismatch
            );
        }
        if outcome.trace_errors > 0 {
            let _ = writeln!(
                err,
                "vxfault: warning: {} trace line(s) could not be written",
                outcome.trace_errors
            );
        }
    }
    if let Err(why) = outcome.injectable() {
        let _ = writeln!(err, "vxfault: not injectable: {why}");
        return EXIT_NOT_INJECTABLE;
    }
    if o.require_fire {
        let idle: Vec<String> = outcome
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.fired == 0)
            .map(|(i, r)| {
                format!(
                    "rule {} `{}` never fired (matched {})",
                    i + 1,
                    r.text,
                    r.matched
                )
            })
            .collect();
        if !idle.is_empty() {
            let _ = writeln!(err, "vxfault: not injected: {}", idle.join("; "));
            return EXIT_NOT_INJECTABLE;
        }
    }
    outcome.exit_code()
}

fn cmd_points(args: &[OsString], out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let o = match parse_opts(args, "points") {
        Ok(o) => o,
        Err(e) => {
            let _ = writeln!(err, "vxfault: {e}\n{USAGE}");
            return EXIT_USAGE;
        }
    };
    if let Some(Err(why)) = o.filter.as_deref().map(crate::check_glob) {
        let _ = writeln!(err, "vxfault: --filter: {why}");
        return EXIT_USAGE;
    }
    let inj = match injector(&o, "", err) {
        Ok(i) => i,
        Err(code) => return code,
    };
    let filter = PointFilter {
        all: o.all,
        glob: o.filter.clone(),
        ops: o.ops.clone(),
    };
    let outcome = match inj.run(&mut command(&o)) {
        Ok(x) => x,
        Err(e) => return spawn_error(err, &o, &e),
    };
    if let Err(why) = outcome.injectable() {
        let _ = writeln!(err, "vxfault: not injectable: {why}");
        return EXIT_NOT_INJECTABLE;
    }
    let records = match outcome.records() {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(err, "vxfault: cannot read the trace: {e}");
            return 1;
        }
    };
    for p in crate::points_from_trace(&records, &filter) {
        let line = if o.json {
            p.to_json()
        } else {
            format!("{}\t{}\t{}", p.rule, p.call, p.pid)
        };
        if writeln!(out, "{line}").is_err() {
            return 1;
        }
    }
    let code = outcome.exit_code();
    if code != 0 && !o.quiet {
        let _ = writeln!(err, "vxfault: note: the command exited with status {code}");
    }
    code
}
