//! `vxcert diff OLD NEW`: what changed between two reports, scenario by scenario
//! (matched by stable id: contract, feature file, name, Examples row): regressions,
//! progressions, new and removed scenarios, other verdict changes and changed
//! evidence, in text, Markdown or JSON. Exit 1 when something regressed.

use super::load;
use super::report::{ReportJson, ScenarioJson};
use crate::verdict::Verdict;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Json,
}

#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The earlier report: a report directory or its report.json.
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The later report.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Also write diff.txt, diff.md and diff.json into this directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// One scenario in one or both reports.
#[derive(Serialize, Debug, Clone)]
pub struct Entry {
    pub contract: String,
    pub row: String,
    pub scenario: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<Verdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new: Option<Verdict>,
    /// What the later report observed (or says), when it did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
    /// What the earlier report observed, for changed evidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub was: Option<String>,
}

#[derive(Serialize, Debug, Default)]
pub struct Diff {
    pub old: String,
    pub new: String,
    pub regressions: Vec<Entry>,
    pub progressions: Vec<Entry>,
    pub new_scenarios: Vec<Entry>,
    pub removed_scenarios: Vec<Entry>,
    /// Verdicts that changed without getting better or worse (pass and
    /// unsupported-optional, fail and timeout).
    pub changed_verdicts: Vec<Entry>,
    /// Same verdict, different evidence (clause, expected or observed).
    pub changed_evidence: Vec<Entry>,
}

impl Diff {
    pub fn is_empty(&self) -> bool {
        self.regressions.is_empty()
            && self.progressions.is_empty()
            && self.new_scenarios.is_empty()
            && self.removed_scenarios.is_empty()
            && self.changed_verdicts.is_empty()
            && self.changed_evidence.is_empty()
    }
}

/// 0 held, 1 held but for pins, 2 failed the run's MUSTs (or could not show them).
pub fn rank(v: Verdict) -> u8 {
    if v.fails_run() {
        2
    } else if v == Verdict::NonStrict {
        1
    } else {
        0
    }
}

/// Every scenario of a report by stable id; a second scenario of one id gets `#2`.
pub fn by_id(r: &ReportJson) -> BTreeMap<String, &ScenarioJson> {
    let mut out = BTreeMap::new();
    for s in &r.scenarios {
        let id = super::shard::scenario_id(s.contract, &s.feature, &s.name, s.example.as_deref());
        let mut key = id.clone();
        let mut n = 1;
        while out.contains_key(&key) {
            n += 1;
            key = format!("{id}#{n}");
        }
        out.insert(key, s);
    }
    out
}

/// What a scenario's evidence says, with temporary paths masked (they differ on
/// every run).
fn evidence_words(s: &ScenarioJson) -> Option<String> {
    let words = match &s.evidence {
        Some(e) => {
            let clause = e
                .clause
                .as_ref()
                .map(|c| format!(" [{}]", c.id))
                .unwrap_or_default();
            format!("expected {}; observed {}{clause}", e.expected, e.observed)
        }
        None => s.message.clone()?,
    };
    let temp = regex::Regex::new(r#"(/tmp|/var/tmp|/dev/shm|/run/user/\d+)/[^\s"',;:)\]]*"#)
        .expect("a fixed regex");
    Some(temp.replace_all(&words, "<temp>").replace('\n', " "))
}

fn entry(s: &ScenarioJson, old: Option<&ScenarioJson>, new: Option<&ScenarioJson>) -> Entry {
    Entry {
        contract: s.contract.to_string(),
        row: s.row.clone(),
        scenario: s.display_name(),
        old: old.map(|o| o.verdict),
        new: new.map(|n| n.verdict),
        observed: new
            .filter(|n| n.verdict != Verdict::Pass)
            .and_then(evidence_words),
        was: None,
    }
}

pub fn diff(old: &ReportJson, new: &ReportJson, labels: (String, String)) -> Diff {
    let (a, b) = (by_id(old), by_id(new));
    let mut d = Diff {
        old: labels.0,
        new: labels.1,
        ..Diff::default()
    };
    for (id, o) in &a {
        let Some(n) = b.get(id) else {
            d.removed_scenarios.push(entry(o, Some(o), None));
            continue;
        };
        let e = entry(n, Some(o), Some(n));
        match rank(n.verdict).cmp(&rank(o.verdict)) {
            std::cmp::Ordering::Greater => d.regressions.push(e),
            std::cmp::Ordering::Less => d.progressions.push(e),
            _ if n.verdict != o.verdict => d.changed_verdicts.push(e),
            _ => {
                let (was, now) = (evidence_words(o), evidence_words(n));
                if n.verdict != Verdict::Pass && was != now {
                    d.changed_evidence.push(Entry { was, ..e });
                }
            }
        }
    }
    for (id, n) in &b {
        if !a.contains_key(id) {
            d.new_scenarios.push(entry(n, None, Some(n)));
        }
    }
    d
}

fn verdicts(e: &Entry) -> String {
    let v = |v: Option<Verdict>| v.map_or("-".to_string(), |v| v.to_string());
    format!("{} → {}", v(e.old), v(e.new))
}

fn sections(d: &Diff) -> [(&'static str, &Vec<Entry>); 6] {
    [
        ("regressions", &d.regressions),
        ("progressions", &d.progressions),
        ("new scenarios", &d.new_scenarios),
        ("removed scenarios", &d.removed_scenarios),
        ("changed verdicts", &d.changed_verdicts),
        ("changed evidence", &d.changed_evidence),
    ]
}

fn headline(d: &Diff) -> String {
    let counts: Vec<String> = sections(d)
        .iter()
        .map(|(name, es)| format!("{} {name}", es.len()))
        .collect();
    format!("vxcert diff {} → {}: {}", d.old, d.new, counts.join(", "))
}

pub fn text(d: &Diff) -> String {
    let mut out = headline(d) + "\n";
    if d.is_empty() {
        out += "no differences\n";
    }
    for (name, es) in sections(d) {
        for e in es {
            out += &format!(
                "{}: {}: {} / {}: {}",
                name.trim_end_matches('s').to_uppercase(),
                e.contract,
                e.row,
                e.scenario,
                verdicts(e)
            );
            if let Some(w) = &e.was {
                out += &format!("; was: {w}");
            }
            if let Some(o) = &e.observed {
                out += &format!("; now: {o}");
            }
            out += "\n";
        }
    }
    out
}

pub fn markdown(d: &Diff) -> String {
    let mut out = format!("# vxcert diff\n\n{}\n", headline(d));
    let cell = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    for (name, es) in sections(d) {
        if es.is_empty() {
            continue;
        }
        out += &format!("\n## {}{}\n\n| contract | case | scenario | verdict | evidence |\n|---|---|---|---|---|\n", name[..1].to_uppercase(), &name[1..]);
        for e in es {
            let ev = match (&e.was, &e.observed) {
                (Some(w), Some(o)) => format!("was: {w}; now: {o}"),
                (None, Some(o)) => o.clone(),
                _ => String::new(),
            };
            out += &format!(
                "| {} | {} | {} | {} | {} |\n",
                e.contract,
                cell(&e.row),
                cell(&e.scenario),
                verdicts(e),
                cell(&ev)
            );
        }
    }
    out
}

fn label(p: &Path) -> String {
    load::json_path(p).display().to_string()
}

pub fn run_diff(args: &DiffArgs) -> i32 {
    let go = || -> Result<Diff, String> {
        let (old, new) = (load::report(&args.old)?, load::report(&args.new)?);
        let d = diff(&old, &new, (label(&args.old), label(&args.new)));
        let json = serde_json::to_string_pretty(&d).map_err(|e| e.to_string())? + "\n";
        if let Some(dir) = &args.out {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            for (name, body) in [
                ("diff.txt", text(&d)),
                ("diff.md", markdown(&d)),
                ("diff.json", json.clone()),
            ] {
                std::fs::write(dir.join(name), body)
                    .map_err(|e| format!("cannot write {name}: {e}"))?;
            }
        }
        print!(
            "{}",
            match args.format {
                Format::Text => text(&d),
                Format::Markdown => markdown(&d),
                Format::Json => json,
            }
        );
        Ok(d)
    };
    match go() {
        Ok(d) if d.regressions.is_empty() => 0,
        Ok(_) => 1,
        Err(e) => {
            eprintln!("vxcert diff: {e}");
            2
        }
    }
}
