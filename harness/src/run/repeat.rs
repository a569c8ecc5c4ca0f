//! `vxcert run --repeat N`: every selected scenario runs N times, each time in a
//! fresh sandbox (a new cucumber pass over the suite, so a new World). A scenario
//! whose runs differ is `flaky`, keeping one outcome per distinct verdict, with the
//! rounds that gave it and its evidence, so an implementation's author sees what
//! each kind of run looked like.

use super::Outcome;
use crate::verdict::Verdict;

/// One distinct verdict of a repeated scenario: the rounds that gave it, and the
/// first of them in full.
#[derive(Debug, Clone)]
pub struct Variant {
    pub rounds: Vec<u32>,
    pub outcome: Box<Outcome>,
}

fn same_scenario(a: &Outcome, b: &Outcome) -> bool {
    a.contract == b.contract && a.feature == b.feature && a.line == b.line
}

/// One outcome per scenario from the outcomes of every round (sorted by scenario,
/// then round): the scenario's verdict when all rounds agree, else `flaky`.
pub fn combine(outcomes: Vec<Outcome>) -> Vec<Outcome> {
    let mut out: Vec<Outcome> = Vec::new();
    let mut groups: Vec<Vec<Outcome>> = Vec::new();
    for o in outcomes {
        match groups.last_mut() {
            Some(g) if same_scenario(&g[0], &o) => g.push(o),
            _ => groups.push(vec![o]),
        }
    }
    for group in groups {
        let mut variants: Vec<Variant> = Vec::new();
        for o in &group {
            match variants.iter_mut().find(|v| v.outcome.verdict == o.verdict) {
                Some(v) => v.rounds.push(o.round),
                None => variants.push(Variant {
                    rounds: vec![o.round],
                    outcome: Box::new(o.clone()),
                }),
            }
        }
        let mut first = group.into_iter().next().expect("a group has an outcome");
        if variants.len() > 1 {
            variants.sort_by_key(|v| std::cmp::Reverse(v.outcome.verdict));
            let worst = &variants[0].outcome;
            first.message = Some(flaky_message(&variants));
            first.kept = worst.kept.clone();
            first.reproduce = worst.reproduce.clone();
            first.duration_ms = variants
                .iter()
                .map(|v| v.outcome.duration_ms)
                .max()
                .unwrap_or(0);
            first.verdict = Verdict::Flaky;
            first.variants = variants;
        }
        out.push(first);
    }
    out
}

fn rounds(rs: &[u32]) -> String {
    let words: Vec<String> = rs.iter().map(u32::to_string).collect();
    let noun = if rs.len() == 1 { "round" } else { "rounds" };
    format!("{noun} {}", words.join(", "))
}

/// `the runs disagreed: fail in round 2 (…); pass in rounds 1, 3`.
fn flaky_message(variants: &[Variant]) -> String {
    let parts: Vec<String> = variants
        .iter()
        .map(|v| {
            let why = v
                .outcome
                .message
                .as_deref()
                .map(|m| format!(" ({})", m.lines().next().unwrap_or("")))
                .unwrap_or_default();
            format!("{} in {}{why}", v.outcome.verdict, rounds(&v.rounds))
        })
        .collect();
    format!("the scenario's runs disagreed: {}", parts.join("; "))
}
