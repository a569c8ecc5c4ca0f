//! `report.html`: one self-contained page (inline CSS, no script, no network) built
//! from the same typed report as the others. A matrix per contract (rows × verdict
//! counts, coloured); each row opens (`<details>`, open when it failed) to its
//! scenarios with their clauses, duration and message; a failing scenario shows its
//! step transcript, read from cucumber's own JSON report of the run.

use super::report::{ReportJson, RowJson, ScenarioJson};
use crate::contract::Contract;
use crate::verdict::Verdict;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One step as cucumber reported it.
pub struct Step {
    pub text: String,
    pub status: String,
    pub error: Option<String>,
}

/// Step transcripts by (feature file name, scenario line).
pub type Transcripts = BTreeMap<(String, usize), Vec<Step>>;

/// Reads every `cucumber-<contract>.json` of the run in `dir`; a missing or
/// unreadable one gives no transcripts (the page says so per scenario).
pub fn transcripts(dir: &Path, contracts: &[&str]) -> Transcripts {
    let mut out = Transcripts::new();
    for c in contracts {
        let Ok(text) = std::fs::read_to_string(dir.join(format!("cucumber-{c}.json"))) else {
            continue;
        };
        let Ok(Value::Array(features)) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        for f in &features {
            let file = f["uri"]
                .as_str()
                .and_then(|u| u.rsplit('/').next())
                .unwrap_or_default()
                .to_string();
            for e in f["elements"].as_array().into_iter().flatten() {
                let steps = e["steps"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| Step {
                        text: format!(
                            "{}{}",
                            s["keyword"].as_str().unwrap_or_default(),
                            s["name"].as_str().unwrap_or_default()
                        ),
                        status: s["result"]["status"]
                            .as_str()
                            .unwrap_or("unknown")
                            .to_string(),
                        error: s["result"]["error_message"].as_str().map(str::to_string),
                    })
                    .collect();
                let line = e["line"].as_u64().unwrap_or(0) as usize;
                out.insert((file.clone(), line), steps);
            }
        }
    }
    out
}

use super::html_evidence::esc;

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2329;background:#f6f7f9}
header{background:#1d2329;color:#fff;padding:18px 28px}
header h1{margin:0 0 6px;font-size:20px}
header dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0;font-size:13px;color:#cfd6dd}
header dt{font-weight:600;color:#fff}
main{padding:8px 28px 40px}
h2{margin:26px 0 4px;font-size:17px}
p.source{margin:0 0 10px;color:#56606b}
table{border-collapse:collapse;width:100%;background:#fff;box-shadow:0 1px 2px #0002}
th,td{padding:5px 9px;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.03em}
td.n{text-align:right;font-variant-numeric:tabular-nums;width:6em}
td.zero{color:#b5bcc4}
.v{display:inline-block;padding:1px 8px;border-radius:9px;font-size:12px;font-weight:600;color:#fff}
.pass{background:#2e8540}.fail{background:#c62828}.timeout{background:#e07b00}
.harness-error{background:#6a1b9a}.unsupported-optional{background:#78909c}
.non-strict{background:#5c8a2e}.inconclusive{background:#b8860b}.not-claimed{background:#aab4bd}
.flaky{background:#ad1457}
.declared{outline:2px dashed #c62828;outline-offset:1px;background:#8d6e63}
details{margin:0}summary{cursor:pointer;font-weight:600}
details table{margin:6px 0 10px;box-shadow:none;border:1px solid #e3e6ea}
.clauses code{font-size:12px;background:#eef1f4;padding:0 4px;border-radius:3px;margin-right:3px}
.msg{white-space:pre-wrap;font:12px/1.4 ui-monospace,Menlo,monospace;color:#7a1c1c;margin:0}
ol.steps{margin:4px 0 0;padding-left:22px;font:12px/1.5 ui-monospace,Menlo,monospace}
ol.steps li.passed{color:#2e8540}ol.steps li.failed{color:#c62828;font-weight:600}
ol.steps li.skipped{color:#8a939c}
.result-pass{color:#7ee29a}.result-fail{color:#ff8a80}
ul.problems{background:#fff3f3;border:1px solid #f3b7b7;padding:10px 10px 10px 30px}
";

/// The page.
pub fn html(r: &ReportJson, steps: &Transcripts) -> String {
    let run = &r.run;
    let mut out = String::with_capacity(64 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>vxcert report: {}</title><style>{STYLE}{}</style></head><body>\n\
         <header><h1>vxcert report: <span class=\"result-{}\">{}</span></h1><dl>\
         <dt>Profile</dt><dd>{} ({})</dd><dt>Implementation</dt><dd>{}</dd>\
         <dt>Suite</dt><dd>{}</dd><dt>Recovery RFC</dt><dd>{}</dd>\
         <dt>Started</dt><dd>{}</dd><dt>Duration</dt><dd>{:.1} s</dd></dl></header>\n<main>\n",
        esc(&run.profile),
        super::html_evidence::STYLE,
        esc(run.result),
        esc(run.result),
        esc(&run.profile),
        esc(&run.profile_path),
        esc(&run.implementation),
        esc(run.suite_version),
        esc(run.rfc),
        esc(&run.started_at),
        run.duration_ms as f64 / 1000.0
    );
    for l in &run.liveness {
        let _ = write!(
            out,
            "<p class=\"liveness\"><strong>Liveness:</strong> {}</p>",
            esc(l)
        );
    }
    for contract in &run.contracts {
        let source = Contract::from_name(contract).map_or("", Contract::source);
        let parts = run
            .parts
            .get(contract)
            .map(|p| format!(" Parts certified: {}.", p.join(", ")))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<h2 id=\"contract-{c}\">Contract <code>{c}</code></h2><p class=\"source\">{}{}</p>",
            esc(source),
            esc(&parts),
            c = esc(contract)
        );
        out += "<table class=\"matrix\"><thead><tr><th>Row</th><th>Verdict</th>";
        for v in Verdict::ALL {
            let _ = write!(out, "<th>{}</th>", v.as_str());
        }
        out += "</tr></thead><tbody>\n";
        for row in r.rows.iter().filter(|row| row.contract == *contract) {
            let scenarios: Vec<&ScenarioJson> = r
                .scenarios
                .iter()
                .filter(|s| s.contract == *contract && s.row == row.row)
                .collect();
            row_html(&mut out, row, &scenarios, steps);
        }
        out += "</tbody></table>\n";
    }
    if !run.problems.is_empty() {
        out += "<h2>Problems</h2><ul class=\"problems\">";
        for p in &run.problems {
            let _ = write!(out, "<li>{}</li>", esc(p));
        }
        out += "</ul>\n";
    }
    out += "</main></body></html>\n";
    out
}

fn badge(v: Verdict, declared: bool) -> String {
    let extra = if declared { " declared" } else { "" };
    let label = if declared {
        format!("{} (declared)", v.as_str())
    } else {
        v.as_str().to_string()
    };
    format!("<span class=\"v {}{extra}\">{label}</span>", v.as_str())
}

fn row_html(out: &mut String, row: &RowJson, scenarios: &[&ScenarioJson], steps: &Transcripts) {
    let declared = row.verdict != Verdict::Pass && row.accepted;
    // A row with an undeclared failure is open: the page is read without a click.
    let open = if !row.verdict.fails_run() || declared {
        ""
    } else {
        " open"
    };
    let _ = write!(
        out,
        "<tr class=\"row\"><td><details{open}><summary>{}</summary>",
        esc(&row.row)
    );
    out.push_str(
        "<table><thead><tr><th>Scenario</th><th>Clauses</th><th>Verdict</th>\
         <th>ms</th><th>Message</th></tr></thead><tbody>",
    );
    for s in scenarios {
        scenario_html(out, s, steps);
    }
    out.push_str("</tbody></table></details></td>");
    let _ = write!(out, "<td>{}</td>", badge(row.verdict, declared));
    for v in Verdict::ALL {
        let n = row.counts.get(v.as_str()).copied().unwrap_or(0);
        let class = if n == 0 { "n zero" } else { "n" };
        let _ = write!(out, "<td class=\"{class}\">{n}</td>");
    }
    out.push_str("</tr>\n");
}

fn scenario_html(out: &mut String, s: &ScenarioJson, steps: &Transcripts) {
    let name = match &s.example {
        Some(e) => format!("{} [{e}]", s.name),
        None => s.name.clone(),
    };
    let declared = s.expected_failure.is_some() && s.verdict != Verdict::Pass;
    let _ = write!(out, "<tr><td>{}</td><td class=\"clauses\">", esc(&name));
    for c in &s.clauses {
        let _ = write!(out, "<code>{}</code>", esc(c));
    }
    let _ = write!(
        out,
        "</td><td>{}</td><td class=\"n\">{}</td><td>",
        badge(s.verdict, declared),
        s.duration_ms
    );
    if let Some(e) = &s.expected_failure {
        let _ = write!(out, "<p class=\"msg\">expected failure: {}</p>", esc(e));
    }
    if let Some(m) = &s.message {
        let _ = write!(out, "<p class=\"msg\">{}</p>", esc(m));
    }
    if s.outcomes.is_empty() {
        if let Some(e) = &s.evidence {
            super::html_evidence::evidence_html(out, e);
        }
    }
    for v in &s.outcomes {
        let rounds: Vec<String> = v.rounds.iter().map(u32::to_string).collect();
        let _ = write!(
            out,
            "<p class=\"msg\">{} in round(s) {}</p>",
            esc(v.verdict.as_str()),
            rounds.join(", ")
        );
        if let Some(e) = &v.evidence {
            super::html_evidence::evidence_html(out, e);
        }
    }
    if !matches!(
        s.verdict,
        Verdict::Pass | Verdict::UnsupportedOptional | Verdict::NotClaimed
    ) {
        let file = s.feature.rsplit('/').next().unwrap_or_default().to_string();
        match steps.get(&(file, s.line)) {
            Some(transcript) => {
                out.push_str("<ol class=\"steps\">");
                for st in transcript {
                    let _ = write!(
                        out,
                        "<li class=\"{}\">{}{}</li>",
                        esc(&st.status),
                        esc(&st.text),
                        st.error
                            .as_deref()
                            .map(|e| format!("<br>{}", esc(e)))
                            .unwrap_or_default()
                    );
                }
                out.push_str("</ol>");
            }
            None => out.push_str("<p class=\"msg\">(no step transcript in the run)</p>"),
        }
    }
    out.push_str("</td></tr>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
    }
}
