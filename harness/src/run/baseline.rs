//! Baselines: `vxcert run --baseline FILE` fails the run only on a regression against
//! FILE, a report (`report.json` or its directory) or an expectations file that
//! `vxcert baseline REPORT --out FILE` writes. An expectation names a scenario by its
//! stable id and allows one or more verdicts (a row known to be flaky: `pass` or
//! `timeout`) with a reason. A scenario the baseline does not name is judged as
//! without one. The profile's expected failures keep working.

use super::diff::rank;
use super::report::{Report, ScenarioJson};
use super::shard::scenario_id;
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct BaselineArgs {
    /// The report to take the expectations from (a report directory or report.json).
    #[arg(value_name = "REPORT")]
    pub report: PathBuf,
    /// The expectations file to write.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// One scenario's allowed verdicts.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Expectation {
    pub contract: String,
    pub feature: String,
    pub scenario: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
    pub verdicts: Vec<Verdict>,
    #[serde(default)]
    pub reason: String,
}

#[derive(Serialize, Deserialize, Debug, Default)]
pub struct Expectations {
    #[serde(default)]
    pub expect: Vec<Expectation>,
}

pub type Allowed = BTreeMap<String, (Vec<Verdict>, String)>;

/// The allowed verdicts by stable id, from a report or an expectations file.
pub fn load(path: &Path) -> Result<Allowed, String> {
    let is_toml = path.extension().is_some_and(|e| e == "toml");
    let list = if is_toml {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the baseline {}: {e}", path.display()))?;
        toml::from_str::<Expectations>(&text)
            .map_err(|e| {
                format!(
                    "the baseline {} is not an expectations file: {e}",
                    path.display()
                )
            })?
            .expect
    } else {
        of_report(path, false)?.expect
    };
    Ok(list
        .into_iter()
        .map(|e| {
            let id = scenario_id(&e.contract, &e.feature, &e.scenario, e.example.as_deref());
            (id, (e.verdicts, e.reason))
        })
        .collect())
}

/// A report's scenarios as expectations (only those that did not pass, with
/// `failing_only`).
fn of_report(path: &Path, failing_only: bool) -> Result<Expectations, String> {
    let r = super::load::report(path)?;
    let expect = r
        .scenarios
        .iter()
        .filter(|s| !failing_only || !s.verdict.held())
        .map(|s| Expectation {
            contract: s.contract.to_string(),
            feature: s.feature.clone(),
            scenario: s.name.clone(),
            example: s.example.clone(),
            verdicts: vec![s.verdict],
            reason: format!("{} in the report of {}", s.verdict, r.run.started_at),
        })
        .collect();
    Ok(Expectations { expect })
}

/// `vxcert baseline REPORT --out FILE`: the expectations of every scenario that did
/// not pass; add verdicts (and say why) by hand.
pub fn run_baseline(args: &BaselineArgs) -> i32 {
    let go = || -> Result<usize, String> {
        let e = of_report(&args.report, true)?;
        let body = toml::to_string_pretty(&e).map_err(|e| e.to_string())?;
        let head = "# vxcert expectations: `vxcert run --baseline THIS-FILE` fails only on a\n\
                    # regression against them. Each [[expect]] allows `verdicts` for one scenario\n\
                    # (say why in `reason`); a scenario not listed must hold.\n\n";
        std::fs::write(&args.out, format!("{head}{body}"))
            .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
        Ok(e.expect.len())
    };
    match go() {
        Ok(n) => {
            println!(
                "vxcert baseline: {n} expectations written to {}",
                args.out.display()
            );
            0
        }
        Err(e) => {
            eprintln!("vxcert baseline: {e}");
            2
        }
    }
}

/// Whether `s` regressed against its allowed verdicts: a verdict that fails the run,
/// not allowed, and worse than the best allowed.
fn regressed(s: &ScenarioJson, allowed: Option<&(Vec<Verdict>, String)>) -> Option<String> {
    if !s.verdict.fails_run() || s.level != "must" || s.expected_failure.is_some() {
        return None;
    }
    match allowed {
        None => Some(format!("{} (the baseline does not name it)", s.verdict)),
        Some((vs, _)) if vs.contains(&s.verdict) => None,
        Some((vs, _)) if vs.iter().map(|v| rank(*v)).min().unwrap_or(0) >= rank(s.verdict) => None,
        Some((vs, why)) => {
            let words: Vec<&str> = vs.iter().map(|v| v.as_str()).collect();
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(": {why}")
            };
            Some(format!(
                "{} where the baseline allows {}{why}",
                s.verdict,
                words.join(" or ")
            ))
        }
    }
}

/// Judges the report against the baseline: its problems become the regressions (and
/// the profile's expected failures that passed), and its result follows.
pub fn apply(rep: &mut Report, path: &Path) -> Result<(), String> {
    let allowed = load(path)?;
    let mut problems: Vec<String> = rep
        .json
        .run
        .problems
        .iter()
        .filter(|p| p.ends_with("remove it from the profile"))
        .cloned()
        .collect();
    for s in &rep.json.scenarios {
        let id = scenario_id(s.contract, &s.feature, &s.name, s.example.as_deref());
        if let Some(why) = regressed(s, allowed.get(&id)) {
            problems.push(format!(
                "{}: {} / {}: regressed: {why}",
                s.contract,
                s.row,
                s.display_name()
            ));
        }
    }
    let run = &mut rep.json.run;
    run.problems = problems;
    run.baseline = Some(path.display().to_string());
    rep.ok = run.problems.is_empty() && !rep.json.scenarios.is_empty();
    run.result = if rep.ok { "pass" } else { "fail" };
    Ok(())
}
