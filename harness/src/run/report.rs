//! report.json (shape fixed by surface.md), JUnit XML and the Markdown matrix.

use super::clauses::Clause;
use super::profile::Profile;
use super::Outcome;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;

pub struct Inputs<'a> {
    pub profile: &'a Profile,
    pub profile_path: &'a Path,
    pub implementation: &'a str,
    pub started_at: &'a str,
    pub duration_ms: u128,
    pub outcomes: &'a [Outcome],
    pub clauses: &'a [Clause],
}

pub struct Report {
    pub json: Value,
    pub ok: bool,
    pub junit: String,
    pub markdown: String,
}

/// The worst verdict of a group: harness-error > timeout > fail > unsupported > pass.
fn worst<'a>(vs: impl Iterator<Item = &'a str>) -> &'a str {
    let rank = |v: &str| match v {
        "harness-error" => 4,
        "timeout" => 3,
        "fail" => 2,
        "pass" => 1,
        _ => 0,
    };
    vs.max_by_key(|v| rank(v)).unwrap_or("unsupported-optional")
}

pub fn build(i: Inputs<'_>) -> Report {
    let mut scenarios = Vec::new();
    let mut problems = Vec::new();
    // per scenario: (verdict, accepted-as-expected)
    let mut judged: Vec<(&Outcome, Option<&str>)> = Vec::new();
    for o in i.outcomes {
        let expected = i.profile.expected(&o.row, &o.name, o.example.as_deref());
        let level = if o.tags.iter().any(|t| t == "should") {
            "should"
        } else {
            "must"
        };
        let mut s = json!({
            "feature": o.feature,
            "name": o.name,
            "line": o.line,
            "row": o.row,
            "clauses": o.tags.iter().filter(|t| t.starts_with("rfc-")).collect::<Vec<_>>(),
            "level": level,
            "verdict": o.verdict,
            "duration_ms": o.duration_ms,
        });
        if let Some(m) = &o.message {
            s["message"] = json!(m);
        }
        if let Some(e) = &o.example {
            s["example"] = json!(e);
        }
        if let Some(reason) = expected {
            s["expected_failure"] = json!(reason);
            if o.verdict == "pass" {
                s["unexpected_pass"] = json!(true);
                problems.push(format!(
                    "{} / {}{}: declared as an expected failure but passed; remove it from the profile",
                    o.row,
                    o.name,
                    o.example.as_deref().map(|e| format!(" [{e}]")).unwrap_or_default()
                ));
            }
        } else if o.verdict != "pass" && o.verdict != "unsupported-optional" && level == "must" {
            problems.push(format!(
                "{} / {}{}: {}",
                o.row,
                o.name,
                o.example
                    .as_deref()
                    .map(|e| format!(" [{e}]"))
                    .unwrap_or_default(),
                o.verdict
            ));
        }
        judged.push((o, expected));
        scenarios.push(s);
    }

    // Rows, in RFC order when the features carry it (sorted by file name).
    let mut rows: BTreeMap<&str, Vec<&(&Outcome, Option<&str>)>> = BTreeMap::new();
    let mut row_order: Vec<&str> = Vec::new();
    for j in &judged {
        if !rows.contains_key(j.0.row.as_str()) {
            row_order.push(&j.0.row);
        }
        rows.entry(&j.0.row).or_default().push(j);
    }
    let row_json: Vec<Value> = row_order
        .iter()
        .map(|r| {
            let js = &rows[r];
            let verdict = worst(js.iter().map(|j| j.0.verdict));
            let counts = count(js.iter().map(|j| j.0.verdict));
            let expected: Vec<&str> = js
                .iter()
                .filter(|j| j.1.is_some() && j.0.verdict != "pass")
                .map(|j| j.0.name.as_str())
                .collect();
            // Every scenario that did not pass is a declared expected failure.
            let accepted = js
                .iter()
                .all(|j| matches!(j.0.verdict, "pass" | "unsupported-optional") || j.1.is_some());
            json!({"row": r, "verdict": verdict, "scenarios": js.len(), "counts": counts,
                   "expected_failures": expected, "accepted": accepted})
        })
        .collect();

    let clause_json: Vec<Value> = i
        .clauses
        .iter()
        .map(|c| {
            let js: Vec<&(&Outcome, Option<&str>)> =
                judged.iter().filter(|j| j.0.tags.contains(&c.id)).collect();
            let names: Vec<String> = js
                .iter()
                .map(|j| match &j.0.example {
                    Some(e) => format!("{} / {} [{e}]", j.0.row, j.0.name),
                    None => format!("{} / {}", j.0.row, j.0.name),
                })
                .collect();
            let verdict = if js.is_empty() {
                "unsupported-optional"
            } else {
                worst(js.iter().map(|j| j.0.verdict))
            };
            let mut v = json!({"id": c.id, "section": c.section, "level": c.level,
                               "verdict": verdict, "scenarios": names, "text": c.text});
            if !c.observable {
                v["observable"] = json!(false);
                v["note"] = json!(c.reason);
            } else if js.is_empty() {
                v["note"] = json!("no selected scenario checks this clause in this run");
            }
            let expected = js.iter().any(|j| j.1.is_some() && j.0.verdict != "pass");
            if expected {
                v["expected_failure"] = json!(true);
            }
            v
        })
        .collect();

    let ok = problems.is_empty() && !i.outcomes.is_empty();
    let json = json!({
        "run": {
            "suite_version": super::SUITE_VERSION,
            "rfc": super::RFC,
            "profile": i.profile.name,
            "profile_path": i.profile_path.display().to_string(),
            "implementation": i.implementation,
            "started_at": i.started_at,
            "duration_ms": i.duration_ms,
            "result": if ok { "pass" } else { "fail" },
            "problems": problems,
        },
        "rows": row_json,
        "scenarios": scenarios,
        "clauses": clause_json,
    });
    let junit = junit(&json);
    let markdown = markdown(&json);
    Report {
        json,
        ok,
        junit,
        markdown,
    }
}

fn display_name(s: &Value) -> String {
    let name = s["name"].as_str().unwrap_or("");
    match s.get("example").and_then(Value::as_str) {
        Some(e) => format!("{name} [{e}]"),
        None => name.to_string(),
    }
}

fn count<'a>(vs: impl Iterator<Item = &'a str>) -> Value {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for v in vs {
        *m.entry(v).or_default() += 1;
    }
    json!(m)
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

fn junit(r: &Value) -> String {
    let mut by_row: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for s in r["scenarios"].as_array().unwrap() {
        by_row
            .entry(s["row"].as_str().unwrap().to_string())
            .or_default()
            .push(s);
    }
    let mut out =
        String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"vxcert\">\n");
    for (row, ss) in by_row {
        let failures = ss
            .iter()
            .filter(|s| s["verdict"] == "fail" && s.get("expected_failure").is_none())
            .count();
        let errors = ss
            .iter()
            .filter(|s| {
                (s["verdict"] == "timeout" || s["verdict"] == "harness-error")
                    && s.get("expected_failure").is_none()
            })
            .count();
        out += &format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\">\n",
            xml(&row),
            ss.len()
        );
        for s in ss {
            let secs = s["duration_ms"].as_u64().unwrap_or(0) as f64 / 1000.0;
            out += &format!(
                "    <testcase classname=\"{}\" name=\"{} (line {})\" time=\"{secs:.3}\">",
                xml(&row),
                xml(&display_name(s)),
                s["line"]
            );
            let msg = xml(s["message"].as_str().unwrap_or(""));
            let verdict = s["verdict"].as_str().unwrap_or("");
            if s.get("unexpected_pass").is_some() {
                out += "<failure message=\"expected failure passed: remove it from the profile\"/>";
            } else if let (Some(reason), true) = (s.get("expected_failure"), verdict != "pass") {
                out += &format!(
                    "<skipped message=\"expected failure: {}\">{msg}</skipped>",
                    xml(reason.as_str().unwrap_or(""))
                );
            } else if verdict == "unsupported-optional" {
                out += &format!("<skipped message=\"{msg}\"/>");
            } else if verdict == "fail" {
                out += &format!("<failure message=\"fail\">{msg}</failure>");
            } else if verdict != "pass" {
                out += &format!("<error message=\"{verdict}\">{msg}</error>");
            }
            out += "</testcase>\n";
        }
        out += "  </testsuite>\n";
    }
    out += "</testsuites>\n";
    out
}

fn markdown(r: &Value) -> String {
    let run = &r["run"];
    let mut out = format!(
        "# vxcert report\n\nProfile `{}`, implementation {}, started {}, {} ms: **{}**\n\n",
        run["profile"].as_str().unwrap_or(""),
        run["implementation"].as_str().unwrap_or(""),
        run["started_at"].as_str().unwrap_or(""),
        run["duration_ms"],
        run["result"].as_str().unwrap_or("")
    );
    out += "| RFC §8 case | verdict | pass | fail | timeout | harness-error | unsupported-optional | expected failures |\n|---|---|---|---|---|---|---|---|\n";
    for row in r["rows"].as_array().unwrap() {
        let c = &row["counts"];
        let n = |k: &str| c.get(k).and_then(Value::as_u64).unwrap_or(0);
        out += &format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            row["row"].as_str().unwrap_or(""),
            match (
                row["verdict"].as_str().unwrap_or(""),
                row["accepted"] == true
            ) {
                ("pass", _) => "pass".to_string(),
                (v, true) => format!("{v} (declared)"),
                (v, false) => format!("**{v}**"),
            },
            n("pass"),
            n("fail"),
            n("timeout"),
            n("harness-error"),
            n("unsupported-optional"),
            row["expected_failures"].as_array().map_or(0, Vec::len)
        );
    }
    let problems = run["problems"].as_array().unwrap();
    if !problems.is_empty() {
        out += "\n## Problems\n\n";
        for p in problems {
            out += &format!("- {}\n", p.as_str().unwrap_or(""));
        }
    }
    out +=
        "\n## Scenarios\n\n| case | scenario | clauses | verdict | note |\n|---|---|---|---|---|\n";
    for s in r["scenarios"].as_array().unwrap() {
        let note = match (s.get("expected_failure"), s.get("message")) {
            (Some(e), _) if s["verdict"] != "pass" => {
                format!("expected failure: {}", e.as_str().unwrap_or(""))
            }
            (_, Some(m)) => m.as_str().unwrap_or("").chars().take(160).collect(),
            _ => String::new(),
        };
        let clauses: Vec<&str> = s["clauses"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        out += &format!(
            "| {} | {} | {} | {} | {} |\n",
            s["row"].as_str().unwrap_or(""),
            display_name(s).replace('|', "\\|"),
            clauses.join(" "),
            s["verdict"].as_str().unwrap_or(""),
            note.replace('|', "\\|").replace('\n', " ")
        );
    }
    out
}

pub fn write(dir: &Path, r: &Report) -> Result<(), String> {
    let w = |name: &str, body: &str| {
        std::fs::write(dir.join(name), body).map_err(|e| format!("cannot write {name}: {e}"))
    };
    w(
        "report.json",
        &(serde_json::to_string_pretty(&r.json).map_err(|e| e.to_string())? + "\n"),
    )?;
    w("report.xml", &r.junit)?;
    w("report.md", &r.markdown)
}

pub fn summary(r: &Report) -> String {
    let mut out = String::new();
    for row in r.json["rows"].as_array().unwrap() {
        out += &format!(
            "{:<24} {:<14} {}\n",
            row["row"].as_str().unwrap_or(""),
            row["verdict"].as_str().unwrap_or(""),
            row["counts"]
        );
    }
    for p in r.json["run"]["problems"].as_array().unwrap() {
        out += &format!("PROBLEM: {}\n", p.as_str().unwrap_or(""));
    }
    out += &format!(
        "vxcert run: {} in {} ms",
        r.json["run"]["result"].as_str().unwrap_or(""),
        r.json["run"]["duration_ms"]
    );
    out
}
