//! Clause registries (`features/<contract>/clauses.toml`): every MUST and SHOULD of
//! a contract, ids prefixed per contract (`rfc-` for recovery), and the check that
//! ties each registry to its suite's tags.

use crate::contract::Contract;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Clause {
    pub id: String,
    pub section: String,
    /// `must` or `should` (the seed's requirement), or `pin` (the kit's reading
    /// where the seed is silent or open: a name, a number, a shape, a cap).
    pub level: String,
    pub text: String,
    /// The seed's sentence this clause reads, verbatim (whitespace may differ).
    #[serde(default)]
    pub quote: Option<String>,
    /// For a pin: why the kit reads the seed this way, and what a profile may say
    /// instead.
    #[serde(default)]
    pub why: Option<String>,
    /// False for clauses no black-box suite can observe (process rules on the
    /// implementer); `reason` says why. Default true.
    #[serde(default = "yes")]
    pub observable: bool,
    #[serde(default)]
    pub reason: Option<String>,
    /// An observable clause the kit's suite cannot check yet, with what it waits for:
    /// allowed to have no scenario, refused once it has one, shown in reports.
    #[serde(default)]
    pub pending: Option<String>,
    /// What a row of this clause rests on, when not its level (must → `seed`, pin →
    /// `pin`, should → `should`): `part`, the kit's own format or tool that an
    /// implementation adopts by claiming one of `claimed_by` (docs/audit.md).
    #[serde(default)]
    pub basis: Option<String>,
    /// For `basis = "part"`: the tags (`part-<name>`, `optional-<feature>`) a row
    /// of this clause must carry, so that only an implementation claiming the
    /// format is judged by it.
    #[serde(default)]
    pub claimed_by: Vec<String>,
    /// The seed sentence a particular row of this clause tests, where it is not
    /// the clause's own `quote` (docs/audit.md quotes it for that row).
    #[serde(default)]
    pub rows: Vec<RowQuote>,
}

/// One row's own seed sentence: `scenario` is the row's name as in its feature.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RowQuote {
    pub scenario: String,
    pub quote: String,
}

fn yes() -> bool {
    true
}

impl Clause {
    /// The seed sentence this clause's row `scenario` (its name as run, outline
    /// placeholders filled in) tests: its own `[[clause.rows]]` quote, else the
    /// clause's.
    pub fn quote_for(&self, scenario: &str) -> Option<&str> {
        self.rows
            .iter()
            .find(|r| name_matches(&r.scenario, scenario))
            .map(|r| r.quote.as_str())
            .or(self.quote.as_deref())
    }
}

/// Whether `name` is `pattern` with each `<placeholder>` filled in by some text.
fn name_matches(pattern: &str, name: &str) -> bool {
    let mut literals = Vec::new();
    let mut rest = pattern;
    while let Some(open) = rest.find('<') {
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        literals.push(&rest[..open]);
        rest = &rest[open + close + 1..];
    }
    literals.push(rest);
    let (first, last) = (literals[0], literals[literals.len() - 1]);
    if literals.len() == 1 {
        return name == pattern;
    }
    let Some(mut tail) = name.strip_prefix(first) else {
        return false;
    };
    for lit in &literals[1..literals.len() - 1] {
        match tail.find(lit) {
            Some(at) => tail = &tail[at + lit.len()..],
            None => return false,
        }
    }
    tail.ends_with(last)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    clause: Vec<Clause>,
}

/// A contract's registry file in its suite directory.
pub fn registry_path(suite_dir: &Path) -> PathBuf {
    suite_dir.join("clauses.toml")
}

pub fn load(path: &Path, contract: Contract) -> Result<Vec<Clause>, String> {
    let prefix = contract.clause_prefix();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read clause registry {}: {e}", path.display()))?;
    let f: File = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut seen = BTreeSet::new();
    for c in &f.clause {
        if !c.id.starts_with(prefix) {
            return Err(format!(
                "{}: clause id {:?} must start with {prefix} (the {contract} contract's prefix)",
                path.display(),
                c.id
            ));
        }
        if !seen.insert(c.id.clone()) {
            return Err(format!("clause id {:?} is listed twice", c.id));
        }
        if !matches!(c.level.as_str(), "must" | "should" | "pin") {
            return Err(format!(
                "clause {}: level {:?} must be must, should or pin",
                c.id, c.level
            ));
        }
        if c.level == "pin" && (c.quote.is_none() || c.why.is_none()) {
            return Err(format!(
                "clause {}: a pin needs `quote` (the seed sentence it reads) and `why`",
                c.id
            ));
        }
        if !c.observable && c.pending.is_some() {
            return Err(format!(
                "clause {}: an unobservable clause cannot be pending",
                c.id
            ));
        }
        match c.basis.as_deref() {
            None | Some("seed") if c.claimed_by.is_empty() => {}
            Some("part") if !c.claimed_by.is_empty() && c.why.is_some() => {}
            _ => {
                return Err(format!(
                    "clause {}: basis {:?} must be absent, \"seed\", or \"part\" with `claimed_by` and `why`",
                    c.id, c.basis
                ))
            }
        }
        let mut scenarios = BTreeSet::new();
        for r in &c.rows {
            if r.quote.trim().is_empty() || !scenarios.insert(r.scenario.as_str()) {
                return Err(format!(
                    "clause {}: [[clause.rows]] for {:?} needs a quote and may appear once",
                    c.id, r.scenario
                ));
            }
        }
        if !c.observable && c.reason.is_none() {
            return Err(format!("clause {}: unobservable needs a reason", c.id));
        }
    }
    Ok(f.clause)
}

/// Tags of every scenario, by feature file: feature-level tags apply to all.
pub fn feature_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "feature"))
        .collect();
    out.sort();
    Ok(out)
}

/// Every clause tag (`@<prefix>…`) in the features, with the files that use it.
pub fn tags_used(dir: &Path, prefix: &str) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let mut used: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in feature_files(dir)? {
        let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for line in text.lines() {
            let line = line.trim();
            if !line.starts_with('@') {
                continue;
            }
            for tag in line.split_whitespace() {
                if let Some(t) = tag.strip_prefix('@') {
                    if t.starts_with(prefix) {
                        used.entry(t.to_string()).or_default().insert(name.clone());
                    }
                }
            }
        }
    }
    Ok(used)
}

/// Fails when a tag names an unknown clause or an observable MUST has no scenario.
pub fn check(clauses: &[Clause], features: &Path, contract: Contract) -> Result<(), Vec<String>> {
    let used = tags_used(features, contract.clause_prefix()).map_err(|e| vec![e])?;
    let known: BTreeSet<&str> = clauses.iter().map(|c| c.id.as_str()).collect();
    let mut problems = Vec::new();
    for (tag, files) in &used {
        if !known.contains(tag.as_str()) {
            problems.push(format!(
                "tag @{tag} in {files:?} names no clause of the registry"
            ));
        }
    }
    for c in clauses {
        let covered = used.contains_key(&c.id);
        if c.level == "must" && c.observable && c.pending.is_none() && !covered {
            problems.push(format!(
                "MUST clause {} ({}) has no scenario",
                c.id, c.section
            ));
        }
        if c.pending.is_some() && covered {
            problems.push(format!(
                "clause {} is marked pending but has scenarios: remove `pending`",
                c.id
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// For a contract with parts: every scenario carries exactly one `@part-<name>` tag
/// (its own or its feature's), naming a part of the contract. A scenario without one
/// could not be left out of a partial claim.
pub fn check_parts(features: &Path, contract: Contract) -> Result<(), Vec<String>> {
    let parts = contract.parts();
    if parts.is_empty() {
        return Ok(());
    }
    let mut problems = Vec::new();
    for file in feature_files(features).map_err(|e| vec![e])? {
        let f =
            cucumber::gherkin::Feature::parse_path(&file, cucumber::gherkin::GherkinEnv::default())
                .map_err(|e| vec![format!("{}: {e}", file.display())])?;
        let scenarios = f.scenarios.iter().map(|s| (s, None)).chain(
            f.rules
                .iter()
                .flat_map(|r| r.scenarios.iter().map(move |s| (s, Some(r)))),
        );
        for (s, rule) in scenarios {
            let tags: Vec<&str> = f
                .tags
                .iter()
                .chain(rule.map(|r| r.tags.iter()).into_iter().flatten())
                .chain(s.tags.iter())
                .filter_map(|t| t.strip_prefix("part-"))
                .collect();
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            match tags.as_slice() {
                [p] if parts.contains(p) => {}
                [p] => problems.push(format!(
                    "{name}:{}: @part-{p} is not a part of the {contract} contract ({})",
                    s.position.line,
                    parts.join(", ")
                )),
                _ => problems.push(format!(
                    "{name}:{}: scenario {:?} needs exactly one @part- tag (one of {}), has {}",
                    s.position.line,
                    s.name,
                    parts.join(", "),
                    tags.len()
                )),
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_of_a_contract_with_parts_names_one_part() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.feature"),
            "@part-packer\nFeature: A\n  Scenario: ok\n    Given x\n\n  @part-store\n  Scenario: two\n    Given x\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("b.feature"),
            "Feature: B\n  Scenario: none\n    Given x\n\n  @part-broker\n  Scenario: foreign\n    Given x\n\n  @part-checker\n  Scenario: fine\n    Given x\n",
        )
        .unwrap();
        let problems = check_parts(dir.path(), Contract::SessionPersist).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with("a.feature:7:") && problems[0].contains("has 2"));
        assert!(problems[1].starts_with("b.feature:2:") && problems[1].contains("has 0"));
        assert!(problems[2].contains("@part-broker is not a part"));
        assert!(check_parts(dir.path(), Contract::Recovery).is_ok());
    }

    fn root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../features")
    }

    /// The shipped registry and features agree: no unknown tag, no uncovered MUST.
    #[test]
    fn shipped_registry_covers_every_must() {
        let dir = root().join("recovery");
        let clauses = load(&registry_path(&dir), Contract::Recovery).unwrap();
        assert!(clauses.len() >= 40, "registry too small: {}", clauses.len());
        if let Err(p) = check(&clauses, &dir, Contract::Recovery) {
            panic!("registry check failed:\n{}", p.join("\n"));
        }
    }

    /// RFC §8's acceptance matrix, "Case" column, in order.
    const MATRIX: [&str; 21] = [
        "Defaults / disabled",
        "On-demand interaction",
        "Clean restart",
        "Forced SIGKILL",
        "Interrupted writes",
        "Corrupt/partial state",
        "Version/limits",
        "Format 2",
        "Format 3",
        "Topology",
        "Text / expiry",
        "Secret exclusion",
        "Credentials",
        "Resume",
        "Grants",
        "Vanished executable",
        "Duplicate launch",
        "Orphans / PID reuse",
        "Filesystem security",
        "Retention/config",
        "Events/clients",
    ];

    /// One feature per matrix row, named exactly as the RFC, in its order, each with
    /// its row clause and `@must` at feature level. Features after those (`22_…`
    /// onwards) add scenarios to a row: the feature is named after it (with that
    /// row's clause), or each scenario sits in a `Rule:` named after the row it
    /// counts for.
    #[test]
    fn one_feature_per_matrix_row() {
        let files = feature_files(&root().join("recovery")).unwrap();
        let (files, gathered) = files.split_at(MATRIX.len().min(files.len()));
        for f in gathered {
            let feature =
                cucumber::gherkin::Feature::parse_path(f, cucumber::gherkin::GherkinEnv::default())
                    .unwrap();
            if !MATRIX.contains(&feature.name.as_str()) {
                assert!(
                    feature.scenarios.is_empty(),
                    "{f:?}: a scenario outside a Rule"
                );
                assert!(!feature.rules.is_empty(), "{f:?}: no Rule");
            }
            for r in &feature.rules {
                assert!(
                    MATRIX.contains(&r.name.as_str()),
                    "{f:?}: Rule {:?} is no row",
                    r.name
                );
            }
        }
        let mut names: Vec<String> = Vec::new();
        let mut row_tags: Vec<String> = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(f).unwrap();
            let mut lines = text.lines();
            let tags = lines.next().unwrap();
            assert!(
                tags.starts_with("@rfc-8-") && tags.contains("@must"),
                "{f:?}: {tags}"
            );
            let row_tag = tags.split_whitespace().next().unwrap().to_string();
            let name = text
                .lines()
                .find_map(|l| l.strip_prefix("Feature: "))
                .unwrap_or_else(|| panic!("{f:?} has no Feature line"));
            match names.iter().position(|n| n == name) {
                Some(i) => {
                    assert!(
                        names.len() == MATRIX.len(),
                        "{f:?} extends a row before the matrix ends"
                    );
                    assert_eq!(
                        row_tags[i], row_tag,
                        "{f:?} extends {name:?} with another row clause"
                    );
                }
                None => {
                    names.push(name.to_string());
                    row_tags.push(row_tag);
                }
            }
        }
        assert_eq!(names, MATRIX);
        for f in gathered {
            let text = std::fs::read_to_string(f).unwrap();
            let name = text.lines().find_map(|l| l.strip_prefix("Feature: "));
            if let Some(i) = name.and_then(|n| names.iter().position(|m| m == n)) {
                let tag = text.lines().next().unwrap().split_whitespace().next();
                assert_eq!(
                    tag,
                    Some(row_tags[i].as_str()),
                    "{f:?} extends {:?} with another row clause",
                    names[i]
                );
            }
        }
    }

    #[test]
    fn a_row_quote_matches_its_scenario_as_run() {
        assert!(name_matches("A b", "A b"));
        assert!(!name_matches("A b", "A bc"));
        assert!(name_matches("Refused: <case>", "Refused: have-negative"));
        assert!(name_matches("X (<a> as <b>)", "X (pi as codex)"));
        assert!(!name_matches("X (<a> as <b>)", "X (pi to codex)"));
        assert!(!name_matches("Refused: <case>", "Accepted: have-negative"));
        let mut c = Clause {
            id: "sw-a".into(),
            section: "s".into(),
            level: "must".into(),
            text: "t".into(),
            quote: Some("clause".into()),
            why: None,
            observable: true,
            reason: None,
            pending: None,
            basis: None,
            claimed_by: Vec::new(),
            rows: vec![RowQuote {
                scenario: "Refused: <case>".into(),
                quote: "row".into(),
            }],
        };
        assert_eq!(c.quote_for("Refused: bare-uuid"), Some("row"));
        assert_eq!(c.quote_for("Another row"), Some("clause"));
        c.quote = None;
        assert_eq!(c.quote_for("Another row"), None);
    }

    /// `basis` is absent, seed, or part with its claim and why; a row's own quote is
    /// given once per scenario.
    #[test]
    fn load_checks_basis_and_row_quotes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("clauses.toml");
        let head = "[[clause]]\nid = \"sw-a\"\nsection = \"s\"\nlevel = \"must\"\ntext = \"t\"\n";
        let load_with = |extra: &str| {
            std::fs::write(&path, format!("{head}{extra}")).unwrap();
            load(&path, Contract::SingleWriter)
        };
        assert!(load_with("").is_ok());
        assert!(load_with("basis = \"seed\"\n").is_ok());
        let part = "basis = \"part\"\nclaimed_by = [\"part-checker\"]\nwhy = \"w\"\n";
        assert!(load_with(part).is_ok());
        for bad in [
            "basis = \"part\"\nwhy = \"w\"\n",
            "basis = \"part\"\nclaimed_by = [\"part-checker\"]\n",
            "basis = \"pin\"\n",
            "claimed_by = [\"part-checker\"]\n",
        ] {
            let e = load_with(bad).unwrap_err();
            assert!(e.contains("clause sw-a: basis"), "{bad}: {e}");
        }
        let row = "[[clause.rows]]\nscenario = \"r\"\nquote = \"q\"\n";
        assert!(load_with(row).is_ok());
        let e = load_with(&format!("{row}{row}")).unwrap_err();
        assert!(e.contains("\"r\" needs a quote and may appear once"), "{e}");
        let e = load_with("[[clause.rows]]\nscenario = \"r\"\nquote = \" \"\n").unwrap_err();
        assert!(e.contains("needs a quote"), "{e}");
    }

    #[test]
    fn check_catches_unknown_tags_and_uncovered_musts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("x.feature"),
            "@rfc-9-nope\nFeature: X\n  @rfc-1-a @must\n  Scenario: s\n    Given x\n",
        )
        .unwrap();
        let clauses: Vec<Clause> = ["rfc-1-a", "rfc-1-b"]
            .iter()
            .map(|id| Clause {
                id: id.to_string(),
                section: "1".into(),
                level: "must".into(),
                text: "t".into(),
                quote: None,
                why: None,
                observable: true,
                reason: None,
                pending: None,
                basis: None,
                claimed_by: Vec::new(),
                rows: Vec::new(),
            })
            .collect();
        let problems = check(&clauses, dir.path(), Contract::Recovery).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("rfc-9-nope"));
        assert!(problems[1].contains("rfc-1-b"));
    }
}
