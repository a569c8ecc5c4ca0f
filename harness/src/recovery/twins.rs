//! The valid twins of planted file states (docs/harness.md "Controls"). A checkpoint
//! planted with a defect that makes it refused (`as "<defect>"`, a future or old
//! capture time), or a planted file tampered with afterwards (mode, owner, links),
//! has a twin: the same fixture, intact, captured just now, under a second checkpoint
//! id and a generation no scenario uses. Before the first call that judges the
//! damaged file (a `recovery.list`, or a call naming it), the suite plants the twin,
//! requires `recovery.list` to list it `valid`, and removes it again, so the store is
//! the scenario's; the outcome is the scenario's control (kind
//! `recovery.checkpoint`). The refusal steps then require it accepted: a daemon that
//! refuses the intact file too proves nothing by refusing the damaged one.

use super::fixtures::{new_checkpoint_id, Fixture};
use crate::drivers::wire::Reply;
use serde_json::Value;
use std::collections::BTreeMap;

/// The kind of input the twins count toward the run's liveness.
pub const KIND: &str = "recovery.checkpoint";

/// Generations of the twins: above every generation a scenario plants.
const TWIN_GENERATION: u64 = 900_000;

#[derive(Debug, Default)]
pub struct Twins {
    /// Every planted fixture, by the scenario's name for it.
    planted: BTreeMap<String, Fixture>,
    /// Damaged files (their checkpoint ids) and what their twin is, not yet run.
    pending: Vec<(String, String, Fixture)>,
    /// The checkpoint ids of every damaged file of the scenario.
    damaged: Vec<String>,
    /// Whether the last request judged a damaged file.
    judged_damaged: bool,
}

/// A twin due to run: the damaged file's id, what the twin is, and the twin.
pub type Due = (String, String, Fixture);

/// Whether a planted defect makes the file refused (some named variants are valid
/// files: text kinds, a payload with every level).
fn refusing(defect: &str) -> bool {
    !(defect == "intact" || defect == "every level" || defect.starts_with("plain text"))
}

impl Twins {
    /// Remembers a planted fixture; a refusing defect or capture time gets a twin.
    pub fn planted(&mut self, name: &str, fixture: &Fixture, defect: &str, offset_s: i64) {
        self.planted.insert(name.to_string(), fixture.clone());
        if refusing(defect) || !(-600..=0).contains(&offset_s) {
            let what = if refusing(defect) {
                format!("the same checkpoint without the defect {defect:?}")
            } else {
                format!("the same checkpoint captured now, not {offset_s} s from now")
            };
            self.damaged_needs_twin(name, what);
        }
    }

    /// A planted file `name` is made refused by a later step (`what` its twin).
    pub fn damaged_needs_twin(&mut self, name: &str, what: String) {
        let Some(fixture) = self.planted.get(name).cloned() else {
            crate::harness_error!("no planted checkpoint is named {name}")
        };
        let mut twin = fixture.clone();
        twin.checkpoint = new_checkpoint_id();
        twin.generation = TWIN_GENERATION + self.damaged.len() as u64;
        twin.captured_offset_s = -5;
        self.damaged.push(fixture.checkpoint.clone());
        self.pending.push((fixture.checkpoint, what, twin));
    }

    /// Whether a request (its verb and its words) judges a damaged file: a listing,
    /// or a call naming one.
    pub fn judges_damaged(&self, verb: &str, words: &str) -> bool {
        !self.damaged.is_empty()
            && (verb == "recovery.list" || self.damaged.iter().any(|id| words.contains(id)))
    }

    /// Before a request (`verb`, and its parameters or CLI words as text): the pending
    /// twins, taken, when the request judges a damaged file and a daemon runs
    /// (`Scenario::before_request` plants them, lists them and hands the listing to
    /// [`Twins::judge`]).
    pub fn due(&mut self, verb: &str, words: &str, daemon_runs: bool) -> Vec<Due> {
        self.judged_damaged = self.judges_damaged(verb, words);
        if !daemon_runs || !self.judged_damaged {
            return Vec::new();
        }
        std::mem::take(&mut self.pending)
    }

    /// The control of the twins `pending`, from the `recovery.list` reply that saw them
    /// planted: every one listed `valid`, or the refusals that follow prove nothing.
    pub fn judge(pending: &[Due], reply: &Reply) {
        let status = |id: &str| -> String {
            let rows = reply
                .result
                .as_ref()
                .ok()
                .and_then(|v| v["checkpoints"].as_array().cloned());
            rows.unwrap_or_default()
                .iter()
                .find(|r| r["checkpoint"] == Value::String(id.to_string()))
                .map_or("not listed".into(), |r| {
                    r["status"].as_str().unwrap_or("no status").to_string()
                })
        };
        let seen: Vec<String> = pending
            .iter()
            .map(|(_, _, t)| format!("{}: {}", t.checkpoint, status(&t.checkpoint)))
            .collect();
        let accepted = reply.result.is_ok()
            && pending
                .iter()
                .all(|(_, _, t)| status(&t.checkpoint) == "valid");
        let what: Vec<&str> = pending.iter().map(|(_, w, _)| w.as_str()).collect();
        let observed = match &reply.result {
            Ok(_) => format!("recovery.list listed {}", seen.join(", ")),
            Err(e) => format!("recovery.list failed: {e}"),
        };
        crate::evidence::control(
            KIND,
            crate::evidence::Control {
                what: format!(
                    "{}, planted under a second id, must be listed valid",
                    what.join("; ")
                ),
                accepted,
                observed,
                commands: Vec::new(),
            },
        );
    }

    /// The guard of a refusal step: when the last request judged a damaged file, its
    /// twin must have been listed valid first.
    pub fn require_twin(&self) {
        if self.judged_damaged {
            crate::evidence::require_accepted_control();
        }
    }
}

/// The kind of input a refused request's control counts toward the run's liveness.
pub const REQUEST_KIND: &str = "recovery.request";

/// A request as a principal made it, kept so a refusal's control can repeat it with
/// the one difference that makes it valid (the principal, the parameters, the words).
#[derive(Debug, Clone)]
pub enum Request {
    Wire {
        token: Option<String>,
        verb: String,
        params: serde_json::Map<String, Value>,
    },
    Cli {
        token: Option<String>,
        words: Vec<String>,
    },
}
