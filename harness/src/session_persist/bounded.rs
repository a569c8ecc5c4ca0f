//! The implementation's commands run with a bound: a command still running past it
//! (an unpack blocked on a FIFO it opened) is killed with its process group, and the
//! row fails with the command's evidence (`signal` 9, its duration) instead of
//! hanging the suite.

use super::bench::{Persist, Ran};
use crate::drivers::sandbox;
use crate::verdict::OrHarness;
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long one unpack or HasSession of a hostile destination may take (scaled by
/// the profile's `timeout_multiplier`): far above what any of them needs.
pub const BOUND_MS: u64 = 5_000;

/// What a bounded command did.
#[derive(Debug, Clone, Copy)]
pub struct Bounded {
    /// Its exit status; `None` when a signal ended it.
    pub exit: Option<i32>,
    /// Whether the suite killed it at the bound.
    pub killed: bool,
    pub bound: Duration,
}

/// Runs `template` filled with `fill` like [`Persist::run`], killed past the bound.
pub fn run(
    s: &mut Persist,
    template: &[String],
    fill: &[(&str, &str)],
    env: &[(String, String)],
) -> Bounded {
    if template.is_empty() {
        crate::harness_error!("the profile's [persist] table names no command for this step");
    }
    let words: Vec<String> = template
        .iter()
        .map(|w| {
            fill.iter()
                .fold(w.clone(), |w, (k, v)| w.replace(&format!("{{{k}}}"), v))
        })
        .collect();
    let bound = crate::drivers::scaled(BOUND_MS);
    let mut cmd = sandbox::command(&s.ph, &words, env, s.sandbox());
    let mut sup = s.injection.as_ref().and_then(|i| i.apply(&mut cmd));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let child = cmd.spawn();
    if let Some(sup) = sup.as_mut() {
        sup.spawned();
    }
    let mut child = child.or_harness("running the implementation's command");
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut killed = false;
    let status = loop {
        if let Some(status) = child.try_wait().or_harness("waiting for the command") {
            break status;
        }
        if start.elapsed() > bound {
            killed = true;
            let group = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            break child.wait().or_harness("waiting for the killed command");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let took = start.elapsed();
    if let Some(sup) = sup {
        // Under seccomp the trace is the supervisor's: complete once the tree is gone.
        let _ = sup.finish_within(crate::drivers::scaled(5_000));
    }
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    crate::evidence::command(crate::evidence::CommandRun::of(
        &cmd, status, took, &stdout, &stderr,
    ));
    s.last = Some(Ran {
        exit: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
    });
    Bounded {
        exit: status.code(),
        killed,
        bound,
    }
}

/// Fails the row when the command ran into its bound, under `clause`: the one the
/// row's check tests (a special file the command blocked on is path safety; an
/// unpack under the injector, with nothing hostile planted, is the temp extract's).
pub fn require_within_bound(b: &Bounded, what: &str, clause: &str) {
    crate::evidence::ensure(!b.killed, Some(clause), || {
        (
            format!("{what} to end within {} ms", b.bound.as_millis()),
            format!(
                "still running after {} ms, killed with its process group (a FIFO or a \
                 link it waited on?)",
                b.bound.as_millis()
            ),
        )
    });
}

/// HasSession of `root` asked with the bound: its answer, or what it said instead.
pub fn has_session(s: &mut Persist, root: &str, backend: &str, id: &str) -> Result<bool, String> {
    let t = s.t.has_session.clone();
    let b = run(
        s,
        &t,
        &[("backend", backend), ("root", root), ("id", id)],
        &[],
    );
    require_within_bound(&b, "has-session", "sp-path-safety");
    match (b.exit, s.last().stdout.trim()) {
        (Some(0), "true") => Ok(true),
        (Some(0), "false") => Ok(false),
        (exit, out) => Err(format!("exit {exit:?} with stdout {out:?}")),
    }
}
