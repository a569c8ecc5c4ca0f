//! `vxfault`: run a command under `libvxfault.so` with a fault plan, and list the
//! injection points a command hits.
//!
//! The CLI (`vxfault run`, `vxfault points`) is a thin wrapper over this library, so a
//! test in another crate can do the same in-process:
//!
//! ```no_run
//! use std::process::Command;
//! // Every point the workload reaches…
//! let points = vxfault::points(&mut Command::new("my-workload"), &vxfault::PointFilter::default())?;
//! for p in &points.points {
//!     // …fails in turn.
//!     let outcome = vxfault::Injector::new(&format!("{}=EIO", p.rule))?
//!         .run(&mut Command::new("my-workload"))?;
//!     outcome.injectable().expect("the plan reached the hooks");
//!     assert!(outcome.rules[0].fired >= 1);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use vxfault_plan as planlang;

pub mod cli;
mod counters;
pub mod crash;
mod points;
pub mod seccomp;
mod trace;

pub use counters::{Counted, Counters, Words};
pub use points::{points, points_from_trace, points_with, Point, PointFilter, Points};
pub use seccomp::{Backend, Choice};
pub use trace::{read_trace, TraceRecord};

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output};

/// Exit code of `vxfault` for a run that could not be injected (never a pass).
pub const EXIT_NOT_INJECTABLE: i32 = 124;
/// Exit code of `vxfault` for a bad plan or bad usage.
pub const EXIT_USAGE: i32 = 125;

/// The preload library built by build.rs, embedded so an installed runner is
/// self-contained.
static EMBEDDED_PRELOAD: &[u8] = include_bytes!(env!("VXFAULT_PRELOAD_BUILT"));

/// A call family of the plan language.
pub use planlang::Op;

/// A rejected plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanError {
    /// 1-based number of the offending rule (0 if not about one rule).
    pub rule: usize,
    /// The offending rule's text.
    pub text: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rule == 0 {
            write!(f, "bad plan: {}", self.message)
        } else {
            write!(
                f,
                "bad plan: rule {} `{}`: {}",
                self.rule, self.text, self.message
            )
        }
    }
}

impl std::error::Error for PlanError {}

/// A run that could not be set up: nothing was started. Carried inside the
/// `io::Error` that [`Injector::run`] returns (see [`SetupError::of`]); it names which
/// of the runner's own files failed (never the command), and the path when the user
/// gave it (`--trace`, `--lib`), so the message says which file to fix.
#[derive(Debug)]
pub struct SetupError {
    /// What the runner was doing (`create the --trace file`, …).
    pub what: &'static str,
    /// The user's path the runner could not use, if the user named one, and what to
    /// change.
    pub path: Option<(PathBuf, &'static str)>,
    /// The underlying error.
    pub source: io::Error,
}

impl SetupError {
    fn wrap(what: &'static str, source: io::Error) -> io::Error {
        io::Error::new(
            source.kind(),
            SetupError {
                what,
                path: None,
                source,
            },
        )
    }

    fn wrap_path(what: &'static str, path: &Path, source: io::Error) -> io::Error {
        let fix = if what.contains("--lib") {
            "give the path of a built libvxfault.so, or leave --lib out"
        } else {
            "give a path whose directory exists and is writable"
        };
        let path = Some((path.to_path_buf(), fix));
        io::Error::new(source.kind(), SetupError { what, path, source })
    }

    /// The setup error inside an error returned by [`Injector::run`]/[`Injector::output`],
    /// or `None` when the command itself could not be started.
    pub fn of(e: &io::Error) -> Option<&SetupError> {
        e.get_ref()?.downcast_ref::<SetupError>()
    }
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some((p, fix)) => write!(
                f,
                "cannot {} {}: {} ({fix})",
                self.what,
                p.display(),
                self.source
            ),
            None => write!(f, "cannot {}: {}", self.what, self.source),
        }
    }
}

impl std::error::Error for SetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// One rule of a checked plan, as the runner reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleInfo {
    /// The rule's text, trimmed.
    pub text: String,
    /// Its call family.
    pub op: Op,
    /// Whether its action ends the process (`crash`, `crash-after`, `torn:N`).
    pub kills: bool,
    /// Whether it uses a `%P` trigger (so the seed matters).
    pub random: bool,
}

fn rule_texts(plan: &str) -> Vec<String> {
    // The same splitting as the parser: on unescaped ';', empty rules skipped.
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = plan.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            ';' => {
                if !cur.trim().is_empty() {
                    out.push(cur.trim().to_string());
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// Parses `plan` exactly as `libvxfault.so` will.
pub fn check_plan(plan: &str) -> Result<Vec<RuleInfo>, PlanError> {
    let mut parsed = Box::new(planlang::Plan::EMPTY);
    let texts = rule_texts(plan);
    if let Err(e) = planlang::parse(plan.as_bytes(), &mut parsed) {
        return Err(PlanError {
            rule: e.rule,
            text: texts
                .get(e.rule.wrapping_sub(1))
                .cloned()
                .unwrap_or_default(),
            message: e.msg.to_string(),
        });
    }
    if plan.contains('\0') {
        return Err(PlanError {
            rule: 0,
            text: String::new(),
            message: "the plan contains a NUL byte".into(),
        });
    }
    Ok(parsed
        .rules()
        .iter()
        .zip(texts)
        .map(|(r, text)| RuleInfo {
            text,
            op: r.op,
            kills: r.action.kills(),
            random: matches!(r.trigger, planlang::Trigger::Ppm(_)),
        })
        .collect())
}

/// Checks a glob as a plan's `@glob` is checked: `Err(reason)` for an unterminated
/// `[` class or a reversed range.
pub fn check_glob(glob: &str) -> Result<(), &'static str> {
    planlang::validate_glob(glob.as_bytes())
}

/// Shell-style glob match, as the plan's `@glob` uses it (`*` crosses `/`).
pub fn glob_match(glob: &str, path: &[u8]) -> bool {
    planlang::glob_match(glob.as_bytes(), path)
}

/// Escapes a path into a glob that matches exactly it and is safe inside a rule.
/// Plans are text: a byte that is not part of valid UTF-8 becomes `?` (any one byte),
/// so the glob still matches the path (and any path differing only in those bytes).
pub fn escape_glob(path: &[u8]) -> String {
    let mut out = String::with_capacity(path.len() + 8);
    for chunk in path.utf8_chunks() {
        let valid = chunk.valid().as_bytes();
        let mut buf = vec![0u8; valid.len() * 2];
        let n = planlang::escape_glob(valid, &mut buf).unwrap_or(0);
        buf.truncate(n);
        out.push_str(&String::from_utf8_lossy(&buf));
        out.extend(std::iter::repeat_n('?', chunk.invalid().len()));
    }
    out
}

/// The bytes of `libvxfault.so` built with this crate, for a program that carries the
/// injector inside itself (`vxcert` materializes them in its own cache).
pub fn embedded_preload() -> &'static [u8] {
    EMBEDDED_PRELOAD
}

/// The path of `libvxfault.so` to preload: `$VXFAULT_LIB` if set, else the copy built
/// with this crate, else the embedded copy written to a per-user cache file.
pub fn preload_path() -> io::Result<PathBuf> {
    if let Some(p) = std::env::var_os("VXFAULT_LIB").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let built = Path::new(env!("VXFAULT_PRELOAD_BUILT"));
    if built.is_file() {
        return Ok(built.to_path_buf());
    }
    let hash = planlang::fnv1a(EMBEDDED_PRELOAD);
    let dir = std::env::temp_dir().join(format!("vxfault-{}-{hash:016x}", unsafe_uid()));
    let path = dir.join("libvxfault.so");
    if path.is_file() && fs::read(&path)? == EMBEDDED_PRELOAD {
        return Ok(path);
    }
    fs::create_dir_all(&dir)?;
    let tmp = dir.join(format!("libvxfault.so.{}", std::process::id()));
    fs::write(&tmp, EMBEDDED_PRELOAD)?;
    fs::rename(&tmp, &path)?;
    Ok(path)
}

fn unsafe_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0)
}

/// Test support: the statically linked helper built by build.rs (its calls never reach
/// the preload), or why it could not be built.
#[doc(hidden)]
pub fn static_probe() -> Result<PathBuf, String> {
    let p = env!("VXFAULT_STATIC_PROBE");
    if p.is_empty() {
        Err(format!(
            "the static test helper could not be built: {}",
            env!("VXFAULT_STATIC_PROBE_ERROR")
        ))
    } else {
        Ok(PathBuf::from(p))
    }
}

/// Counters of one rule after a run (whole process tree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleOutcome {
    pub text: String,
    pub op: Op,
    /// Calls of this family that reached the hooks at all.
    pub reached: bool,
    /// Calls that matched the rule's op and glob.
    pub matched: u64,
    /// Calls on which the rule acted.
    pub fired: u64,
    /// Whether the rule's action ends the process.
    pub kills: bool,
}

/// What happened in a run.
#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    /// Processes that loaded the preload with this plan.
    pub loaded: u64,
    /// Processes that loaded it with another plan (their counts are not here).
    pub plan_mismatch: u64,
    /// Processes whose `VXFAULT_PLAN` did not parse.
    pub plan_errors: u64,
    /// Trace lines that could not be written.
    pub trace_errors: u64,
    pub rules: Vec<RuleOutcome>,
    /// The seed given to the preload.
    pub seed: u64,
    pub trace_path: PathBuf,
    /// The backend that ran the command (never `Auto`) and why it was chosen.
    pub backend: Backend,
    pub backend_reason: String,
    _dir: tempfile::TempDir,
}

impl Outcome {
    /// `Err(reason)` if the plan could not have been injected: the preload was never
    /// loaded, or a rule's call family never reached the hooks (static binary, raw
    /// syscalls, or the program never made such a call) and no injected crash ended
    /// the run first. Such a run is never a pass.
    pub fn injectable(&self) -> Result<(), String> {
        if self.loaded == 0 && self.backend == Backend::Seccomp {
            return Err("the seccomp filter saw no exec: the command never started".into());
        }
        if self.loaded == 0 {
            return Err(
                "libvxfault.so was never loaded into the command (statically linked binary, \
                 setuid program, or LD_PRELOAD removed from its environment)"
                    .into(),
            );
        }
        if self.plan_errors > 0 {
            return Err(format!(
                "{} process(es) could not parse VXFAULT_PLAN (runner and preload disagree?)",
                self.plan_errors
            ));
        }
        let crashed = self.rules.iter().any(|r| r.kills && r.fired > 0);
        let unreached: Vec<String> = self
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.reached)
            .map(|(i, r)| {
                format!(
                    "rule {} `{}`: no {} call reached the hooks",
                    i + 1,
                    r.text,
                    r.op.name()
                )
            })
            .collect();
        if !unreached.is_empty() && !crashed {
            return Err(format!(
                "{} (static binary, raw syscalls, or the call was never made)",
                unreached.join("; ")
            ));
        }
        Ok(())
    }

    /// The exit code a shell would report for the command (128+N for signal N).
    pub fn exit_code(&self) -> i32 {
        match (self.status.code(), self.status.signal()) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            _ => 1,
        }
    }

    /// The trace of the run.
    pub fn records(&self) -> io::Result<Vec<TraceRecord>> {
        read_trace(&self.trace_path)
    }
}

/// Runs commands under a plan.
#[derive(Debug, Clone)]
pub struct Injector {
    plan: String,
    rules: Vec<RuleInfo>,
    trace: Option<PathBuf>,
    seed: Option<u64>,
    lib: Option<PathBuf>,
    backend: Backend,
}

impl Injector {
    /// Checks `plan`; an empty plan only traces.
    pub fn new(plan: &str) -> Result<Injector, PlanError> {
        let rules = check_plan(plan)?;
        Ok(Injector {
            plan: plan.to_string(),
            rules,
            trace: None,
            seed: None,
            lib: None,
            backend: Backend::Auto,
        })
    }

    /// Which backend runs the command (default `auto`).
    pub fn backend(mut self, b: Backend) -> Injector {
        self.backend = b;
        self
    }

    /// The backend a run of `cmd` would use, and why.
    pub fn choice(&self, cmd: &Command) -> Choice {
        seccomp::choose(self.backend, Path::new(cmd.get_program()))
    }

    /// Writes the trace to `path` (created or truncated) instead of a temp file.
    pub fn trace(mut self, path: impl Into<PathBuf>) -> Injector {
        self.trace = Some(path.into());
        self
    }

    /// Seed for `%P` triggers (default: `$VXFAULT_SEED`, else 0).
    pub fn seed(mut self, seed: u64) -> Injector {
        self.seed = Some(seed);
        self
    }

    /// Preloads this library instead of [`preload_path`].
    pub fn lib(mut self, path: impl Into<PathBuf>) -> Injector {
        self.lib = Some(path.into());
        self
    }

    /// The checked rules.
    pub fn rules(&self) -> &[RuleInfo] {
        &self.rules
    }

    /// Runs `cmd` to completion under the plan (stdio as configured on `cmd`).
    pub fn run(&self, cmd: &mut Command) -> io::Result<Outcome> {
        let choice = self.choice(cmd);
        if choice.backend == Backend::Seccomp {
            return seccomp::run::run(self, cmd, choice, false).map(|(o, _)| o);
        }
        let prep = self.prepare(cmd)?;
        let status = cmd.status()?;
        let mut o = self.finish(prep, status)?;
        o.backend_reason = choice.reason;
        Ok(o)
    }

    /// The `%P` seed: as given, else `$VXFAULT_SEED`, else 0.
    fn effective_seed(&self) -> u64 {
        match self.seed {
            Some(s) => s,
            None => std::env::var("VXFAULT_SEED")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0),
        }
    }

    /// Runs `cmd` under the plan capturing its stdout and stderr.
    pub fn output(&self, cmd: &mut Command) -> io::Result<(Outcome, Output)> {
        let choice = self.choice(cmd);
        if choice.backend == Backend::Seccomp {
            let (o, out) = seccomp::run::run(self, cmd, choice, true)?;
            let status = o.status;
            let out = out.unwrap_or(Output {
                status,
                stdout: Vec::new(),
                stderr: Vec::new(),
            });
            return Ok((o, out));
        }
        let prep = self.prepare(cmd)?;
        let out = cmd.output()?;
        let mut o = self.finish(prep, out.status)?;
        o.backend_reason = choice.reason;
        Ok((o, out))
    }

    /// The environment for `cmd`: `LD_PRELOAD`, `VXFAULT_PLAN`, `VXFAULT_TRACE`,
    /// `VXFAULT_SHM` (a fresh counter file) and `VXFAULT_SEED`.
    fn prepare(&self, cmd: &mut Command) -> io::Result<Prepared> {
        let dir = tempfile::Builder::new()
            .prefix("vxfault-run-")
            .tempdir()
            .map_err(|e| SetupError::wrap("create the run's temporary directory", e))?;
        let lib = match &self.lib {
            Some(l) => l.clone(),
            None => preload_path().map_err(|e| SetupError::wrap("provide libvxfault.so", e))?,
        };
        let lib =
            absolute(&lib).map_err(|e| SetupError::wrap_path("resolve the --lib path", &lib, e))?;
        if !lib.is_file() {
            return Err(SetupError::wrap_path(
                "preload the --lib library",
                &lib,
                io::Error::new(io::ErrorKind::NotFound, "no such file"),
            ));
        }
        let trace = match &self.trace {
            Some(t) => {
                absolute(t).map_err(|e| SetupError::wrap_path("resolve the --trace path", t, e))?
            }
            None => dir.path().join("trace.jsonl"),
        };
        fs::write(&trace, b"")
            .map_err(|e| SetupError::wrap_path("create the --trace file", &trace, e))?;
        let shm = Counters::create(&dir.path().join("counters"), &self.plan)
            .map_err(|e| SetupError::wrap("create the counter file", e))?;
        let seed = self.effective_seed();
        let mut preload = OsString::from(lib.as_os_str());
        if let Some(old) = std::env::var_os("LD_PRELOAD").filter(|v| !v.is_empty()) {
            preload.push(" ");
            preload.push(old);
        }
        cmd.env("LD_PRELOAD", preload)
            .env("VXFAULT_PLAN", &self.plan)
            .env("VXFAULT_TRACE", &trace)
            .env("VXFAULT_SHM", shm.path())
            .env("VXFAULT_SEED", seed.to_string());
        Ok(Prepared {
            dir,
            trace,
            shm,
            seed,
        })
    }

    fn finish(&self, prep: Prepared, status: ExitStatus) -> io::Result<Outcome> {
        let counted = prep.shm.read(&self.rules)?;
        Ok(Outcome {
            status,
            loaded: counted.loaded,
            plan_mismatch: counted.plan_mismatch,
            plan_errors: counted.plan_errors,
            trace_errors: counted.trace_errors,
            rules: counted.rules,
            seed: prep.seed,
            trace_path: prep.trace,
            backend: Backend::Preload,
            backend_reason: String::new(),
            _dir: prep.dir,
        })
    }
}

struct Prepared {
    dir: tempfile::TempDir,
    trace: PathBuf,
    shm: Counters,
    seed: u64,
}

fn absolute(p: &Path) -> io::Result<PathBuf> {
    if p.is_absolute() {
        Ok(p.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(p))
    }
}
