//! One agent-restore scenario's state: a sandbox for the inputs it writes, the
//! profile's offline checkers, and the last verdict line one of them printed.

use crate::drivers::checker::CheckerScenario;
use crate::profile::{context, Profile};
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
    /// Where the implementation reads plugins (a per-scenario path template); the
    /// server rows need it.
    #[serde(default)]
    pub plugins_dir: Option<String>,
    /// `workspace save` to `{file}` (the server rows).
    #[serde(default)]
    pub workspace_save: Vec<String>,
    /// `workspace restore` of `{file}` with `{fallback_argv}` (the server rows).
    #[serde(default)]
    pub workspace_restore: Vec<String>,
    /// The launching client (`{window}`, `{integration}`, `{native_id}`): launch,
    /// then read back or set-and-confirm the record (ADR-0068 §4).
    #[serde(default)]
    pub agent_launch: Vec<String>,
    /// The implementation as an older server (optional feature `legacy-spawn`).
    #[serde(default)]
    pub legacy_serve: Vec<String>,
    /// Makes a window whose panes are spawned on a satellite, not as local Terminals,
    /// and prints `{"window": ID}` (optional feature `satellite`).
    #[serde(default)]
    pub satellite_window: Vec<String>,
}

impl Templates {
    pub fn of(profile: &Profile) -> Result<Templates, String> {
        let table = profile
            .agent_restore
            .clone()
            .ok_or("the profile has no [agent_restore] table")?;
        toml::Value::Table(table)
            .try_into()
            .map_err(|e| format!("the profile's [agent_restore] table: {e}"))
    }
}

/// The profile's table, which preflight has checked for a claimed contract.
pub fn templates() -> Templates {
    Templates::of(&context().profile).or_harness("the profile's [agent_restore] table")
}

/// The kit's corpus directory (inputs with verdicts fixed by an independent generator).
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus")
}

/// One agent-restore scenario: the offline checkers' sandbox, and the live
/// implementation of the server rows, started on first use.
pub struct Checks {
    pub offline: CheckerScenario,
    pub(crate) live: Option<super::live::Live>,
}

impl Checks {
    pub fn new(bin_dir: PathBuf) -> Checks {
        Checks {
            offline: CheckerScenario::new(bin_dir),
            live: None,
        }
    }

    /// The server rows' state (a sandbox; no daemon runs until a step starts it).
    pub fn live(&mut self) -> &mut super::live::Live {
        self.live.get_or_insert_with(super::live::Live::new)
    }
}
