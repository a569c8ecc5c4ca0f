//! Offline checkers: a command that judges its inputs and prints one JSON line per
//! input (surface.md "Offline checkers"). The driver runs one and keeps what it said;
//! each contract judges the line's shape.

use super::sandbox::{self, Placeholders};
use crate::verdict::OrHarness;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

/// What one checker run printed.
#[derive(Debug, Clone)]
pub struct Said {
    /// The one JSON line it printed.
    pub line: Value,
    pub exit: i32,
    /// Everything on stdout, for content-exclusion checks.
    pub raw: String,
}

/// How a contract judges its checker: the pin clause that the kit's verdict line
/// (codes, rule ids, its exact shape) is reported under, and whether the profile asks
/// for valid/invalid alone (`verdict_only`: exit 0 or not, any output).
#[derive(Debug, Clone)]
pub struct Judging {
    pub pin_clause: String,
    pub verdict_only: bool,
}

impl Judging {
    pub fn of(c: crate::contract::Contract) -> Judging {
        Judging {
            pin_clause: format!("{}pin-checker-verdict", c.clause_prefix()),
            verdict_only: crate::profile::context().profile.claim(c).verdict_only,
        }
    }
}

/// Runs `words` under `judging`: with `verdict_only` any output is kept as is (the
/// exit status is the verdict); otherwise [`run`]'s one JSON line is required.
pub fn run_judged(ph: &Placeholders, words: &[String], cwd: &Path, judging: &Judging) -> Said {
    if !judging.verdict_only {
        return run(ph, words, cwd);
    }
    if words.is_empty() {
        crate::harness_error!("the profile names no checker for this input");
    }
    let out = crate::evidence::output(sandbox::command(ph, words, &[], cwd).stdin(Stdio::null()))
        .or_harness("running the offline checker");
    let raw = String::from_utf8_lossy(&out.stdout).into_owned();
    Said {
        line: serde_json::from_str(raw.trim()).unwrap_or(Value::Null),
        exit: out.status.code().unwrap_or(-1),
        raw,
    }
}

/// Runs `words` (placeholders expanded, nothing inherited but `PATH`) in `cwd` and
/// requires exactly one JSON object line on stdout.
pub fn run(ph: &Placeholders, words: &[String], cwd: &Path) -> Said {
    if words.is_empty() {
        crate::harness_error!("the profile names no checker for this input");
    }
    let out = crate::evidence::output(sandbox::command(ph, words, &[], cwd).stdin(Stdio::null()))
        .or_harness("running the offline checker");
    let raw = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = raw.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "the checker must print exactly one line per input, printed {}",
        lines.len()
    );
    let line: Value = serde_json::from_str(lines[0])
        .unwrap_or_else(|_| panic!("the checker's line is not JSON: {:?}", lines[0]));
    assert!(
        line.is_object(),
        "the checker's line is not an object: {line}"
    );
    Said {
        line,
        exit: out.status.code().unwrap_or(-1),
        raw,
    }
}

/// The line's member names, sorted.
pub fn keys(line: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = line
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

/// Whether the checker called the input valid (exit 0, and `"result":"valid"`
/// unless the profile judges by verdict alone).
pub fn accepted(s: &Said, judging: &Judging) -> bool {
    s.exit == 0 && (judging.verdict_only || s.line["result"] == "valid")
}

/// The checker's verdict in words, for evidence.
pub fn said_words(s: &Said) -> String {
    if s.line.is_null() {
        format!("exit {}", s.exit)
    } else {
        format!("exit {} with {}", s.exit, s.line)
    }
}

/// Runs the checker on the valid twin of a refusal input and records it as the
/// scenario's control (kind `<contract>.checker`).
pub fn control(
    ph: &Placeholders,
    words: &[String],
    cwd: &Path,
    judging: &Judging,
    kind: &str,
    what: &str,
) {
    let said = run_judged(ph, words, cwd, judging);
    let commands = crate::evidence::commands_of_step();
    crate::evidence::control(
        kind,
        crate::evidence::Control {
            what: what.to_string(),
            accepted: accepted(&said, judging),
            observed: said_words(&said),
            commands,
        },
    );
}

/// A refusal judged as the seed asks (not valid, exit non-zero, after an accepted
/// control); the kit's code, rule and exit 1 are pins reported under the contract's
/// checker pin unless the profile judges by verdict alone.
pub fn assert_refused_judged(s: &Said, code: &str, rule: &str, judging: &Judging) {
    crate::evidence::require_accepted_control();
    crate::evidence::ensure(!accepted(s, judging) && s.exit != 0, None, || {
        (
            "the checker to refuse the input (exit non-zero)".into(),
            said_words(s),
        )
    });
    if judging.verdict_only {
        return;
    }
    let clause = judging.pin_clause.as_str();
    for (what, got, want) in [
        ("result", s.line["result"].as_str(), Some(code)),
        ("rule", s.line["rule"].as_str(), Some(rule)),
    ] {
        if got != want {
            crate::evidence::pin(
                clause,
                format!("{what} {want:?}"),
                format!("{what} {got:?}"),
            );
        }
    }
    if s.exit != 1 {
        crate::evidence::pin(clause, "exit 1", format!("exit {}", s.exit));
    }
    if s.line["reason"].as_str().is_none_or(str::is_empty) {
        crate::evidence::pin(clause, "a reason", format!("{}", s.line));
    }
}

/// The inputs of a scenario that runs offline checkers: files written into its own
/// sandbox, which lives as long as the scenario.
pub struct CheckerScenario {
    dir: crate::drivers::sandbox::SandboxDir,
}

impl CheckerScenario {
    pub fn new(bin_dir: std::path::PathBuf) -> CheckerScenario {
        let (dir, _) = sandbox::create(bin_dir);
        CheckerScenario { dir }
    }

    /// A file in the scenario's sandbox.
    pub fn write_input(&self, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, bytes).or_harness("writing the scenario's input");
        p
    }
}
