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

/// The run context when the runner has set it (unit tests read the kit's defaults).
pub fn try_context() -> Option<&'static RunContext> {
    CONTEXT.get()
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
    /// How injected faults reach the implementation: `preload`, `seccomp` or `auto`
    /// (default `auto`: the preload for a dynamically linked program that calls libc's
    /// file functions, seccomp otherwise; docs/fault-injection.md).
    #[serde(default)]
    pub fault_backend: Option<String>,
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
    /// Variables of vxcert's own environment every command of the implementation
    /// also gets, when set (a switch of a test subject, a license key).
    #[serde(default)]
    pub pass_env: Vec<String>,
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
    /// What each contract's table claims besides its templates (`parts`,
    /// `verdict_only`, `pins`), taken out of the tables when the profile is loaded.
    #[serde(skip)]
    pub claims: BTreeMap<&'static str, Claim>,
    /// `[recovery] grant`: how one grant is spelled on the wire
    /// ([`crate::recovery::grants`]); the kit's `"{right}@{kind}:{id}"` when absent.
    #[serde(skip)]
    pub grant: Option<String>,
}

/// The keys every contract table may carry besides its command templates.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The parts claimed (absent: every part of the contract).
    #[serde(default)]
    pub parts: Option<Vec<String>>,
    /// Judge the checker by valid/invalid alone, without the kit's rule ids.
    #[serde(default)]
    pub verdict_only: bool,
    /// The implementation's own value for a kit pin, by the pin's key (a close code,
    /// an error code, a name): the rows that observe it are then judged strictly
    /// against this value.
    #[serde(default)]
    pub pins: BTreeMap<String, toml::Value>,
}

/// The keys of [`Claim`].
const CLAIM_KEYS: [&str; 3] = ["parts", "verdict_only", "pins"];

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
    #[serde(default)]
    pub grant: Option<String>,
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
const NOT_COMMANDS: [&str; 2] = ["s3_twins", "restore_launch_verbs"];

/// Keys of contract tables that name a file: a relative path is read from the
/// profile's own directory (so a profile travels with its documents).
const FILE_KEYS: [(&str, &str); 1] = [("persist", "layouts")];

impl Profile {
    pub fn load(path: &Path) -> Result<Profile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read profile {}: {e}", path.display()))?;
        Profile::parse(&text, path)
    }

    /// A profile from its text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Profile, String> {
        let mut p: Profile =
            toml::from_str(text).map_err(|e| format!("profile {}: {e}", path.display()))?;
        if let Some(t) = p.recovery.take() {
            if let Some(g) = &t.grant {
                crate::recovery::grants::check(g)
                    .map_err(|e| format!("profile {}: [recovery].grant: {e}", path.display()))?;
            }
            p.grant = t.grant.clone();
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
        p.take_claims()
            .map_err(|e| format!("profile {}: {e}", path.display()))?;
        p.resolve_files(path);
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

    /// Fills `{profile_dir}` (the profile's own directory) in every command and
    /// value, and makes each file key's relative path ([`FILE_KEYS`]) relative to
    /// that directory, so a profile travels with its programs and documents.
    fn resolve_files(&mut self, path: &Path) {
        let dir = path.parent().unwrap_or(Path::new("."));
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        let text = dir.to_string_lossy().into_owned();
        let fill = |w: &mut String| *w = w.replace("{profile_dir}", &text);
        for words in [
            &mut self.serve,
            &mut self.serve_on_demand,
            &mut self.cli,
            &mut self.skill,
            &mut self.version,
        ] {
            words.iter_mut().for_each(fill);
        }
        self.env.values_mut().for_each(fill);
        fn fill_value(v: &mut toml::Value, text: &str) {
            match v {
                toml::Value::String(s) => *s = s.replace("{profile_dir}", text),
                toml::Value::Array(a) => a.iter_mut().for_each(|v| fill_value(v, text)),
                toml::Value::Table(t) => t.iter_mut().for_each(|(_, v)| fill_value(v, text)),
                _ => {}
            }
        }
        for t in [
            self.agent_restore.as_mut(),
            self.single_writer.as_mut(),
            self.persist.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            t.iter_mut().for_each(|(_, v)| fill_value(v, &text));
        }
        for (table, key) in FILE_KEYS {
            let t = match table {
                "persist" => self.persist.as_mut(),
                _ => None,
            };
            let Some(v) = t.and_then(|t| t.get_mut(key)) else {
                continue;
            };
            if let Some(rel) = v.as_str().filter(|s| !s.is_empty()) {
                *v = toml::Value::String(dir.join(rel).to_string_lossy().into_owned());
            }
        }
    }

    /// Moves `parts`, `verdict_only` and `pins` out of each contract table into
    /// `claims`, checking each part is one the contract has.
    fn take_claims(&mut self) -> Result<(), String> {
        use crate::contract::Contract;
        for c in Contract::ALL {
            let table = match c {
                Contract::Recovery => continue,
                Contract::AgentRestore => self.agent_restore.as_mut(),
                Contract::SingleWriter => self.single_writer.as_mut(),
                Contract::SessionPersist => self.persist.as_mut(),
            };
            let Some(table) = table else { continue };
            let mut claim = toml::Table::new();
            for k in CLAIM_KEYS {
                if let Some(v) = table.remove(k) {
                    claim.insert(k.to_string(), v);
                }
            }
            let claim: Claim = toml::Value::Table(claim)
                .try_into()
                .map_err(|e| format!("[{}]: {e}", c.profile_table()))?;
            for part in claim.parts.iter().flatten() {
                if !c.parts().contains(&part.as_str()) {
                    return Err(format!(
                        "[{}] parts: {part:?} is not a part of the {c} contract (its parts: {})",
                        c.profile_table(),
                        c.parts().join(", ")
                    ));
                }
            }
            if claim.parts.as_ref().is_some_and(Vec::is_empty) {
                return Err(format!(
                    "[{}] parts is empty: claim at least one part, or leave the contract out of `contracts`",
                    c.profile_table()
                ));
            }
            self.claims.insert(c.name(), claim);
        }
        Ok(())
    }

    /// What the profile claims of a contract besides its templates.
    pub fn claim(&self, c: crate::contract::Contract) -> Claim {
        self.claims.get(c.name()).cloned().unwrap_or_default()
    }

    /// Whether the profile claims `part` of contract `c` (every part when the table
    /// names none).
    pub fn claims_part(&self, c: crate::contract::Contract, part: &str) -> bool {
        self.claims
            .get(c.name())
            .and_then(|k| k.parts.as_ref())
            .is_none_or(|ps| ps.iter().any(|p| p == part))
    }

    /// The parts of `c` this profile claims, in the contract's order.
    pub fn claimed_parts(&self, c: crate::contract::Contract) -> Vec<&'static str> {
        c.parts()
            .iter()
            .copied()
            .filter(|p| self.claims_part(c, p))
            .collect()
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

    /// `parts`, `verdict_only` and `pins` leave the contract's table; an unknown part
    /// is named with the contract's parts.
    #[test]
    fn a_contract_table_claims_parts_and_pins() {
        use crate::contract::Contract;
        let p = load_text(
            "name = \"x\"\ncontracts = [\"session-persist\"]\n[persist]\nparts = [\"packer\"]\n\
             pack = [\"p\"]\n[persist.pins]\nheader_member = \"h.json\"\n",
        )
        .unwrap();
        assert!(p.claims_part(Contract::SessionPersist, "packer"));
        assert!(!p.claims_part(Contract::SessionPersist, "store"));
        assert_eq!(p.claimed_parts(Contract::SessionPersist), ["packer"]);
        let t = p.contract_table(Contract::SessionPersist).unwrap();
        assert!(t.get("parts").is_none() && t.get("pins").is_none());
        assert_eq!(
            p.claim(Contract::SessionPersist).pins["header_member"].as_str(),
            Some("h.json")
        );
        let e = load_text(
            "name = \"x\"\ncontracts = [\"session-persist\"]\n[persist]\nparts = [\"broker\"]\n",
        )
        .unwrap_err();
        assert!(e.contains("\"broker\" is not a part of the session-persist contract (its parts: packer, checker, store, runtime)"), "{e}");
        let all =
            load_text("name = \"x\"\ncontracts = [\"single-writer\"]\n[single_writer]\n").unwrap();
        assert_eq!(
            all.claimed_parts(Contract::SingleWriter),
            ["checker", "broker", "master", "client"]
        );
    }

    /// `{profile_dir}` is filled in commands and values, and `[persist] layouts` is
    /// read from the profile's directory.
    #[test]
    fn a_profile_names_files_beside_itself() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.toml");
        std::fs::write(
            &path,
            "name = \"x\"\ncontracts = [\"session-persist\"]\npass_env = [\"SWITCH\"]\n\
             [persist]\npack = [\"{profile_dir}/packer.py\"]\nlayouts = \"own.toml\"\n",
        )
        .unwrap();
        let p = Profile::load(&path).unwrap();
        let t = p.persist.as_ref().unwrap();
        let d = std::path::absolute(dir.path()).unwrap();
        assert_eq!(
            t["pack"][0].as_str().unwrap(),
            d.join("packer.py").to_str().unwrap()
        );
        assert_eq!(
            t["layouts"].as_str().unwrap(),
            d.join("own.toml").to_str().unwrap()
        );
        assert_eq!(p.pass_env, ["SWITCH"]);
    }
}
