//! Profiles: how to start, reach and judge one implementation.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Short name, shown in reports.
    pub name: String,
    /// Free text naming the implementation under test.
    #[serde(default)]
    pub implementation: String,
    /// The daemon's command line; placeholders are expanded per scenario.
    pub serve: Vec<String>,
    /// The daemon's command line in on-demand mode (for `@optional-on-demand`).
    #[serde(default)]
    pub serve_on_demand: Vec<String>,
    /// The fault injector's preload library, for the "Interrupted writes" row.
    #[serde(default)]
    pub fault_preload: Option<String>,
    /// libfaketime, to move the daemon's "now" (`@needs-faketime` scenarios); default
    /// Debian's `libfaketimeMT.so.1`.
    #[serde(default)]
    pub faketime_preload: Option<String>,
    /// The CLI prefix (`<program> --socket {socket}`); verb words and `--json` follow.
    pub cli: Vec<String>,
    /// Optional command printing the implementation's version.
    #[serde(default)]
    pub version: Vec<String>,
    /// Extra environment for the daemon and the CLI.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub readiness: Readiness,
    /// Multiplies every deadline the suite waits on (not the RFC's own bounds).
    #[serde(default = "one")]
    pub timeout_multiplier: f64,
    /// Optional features this implementation claims (scenarios tagged `@optional-<name>`).
    #[serde(default)]
    pub features: Vec<String>,
    /// Scenarios this implementation is known to fail, with the reason.
    #[serde(default)]
    pub expected_failure: Vec<ExpectedFailure>,
    /// How many scenarios run at once (default 4).
    #[serde(default)]
    pub concurrency: Option<usize>,
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Readiness {
    /// `socket`: ready when the socket accepts a connection. `file`: ready when
    /// `path` exists and then the socket accepts a connection.
    #[serde(default = "socket_kind")]
    pub kind: String,
    /// For `file`: the path template (placeholders as in commands).
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default = "ten_s")]
    pub timeout_ms: u64,
}

fn socket_kind() -> String {
    "socket".into()
}
fn ten_s() -> u64 {
    10_000
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            kind: socket_kind(),
            path: None,
            timeout_ms: ten_s(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFailure {
    /// The RFC §8 case name (the feature's name).
    pub row: String,
    /// One scenario's name; absent: every scenario of the row.
    #[serde(default)]
    pub scenario: Option<String>,
    /// One Examples row of an outline, cells joined by " | " (as in the report).
    #[serde(default)]
    pub example: Option<String>,
    pub reason: String,
}

impl Profile {
    pub fn load(path: &Path) -> Result<Profile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read profile {}: {e}", path.display()))?;
        let p: Profile =
            toml::from_str(&text).map_err(|e| format!("profile {}: {e}", path.display()))?;
        if p.serve.is_empty() || p.cli.is_empty() {
            return Err(format!(
                "profile {}: `serve` and `cli` must not be empty",
                path.display()
            ));
        }
        match (p.readiness.kind.as_str(), &p.readiness.path) {
            ("socket", None) | ("file", Some(_)) => {}
            _ => {
                return Err(format!(
                    "profile {}: readiness is kind \"socket\", or kind \"file\" with a path",
                    path.display()
                ))
            }
        }
        if !(p.timeout_multiplier > 0.0 && p.timeout_multiplier <= 100.0) {
            return Err(format!(
                "profile {}: timeout_multiplier must be in (0, 100]",
                path.display()
            ));
        }
        Ok(p)
    }

    /// The reason when this scenario is declared as an expected failure.
    pub fn expected(&self, row: &str, scenario: &str, example: Option<&str>) -> Option<&str> {
        self.expected_failure
            .iter()
            .find(|e| {
                e.row == row
                    && e.scenario.as_deref().is_none_or(|s| s == scenario)
                    && e.example.as_deref().is_none_or(|x| Some(x) == example)
            })
            .map(|e| e.reason.as_str())
    }
}

/// Values substituted into command templates.
#[derive(Debug, Clone)]
pub struct Placeholders {
    pub socket: PathBuf,
    pub state_home: PathBuf,
    pub config_home: PathBuf,
    pub runtime_dir: PathBuf,
    pub home: PathBuf,
    pub bin_dir: PathBuf,
    pub store: PathBuf,
}

impl Placeholders {
    pub fn expand(&self, s: &str) -> String {
        s.replace("{socket}", &self.socket.to_string_lossy())
            .replace("{state_home}", &self.state_home.to_string_lossy())
            .replace("{config_home}", &self.config_home.to_string_lossy())
            .replace("{runtime_dir}", &self.runtime_dir.to_string_lossy())
            .replace("{home}", &self.home.to_string_lossy())
            .replace("{bin_dir}", &self.bin_dir.to_string_lossy())
            .replace("{store}", &self.store.to_string_lossy())
    }
}
