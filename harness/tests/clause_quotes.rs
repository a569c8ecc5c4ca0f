//! Every `quote` of a clause registry is its seed's sentence, verbatim: it occurs in
//! the seed the contract comes from (`shared/seeds/`, beside this repository). The
//! seeds were flattened from rendered documents, which dropped the spaces around
//! code spans (`increasing\ngenerationwithin`), so the comparison ignores whitespace
//! altogether; every other character, the typographic apostrophe included, must be
//! the seed's. Recovery, agent-restore and session-persist quote every clause; the other registries
//! are checked for the clauses that carry one.

use std::path::{Path, PathBuf};

/// Each contract's suite directory and the seed its clauses quote.
const REGISTRIES: [(&str, &str, bool); 4] = [
    ("recovery", "002_db2fed4dbfadc150.txt", true),
    ("agent-restore", "000_762b42388703ca93.txt", true),
    ("single-writer", "003_df8267c1b4854deb.txt", false),
    ("session-persist", "004_f9b2c105e15dcfff.txt", true),
];

fn features() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../features")
}

/// `$VXCERT_SEEDS`, else `shared/seeds/` beside the repository.
fn seeds_dir() -> PathBuf {
    std::env::var_os("VXCERT_SEEDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/seeds"))
}

fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// (id, level, quote) of every clause of a registry.
fn clauses(contract: &str) -> Vec<(String, String, Option<String>)> {
    let path = features().join(contract).join("clauses.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let doc: toml::Table = toml::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    doc["clause"]
        .as_array()
        .expect("a clause array")
        .iter()
        .map(|c| {
            let s = |k: &str| c.get(k).and_then(|v| v.as_str()).map(str::to_string);
            (
                s("id").expect("an id"),
                s("level").expect("a level"),
                s("quote"),
            )
        })
        .collect()
}

/// The quotes of `contract` that its seed (`seed`, whitespace ignored) lacks.
fn not_in_seed(contract: &str, seed: &str) -> Vec<String> {
    let seed = squeeze(seed);
    clauses(contract)
        .into_iter()
        .filter_map(|(id, _, q)| q.filter(|q| !seed.contains(&squeeze(q))).map(|_| id))
        .collect()
}

#[test]
fn recovery_and_agent_restore_quote_every_clause() {
    for (contract, _, all) in REGISTRIES {
        let unquoted: Vec<String> = clauses(contract)
            .into_iter()
            .filter(|(_, level, q)| q.is_none() && (all || level == "pin"))
            .map(|(id, ..)| id)
            .collect();
        assert!(unquoted.is_empty(), "{contract}: no quote: {unquoted:?}");
    }
}

#[test]
fn every_quote_occurs_in_its_seed() {
    let dir = seeds_dir();
    if !dir.is_dir() {
        assert!(
            std::env::var_os("VXCERT_REQUIRE_SEEDS").is_none(),
            "no seeds at {dir:?} (set VXCERT_SEEDS)"
        );
        eprintln!("clause_quotes: no seeds at {dir:?}: quotes not compared (set VXCERT_SEEDS)");
        return;
    }
    let mut problems = Vec::new();
    let mut compared = 0;
    for (contract, seed, _) in REGISTRIES {
        let path = dir.join(seed);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        compared += clauses(contract).iter().filter(|c| c.2.is_some()).count();
        for id in not_in_seed(contract, &text) {
            problems.push(format!("{contract} {id}: the quote is not in {seed}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(compared >= 100, "only {compared} quotes compared");
}

/// The comparison catches a quote that is not the seed's: a changed word, a
/// straightened apostrophe; whitespace alone never matters.
#[test]
fn the_comparison_ignores_whitespace_only() {
    let seed = "Save reads the record from each exact pane and copies valid records into\nthat pane’s agent_session field.";
    let q = |s: &str| squeeze(seed).contains(&squeeze(s));
    assert!(q("records into that pane’s agent_session field."));
    assert!(q("records   into\tthat pane’s agent_session   field."));
    assert!(!q("records into that pane's agent_session field."));
    assert!(!q("records into each pane’s agent_session field."));
}
