//! The runner's Markdown tables: the battery as listed, and a run's results with its
//! kill rate.

use super::battery::Mutant;
use super::{Outcome, Row};
use std::collections::BTreeMap;

pub fn outcome_word(m: &Mutant, o: &Outcome) -> String {
    match o {
        Outcome::Killed(failing) => format!("killed ({} scenario(s))", failing.len()),
        Outcome::Survived if m.equivalent.is_some() => "survived (equivalent)".into(),
        Outcome::Survived => "survived".into(),
        Outcome::Invalid(why) => format!("INVALID: {why}"),
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn list_table(mutants: &[&Mutant]) -> String {
    let mut t =
        String::from("| mutant | clause | § | file | description |\n|---|---|---|---|---|\n");
    for m in mutants {
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            m.id,
            m.clause,
            m.section,
            m.file,
            cell(&m.description)
        ));
    }
    t.push_str(&format!("{} mutants\n", mutants.len()));
    t
}

pub fn result_table(rows: &[Row], total_secs: f64) -> String {
    let mut t = String::from(
        "| mutant | clause | § | result | rows that caught it (scenarios) | build s | run s | harness errors |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (result, caught) = match &r.outcome {
            Outcome::Killed(failing) => {
                let mut per_row: BTreeMap<&str, usize> = BTreeMap::new();
                for s in failing {
                    *per_row
                        .entry(s.split(": ").next().unwrap_or("?"))
                        .or_default() += 1;
                }
                let caught: Vec<String> = per_row
                    .iter()
                    .map(|(row, n)| format!("{row} ({n})"))
                    .collect();
                ("killed".to_string(), caught.join("; "))
            }
            Outcome::Survived => match &r.mutant.equivalent {
                Some(why) => ("equivalent".to_string(), why.clone()),
                None => (
                    "**survived**".to_string(),
                    r.mutant.survivor_note.clone().unwrap_or_default(),
                ),
            },
            Outcome::Invalid(why) => ("INVALID".to_string(), why.clone()),
        };
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.0} | {:.0} | {} |\n",
            r.mutant.id,
            r.mutant.clause,
            r.mutant.section,
            result,
            cell(&caught),
            r.build_secs,
            r.run_secs,
            r.harness_errors
        ));
    }
    let killed = rows
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Killed(_)))
        .count();
    let invalid = rows
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Invalid(_)))
        .count();
    let equivalent = rows
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Survived) && r.mutant.equivalent.is_some())
        .count();
    let valid = rows.len() - invalid - equivalent;
    let rate = if valid == 0 {
        0.0
    } else {
        100.0 * killed as f64 / valid as f64
    };
    t.push_str(&format!(
        "\n{} mutant(s) in {:.0} s; {invalid} invalid (battery bugs) and {equivalent} \
         equivalent (surviving, break no MUST), neither counted.\n\
         Kill rate: {killed}/{valid} valid mutants killed ({rate:.1} %)\n",
        rows.len(),
        total_secs
    ));
    t
}
