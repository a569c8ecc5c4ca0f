//! The `[agent_restore]` profile table the suite reads: command templates, the keys
//! each claimed part needs, and the kit's corpus directory.

use crate::profile::{context, Profile};
use crate::verdict::OrHarness;
use serde::Deserialize;
use std::path::PathBuf;

/// The `[agent_restore]` profile table: command templates (`{file}` is the input).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Templates {
    /// Offline verdict on one workspace archive (pinned JSON line; the checker part).
    #[serde(default)]
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
    /// The verbs by which the restoring client starts a native session's program
    /// (default `["agent.launch"]`, the kit's): the relay of the plugin-change row
    /// reloads the plugins before the first of them. ADR-0068 names no launch verb.
    #[serde(default)]
    pub restore_launch_verbs: Option<Vec<String>>,
}

/// The kit's restore launch verb, when the profile declares none.
pub const KIT_LAUNCH_VERBS: [&str; 1] = ["agent.launch"];

/// The keys each part needs, and the optional feature whose rows use them (`None`:
/// every row of the part). A key is required when the profile claims its part and,
/// for a feature's keys, that feature: the rows that would run.
const PART_KEYS: [(&str, Option<&str>, &[&str]); 4] = [
    ("checker", None, &["archive_check"]),
    ("checker", Some("template-check"), &["template_check"]),
    (
        "server",
        Some("agent-server"),
        &[
            "plugins_dir",
            "workspace_save",
            "workspace_restore",
            "agent_launch",
        ],
    ),
    (
        "legacy",
        Some("legacy-spawn"),
        &[
            "legacy_serve",
            "plugins_dir",
            "workspace_restore",
            "agent_launch",
        ],
    ),
];

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

    /// The restoring client's launch verbs: the profile's, or the kit's.
    pub fn launch_verbs(&self) -> Vec<String> {
        match &self.restore_launch_verbs {
            Some(v) => v.clone(),
            None => KIT_LAUNCH_VERBS.map(str::to_string).to_vec(),
        }
    }

    /// Whether the table holds `key` (a non-empty template).
    fn has(&self, key: &str) -> bool {
        match key {
            "archive_check" => !self.archive_check.is_empty(),
            "template_check" => !self.template_check.is_empty(),
            "plugins_dir" => self.plugins_dir.is_some(),
            "workspace_save" => !self.workspace_save.is_empty(),
            "workspace_restore" => !self.workspace_restore.is_empty(),
            "agent_launch" => !self.agent_launch.is_empty(),
            "legacy_serve" => !self.legacy_serve.is_empty(),
            _ => false,
        }
    }

    /// The keys the claimed parts need and the table lacks, each named with its
    /// part (and the feature whose rows need it).
    pub fn missing(&self, profile: &Profile) -> Vec<String> {
        let c = crate::contract::Contract::AgentRestore;
        let mut out = Vec::new();
        for (part, feature, keys) in PART_KEYS {
            if !profile.claims_part(c, part)
                || feature.is_some_and(|f| !profile.features.iter().any(|x| x == f))
            {
                continue;
            }
            for key in keys.iter().filter(|k| !self.has(k)) {
                let by = feature.map_or(String::new(), |f| format!(" with feature {f}"));
                let line = format!("{key} (the {part} part{by})");
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
        out
    }
}

/// The profile's table, which preflight has checked for a claimed contract.
pub fn templates() -> Templates {
    Templates::of(&context().profile).or_harness("the profile's [agent_restore] table")
}

/// The kit's corpus directory (inputs with verdicts fixed by an independent generator).
pub fn corpus_dir() -> PathBuf {
    crate::assets::corpus_dir()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing(text: &str) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(
            &path,
            format!("name = \"x\"\ncontracts = [\"agent-restore\"]\n{text}"),
        )
        .unwrap();
        let p = Profile::load(&path).unwrap();
        Templates::of(&p).unwrap().missing(&p)
    }

    /// A key is required only when its part is claimed (and, for an optional
    /// feature's rows, that feature); the message names the key and its part.
    #[test]
    fn keys_are_required_per_claimed_part() {
        assert!(missing("[agent_restore]\narchive_check = [\"a\"]\n").is_empty());
        assert_eq!(
            missing("[agent_restore]\nparts = [\"checker\"]\n"),
            ["archive_check (the checker part)"]
        );
        assert!(missing(
            "features = [\"agent-server\"]\n[agent_restore]\nparts = [\"checker\"]\narchive_check = [\"a\"]\n"
        )
        .is_empty());
        assert_eq!(
            missing(
                "features = [\"agent-server\", \"legacy-spawn\"]\n[agent_restore]\nparts = [\"server\", \"legacy\"]\n\
                 plugins_dir = \"d\"\nworkspace_save = [\"s\"]\nworkspace_restore = [\"r\"]\n"
            ),
            [
                "agent_launch (the server part with feature agent-server)",
                "legacy_serve (the legacy part with feature legacy-spawn)",
                "agent_launch (the legacy part with feature legacy-spawn)",
            ]
        );
        assert_eq!(
            missing("features = [\"template-check\"]\n[agent_restore]\narchive_check = [\"a\"]\n"),
            ["template_check (the checker part with feature template-check)"]
        );
    }
}
