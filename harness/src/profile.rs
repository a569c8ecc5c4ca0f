//! Profiles: how to start, reach and judge one implementation, for each contract it
//! claims; and the run context every scenario of a run shares.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// What every scenario of this run shares.
pub struct RunContext {
    pub profile: Profile,
    pub bin_dir: PathBuf,
    /// Where the profile was read from (a checker run in its own process reads it).
    pub profile_path: PathBuf,
    /// libfaketime's path, when installed (detected once, before any scenario).
    pub faketime: Option<String>,
}

static CONTEXT: OnceLock<RunContext> = OnceLock::new();

/// Sets the run context (once per process).
pub fn set_context(c: RunContext) -> Result<(), String> {
    CONTEXT
        .set(c)
        .map_err(|_| "run context already set".to_string())
}

/// The run context; set by the runner before the first scenario starts.
pub fn context() -> &'static RunContext {
    CONTEXT
        .get()
        .unwrap_or_else(|| crate::harness_error!("the run context is not set"))
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Short name, shown in reports.
    pub name: String,
    /// Free text naming the implementation under test.
    #[serde(default)]
    pub implementation: String,
    /// The daemon's command line; placeholders are expanded per scenario. The recovery
    /// contract's templates (`serve`, `serve_on_demand`, `cli`, `skill`) may also sit in
    /// a `[recovery]` table.
    #[serde(default)]
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
    #[serde(default)]
    pub cli: Vec<String>,
    /// The command printing the implementation's generated agent skill as Markdown
    /// (optional feature `skill`, docs/spec/recovery-skill.md).
    #[serde(default)]
    pub skill: Vec<String>,
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
    /// The contracts this implementation claims (default: the recovery RFC alone).
    #[serde(default = "recovery_only")]
    pub contracts: Vec<String>,
    /// The recovery contract's templates, as an alternative to the top-level keys.
    #[serde(default)]
    pub recovery: Option<RecoveryTemplates>,
    /// Command templates of the other contracts, one table each, read by their suites.
    #[serde(default)]
    pub agent_restore: Option<toml::Table>,
    #[serde(default)]
    pub single_writer: Option<toml::Table>,
    #[serde(default)]
    pub persist: Option<toml::Table>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryTemplates {
    #[serde(default)]
    pub serve: Vec<String>,
    #[serde(default)]
    pub serve_on_demand: Vec<String>,
    #[serde(default)]
    pub cli: Vec<String>,
    #[serde(default)]
    pub skill: Vec<String>,
}

/// The optional feature a `skill` command goes with (`@optional-skill`).
pub const SKILL_FEATURE: &str = "skill";

fn recovery_only() -> Vec<String> {
    vec!["recovery".into()]
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
    /// The contract of the row (default `recovery`).
    #[serde(default)]
    pub contract: Option<String>,
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

/// Keys of a contract table that hold lists of names, not commands.
const NOT_COMMANDS: [&str; 1] = ["s3_twins"];

impl Profile {
    pub fn load(path: &Path) -> Result<Profile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read profile {}: {e}", path.display()))?;
        let mut p: Profile =
            toml::from_str(&text).map_err(|e| format!("profile {}: {e}", path.display()))?;
        if let Some(t) = p.recovery.take() {
            for (name, top, table) in [
                ("serve", &mut p.serve, t.serve),
                ("serve_on_demand", &mut p.serve_on_demand, t.serve_on_demand),
                ("cli", &mut p.cli, t.cli),
                ("skill", &mut p.skill, t.skill),
            ] {
                if !table.is_empty() {
                    if !top.is_empty() {
                        return Err(format!(
                            "profile {}: `{name}` is given both at the top level and in [recovery]",
                            path.display()
                        ));
                    }
                    *top = table;
                }
            }
        }
        for c in &p.contracts {
            if crate::contract::Contract::from_name(c).is_none() {
                return Err(format!(
                    "profile {}: unknown contract {c:?} in `contracts` (known: {})",
                    path.display(),
                    crate::contract::Contract::names().join(", ")
                ));
            }
        }
        for c in crate::contract::Contract::ALL {
            if c != crate::contract::Contract::Recovery
                && p.claims(c.name())
                && p.contract_table(c).is_none()
            {
                return Err(format!(
                    "profile {}: it claims the {c} contract but has no [{}] table",
                    path.display(),
                    c.profile_table()
                ));
            }
        }
        if p.claims("recovery") && (p.serve.is_empty() || p.cli.is_empty()) {
            return Err(format!(
                "profile {}: the recovery contract needs `serve` and `cli`",
                path.display()
            ));
        }
        // Fail closed (docs/spec/recovery-skill.md): a claimed skill the suite cannot
        // run, or a skill command the suite would silently skip, is a usage error.
        let claims_skill = p.features.iter().any(|f| f == SKILL_FEATURE);
        match (claims_skill, p.skill.is_empty()) {
            (true, true) => {
                return Err(format!(
                    "profile {}: it claims the feature \"{SKILL_FEATURE}\" but has no `skill` command",
                    path.display()
                ))
            }
            (false, false) => {
                return Err(format!(
                    "profile {}: it has a `skill` command but does not claim the feature \"{SKILL_FEATURE}\" in `features`",
                    path.display()
                ))
            }
            _ => {}
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

    /// The command-template table of a contract other than recovery (whose templates
    /// are the top-level keys).
    pub fn contract_table(&self, c: crate::contract::Contract) -> Option<&toml::Table> {
        use crate::contract::Contract;
        match c {
            Contract::Recovery => None,
            Contract::AgentRestore => self.agent_restore.as_ref(),
            Contract::SingleWriter => self.single_writer.as_ref(),
            Contract::SessionPersist => self.persist.as_ref(),
        }
    }

    /// Every command template of a contract's table (an array whose first word is a
    /// program): `("<table>.<key>", program)`, in the table's order, for preflight.
    pub fn table_programs(&self, c: crate::contract::Contract) -> Vec<(String, String)> {
        let Some(table) = self.contract_table(c) else {
            return Vec::new();
        };
        table
            .iter()
            .filter(|(k, _)| !NOT_COMMANDS.contains(&k.as_str()))
            .filter_map(|(k, v)| {
                let program = v.as_array()?.first()?.as_str()?;
                Some((format!("{}.{k}", c.profile_table()), program.to_string()))
            })
            .collect()
    }

    /// Whether the profile claims the contract named `name`.
    pub fn claims(&self, name: &str) -> bool {
        self.contracts.iter().any(|c| c == name)
    }

    /// The reason when this scenario is declared as an expected failure.
    pub fn expected(
        &self,
        contract: &str,
        row: &str,
        scenario: &str,
        example: Option<&str>,
    ) -> Option<&str> {
        self.expected_failure
            .iter()
            .find(|e| {
                e.contract.as_deref().unwrap_or("recovery") == contract
                    && e.row == row
                    && e.scenario.as_deref().is_none_or(|s| s == scenario)
                    && e.example.as_deref().is_none_or(|x| Some(x) == example)
            })
            .map(|e| e.reason.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str) -> Result<Profile, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(&path, text).unwrap();
        Profile::load(&path)
    }

    const BASE: &str = "name = \"x\"\nserve = [\"d\"]\ncli = [\"c\"]\n";

    /// The `skill` command and the feature `skill` come together or not at all.
    #[test]
    fn a_skill_command_and_its_feature_go_together() {
        let p = load_text(&format!("{BASE}features = [\"skill\"]\nskill = [\"s\"]\n")).unwrap();
        assert_eq!(p.skill, ["s"]);
        let p = load_text(&format!(
            "{BASE}features = [\"skill\"]\n[recovery]\nskill = [\"s\"]\n"
        ))
        .unwrap();
        assert_eq!(p.skill, ["s"]);
        assert!(load_text(BASE).unwrap().skill.is_empty());
        let e = load_text(&format!("{BASE}features = [\"skill\"]\n")).unwrap_err();
        assert!(e.contains("no `skill` command"), "{e}");
        let e = load_text(&format!("{BASE}skill = [\"s\"]\n")).unwrap_err();
        assert!(e.contains("does not claim the feature"), "{e}");
        let e = load_text(&format!(
            "{BASE}features = [\"skill\"]\nskill = [\"s\"]\n[recovery]\nskill = [\"t\"]\n"
        ))
        .unwrap_err();
        assert!(e.contains("both at the top level and in [recovery]"), "{e}");
    }
}
