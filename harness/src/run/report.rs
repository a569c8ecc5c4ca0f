//! The reports of one run, built once from typed outcomes: `report.json` (shape fixed
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
    pub result: &'static str,
    pub problems: Vec<String>,
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
    fn display_name(&self) -> String {
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
            unexpected_pass: expected.is_some() && o.verdict == Verdict::Pass,
            expected_failure: expected,
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
        r.accepted = ss.iter().all(|s| {
            matches!(s.verdict, Verdict::Pass | Verdict::UnsupportedOptional)
                || s.expected_failure.is_some()
        });
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
            result: if ok { "pass" } else { "fail" },
            problems,
        },
        rows,
        scenarios,
        clauses,
    };
    Report { json, ok }
}

fn xml(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn junit(r: &ReportJson) -> String {
    let mut by_row: BTreeMap<(&str, &str), Vec<&ScenarioJson>> = BTreeMap::new();
    for s in &r.scenarios {
        by_row.entry((s.contract, &s.row)).or_default().push(s);
    }
    let mut out =
        String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"vxcert\">\n");
    for ((contract, row), ss) in by_row {
        let undeclared = |s: &&&ScenarioJson| s.expected_failure.is_none();
        let failures = ss
            .iter()
            .filter(undeclared)
            .filter(|s| s.verdict == Verdict::Fail)
            .count();
        let errors = ss
            .iter()
            .filter(undeclared)
            .filter(|s| matches!(s.verdict, Verdict::Timeout | Verdict::HarnessError))
            .count();
        // Recovery's suites keep the names they always had; other contracts' rows
        // carry the contract, so two contracts' rows of one name stay apart.
        let suite = if contract == Contract::Recovery.name() {
            row.to_string()
        } else {
            format!("{contract}: {row}")
        };
        out += &format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">\n",
            xml(&suite),
            ss.len()
        );
        for s in ss {
            let secs = s.duration_ms as f64 / 1000.0;
            out += &format!(
                "    <testcase classname=\"{}\" name=\"{} (line {})\" time=\"{secs:.3}\">",
                xml(&suite),
                xml(&s.display_name()),
                s.line
            );
            let msg = xml(s.message.as_deref().unwrap_or(""));
            if s.unexpected_pass {
                out += "<failure message=\"expected failure passed: remove it from the profile\"/>";
            } else if let (Some(reason), true) = (&s.expected_failure, s.verdict != Verdict::Pass) {
                out += &format!(
                    "<skipped message=\"expected failure: {}\">{msg}</skipped>",
                    xml(reason)
                );
            } else {
                match s.verdict {
                    Verdict::Pass => {}
                    Verdict::UnsupportedOptional => out += &format!("<skipped message=\"{msg}\"/>"),
                    Verdict::Fail => out += &format!("<failure message=\"fail\">{msg}</failure>"),
                    v @ (Verdict::Timeout | Verdict::HarnessError) => {
                        out += &format!("<error message=\"{v}\">{msg}</error>")
                    }
                }
            }
            out += "</testcase>\n";
        }
        out += "  </testsuite>\n";
    }
    out += "</testsuites>\n";
    out
}

fn markdown(r: &ReportJson) -> String {
    let run = &r.run;
    let mut out = format!(
        "# vxcert report\n\nProfile `{}`, implementation {}, started {}, {} ms: **{}**\n",
        run.profile, run.implementation, run.started_at, run.duration_ms, run.result
    );
    for contract in &run.contracts {
        let source = Contract::from_name(contract).map_or("", Contract::source);
        out += &format!("\n## Contract `{contract}`\n\n{source}\n\n");
        out += "| case | verdict | pass | fail | timeout | harness-error | unsupported-optional | expected failures |\n|---|---|---|---|---|---|---|---|\n";
        for row in r.rows.iter().filter(|row| row.contract == *contract) {
            let n = |v: Verdict| row.counts.get(v.as_str()).copied().unwrap_or(0);
            let verdict = match (row.verdict, row.accepted) {
                (Verdict::Pass, _) => "pass".to_string(),
                (v, true) => format!("{v} (declared)"),
                (v, false) => format!("**{v}**"),
            };
            out += &format!(
                "| {} | {verdict} | {} | {} | {} | {} | {} | {} |\n",
                row.row,
                n(Verdict::Pass),
                n(Verdict::Fail),
                n(Verdict::Timeout),
                n(Verdict::HarnessError),
                n(Verdict::UnsupportedOptional),
                row.expected_failures.len()
            );
        }
    }
    if !run.problems.is_empty() {
        out += "\n## Problems\n\n";
        for p in &run.problems {
            out += &format!("- {p}\n");
        }
    }
    out += "\n## Scenarios\n\n| contract | case | scenario | clauses | verdict | note |\n|---|---|---|---|---|---|\n";
    for s in &r.scenarios {
        let note = match (&s.expected_failure, &s.message) {
            (Some(e), _) if s.verdict != Verdict::Pass => format!("expected failure: {e}"),
            (_, Some(m)) => m.chars().take(160).collect(),
            _ => String::new(),
        };
        out += &format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            s.contract,
            s.row,
            s.display_name().replace('|', "\\|"),
            s.clauses.join(" "),
            s.verdict,
            note.replace('|', "\\|").replace('\n', " ")
        );
    }
    out
}

pub fn write(dir: &Path, r: &Report) -> Result<(), String> {
    let w = |name: &str, body: &str| {
        std::fs::write(dir.join(name), body).map_err(|e| format!("cannot write {name}: {e}"))
    };
    let json = serde_json::to_string_pretty(&r.json).map_err(|e| e.to_string())?;
    w("report.json", &(json + "\n"))?;
    w("report.xml", &junit(&r.json))?;
    w("report.md", &markdown(&r.json))?;
    let steps = super::html::transcripts(dir, &r.json.run.contracts);
    w("report.html", &super::html::html(&r.json, &steps))
}

pub fn summary(r: &Report) -> String {
    let mut out = String::new();
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
    out += &format!(
        "vxcert run: {} in {} ms",
        r.json.run.result, r.json.run.duration_ms
    );
    out
}
