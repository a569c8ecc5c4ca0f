//! The engines file `E.toml` (docs/spec/single-writer.md "Engines"):
//!
//! ```toml
//! [engine.opencode]
//! pin = "none"            # "flag": the id is minted before launch; "none": the engine mints it
//! id = "ses"              # "uuid" | "ses"
//! launch = ["{bin_dir}/vxstub", "agent", "--cwd", "{cwd}", "--history", "{history}"]
//! resume = ["{bin_dir}/vxstub", "agent", "--id", "{id}", "--history", "{history}"]
//! index = "{history}/index.json"   # required for pin = "none"
//! ```
//!
//! Strict: unknown tables and keys, unknown placeholders, an `{id}` in the launch of
//! an engine that cannot pin, and an empty argv are refused. Templates are argv
//! elements, never a shell line.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;

use serde::Deserialize;

use crate::error::{BrokerError, Result, Rule};
use crate::key::{EngineSpec, EngineTable, IdKind, Pin};

/// What `{…}` may name inside a template.
pub const PLACEHOLDERS: [&str; 4] = ["bin_dir", "id", "cwd", "history"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    engine: BTreeMap<String, Raw>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    pin: RawPin,
    id: RawId,
    launch: Vec<String>,
    resume: Vec<String>,
    index: Option<String>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum RawPin {
    Flag,
    None,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum RawId {
    Uuid,
    Ses,
}

/// One engine: its key grammar and its command templates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Engine {
    pub spec: EngineSpec,
    pub launch: Vec<String>,
    pub resume: Vec<String>,
    /// The engine's id index, read-only, for alias reconciliation (`pin = "none"`).
    pub index: Option<String>,
}

/// The values a template's placeholders take for one launch.
#[derive(Clone, Debug, Default)]
pub struct Vars<'a> {
    pub bin_dir: &'a str,
    pub id: &'a str,
    pub cwd: &'a str,
    pub history: &'a str,
}

impl Engine {
    /// The launch argv (a new session).
    pub fn launch_argv(&self, vars: &Vars<'_>) -> Vec<OsString> {
        self.launch.iter().map(|t| expand(t, vars).into()).collect()
    }

    /// The resume argv (an existing session's id).
    pub fn resume_argv(&self, vars: &Vars<'_>) -> Vec<OsString> {
        self.resume.iter().map(|t| expand(t, vars).into()).collect()
    }
}

/// The engines a broker runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Engines(BTreeMap<String, Engine>);

impl Engines {
    pub fn get(&self, name: &str) -> Option<&Engine> {
        self.0.get(name)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Engine)> {
        self.0.iter().map(|(n, e)| (n.as_str(), e))
    }

    /// Keeps only the engines `known` names: a broker with its own engine set
    /// configures the commands of those and knows no other.
    pub fn retain_known(&mut self, known: impl Fn(&str) -> bool) {
        self.0.retain(|n, _| known(n));
    }

    /// The key grammar table of these engines.
    pub fn table(&self) -> EngineTable {
        let mut t = EngineTable::new();
        for (name, e) in &self.0 {
            t.insert(name, e.spec);
        }
        t
    }
}

/// Reads an engines file (bounded like every broker file).
pub fn load(path: &Path) -> Result<Engines> {
    let bytes = crate::small_file::read_capped(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| BrokerError::new(Rule::EnginesSyntax))?;
    parse(text)
}

/// Parses an engines file's text.
pub fn parse(text: &str) -> Result<Engines> {
    let file: File = toml::from_str(text).map_err(|_| BrokerError::new(Rule::EnginesSyntax))?;
    let mut engines = BTreeMap::new();
    for (name, raw) in file.engine {
        if !crate::key::is_engine(&name) {
            return Err(Rule::EnginesName.into());
        }
        let pin = match raw.pin {
            RawPin::Flag => Pin::Flag,
            RawPin::None => Pin::None,
        };
        let id = match raw.id {
            RawId::Uuid => IdKind::Uuid,
            RawId::Ses => IdKind::Ses,
        };
        if raw.launch.is_empty() || raw.resume.is_empty() {
            return Err(Rule::EnginesArgvEmpty.into());
        }
        for t in raw.launch.iter().chain(&raw.resume).chain(&raw.index) {
            check_template(t)?;
        }
        let names_id = |argv: &[String]| argv.iter().any(|t| t.contains("{id}"));
        if pin == Pin::None && names_id(&raw.launch) {
            return Err(Rule::EnginesIdUnpinned.into());
        }
        if pin == Pin::Flag && !names_id(&raw.launch) {
            return Err(Rule::EnginesIdMissing.into());
        }
        if !names_id(&raw.resume) {
            return Err(Rule::EnginesIdMissing.into());
        }
        if pin == Pin::None && raw.index.is_none() {
            return Err(Rule::EnginesIndexMissing.into());
        }
        let spec = EngineSpec { id, pin };
        engines.insert(
            name,
            Engine {
                spec,
                launch: raw.launch,
                resume: raw.resume,
                index: raw.index,
            },
        );
    }
    Ok(Engines(engines))
}

/// Every `{` opens a known placeholder closed by `}`; no stray `}`.
fn check_template(t: &str) -> Result<()> {
    let mut rest = t;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.as_bytes()[open] == b'}' {
            return Err(Rule::EnginesPlaceholder.into());
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or(BrokerError::new(Rule::EnginesPlaceholder))?;
        if !PLACEHOLDERS.contains(&&after[..close]) {
            return Err(Rule::EnginesPlaceholder.into());
        }
        rest = &after[close + 1..];
    }
    Ok(())
}

/// Substitutes the placeholders of a checked template.
pub fn expand(t: &str, vars: &Vars<'_>) -> String {
    t.replace("{bin_dir}", vars.bin_dir)
        .replace("{id}", vars.id)
        .replace("{cwd}", vars.cwd)
        .replace("{history}", vars.history)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[engine.claude]
pin = "flag"
id = "uuid"
launch = ["{bin_dir}/vxstub", "agent", "--id", "{id}", "--cwd", "{cwd}"]
resume = ["{bin_dir}/vxstub", "agent", "--resume", "{id}"]

[engine.opencode]
pin = "none"
id = "ses"
launch = ["{bin_dir}/vxstub", "agent", "--history", "{history}"]
resume = ["{bin_dir}/vxstub", "agent", "--resume", "{id}"]
index = "{history}/index.json"
"#;

    fn rule(text: &str) -> &'static str {
        parse(text).unwrap_err().rule.id()
    }

    #[test]
    fn reads_and_expands() {
        let e = parse(GOOD).unwrap();
        let claude = e.get("claude").unwrap();
        let vars = Vars {
            bin_dir: "/b",
            id: "X",
            cwd: "/w d",
            history: "/h",
        };
        let argv = claude.launch_argv(&vars);
        assert_eq!(
            argv,
            ["/b/vxstub", "agent", "--id", "X", "--cwd", "/w d"].map(OsString::from)
        );
        assert_eq!(e.get("opencode").unwrap().spec.pin, Pin::None);
        assert!(e.table().get("opencode").is_some());
    }

    #[test]
    fn refusals() {
        assert_eq!(rule("[engine.a]\npin = \"flag\""), "engines.syntax");
        assert_eq!(rule(&GOOD.replace("index =", "indexx =")), "engines.syntax");
        assert_eq!(
            rule(&GOOD.replace("pin = \"flag\"", "pin = \"maybe\"")),
            "engines.syntax"
        );
        assert_eq!(
            rule(&GOOD.replace("[engine.claude]", "[engine.Claude]")),
            "engines.name"
        );
        assert_eq!(
            rule(&GOOD.replace("\"--cwd\", \"{cwd}\"", "\"{home}\"")),
            "engines.placeholder"
        );
        assert_eq!(
            rule(&GOOD.replace("\"--cwd\", \"{cwd}\"", "\"{cwd\"")),
            "engines.placeholder"
        );
        assert_eq!(
            rule(&GOOD.replace("\"--cwd\", \"{cwd}\"", "\"cwd}\"")),
            "engines.placeholder"
        );
        assert_eq!(
            rule(&GOOD.replace(
                "\"agent\", \"--history\"",
                "\"agent\", \"{id}\", \"--history\""
            )),
            "engines.id_unpinned"
        );
        assert_eq!(
            rule(&GOOD.replace("\"--id\", \"{id}\", ", "")),
            "engines.id_missing"
        );
        assert_eq!(
            rule(&GOOD.replace("index = \"{history}/index.json\"", "")),
            "engines.index_missing"
        );
        assert_eq!(
            rule(&GOOD.replace(
                "resume = [\"{bin_dir}/vxstub\", \"agent\", \"--resume\", \"{id}\"]\n\n",
                "resume = []\n\n"
            )),
            "engines.argv_empty"
        );
    }
}
