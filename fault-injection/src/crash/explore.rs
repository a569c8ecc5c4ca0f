//! Exploring a recording: enumerate the model's states, collapse those that leave the
//! same tree (and the same acknowledgements), materialize each distinct one in a
//! fresh temp dir and run the checker on it, across cores.

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::log::{LogError, Recording};
use super::model::{self, CrashState, Model, Strategy};
use super::reader;
use super::replay::{outputs_before, state_tree, Tree};

/// Most bytes of a checker's output kept for the report.
pub const OUTPUT_CAP: usize = 4096;

/// Why exploring could not start (nothing was materialized).
#[derive(Debug)]
pub enum ExploreError {
    Log(LogError),
    UnknownModel,
    /// The checker's program is not an executable file.
    CheckerNotExecutable,
    /// `--state N` beyond the enumeration.
    NoSuchState,
    Io(std::io::Error),
}

impl fmt::Display for ExploreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExploreError::Log(e) => e.fmt(f),
            ExploreError::UnknownModel => {
                write!(f, "unknown model (known: {})", Model::NAMES)
            }
            ExploreError::CheckerNotExecutable => write!(
                f,
                "the checker's program is not an executable file (nor found on PATH)"
            ),
            ExploreError::NoSuchState => write!(f, "--state is beyond the enumerated states"),
            ExploreError::Io(e) => write!(f, "cannot materialize a state: {}", e.kind()),
        }
    }
}

impl std::error::Error for ExploreError {}

/// A checker command; `{root}` is replaced by the state's directory (shell-quoted)
/// and the whole runs under `sh -c`.
#[derive(Debug, Clone)]
pub struct Checker {
    pub template: String,
}

impl Checker {
    /// Checks that the command's first word is an executable file (or on PATH).
    pub fn new(template: &str) -> Result<Checker, ExploreError> {
        let first = first_word(template).ok_or(ExploreError::CheckerNotExecutable)?;
        let first = first.as_str();
        let exec = |p: &Path| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        let ok = if first.contains('/') {
            exec(Path::new(first))
        } else {
            std::env::var_os("PATH")
                .is_some_and(|path| std::env::split_paths(&path).any(|d| exec(&d.join(first))))
        };
        if !ok {
            return Err(ExploreError::CheckerNotExecutable);
        }
        Ok(Checker {
            template: template.to_string(),
        })
    }

    fn command(&self, root: &Path) -> Command {
        let quoted = format!("'{}'", root.display().to_string().replace('\'', r"'\''"));
        let mut c = Command::new("sh");
        c.arg("-c").arg(self.template.replace("{root}", &quoted));
        c.env_remove("LD_PRELOAD");
        c
    }
}

/// The program of a shell command line: its first word, with single or double quotes
/// around it removed (no other shell syntax is interpreted).
fn first_word(cmd: &str) -> Option<String> {
    let cmd = cmd.trim_start();
    let q = cmd.chars().next()?;
    if q == '\'' || q == '"' {
        let rest = &cmd[1..];
        return rest.find(q).map(|end| rest[..end].to_string());
    }
    cmd.split_whitespace().next().map(str::to_string)
}

/// What to explore.
#[derive(Debug, Clone)]
pub struct Options {
    pub model: Model,
    pub checker: Checker,
    pub jobs: usize,
    /// Only this state (a reproducer).
    pub only: Option<usize>,
    pub timeout: Duration,
}

/// The checker's verdict on one distinct tree.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub ok: bool,
    /// Exit code (None: killed by a signal or the timeout).
    pub code: Option<i32>,
    pub output: String,
}

/// A state whose checker failed.
#[derive(Debug, Clone)]
pub struct Violation {
    pub state: CrashState,
    pub description: String,
    pub outputs: usize,
    pub verdict: Verdict,
}

/// The result of an exploration.
#[derive(Debug)]
pub struct Report {
    pub model: Model,
    pub ops: usize,
    pub counts: Vec<(Strategy, usize)>,
    pub states: usize,
    /// Distinct trees checked.
    pub checked: usize,
    pub violations: Vec<Violation>,
    pub elapsed: Duration,
}

impl Report {
    /// Per distinct first line of the checker's output, the smallest failing state
    /// (fewest ops before the crash, then no deviation before one).
    pub fn minimal(&self) -> Vec<&Violation> {
        let mut best: Vec<&Violation> = Vec::new();
        for v in &self.violations {
            let key = v.verdict.output.lines().next().unwrap_or("");
            let rank = |x: &Violation| {
                let dev = usize::from(x.state.deviates());
                (x.state.crash, dev, x.state.id)
            };
            match best
                .iter_mut()
                .find(|b| b.verdict.output.lines().next().unwrap_or("") == key)
            {
                Some(b) if rank(v) < rank(b) => *b = v,
                Some(_) => {}
                None => best.push(v),
            }
        }
        best
    }
}

/// Explores the recording in `dir` (whose root, if given, must be the recorded one).
pub fn explore(dir: &Path, root: Option<&Path>, opts: &Options) -> Result<Report, ExploreError> {
    let started = Instant::now();
    let rec = reader::read(dir, root).map_err(ExploreError::Log)?;
    let states = model::enumerate(opts.model, &rec.ops);
    let counts = model::counts(&states);
    let base = Tree::load(&rec.snapshot()).map_err(ExploreError::Io)?;
    let wanted: Vec<&CrashState> = match opts.only {
        Some(id) => vec![states.get(id).ok_or(ExploreError::NoSuchState)?],
        None => states.iter().collect(),
    };
    // Collapse states leaving the same tree with the same acknowledgements.
    let mut groups: HashMap<([u8; 32], usize, bool), Vec<&CrashState>> = HashMap::new();
    let mut order = Vec::new();
    for s in wanted {
        let key = (
            state_tree(&rec, &base, s).digest(),
            outputs_before(&rec, s),
            s.crash == rec.ops.len(),
        );
        let g = groups.entry(key).or_default();
        if g.is_empty() {
            order.push(key);
        }
        g.push(s);
    }
    let verdicts = check_all(&rec, &base, opts, &order, &groups)?;
    let mut violations = Vec::new();
    for (key, verdict) in order.iter().zip(verdicts) {
        if verdict.ok {
            continue;
        }
        for s in &groups[key] {
            violations.push(Violation {
                state: (*s).clone(),
                description: s.describe(&rec.ops),
                outputs: key.1,
                verdict: verdict.clone(),
            });
        }
    }
    violations.sort_by_key(|v| v.state.id);
    Ok(Report {
        model: opts.model,
        ops: rec.ops.len(),
        counts,
        states: states.len(),
        checked: order.len(),
        violations,
        elapsed: started.elapsed(),
    })
}

type Key = ([u8; 32], usize, bool);

fn check_all(
    rec: &Recording,
    base: &Tree,
    opts: &Options,
    order: &[Key],
    groups: &HashMap<Key, Vec<&CrashState>>,
) -> Result<Vec<Verdict>, ExploreError> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Verdict, std::io::Error>>>> =
        Mutex::new((0..order.len()).map(|_| None).collect());
    let jobs = opts.jobs.max(1).min(order.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(key) = order.get(i) else { break };
                let s = groups[key][0];
                let r = check_one(rec, base, opts, s, key.1);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| {
            r.unwrap_or_else(|| Err(std::io::Error::other("a worker stopped")))
                .map_err(ExploreError::Io)
        })
        .collect()
}

/// Materializes state `s` in a fresh temp dir (removed afterwards) and runs the checker.
fn check_one(
    rec: &Recording,
    base: &Tree,
    opts: &Options,
    s: &CrashState,
    outputs: usize,
) -> Result<Verdict, std::io::Error> {
    let tmp = tempfile::Builder::new()
        .prefix("vxfault-state-")
        .tempdir()?;
    let root = tmp.path().join("root");
    std::fs::create_dir(&root)?;
    state_tree(rec, base, s).write_to(&root)?;
    let mut cmd = opts.checker.command(&root);
    cmd.env("VXFAULT_STATE", s.id.to_string())
        .env("VXFAULT_CRASH_AFTER", s.crash.to_string())
        .env("VXFAULT_OPS", rec.ops.len().to_string())
        .env("VXFAULT_OUTPUTS", outputs.to_string())
        .env(
            "VXFAULT_OUTPUTS_TOTAL",
            rec.ops
                .iter()
                .filter(|o| matches!(o, super::log::FsOp::Output))
                .count()
                .to_string(),
        )
        .env(
            "VXFAULT_COMPLETE",
            if s.crash == rec.ops.len() { "1" } else { "0" },
        )
        .env("VXFAULT_EXIT", rec.meta.exit_code.to_string())
        .env("VXFAULT_RECORDED_ROOT", &rec.meta.root)
        .current_dir(tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_end(&mut buf);
        }
        if let Some(e) = err.as_mut() {
            let _ = e.read_to_end(&mut buf);
        }
        buf
    });
    let deadline = Instant::now() + opts.timeout;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break Some(st);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let mut output = reader.join().unwrap_or_default();
    output.truncate(OUTPUT_CAP);
    let output = String::from_utf8_lossy(&output).into_owned();
    Ok(match status {
        Some(st) => Verdict {
            ok: st.success(),
            code: st.code(),
            output,
        },
        None => Verdict {
            ok: false,
            code: None,
            output: format!("checker timed out after {:?}\n{output}", opts.timeout),
        },
    })
}

/// Writes state `id` of the recording into `dest` (for inspection), without checking.
pub fn materialize(dir: &Path, model: Model, id: usize, dest: &Path) -> Result<(), ExploreError> {
    let rec = reader::read(dir, None).map_err(ExploreError::Log)?;
    let states = model::enumerate(model, &rec.ops);
    let s = states.get(id).ok_or(ExploreError::NoSuchState)?;
    let base = Tree::load(&rec.snapshot()).map_err(ExploreError::Io)?;
    std::fs::create_dir_all(dest).map_err(ExploreError::Io)?;
    state_tree(&rec, &base, s)
        .write_to(dest)
        .map_err(ExploreError::Io)
}

/// The recording's ops (with their trace lines) and the model's states, one per line.
pub fn list(dir: &Path, model: Model) -> Result<Vec<String>, ExploreError> {
    let rec = reader::read(dir, None).map_err(ExploreError::Log)?;
    let mut out: Vec<String> = rec
        .lines
        .iter()
        .zip(&rec.ops)
        .enumerate()
        .map(|(i, (l, o))| format!("op {i} (log line {l}): {}", o.describe()))
        .collect();
    for s in model::enumerate(model, &rec.ops) {
        out.push(format!(
            "state {} ({}): {}",
            s.id,
            s.strategy.name(),
            s.describe(&rec.ops)
        ));
    }
    Ok(out)
}

/// In a checker the explorer started: whether the state it judges comes after the
/// recorded program acknowledged its work, from the environment this module sets.
/// Every output of the recording happened (its reply is the last); a recording
/// with no output at all (a backend that does not see the reply) counts as
/// acknowledged only in the state of the complete run.
pub fn state_acknowledged() -> bool {
    let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    match var("VXFAULT_OUTPUTS_TOTAL") {
        Some(total) if total > 0 => var("VXFAULT_OUTPUTS") == Some(total),
        _ => var("VXFAULT_COMPLETE") == Some(1),
    }
}
