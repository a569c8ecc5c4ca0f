//! The run's report files from the built report: `report.json`, the JUnit XML (one
//! line of evidence per failure), the Markdown matrix with its Evidence section, and
//! the HTML page (`html.rs`). Apart from `report.rs`, which builds the model they
//! all render, so that the model imports no rendering.

use super::report::{Report, ReportJson, ScenarioJson};
use crate::contract::Contract;
use crate::verdict::Verdict;
use std::collections::BTreeMap;
use std::path::Path;

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
            .filter(|s| matches!(s.verdict, Verdict::Fail | Verdict::Flaky))
            .count();
        let errors = ss
            .iter()
            .filter(undeclared)
            .filter(|s| {
                matches!(
                    s.verdict,
                    Verdict::Timeout | Verdict::HarnessError | Verdict::Inconclusive
                )
            })
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
            // JUnit's failure message is the one-line expected/observed.
            let line = xml(&one_line(s));
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
                    Verdict::NonStrict => {
                        out += &format!("<system-out>non-strict: {msg}</system-out>")
                    }
                    Verdict::UnsupportedOptional | Verdict::NotClaimed => {
                        out += &format!("<skipped message=\"{}: {msg}\"/>", s.verdict)
                    }
                    Verdict::Fail => out += &format!("<failure message=\"{line}\">{msg}</failure>"),
                    Verdict::Flaky => {
                        out += &format!("<failure message=\"flaky: {msg}\">{line}</failure>")
                    }
                    v @ (Verdict::Timeout | Verdict::HarnessError | Verdict::Inconclusive) => {
                        out += &format!("<error message=\"{v}: {line}\">{msg}</error>")
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
    for l in &run.liveness {
        out += &format!("\n**Liveness:** {l}\n");
    }
    for contract in &run.contracts {
        let source = Contract::from_name(contract).map_or("", Contract::source);
        out += &format!("\n## Contract `{contract}`\n\n{source}\n\n");
        if let Some(parts) = run.parts.get(*contract) {
            out += &format!("Parts certified: {}\n\n", parts.join(", "));
        }
        out += "| case | verdict | pass | non-strict | fail | inconclusive | timeout | harness-error | unsupported-optional | not-claimed | expected failures |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
        for row in r.rows.iter().filter(|row| row.contract == *contract) {
            let n = |v: Verdict| row.counts.get(v.as_str()).copied().unwrap_or(0);
            let verdict = match (row.verdict, row.accepted) {
                (Verdict::Pass, _) => "pass".to_string(),
                (v, true) => format!("{v} (declared)"),
                (v, false) => format!("**{v}**"),
            };
            out += &format!(
                "| {} | {verdict} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                row.row,
                n(Verdict::Pass),
                n(Verdict::NonStrict),
                n(Verdict::Fail),
                n(Verdict::Inconclusive),
                n(Verdict::Timeout),
                n(Verdict::HarnessError),
                n(Verdict::UnsupportedOptional),
                n(Verdict::NotClaimed),
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
    out += &evidence_markdown(&r.scenarios);
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

/// `expected …; observed …` on one line (JUnit's failure message).
fn one_line(s: &ScenarioJson) -> String {
    match &s.evidence {
        Some(e) => {
            let clause = e
                .clause
                .as_ref()
                .map(|c| format!(" [{} {}]", c.level, c.id))
                .unwrap_or_default();
            format!("expected {}; observed {}{clause}", e.expected, e.observed).replace('\n', " ")
        }
        None => s.message.clone().unwrap_or_default().replace('\n', " "),
    }
}

/// One section per scenario that is not `pass`, for `report.md`.
fn evidence_markdown(scenarios: &[ScenarioJson]) -> String {
    let with: Vec<&ScenarioJson> = scenarios.iter().filter(|s| s.evidence.is_some()).collect();
    if with.is_empty() {
        return String::new();
    }
    let mut out = String::from("\n## Evidence\n");
    for s in with {
        let Some(e) = &s.evidence else { continue };
        out += &format!(
            "\n### {} / {} — {}\n\n",
            s.row,
            s.example
                .as_ref()
                .map_or_else(|| s.name.clone(), |x| format!("{} [{x}]", s.name)),
            s.verdict
        );
        if let Some(step) = &e.step {
            out += &format!("- step: `{step}`\n");
        }
        if let Some(c) = &e.clause {
            out += &format!(
                "- clause: {} ({}, {} {}): \"{}\"\n",
                c.id, c.level, c.seed, c.section, c.quote
            );
        }
        out += &format!("- expected: {}\n- observed: {}\n", e.expected, e.observed);
        if let Some(c) = e.control.as_ref().map(|c| &c.control) {
            out += &format!(
                "- control: {} → {} ({})\n",
                c.what,
                if c.accepted { "accepted" } else { "refused" },
                c.observed
            );
        }
        for c in &e.commands {
            out += &format!(
                "- ran `{}`: {}, {} ms\n",
                c.argv.join(" "),
                c.exit_words(),
                c.duration_ms
            );
            if !c.stderr_tail.trim().is_empty() {
                out += &format!(
                    "  ```\n  {}\n  ```\n",
                    c.stderr_tail.trim().replace('\n', "\n  ")
                );
            }
        }
        for f in &e.files {
            out += &format!("- file {}: {}\n", f.change, f.path);
        }
        for p in &e.processes {
            out += &format!("- process `{}`: {}\n", p.argv.join(" "), p.process_words());
            if !p.stderr_tail.trim().is_empty() {
                out += &format!(
                    "  ```\n  {}\n  ```\n",
                    p.stderr_tail.trim().replace('\n', "\n  ")
                );
            }
        }
        if let Some(r) = &e.reproduce {
            out += &format!("- reproduce: `sh {r}/repro.sh`\n");
        }
        for v in &s.outcomes {
            let rounds: Vec<String> = v.rounds.iter().map(u32::to_string).collect();
            out += &format!("- {} in round(s) {}", v.verdict, rounds.join(", "));
            match &v.evidence {
                Some(e) => out += &format!(": expected {}; observed {}\n", e.expected, e.observed),
                None => out += "\n",
            }
        }
    }
    out
}
