//! `evidence` in `report.json` (and its Markdown and one-line forms): for every
//! scenario that is not `pass`, what ran, what came back, which seed sentence it
//! breaks and how to replay it.

use super::clauses::Clause;
use super::Outcome;
use crate::contract::Contract;
use crate::evidence::{CommandRun, Control, FileChange, PinDeviation};
use crate::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// How many of the scenario's last commands stand in for a step that ran none.
pub const SCENARIO_TAIL: usize = 8;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(bound(deserialize = "'de: 'static"))]
pub struct EvidenceJson {
    /// The step the scenario ended at (`When …`), when one failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clause: Option<ClauseRef>,
    pub expected: String,
    pub observed: String,
    pub commands: Vec<CommandRun>,
    pub files: Vec<FileChange>,
    /// The implementation's long-running processes (a broker) when the step failed:
    /// argv, exit or signal (neither: still running), stderr's last 4 KiB.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<CommandRun>,
    pub frames: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlJson>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pins: Vec<PinDeviation>,
    /// What the suite left out or chose, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A directory under the report with the scenario's inputs and `repro.sh`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduce: Option<String>,
}

/// A refusal's valid twin, with the kind of input it counts for (liveness).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ControlJson {
    pub kind: String,
    #[serde(flatten)]
    pub control: Control,
}

/// The clause a scenario breaks, as the seed says it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClauseRef {
    pub id: String,
    pub level: String,
    /// The seed file, under `shared/seeds/`.
    pub seed: String,
    pub section: String,
    /// The seed's sentence, verbatim (the registry's text when no quote is kept).
    pub quote: String,
}

/// The clause as the evidence of `scenario` quotes it: the sentence that row tests
/// (the clause's `[[clause.rows]]` entry for it), else the clause's own.
fn clause_ref(contract: Contract, c: &Clause, scenario: &str) -> ClauseRef {
    ClauseRef {
        id: c.id.clone(),
        level: c.level.clone(),
        seed: format!("shared/seeds/{}", contract.seed()),
        section: c.section.clone(),
        quote: c
            .quote_for(scenario)
            .map_or_else(|| c.text.clone(), str::to_string),
    }
}

/// The evidence of one outcome, for every verdict but `pass`, `unsupported-optional`
/// and `not-claimed` (those say why in `message`).
pub fn of(o: &Outcome, registries: &[(Contract, Vec<Clause>)]) -> Option<EvidenceJson> {
    if matches!(
        o.verdict,
        Verdict::Pass | Verdict::UnsupportedOptional | Verdict::NotClaimed
    ) {
        return None;
    }
    let kept = o.kept.clone().unwrap_or_default();
    let registry = registries
        .iter()
        .find(|(c, _)| *c == o.contract)
        .map(|(_, r)| r.as_slice())
        .unwrap_or(&[]);
    let find = |id: &str| registry.iter().find(|c| c.id == id);
    // The clause the failing check named; else, for a non-strict scenario, its first
    // pin; else the scenario's own clause tags, most specific (last) first, a must or
    // should before a pin (a check that observes a pin names it; an unnamed failure
    // is the scenario's requirement).
    let named = kept
        .failed
        .as_ref()
        .and_then(|(c, _, _)| c.clone())
        .or_else(|| {
            (o.verdict == Verdict::NonStrict)
                .then(|| kept.pins.first().map(|p| p.clause.clone()))
                .flatten()
        });
    let prefix = o.contract.clause_prefix();
    let clause = named
        .as_deref()
        .and_then(find)
        .or_else(|| {
            let tagged: Vec<&Clause> = o
                .tags
                .iter()
                .rev()
                .filter(|t| t.starts_with(prefix))
                .filter_map(|t| find(t))
                .collect();
            let first = tagged.first().copied();
            tagged.into_iter().find(|c| c.level != "pin").or(first)
        })
        .map(|c| clause_ref(o.contract, c, &o.name));
    let message = o.message.clone().unwrap_or_default();
    let step = super::failed_steps::of(&o.feature_path, o.line);
    let (expected, observed) = match (&kept.failed, o.verdict) {
        (_, Verdict::NonStrict) => (
            "the kit's pinned choices".to_string(),
            kept.pins
                .iter()
                .map(|p| {
                    format!(
                        "{}: {} where the kit pins {}",
                        p.clause, p.observed, p.expected
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        ),
        (Some((_, e, ob)), Verdict::Fail) => (e.clone(), ob.clone()),
        (_, Verdict::Inconclusive) => (
            "the valid twin (the control) accepted, then this input refused".to_string(),
            message,
        ),
        (_, Verdict::Timeout) => (
            "the step to finish within its deadline".to_string(),
            message,
        ),
        (_, Verdict::HarnessError) => ("the suite to run the step".to_string(), message),
        (_, _) => assert_words(&message).unwrap_or_else(|| {
            let what = step.as_deref().map_or_else(
                || "the step's assertion to hold".to_string(),
                |s| format!("\"{s}\" to hold"),
            );
            (what, message)
        }),
    };
    // A judging step often runs nothing itself: then the commands that produced what
    // it judged are the scenario's last ones.
    let commands = if kept.last_step_commands.is_empty() {
        let n = kept.commands.len();
        kept.commands[n.saturating_sub(SCENARIO_TAIL)..].to_vec()
    } else {
        kept.last_step_commands.clone()
    };
    Some(EvidenceJson {
        step,
        clause,
        expected,
        observed,
        commands,
        files: kept.files.clone(),
        processes: kept.processes.clone(),
        frames: kept.frames.clone(),
        control: kept
            .control
            .clone()
            .map(|(kind, control)| ControlJson { kind, control }),
        pins: kept.pins.clone(),
        notes: kept.notes.clone(),
        reproduce: o.reproduce.clone(),
    })
}

/// Expected and observed from a failed assertion's sentence
/// ([`crate::verdict::as_sentence`]: "WHAT: expected E; observed O").
fn assert_words(message: &str) -> Option<(String, String)> {
    let (what, rest) = message.split_once(": expected ")?;
    let (expected, observed) = rest.rsplit_once("; observed ")?;
    Some((format!("{what}: {expected}"), format!("{what}: {observed}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn assert_eq_messages_become_expected_and_observed() {
        let p =
            std::panic::catch_unwind(|| assert_eq!(Some(1), Some(0), "exit status of the unpack"))
                .unwrap_err();
        let m = crate::verdict::StepFailure::from_panic(p.as_ref()).message;
        assert_eq!(
            super::assert_words(&m),
            Some((
                "exit status of the unpack: Some(0)".to_string(),
                "exit status of the unpack: Some(1)".to_string()
            ))
        );
        assert_eq!(super::assert_words("the pod changed"), None);
        assert_eq!(
            m,
            "exit status of the unpack: expected Some(0); observed Some(1)"
        );
    }

    #[test]
    fn other_assertions_become_sentences_too() {
        let ne = std::panic::catch_unwind(|| assert_ne!(3, 3, "the generation")).unwrap_err();
        assert_eq!(
            crate::verdict::StepFailure::from_panic(ne.as_ref()).message,
            "the generation: expected anything but 3; observed 3"
        );
        let pods = ["A"];
        let bare = std::panic::catch_unwind(|| assert!(pods.is_empty())).unwrap_err();
        assert_eq!(
            crate::verdict::StepFailure::from_panic(bare.as_ref()).message,
            "the check `pods.is_empty()` did not hold"
        );
        let unnamed = std::panic::catch_unwind(|| assert_eq!(1, 2)).unwrap_err();
        let m = crate::verdict::StepFailure::from_panic(unnamed.as_ref()).message;
        assert_eq!(m, "the value: expected 2; observed 1");
        assert!(!m.contains("left") && !m.contains("right"), "{m}");
    }
}
