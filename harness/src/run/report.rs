//! The report of one run, built once from typed outcomes: `report.json`'s model (shape fixed
//! by surface.md, plus `contract` on rows, scenarios and clauses), JUnit XML, the
//! Markdown matrix (a section per contract) and the HTML page (`html.rs`).

use super::clauses::Clause;
use super::Outcome;
use crate::contract::Contract;
use crate::profile::Profile;
use crate::verdict::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

pub struct Inputs<'a> {
    pub profile: &'a Profile,
    pub profile_path: &'a Path,
    pub implementation: &'a str,
    pub started_at: &'a str,
    pub duration_ms: u128,
    pub concurrency: usize,
    pub outcomes: &'a [Outcome],
    pub registries: &'a [(Contract, Vec<Clause>)],
}

#[derive(Serialize)]
pub struct ReportJson {
    pub run: RunJson,
    pub rows: Vec<RowJson>,
    pub scenarios: Vec<ScenarioJson>,
    pub clauses: Vec<ClauseJson>,
}

#[derive(Serialize)]
pub struct RunJson {
    pub suite_version: &'static str,
    /// The recovery RFC's title (kept for readers of the one-contract report).
    pub rfc: &'static str,
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
    /// The parts certified, per contract that has parts.
    pub parts: BTreeMap<&'static str, Vec<&'static str>>,
    /// Kinds of valid input the implementation never accepted in this run (its
    /// refusals of that kind prove nothing).
    pub liveness: Vec<String>,
    /// How many scenarios got each verdict.
    pub counts: BTreeMap<&'static str, usize>,
}

#[derive(Serialize)]
pub struct RowJson {
    pub contract: &'static str,
    pub row: String,
    pub verdict: Verdict,
    pub scenarios: usize,
    pub counts: BTreeMap<&'static str, usize>,
    pub expected_failures: Vec<String>,
    pub accepted: bool,
}

#[derive(Serialize)]
pub struct ScenarioJson {
    pub contract: &'static str,
    pub feature: String,
    pub name: String,
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    pub row: String,
    pub clauses: Vec<String>,
    pub level: &'static str,
    pub verdict: Verdict,
    pub duration_ms: u128,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_failure: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unexpected_pass: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<super::evidence_json::EvidenceJson>,
}

#[derive(Serialize)]
pub struct ClauseJson {
    pub contract: &'static str,
    pub id: String,
    pub section: String,
    pub level: String,
    pub verdict: Verdict,
    pub scenarios: Vec<String>,
    pub text: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
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

    /// Did not pass, and is declared.
    fn declared(&self) -> bool {
        self.expected_failure.is_some() && self.verdict != Verdict::Pass
    }
}

fn counts(vs: impl Iterator<Item = Verdict>) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for v in vs {
        *m.entry(v.as_str()).or_default() += 1;
    }
    m
}

pub fn build(i: Inputs<'_>) -> Report {
    let mut problems = Vec::new();
    let mut scenarios = Vec::new();
    for o in i.outcomes {
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
        let s = ScenarioJson {
            contract: o.contract.name(),
            feature: o.feature.clone(),
            name: o.name.clone(),
            line: o.line,
            example: o.example.clone(),
            row: o.row.clone(),
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
            evidence: super::evidence_json::of(o, i.registries),
        };
        let example = s
            .example
            .as_deref()
            .map(|e| format!(" [{e}]"))
            .unwrap_or_default();
        if s.unexpected_pass {
            problems.push(format!(
                "{}: {} / {}{example}: declared as an expected failure but passed; remove it from the profile",
                s.contract, s.row, s.name
            ));
        } else if s.expected_failure.is_none() && s.verdict.fails_run() && level == "must" {
            problems.push(format!(
                "{}: {} / {}{example}: {}",
                s.contract, s.row, s.name, s.verdict
            ));
        }
        scenarios.push(s);
    }

    // Rows in the order the features give them (files sorted by name).
    let mut rows: Vec<RowJson> = Vec::new();
    let mut members: Vec<Vec<&ScenarioJson>> = Vec::new();
    for s in &scenarios {
        let k = match rows
            .iter()
            .position(|r| r.contract == s.contract && r.row == s.row)
        {
            Some(k) => k,
            None => {
                rows.push(RowJson {
                    contract: s.contract,
                    row: s.row.clone(),
                    verdict: Verdict::UnsupportedOptional,
                    scenarios: 0,
                    counts: BTreeMap::new(),
                    expected_failures: Vec::new(),
                    accepted: true,
                });
                members.push(Vec::new());
                rows.len() - 1
            }
        };
        members[k].push(s);
    }
    for (r, ss) in rows.iter_mut().zip(&members) {
        r.verdict = Verdict::worst(ss.iter().map(|s| s.verdict)).unwrap_or(r.verdict);
        r.scenarios = ss.len();
        r.counts = counts(ss.iter().map(|s| s.verdict));
        r.expected_failures = ss
            .iter()
            .filter(|s| s.declared())
            .map(|s| s.name.clone())
            .collect();
        // Every scenario that did not pass is a declared expected failure.
        r.accepted = ss
            .iter()
            .all(|s| !s.verdict.fails_run() || s.expected_failure.is_some());
    }

    let mut clauses = Vec::new();
    for (contract, registry) in i.registries {
        for c in registry {
            let js: Vec<&ScenarioJson> = scenarios
                .iter()
                .filter(|s| s.contract == contract.name() && s.clauses.contains(&c.id))
                .collect();
            let note = if !c.observable {
                c.reason.clone()
            } else if let Some(p) = &c.pending {
                Some(format!("not yet checked by the kit: {p}"))
            } else if js.is_empty() {
                Some("no selected scenario checks this clause in this run".into())
            } else {
                None
            };
            clauses.push(ClauseJson {
                contract: contract.name(),
                id: c.id.clone(),
                section: c.section.clone(),
                level: c.level.clone(),
                verdict: Verdict::worst(js.iter().map(|s| s.verdict))
                    .unwrap_or(Verdict::UnsupportedOptional),
                scenarios: js
                    .iter()
                    .map(|s| format!("{} / {}", s.row, s.display_name()))
                    .collect(),
                text: c.text.clone(),
                expected_failure: js.iter().any(|s| s.declared()),
                observable: (!c.observable).then_some(false),
                note,
            });
        }
    }

    let liveness: Vec<String> = crate::evidence::liveness_table()
        .into_iter()
        .filter(|(_, (accepted, _))| *accepted == 0)
        .map(|(kind, (_, refused))| {
            format!(
                "{kind}: the implementation refused all {refused} valid inputs of this kind the suite gave it; every refusal row of this kind is inconclusive"
            )
        })
        .collect();
    let parts = i
        .registries
        .iter()
        .filter(|(c, _)| !c.parts().is_empty())
        .map(|(c, _)| (c.name(), i.profile.claimed_parts(*c)))
        .collect();
    let ok = problems.is_empty() && !i.outcomes.is_empty();
    let contracts: Vec<&'static str> = i.registries.iter().map(|(c, _)| c.name()).collect();
    let json = ReportJson {
        run: RunJson {
            suite_version: super::SUITE_VERSION,
            rfc: Contract::Recovery.source(),
            contracts,
            profile: i.profile.name.clone(),
            profile_path: i.profile_path.display().to_string(),
            implementation: i.implementation.to_string(),
            started_at: i.started_at.to_string(),
            duration_ms: i.duration_ms,
            concurrency: i.concurrency,
            result: if ok { "pass" } else { "fail" },
            problems,
            parts,
            liveness,
            counts: counts(scenarios.iter().map(|s| s.verdict)),
        },
        rows,
        scenarios,
        clauses,
    };
    Report { json, ok }
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
    for (contract, parts) in &r.json.run.parts {
        out += &format!("{contract}: parts certified: {}\n", parts.join(", "));
    }
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
