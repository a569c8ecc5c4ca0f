//! One agent-restore scenario's state: a sandbox for the inputs it writes, the
//! profile's offline checkers, and the last verdict line one of them printed.

use crate::drivers::sandbox::{self, Placeholders};
use crate::profile::context;
use crate::verdict::OrHarness;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The `[agent_restore]` profile table: command templates (`{file}` is the input).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Templates {
    /// Offline verdict on one workspace archive (pinned JSON line).
    pub archive_check: Vec<String>,
    /// Offline verdict on one integration template (optional feature `template-check`).
    #[serde(default)]
    pub template_check: Vec<String>,
    // The server rows' templates: preflight checks their programs now; their rows
    // read them once the reference daemon has the agent verbs.
    /// Where the implementation reads plugins (a per-scenario path template).
    #[serde(default)]
    #[allow(dead_code)]
    pub plugins_dir: Option<String>,
    #[serde(default)]
    pub workspace_save: Vec<String>,
    #[serde(default)]
    pub workspace_restore: Vec<String>,
    #[serde(default)]
    pub legacy_serve: Vec<String>,
}

/// The profile's table, which preflight has required for a claimed contract.
pub fn templates() -> Templates {
    let table = context()
        .profile
        .agent_restore
        .clone()
        .or_harness("the profile has no [agent_restore] table");
    toml::Value::Table(table)
        .try_into()
        .or_harness("the profile's [agent_restore] table")
}

/// The kit's corpus directory (inputs with verdicts fixed by an independent generator).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

/// What one checker run printed, judged against the pinned line shape.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub line: Value,
    pub exit: i32,
    pub raw: String,
}

pub struct Checks {
    dir: tempfile::TempDir,
    ph: Placeholders,
    pub last: Option<Verdict>,
}

impl Checks {
    pub fn new() -> Checks {
        let (dir, ph) = sandbox::create(context().bin_dir.clone());
        Checks {
            dir,
            ph,
            last: None,
        }
    }

    /// A file in the scenario's sandbox.
    pub fn write_input(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, bytes).or_harness("writing the scenario's input");
        p
    }

    /// Runs the checker `template` on `file` and keeps its verdict line.
    pub fn check(&mut self, template: &[String], file: &Path) {
        if template.is_empty() {
            crate::harness_error!("the profile names no checker for this input");
        }
        let words: Vec<String> = template
            .iter()
            .map(|w| w.replace("{file}", &file.to_string_lossy()))
            .collect();
        let mut cmd = sandbox::command(&self.ph, &words, &[], self.dir.path());
        let out = cmd
            .stdin(std::process::Stdio::null())
            .output()
            .or_harness("running the offline checker");
        let raw = String::from_utf8_lossy(&out.stdout).into_owned();
        let lines: Vec<&str> = raw.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "the checker must print exactly one line per file, printed {}",
            lines.len()
        );
        let line: Value = serde_json::from_str(lines[0])
            .unwrap_or_else(|_| panic!("the checker's line is not JSON: {:?}", lines[0]));
        let mut keys: Vec<&str> = line
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["file", "reason", "result", "rule"],
            "the verdict line has exactly file, result, rule and reason"
        );
        assert_eq!(
            line["file"].as_str(),
            Some(file.to_string_lossy().as_ref()),
            "the verdict names the file it judged"
        );
        self.last = Some(Verdict {
            line,
            exit: out.status.code().unwrap_or(-1),
            raw,
        });
    }

    pub fn last(&self) -> &Verdict {
        self.last
            .as_ref()
            .or_harness("no checker ran in this scenario")
    }
}
