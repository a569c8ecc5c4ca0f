//! The report of one run, built once from typed outcomes: `report.json`'s model (shape fixed
//! by surface.md, plus `contract` on rows, scenarios and clauses), JUnit XML, the
//! Markdown matrix (a section per contract) and the HTML page (`html.rs`).

use super::clauses::Clause;
use super::Outcome;
use crate::contract::Contract;
use crate::profile::Profile;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A clause's note when no selected scenario checks it (recomputed by a merge).
pub const NO_SCENARIO_NOTE: &str = "no selected scenario checks this clause in this run";

pub struct Inputs<'a> {
    pub profile: &'a Profile,
    pub profile_path: &'a Path,
    pub implementation: &'a str,
    pub started_at: &'a str,
    pub duration_ms: u128,
    pub concurrency: usize,
    pub outcomes: &'a [Outcome],
    pub registries: &'a [(Contract, Vec<Clause>)],
    /// What names the run beyond the profile: shard, tags, suites' and profile's digests.
    pub identity: Identity,
}

/// What a merge requires its inputs to agree on, and what it lists.
#[derive(Debug, Default, Clone)]
pub struct Identity {
    pub shard: Option<String>,
    pub tags: Option<String>,
    pub profile_sha256: String,
    pub suites: BTreeMap<&'static str, String>,
    pub repeat: Option<u32>,
}

// Reports are read back (`vxcert merge`, `diff`, `--baseline`) from text that lives
// for the rest of the process (`load`), so the `&'static str` fields borrow from it.
#[derive(Serialize, Deserialize)]
#[serde(bound(deserialize = "'de: 'static"))]
pub struct ReportJson {
    pub run: RunJson,
    pub rows: Vec<RowJson>,
    pub scenarios: Vec<ScenarioJson>,
    pub clauses: Vec<ClauseJson>,
}

#[derive(Serialize, Deserialize)]
pub struct RunJson {
    pub suite_version: &'static str,
    /// The recovery RFC's title (kept for readers of the one-contract report).
    pub rfc: &'static str,
    #[serde(borrow)]
    pub contracts: Vec<&'static str>,
    pub profile: String,
    pub profile_path: String,
    pub implementation: String,
    pub started_at: String,
    pub duration_ms: u128,
    /// How many scenarios ran at once (`--concurrency`, else the profile's).
    pub concurrency: usize,
    pub result: &'static str,
    pub problems: Vec<String>,
    /// The parts certified, per contract that has parts: claimed, checked by at least
    /// one scenario that held, and none of whose MUST scenarios failed.
    #[serde(borrow)]
    pub parts: BTreeMap<&'static str, Vec<&'static str>>,
    /// The claimed parts with a failing MUST scenario, per contract.
    #[serde(borrow, default)]
    pub parts_failing: BTreeMap<&'static str, Vec<&'static str>>,
    /// The parts the profile claims, per contract that has parts.
    #[serde(borrow, default)]
    pub parts_claimed: BTreeMap<&'static str, Vec<&'static str>>,
    /// Kinds of valid input the implementation never accepted in this run (its
    /// refusals of that kind prove nothing).
    pub liveness: Vec<String>,
    /// Per kind of valid input: how many the implementation accepted and refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub liveness_counts: BTreeMap<String, (usize, usize)>,
    /// How many scenarios got each verdict.
    #[serde(borrow)]
    pub counts: BTreeMap<&'static str, usize>,
    /// `K/N` when this run was shard K of N (`--shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The reports a `vxcert merge` joined, as each named itself (shard, contracts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    /// The tag expression that selected the scenarios (`--tags`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<String>,
    /// How many times each scenario ran (`--repeat`), when more than once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// The baseline the run was judged against (`--baseline`): its problems are the
    /// regressions against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// SHA-256 of the profile file.
    #[serde(default)]
    pub profile_sha256: String,
    /// SHA-256 of each contract's suite (its feature files and clause registry).
    #[serde(borrow, default)]
    pub suites: BTreeMap<&'static str, String>,
}

#[derive(Serialize, Deserialize)]
pub struct RowJson {
    pub contract: &'static str,
    pub row: String,
    pub verdict: Verdict,
    pub scenarios: usize,
    #[serde(borrow)]
    pub counts: BTreeMap<&'static str, usize>,
    pub expected_failures: Vec<String>,
    pub accepted: bool,
}

#[derive(Serialize, Deserialize, Clone)]
pub struct ScenarioJson {
    pub contract: &'static str,
    pub feature: String,
    pub name: String,
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    pub row: String,
    /// The contract's part the scenario checks (its `@part-` tag).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    pub clauses: Vec<String>,
    pub level: &'static str,
    pub verdict: Verdict,
    pub duration_ms: u128,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_failure: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unexpected_pass: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<super::evidence_json::EvidenceJson>,
    /// A `flaky` scenario's distinct outcomes, worst first (`--repeat`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outcomes: Vec<VariantJson>,
}

/// One distinct verdict of a repeated scenario: the rounds that gave it, and the
/// first such run's message and evidence.
#[derive(Serialize, Deserialize, Clone)]
#[serde(bound(deserialize = "'de: 'static"))]
pub struct VariantJson {
    pub verdict: Verdict,
    pub rounds: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<super::evidence_json::EvidenceJson>,
}

#[derive(Serialize, Deserialize, Clone)]
pub struct ClauseJson {
    pub contract: &'static str,
    pub id: String,
    pub section: String,
    pub level: String,
    pub verdict: Verdict,
    pub scenarios: Vec<String>,
    pub text: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expected_failure: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub struct Report {
    pub json: ReportJson,
    pub ok: bool,
}

impl ScenarioJson {
    pub(super) fn display_name(&self) -> String {
        match &self.example {
            Some(e) => format!("{} [{e}]", self.name),
            None => self.name.clone(),
        }
    }
}

pub(super) fn counts(vs: impl Iterator<Item = Verdict>) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for v in vs {
        *m.entry(v.as_str()).or_default() += 1;
    }
    m
}

/// One scenario's entry, from its outcome.
fn scenario(i: &Inputs<'_>, o: &Outcome) -> ScenarioJson {
    let prefix = o.contract.clause_prefix();
    let expected = i
        .profile
        .expected(o.contract.name(), &o.row, &o.name, o.example.as_deref())
        .map(str::to_string);
    let level = if o.tags.iter().any(|t| t == "should") {
        "should"
    } else {
        "must"
    };
    ScenarioJson {
        contract: o.contract.name(),
        feature: o.feature.clone(),
        name: o.name.clone(),
        line: o.line,
        example: o.example.clone(),
        row: o.row.clone(),
        part: o
            .tags
            .iter()
            .find_map(|t| t.strip_prefix("part-"))
            .map(str::to_string),
        clauses: o
            .tags
            .iter()
            .filter(|t| t.starts_with(prefix))
            .cloned()
            .collect(),
        level,
        verdict: o.verdict,
        duration_ms: o.duration_ms,
        message: o.message.clone(),
        unexpected_pass: expected.is_some() && o.verdict.held(),
        expected_failure: expected,
        // A flaky scenario's evidence is its worst run's.
        evidence: match o.variants.first() {
            Some(worst) => super::evidence_json::of(&worst.outcome, i.registries),
            None => super::evidence_json::of(o, i.registries),
        },
        outcomes: o
            .variants
            .iter()
            .map(|v| VariantJson {
                verdict: v.outcome.verdict,
                rounds: v.rounds.clone(),
                message: v.outcome.message.clone(),
                evidence: super::evidence_json::of(&v.outcome, i.registries),
            })
            .collect(),
    }
}

/// A clause of a registry as a report lists it before any scenario is counted: the
/// note it keeps whatever ran (unobservable, pending).
fn clause_template(contract: Contract, c: &Clause) -> ClauseJson {
    let note = if !c.observable {
        c.reason.clone()
    } else {
        c.pending
            .as_ref()
            .map(|p| format!("not yet checked by the kit: {p}"))
    };
    ClauseJson {
        contract: contract.name(),
        id: c.id.clone(),
        section: c.section.clone(),
        level: c.level.clone(),
        verdict: Verdict::UnsupportedOptional,
        scenarios: Vec::new(),
        text: c.text.clone(),
        expected_failure: false,
        observable: (!c.observable).then_some(false),
        note,
    }
}

/// The run's record, its scenarios and the clause templates, for
/// [`super::assemble::assemble`] to join into the report.
pub fn build(i: Inputs<'_>) -> (RunJson, Vec<ScenarioJson>, Vec<ClauseJson>) {
    let scenarios: Vec<ScenarioJson> = i.outcomes.iter().map(|o| scenario(&i, o)).collect();
    let templates: Vec<ClauseJson> = i
        .registries
        .iter()
        .flat_map(|(c, r)| r.iter().map(|clause| clause_template(*c, clause)))
        .collect();
    let parts_claimed = i
        .registries
        .iter()
        .filter(|(c, _)| !c.parts().is_empty())
        .map(|(c, _)| (c.name(), i.profile.claimed_parts(*c)))
        .collect();
    let run = RunJson {
        suite_version: super::SUITE_VERSION,
        rfc: Contract::Recovery.source(),
        contracts: i.registries.iter().map(|(c, _)| c.name()).collect(),
        profile: i.profile.name.clone(),
        profile_path: i.profile_path.display().to_string(),
        implementation: i.implementation.to_string(),
        started_at: i.started_at.to_string(),
        duration_ms: i.duration_ms,
        concurrency: i.concurrency,
        result: "fail",
        problems: Vec::new(),
        parts: BTreeMap::new(),
        parts_failing: BTreeMap::new(),
        parts_claimed,
        liveness: Vec::new(),
        liveness_counts: crate::evidence::liveness_table(),
        counts: BTreeMap::new(),
        shard: i.identity.shard,
        merged: Vec::new(),
        tags: i.identity.tags,
        repeat: i.identity.repeat,
        baseline: None,
        profile_sha256: i.identity.profile_sha256,
        suites: i.identity.suites,
    };
    (run, scenarios, templates)
}

pub fn summary(r: &Report) -> String {
    let mut out = String::new();
    for l in &r.json.run.liveness {
        out += &format!("LIVENESS: {l}\n");
    }
    let multi = r.json.run.contracts.len() > 1;
    let names: Vec<String> = r
        .json
        .rows
        .iter()
        .map(|row| {
            if multi {
                format!("{}: {}", row.contract, row.row)
            } else {
                row.row.clone()
            }
        })
        .collect();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(24);
    for (row, name) in r.json.rows.iter().zip(&names) {
        let counts = serde_json::to_string(&row.counts).unwrap_or_default();
        out += &format!("{name:<width$} {:<14} {counts}\n", row.verdict.as_str());
    }
    for p in &r.json.run.problems {
        out += &format!("PROBLEM: {p}\n");
    }
    out += &parts_summary(&r.json.run);
    let counts: Vec<String> = Verdict::ALL
        .iter()
        .filter_map(|v| Some(format!("{} {v}", r.json.run.counts.get(v.as_str())?)))
        .collect();
    out += &format!(
        "vxcert run: {} in {} ms ({})",
        r.json.run.result,
        r.json.run.duration_ms,
        counts.join(", ")
    );
    out
}

/// `contract: parts certified: …; failing: …` lines, per contract with parts.
pub fn parts_summary(run: &RunJson) -> String {
    let mut out = String::new();
    for (contract, parts) in &run.parts {
        let certified = if parts.is_empty() {
            "none".to_string()
        } else {
            parts.join(", ")
        };
        out += &format!("{contract}: parts certified: {certified}");
        if let Some(failing) = run.parts_failing.get(contract).filter(|f| !f.is_empty()) {
            out += &format!("; parts failing: {}", failing.join(", "));
        }
        out += "\n";
    }
    out
}
