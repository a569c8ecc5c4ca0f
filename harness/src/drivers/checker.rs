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

/// Runs `words` (placeholders expanded, nothing inherited but `PATH`) in `cwd` and
/// requires exactly one JSON object line on stdout.
pub fn run(ph: &Placeholders, words: &[String], cwd: &Path) -> Said {
    if words.is_empty() {
        crate::harness_error!("the profile names no checker for this input");
    }
    let out = sandbox::command(ph, words, &[], cwd)
        .stdin(Stdio::null())
        .output()
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

/// A valid verdict: `"result":"valid"`, no rule, exit 0.
pub fn assert_valid(s: &Said) {
    assert_eq!(s.line["result"], "valid", "the checker said {}", s.line);
    assert!(
        s.line["rule"].is_null(),
        "a valid input names no rule: {}",
        s.line
    );
    assert_eq!(s.exit, 0, "exit status of a valid input");
}

/// A refusal with this code and rule, a reason, exit 1.
pub fn assert_refused(s: &Said, code: &str, rule: &str) {
    assert_eq!(
        s.line["result"].as_str(),
        Some(code),
        "result of {}",
        s.line
    );
    assert_eq!(s.line["rule"].as_str(), Some(rule), "rule of {}", s.line);
    assert!(
        s.line["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "a refusal gives a reason: {}",
        s.line
    );
    assert_eq!(s.exit, 1, "exit status of an invalid input");
}

/// A scenario that runs offline checkers: its sandbox, and what the last one said.
pub struct CheckerScenario {
    dir: tempfile::TempDir,
    ph: Placeholders,
    last: Option<Said>,
}

impl CheckerScenario {
    pub fn new(bin_dir: std::path::PathBuf) -> CheckerScenario {
        let (dir, ph) = sandbox::create(bin_dir);
        CheckerScenario {
            dir,
            ph,
            last: None,
        }
    }

    /// A file in the scenario's sandbox.
    pub fn write_input(&self, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, bytes).or_harness("writing the scenario's input");
        p
    }

    /// Runs `words` and keeps what it said.
    pub fn run(&mut self, words: Vec<String>) -> &Said {
        self.last = Some(run(&self.ph, &words, self.dir.path()));
        self.last()
    }

    /// Runs `template` with `{file}` → `file`; the line must be exactly
    /// `{file, result, rule, reason}` about that file (the pinned file verdict).
    pub fn check_file(&mut self, template: &[String], file: &Path) -> &Said {
        let words = template
            .iter()
            .map(|w| w.replace("{file}", &file.to_string_lossy()))
            .collect();
        let said = self.run(words);
        assert_eq!(
            keys(&said.line),
            ["file", "reason", "result", "rule"],
            "the verdict line has exactly file, result, rule and reason"
        );
        assert_eq!(
            said.line["file"].as_str(),
            Some(file.to_string_lossy().as_ref()),
            "the verdict names the file it judged"
        );
        said
    }

    pub fn last(&self) -> &Said {
        self.last
            .as_ref()
            .or_harness("no checker ran in this scenario")
    }
}
