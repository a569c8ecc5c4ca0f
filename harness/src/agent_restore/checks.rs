//! One agent-restore scenario's state: a sandbox for the inputs it writes, the
//! profile's offline checkers, and the last verdict line one of them printed.

use crate::drivers::checker::{self, Said};
use crate::drivers::sandbox::{self, Placeholders};
use crate::profile::context;
use crate::verdict::OrHarness;
use serde::Deserialize;
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

pub struct Checks {
    dir: tempfile::TempDir,
    ph: Placeholders,
    pub last: Option<Said>,
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

    /// Runs the checker `template` on `file` and keeps its verdict line, which must
    /// have exactly `file`, `result`, `rule` and `reason`, `file` the input given.
    pub fn check(&mut self, template: &[String], file: &Path) {
        let words: Vec<String> = template
            .iter()
            .map(|w| w.replace("{file}", &file.to_string_lossy()))
            .collect();
        let said = checker::run(&self.ph, &words, self.dir.path());
        assert_eq!(
            checker::keys(&said.line),
            ["file", "reason", "result", "rule"],
            "the verdict line has exactly file, result, rule and reason"
        );
        assert_eq!(
            said.line["file"].as_str(),
            Some(file.to_string_lossy().as_ref()),
            "the verdict names the file it judged"
        );
        self.last = Some(said);
    }

    pub fn last(&self) -> &Said {
        self.last
            .as_ref()
            .or_harness("no checker ran in this scenario")
    }
}
