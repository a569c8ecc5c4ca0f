//! The battery: mutants of the reference as structured find/replace edits, one
//! directory of `*.toml` files per contract (`contract::CONTRACTS`), each mutant
//! breaking one clause of that contract's registry.
//!
//! An exact original snippet, not a line-number diff, so a mutant keeps applying while
//! unrelated lines move, and stops applying (an invalid mutant, reported) the moment
//! the code it breaks changes.

use super::contract::Contract;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mutant {
    pub id: String,
    /// A clause id of the contract's registry (`features/<contract>/clauses.toml`).
    pub clause: String,
    /// The RFC section the clause belongs to (checked against the registry).
    pub section: String,
    pub description: String,
    /// A file of the workspace, relative to its root.
    pub file: String,
    /// Text that occurs exactly once in `file`.
    pub find: String,
    pub replace: String,
    /// For a known survivor: the scenario that would catch it (it still counts as
    /// survived).
    #[serde(default)]
    pub survivor_note: Option<String>,
    /// Why this edit breaks no MUST of the RFC (found by a survivor review): a
    /// surviving equivalent mutant is left out of the kill rate, a killed one counts.
    #[serde(default)]
    pub equivalent: Option<String>,
    /// Part of CI's fast subset (`cargo xtask mutants --ci`).
    #[serde(default)]
    pub ci: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatteryFile {
    mutant: Vec<Mutant>,
}

#[derive(Deserialize)]
struct Registry {
    clause: Vec<RegistryClause>,
}

#[derive(Deserialize)]
struct RegistryClause {
    id: String,
    section: String,
}

/// Reads every battery file of `contract` (sorted by name, mutants in file order) and
/// checks each mutant against the contract's registry and the clean tree. Any problem
/// is an error naming the mutant: a battery that does not apply cleanly never runs.
/// A contract without a battery directory has no mutants yet.
pub fn load(root: &Path, contract: &Contract) -> Result<Vec<Mutant>, String> {
    let dir = root.join(contract.battery_dir);
    if !dir.exists() {
        return Ok(Vec::new());
    }
    let registry: Registry = read_toml(&root.join(contract.clauses))?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", contract.battery_dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut mutants = Vec::new();
    let mut ids = BTreeSet::new();
    for file in files {
        let battery: BatteryFile = read_toml(&file)?;
        for m in battery.mutant {
            check(root, contract, &registry, &m)?;
            if !ids.insert(m.id.clone()) {
                return Err(format!("mutant id {} appears twice", m.id));
            }
            mutants.push(m);
        }
    }
    Ok(mutants)
}

fn check(root: &Path, contract: &Contract, registry: &Registry, m: &Mutant) -> Result<(), String> {
    let clause = registry
        .clause
        .iter()
        .find(|c| c.id == m.clause)
        .ok_or_else(|| {
            format!(
                "mutant {}: clause {} is not in {}",
                m.id, m.clause, contract.clauses
            )
        })?;
    if clause.section.split('.').next() != m.section.split('.').next() {
        return Err(format!(
            "mutant {}: section {} but clause {} is in section {}",
            m.id, m.section, m.clause, clause.section
        ));
    }
    if m.find == m.replace {
        return Err(format!("mutant {}: replace equals find", m.id));
    }
    let text = std::fs::read_to_string(root.join(&m.file))
        .map_err(|e| format!("mutant {}: {}: {e}", m.id, m.file))?;
    match text.matches(m.find.as_str()).count() {
        1 => Ok(()),
        n => Err(format!(
            "mutant {}: the find text occurs {n} times in {} (must be exactly once)",
            m.id, m.file
        )),
    }
}

fn read_toml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The mutated text of `m.file`, given its clean text.
pub fn apply(m: &Mutant, clean: &str) -> String {
    clean.replacen(m.find.as_str(), m.replace.as_str(), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::mutants::contract::{by_name, CONTRACTS};

    /// The battery stays applicable as the reference changes: every mutant of every
    /// contract names a registered clause of its section and its find text still
    /// occurs exactly once (`cargo test` catches the drift before a run of the battery
    /// would).
    #[test]
    fn every_mutant_applies_to_the_current_reference() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for contract in &CONTRACTS {
            load(&root, contract).unwrap_or_else(|e| panic!("{}: {e}", contract.name));
        }
        let recovery = load(&root, by_name("recovery").unwrap()).unwrap();
        assert!(recovery.len() >= 40, "{} recovery mutants", recovery.len());
        assert_eq!(
            recovery.iter().filter(|m| m.ci).count(),
            5,
            "recovery's CI subset is five mutants (docs/detection.md)"
        );
    }
}
