//! What a report says about its scenarios as a whole: problems, rows, clauses, parts,
//! liveness, counts and the result. One function for a run's report and for a merge
//! of several (`vxcert merge`), so a merged report says what one run would have.

use super::report::{counts, ClauseJson, Report, ReportJson, RowJson, RunJson, ScenarioJson};
use crate::verdict::Verdict;
use std::collections::BTreeMap;

/// Did not pass, and is declared.
fn declared(s: &ScenarioJson) -> bool {
    s.expected_failure.is_some() && s.verdict != Verdict::Pass
}

fn display(s: &ScenarioJson) -> String {
    let example = s
        .example
        .as_deref()
        .map(|e| format!(" [{e}]"))
        .unwrap_or_default();
    format!("{}: {} / {}{example}", s.contract, s.row, s.name)
}

fn problems(scenarios: &[ScenarioJson]) -> Vec<String> {
    let mut out = Vec::new();
    for s in scenarios {
        if s.unexpected_pass {
            out.push(format!(
                "{}: declared as an expected failure but passed; remove it from the profile",
                display(s)
            ));
        } else if s.expected_failure.is_none() && s.verdict.fails_run() && s.level == "must" {
            out.push(format!("{}: {}", display(s), s.verdict));
        }
    }
    out
}

/// Rows in the order the scenarios give them (feature files sorted by name).
fn rows(scenarios: &[ScenarioJson]) -> Vec<RowJson> {
    let mut rows: Vec<RowJson> = Vec::new();
    let mut members: Vec<Vec<&ScenarioJson>> = Vec::new();
    for s in scenarios {
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
            .filter(|s| declared(s))
            .map(|s| s.name.clone())
            .collect();
        // Every scenario that did not pass is a declared expected failure.
        r.accepted = ss
            .iter()
            .all(|s| !s.verdict.fails_run() || s.expected_failure.is_some());
    }
    rows
}

/// Each clause of the registries with the scenarios that check it.
fn clauses(scenarios: &[ScenarioJson], templates: &[ClauseJson]) -> Vec<ClauseJson> {
    templates
        .iter()
        .map(|t| {
            let js: Vec<&ScenarioJson> = scenarios
                .iter()
                .filter(|s| s.contract == t.contract && s.clauses.contains(&t.id))
                .collect();
            ClauseJson {
                verdict: Verdict::worst(js.iter().map(|s| s.verdict))
                    .unwrap_or(Verdict::UnsupportedOptional),
                scenarios: js
                    .iter()
                    .map(|s| format!("{} / {}", s.row, s.display_name()))
                    .collect(),
                expected_failure: js.iter().any(|s| declared(s)),
                note: t.note.clone().or_else(|| {
                    js.is_empty()
                        .then(|| super::report::NO_SCENARIO_NOTE.to_string())
                }),
                ..t.clone()
            }
        })
        .collect()
}

type Parts = BTreeMap<&'static str, Vec<&'static str>>;

/// The claimed parts certified (checked by a scenario that held, none of whose MUST
/// scenarios failed, declared expected failures included), and those failing. A
/// scenario without a part tag counts for every part of its contract.
fn parts(claimed: &Parts, scenarios: &[ScenarioJson]) -> (Parts, Parts) {
    let mut certified = Parts::new();
    let mut failing = Parts::new();
    for (contract, parts) in claimed {
        for part in parts {
            let of_part = || {
                scenarios.iter().filter(move |s| {
                    s.contract == *contract && s.part.as_deref().is_none_or(|p| p == *part)
                })
            };
            if of_part().any(|s| s.level == "must" && s.verdict.fails_run()) {
                failing.entry(*contract).or_default().push(*part);
            } else if of_part().any(|s| s.verdict.held()) {
                certified.entry(*contract).or_default().push(*part);
            }
        }
        certified.entry(*contract).or_default();
    }
    (certified, failing)
}

fn liveness(table: &BTreeMap<String, (usize, usize)>) -> Vec<String> {
    table
        .iter()
        .filter(|(_, (accepted, _))| *accepted == 0)
        .map(|(kind, (_, refused))| {
            format!(
                "{kind}: the implementation refused all {refused} valid inputs of this kind the suite gave it; every refusal row of this kind is inconclusive"
            )
        })
        .collect()
}

/// The report of these scenarios: `run`'s identity is kept, its aggregates computed.
pub fn assemble(
    mut run: RunJson,
    scenarios: Vec<ScenarioJson>,
    templates: &[ClauseJson],
) -> Report {
    run.problems = problems(&scenarios);
    (run.parts, run.parts_failing) = parts(&run.parts_claimed, &scenarios);
    run.liveness = liveness(&run.liveness_counts);
    run.counts = counts(scenarios.iter().map(|s| s.verdict));
    let ok = run.problems.is_empty() && !scenarios.is_empty();
    run.result = if ok { "pass" } else { "fail" };
    let json = ReportJson {
        rows: rows(&scenarios),
        clauses: clauses(&scenarios, templates),
        run,
        scenarios,
    };
    Report { json, ok }
}
