//! What one scenario ran, saw and compared, kept so that a report that is not `pass`
//! tells the implementation's author what happened without rerunning anything.
//!
//! Every scenario has a [`Shared`] collector; the step runner installs it on the
//! step's thread (steps run on blocking threads, one at a time per scenario), and the
//! drivers and steps record into whatever collector is installed: the commands they
//! ran, the frames they read, the files that changed, the comparison that failed
//! (`expected` / `observed` in words), the control (the refusal's valid twin) and
//! every deviation from a kit pin. Recording with no collector installed (unit tests,
//! offline commands) does nothing.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many commands and frames a scenario keeps (the last ones).
const KEEP_COMMANDS: usize = 24;
const KEEP_FRAMES: usize = 16;
/// How much of a command's stdout and stderr is kept (the end).
pub const TAIL_BYTES: usize = 4096;

/// One command the suite ran for the scenario.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CommandRun {
    pub argv: Vec<String>,
    /// The exit status; `null` when a signal ended it (then `signal`).
    pub exit_status: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub duration_ms: u128,
    pub stdout_tail: String,
    pub stderr_tail: String,
    /// The working directory and the environment the suite set (not inherited).
    #[serde(skip)]
    pub cwd: Option<std::path::PathBuf>,
    #[serde(skip)]
    pub env: Vec<(String, String)>,
}

/// A file under the scenario's roots that the step changed.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    /// `created`, `changed` or `removed`.
    pub change: &'static str,
}

/// The valid twin of a refusal: the same setup without the defect, run first.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Control {
    /// What the control did, in words.
    pub what: String,
    /// Whether the implementation accepted the valid twin.
    pub accepted: bool,
    /// What came back, in words.
    pub observed: String,
    pub commands: Vec<CommandRun>,
}

/// A place where the implementation chose differently from a kit pin.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PinDeviation {
    pub clause: String,
    pub expected: String,
    pub observed: String,
}

/// One scenario's collector.
#[derive(Debug, Default)]
pub struct Collector {
    commands: VecDeque<CommandRun>,
    frames: VecDeque<String>,
    files: Vec<FileChange>,
    /// The implementation's long-running processes the scenario started (a broker),
    /// as they stood when a step failed.
    processes: Vec<CommandRun>,
    /// The comparison that failed last: (clause named by the check, expected, observed).
    failed: Option<(Option<String>, String, String)>,
    /// The control and its kind of input (`persist.unpack`, …).
    control: Option<(String, Control)>,
    pins: Vec<PinDeviation>,
    notes: Vec<String>,
    /// The commands of the current step start at this index of `commands`
    /// (counted over the whole scenario, so it survives the ring's trimming).
    step_first_command: usize,
    commands_seen: usize,
    /// The slowest reply of the implementation in this scenario so far (a command's
    /// run, a connection's open): the pace a settle window is derived from.
    slowest_reply: std::time::Duration,
}

pub type Shared = Arc<Mutex<Collector>>;

pub fn new_shared() -> Shared {
    Arc::new(Mutex::new(Collector::default()))
}

thread_local! {
    static CURRENT: RefCell<Option<Shared>> = const { RefCell::new(None) };
}

/// Runs `f` with `c` as this thread's collector (a step's body).
pub fn scope<R>(c: &Shared, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<Shared>);
    impl Drop for Reset {
        fn drop(&mut self) {
            CURRENT.with(|cur| *cur.borrow_mut() = self.0.take());
        }
    }
    let previous = CURRENT.with(|cur| cur.borrow_mut().replace(c.clone()));
    let _reset = Reset(previous);
    {
        let mut g = lock(c);
        g.step_first_command = g.commands_seen;
    }
    f()
}

/// The collector installed on this thread, for a driver that starts threads of its
/// own (a stream reader) and records from them.
pub fn current() -> Option<Shared> {
    CURRENT.with(|cur| cur.borrow().clone())
}

fn lock(c: &Shared) -> std::sync::MutexGuard<'_, Collector> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

fn with(f: impl FnOnce(&mut Collector)) {
    if let Some(c) = current() {
        f(&mut lock(&c));
    }
}

/// The end of `bytes` as text, at most [`TAIL_BYTES`].
pub fn tail(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(TAIL_BYTES);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

impl CommandRun {
    pub fn of(
        cmd: &std::process::Command,
        status: std::process::ExitStatus,
        took: Duration,
        stdout: &[u8],
        stderr: &[u8],
    ) -> CommandRun {
        use std::os::unix::process::ExitStatusExt;
        let (program, args) = crate::drivers::start_state::shown_argv(cmd);
        let mut argv = vec![program.to_string_lossy().into_owned()];
        argv.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
        CommandRun {
            argv,
            exit_status: status.code(),
            signal: status.signal(),
            duration_ms: took.as_millis(),
            stdout_tail: tail(stdout),
            stderr_tail: tail(stderr),
            cwd: cmd.get_current_dir().map(|d| d.to_path_buf()),
            env: cmd
                .get_envs()
                .filter_map(|(k, v)| {
                    Some((
                        k.to_string_lossy().into_owned(),
                        v?.to_string_lossy().into_owned(),
                    ))
                })
                .collect(),
        }
    }

    /// A long-running process as it stands: its argv, its status once it ended
    /// (`None` while it runs), how long since it started, and its stderr's end.
    pub fn of_process(
        argv: Vec<String>,
        status: Option<std::process::ExitStatus>,
        started: Instant,
        stderr: &[u8],
    ) -> CommandRun {
        use std::os::unix::process::ExitStatusExt;
        CommandRun {
            argv,
            exit_status: status.and_then(|s| s.code()),
            signal: status.and_then(|s| s.signal()),
            duration_ms: started.elapsed().as_millis(),
            stdout_tail: String::new(),
            stderr_tail: tail(stderr),
            cwd: None,
            env: Vec::new(),
        }
    }

    /// A long-running process's state in words: `still running` while it has no
    /// exit status, else [`CommandRun::exit_words`].
    pub fn process_words(&self) -> String {
        match (self.exit_status, self.signal) {
            (None, None) => "still running".into(),
            _ => self.exit_words(),
        }
    }

    /// The exit in words: `exit 0`, `killed by signal 9`.
    pub fn exit_words(&self) -> String {
        match (self.exit_status, self.signal) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(s)) => format!("killed by signal {s}"),
            (None, None) => "no exit status".into(),
        }
    }
}

/// Runs `cmd` to completion (`Command::output`) and records it.
pub fn output(cmd: &mut std::process::Command) -> std::io::Result<std::process::Output> {
    let start = Instant::now();
    let out = cmd.output()?;
    command(CommandRun::of(
        cmd,
        out.status,
        start.elapsed(),
        &out.stdout,
        &out.stderr,
    ));
    Ok(out)
}

/// Records a command the suite ran.
pub fn command(run: CommandRun) {
    with(|c| {
        let took = std::time::Duration::from_millis(run.duration_ms.min(u64::MAX as u128) as u64);
        c.slowest_reply = c.slowest_reply.max(took);
        c.commands_seen += 1;
        c.commands.push_back(run);
        while c.commands.len() > KEEP_COMMANDS {
            c.commands.pop_front();
        }
    });
}

/// The last command recorded in this scenario, if any.
pub fn last_command() -> Option<CommandRun> {
    current().and_then(|c| lock(&c).commands.back().cloned())
}

/// Records a frame (or line) read from a connection with the implementation.
pub fn frame(text: impl Into<String>) {
    let mut text = text.into();
    if text.len() > 512 {
        let mut cut = 512;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    with(|c| {
        c.frames.push_back(text);
        while c.frames.len() > KEEP_FRAMES {
            c.frames.pop_front();
        }
    });
}

/// Records one long-running process of the implementation (a broker) as it stands:
/// its argv, its exit or signal (neither while it runs) and its stderr's end. Kept
/// apart from the commands: a replay cannot run it to completion.
pub fn process(run: CommandRun) {
    with(|c| c.processes.push(run));
}

/// Records what a step changed under the scenario's roots.
pub fn files(changes: impl IntoIterator<Item = FileChange>) {
    with(|c| c.files.extend(changes));
}

/// The changes between two listings of one tree (path → any comparable state).
pub fn diff<V: PartialEq>(
    before: &BTreeMap<String, V>,
    after: &BTreeMap<String, V>,
) -> Vec<FileChange> {
    let mut out = Vec::new();
    for (k, v) in after {
        match before.get(k) {
            None => out.push(FileChange {
                path: k.clone(),
                change: "created",
            }),
            Some(b) if b != v => out.push(FileChange {
                path: k.clone(),
                change: "changed",
            }),
            Some(_) => {}
        }
    }
    for k in before.keys().filter(|k| !after.contains_key(*k)) {
        out.push(FileChange {
            path: k.clone(),
            change: "removed",
        });
    }
    out
}

/// Fails the step: records the comparison (and the clause it checks, when the check
/// names one) and panics with `expected …; observed …`, the report's one-line message.
pub fn fail(clause: Option<&str>, expected: impl Into<String>, observed: impl Into<String>) -> ! {
    let (expected, observed) = (expected.into(), observed.into());
    let message = format!("expected {expected}; observed {observed}");
    with(|c| c.failed = Some((clause.map(str::to_string), expected, observed)));
    std::panic::panic_any(message)
}

/// Requires `ok`, else [`fail`]s with the words given (built only on failure).
pub fn ensure(ok: bool, clause: Option<&str>, words: impl FnOnce() -> (String, String)) {
    if !ok {
        let (expected, observed) = words();
        fail(clause, expected, observed)
    }
}

/// Records how long the implementation took to answer something (a connection's
/// open and first frame): the scenario's pace, see [`settle`].
pub fn reply_took(took: std::time::Duration) {
    with(|c| c.slowest_reply = c.slowest_reply.max(took));
}

/// Settle windows are this many times the slowest reply seen in the scenario.
const SETTLE_FACTOR: u32 = 4;

/// The barrier before a negative observation for which the seed offers no positive
/// witness ("the master stays" after a viewer left): waits a settle window derived
/// from this scenario's measured pace, `SETTLE_FACTOR` × its slowest reply and at
/// least `floor` (scaled by the profile's `timeout_multiplier`), and says in the
/// evidence that it did, and how long. docs/harness.md "Barriers".
pub fn settle(what: &str, floor: std::time::Duration) {
    let slowest = current()
        .map(|c| lock(&c).slowest_reply)
        .unwrap_or_default();
    let window = (slowest * SETTLE_FACTOR).max(floor);
    std::thread::sleep(window);
    note(format!(
        "no witness of the implementation having acted is defined for {what}: the suite \
         waited a settle window of {} ms ({SETTLE_FACTOR} x the slowest reply of this \
         scenario, {} ms, at least {} ms) before observing it",
        window.as_millis(),
        slowest.as_millis(),
        floor.as_millis()
    ));
}

/// Records a remark for the report: a check the step left out and why (a part the
/// profile does not claim), or what the suite chose on the implementation's behalf.
pub fn note(text: impl Into<String>) {
    let text = text.into();
    with(|c| c.notes.push(text));
}

/// Records a deviation from a kit pin and lets the step go on: the scenario ends
/// `non-strict` unless something else fails.
pub fn pin(clause: &str, expected: impl Into<String>, observed: impl Into<String>) {
    let d = PinDeviation {
        clause: clause.to_string(),
        expected: expected.into(),
        observed: observed.into(),
    };
    with(|c| c.pins.push(d));
}

/// Records the scenario's control and counts it toward the run's liveness.
pub fn control(kind: &str, control: Control) {
    liveness(kind, control.accepted);
    with(|c| c.control = Some((kind.to_string(), control)));
}

/// The scenario's control, if one ran.
pub fn scenario_control() -> Option<Control> {
    current().and_then(|c| lock(&c).control.clone().map(|(_, k)| k))
}

/// The guard of every refusal judgement: a control must have run and been accepted;
/// otherwise the refusal proves nothing and the scenario is `inconclusive`.
pub fn require_accepted_control() {
    match scenario_control() {
        None => crate::harness_error!(
            "this refusal has no control: the suite ran no valid twin before it"
        ),
        Some(c) if !c.accepted => crate::inconclusive!(
            "the valid twin was refused too, so this refusal proves nothing: {}: {}",
            c.what,
            c.observed
        ),
        Some(_) => {}
    }
}

/// Commands recorded since the current step began (for a control's own evidence).
pub fn commands_of_step() -> Vec<CommandRun> {
    current()
        .map(|c| {
            let g = lock(&c);
            let first_kept = g.commands_seen - g.commands.len();
            let skip = g.step_first_command.saturating_sub(first_kept);
            g.commands.iter().skip(skip).cloned().collect()
        })
        .unwrap_or_default()
}

/// How often, per kind of input ("persist.unpack", …), the implementation accepted a
/// valid input in this run, and how often it refused one.
static LIVENESS: Mutex<BTreeMap<String, (usize, usize)>> = Mutex::new(BTreeMap::new());

/// Counts one valid input of `kind` accepted or refused.
pub fn liveness(kind: &str, accepted: bool) {
    let mut m = LIVENESS.lock().unwrap_or_else(|p| p.into_inner());
    let e = m.entry(kind.to_string()).or_default();
    if accepted {
        e.0 += 1;
    } else {
        e.1 += 1;
    }
}

/// The run's liveness: kind → (accepted, refused).
pub fn liveness_table() -> BTreeMap<String, (usize, usize)> {
    LIVENESS.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// What a scenario's collector holds when it ends, for its report.
#[derive(Debug, Clone, Default)]
pub struct Kept {
    pub commands: Vec<CommandRun>,
    /// The commands of the step that ended the scenario.
    pub last_step_commands: Vec<CommandRun>,
    pub frames: Vec<String>,
    pub files: Vec<FileChange>,
    pub processes: Vec<CommandRun>,
    pub failed: Option<(Option<String>, String, String)>,
    /// The control and its kind of input.
    pub control: Option<(String, Control)>,
    pub pins: Vec<PinDeviation>,
    pub notes: Vec<String>,
}

/// Takes what the scenario's collector holds.
pub fn take(c: &Shared) -> Kept {
    let mut g = lock(c);
    let first_kept = g.commands_seen - g.commands.len();
    let skip = g.step_first_command.saturating_sub(first_kept);
    let last_step_commands = g.commands.iter().skip(skip).cloned().collect();
    Kept {
        commands: std::mem::take(&mut g.commands).into(),
        last_step_commands,
        frames: std::mem::take(&mut g.frames).into(),
        files: std::mem::take(&mut g.files),
        processes: std::mem::take(&mut g.processes),
        failed: g.failed.take(),
        control: g.control.take(),
        pins: std::mem::take(&mut g.pins),
        notes: std::mem::take(&mut g.notes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_only_inside_a_scope_and_keeps_the_last_commands() {
        frame("outside");
        let c = new_shared();
        scope(&c, || {
            for i in 0..30 {
                let out = output(std::process::Command::new("sh").args([
                    "-c",
                    &format!("echo out{i}; echo err{i} >&2; exit {}", i % 3),
                ]))
                .unwrap();
                assert_eq!(out.status.code(), Some(i % 3));
            }
            frame("f");
            pin("sw-pin", "4500", "4409");
        });
        let k = take(&c);
        assert_eq!(k.commands.len(), KEEP_COMMANDS);
        let last = k.commands.last().unwrap();
        assert_eq!(last.exit_status, Some(29 % 3));
        assert_eq!(last.stdout_tail, "out29\n");
        assert_eq!(last.stderr_tail, "err29\n");
        assert_eq!(last.argv[0], "sh");
        assert_eq!(k.frames, vec!["f".to_string()]);
        assert_eq!(k.pins.len(), 1);
        assert_eq!(k.last_step_commands.len(), KEEP_COMMANDS);
    }

    #[test]
    fn a_failed_check_says_expected_and_observed() {
        let c = new_shared();
        let p = std::panic::catch_unwind(|| {
            scope(&c, || {
                ensure(false, Some("sp-header"), || {
                    ("exit non-zero".into(), "exit 0".into())
                })
            })
        })
        .unwrap_err();
        assert_eq!(
            p.downcast_ref::<String>().unwrap(),
            "expected exit non-zero; observed exit 0"
        );
        let k = take(&c);
        let (clause, e, o) = k.failed.unwrap();
        assert_eq!(clause.as_deref(), Some("sp-header"));
        assert_eq!((e.as_str(), o.as_str()), ("exit non-zero", "exit 0"));
    }

    #[test]
    fn a_refused_control_makes_the_refusal_inconclusive() {
        use crate::verdict::{StepFailure, Verdict};
        let verdict_of = |accepted: Option<bool>| {
            let c = new_shared();
            std::panic::catch_unwind(|| {
                scope(&c, || {
                    if let Some(accepted) = accepted {
                        control(
                            "test.kind",
                            Control {
                                what: "the valid twin".into(),
                                accepted,
                                observed: "exit 1".into(),
                                commands: vec![],
                            },
                        );
                    }
                    require_accepted_control();
                })
            })
            .map_err(|p| StepFailure::from_panic(p.as_ref()).verdict)
        };
        assert_eq!(verdict_of(Some(true)), Ok(()));
        assert_eq!(verdict_of(Some(false)), Err(Verdict::Inconclusive));
        assert_eq!(verdict_of(None), Err(Verdict::HarnessError));
        assert!(liveness_table()["test.kind"].0 >= 1);
    }

    #[test]
    fn diff_names_created_changed_and_removed() {
        let a: BTreeMap<String, u8> = [("x".into(), 1), ("y".into(), 1)].into();
        let b: BTreeMap<String, u8> = [("x".into(), 2), ("z".into(), 1)].into();
        let d = diff(&a, &b);
        assert_eq!(
            d,
            vec![
                FileChange {
                    path: "x".into(),
                    change: "changed"
                },
                FileChange {
                    path: "z".into(),
                    change: "created"
                },
                FileChange {
                    path: "y".into(),
                    change: "removed"
                },
            ]
        );
    }
}
