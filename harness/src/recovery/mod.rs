//! The recovery contract (venomx RFC, `features/recovery/`): its World, steps,
//! fixtures and judges.
//!
//! Layering: `steps/*` hold the cucumber step functions (one per step, registered by
//! `#[given]`/`#[when]`/`#[then]`); they call the helpers beside them (`scenario`,
//! `probes`, `streams`, `restore_events`, `fixtures`) and the shared drivers. No
//! helper imports a step module.

pub(crate) mod crash;
pub mod fixtures;
pub(crate) mod grants;
pub(crate) mod probes;
pub(crate) mod restore_events;
pub(crate) mod restored;
pub mod scenario;
pub(crate) mod skill;
mod steps;
pub(crate) mod streams;
pub(crate) mod twins;

pub use crate::drivers::step::Caps;
use crate::verdict::Verdict;
use scenario::Scenario;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How long one step may take before it is a `timeout` (scaled).
const STEP_DEADLINE_MS: u64 = 60_000;

/// The cucumber World of one recovery scenario. The state sits behind a mutex so
/// each step can run on a blocking thread: scenarios wait on sockets and processes,
/// and cucumber polls every scenario's future from one task.
#[derive(cucumber::World)]
#[world(init = Self::new)]
pub struct World {
    state: Arc<Mutex<Scenario>>,
    created: Instant,
    /// The typed verdict of the step that failed, for the runner.
    failure: Option<Verdict>,
    evidence: crate::evidence::Shared,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("recovery::World")
    }
}

impl crate::contract::SuiteWorld for World {
    fn created(&self) -> Instant {
        self.created
    }
    fn failure(&self) -> Option<Verdict> {
        self.failure
    }
    fn evidence(&self) -> crate::evidence::Shared {
        self.evidence.clone()
    }
}

/// A failed row shows the daemon as it stands (argv, exit or still running, its
/// stderr's end).
impl crate::drivers::step::OnFailure for Scenario {
    fn on_failure(&mut self) {
        if let Some(run) = self.daemon_run() {
            crate::evidence::process(run);
        }
    }
}

impl World {
    fn new() -> World {
        World {
            state: Arc::new(Mutex::new(Scenario::new())),
            created: Instant::now(),
            failure: None,
            evidence: crate::evidence::new_shared(),
        }
    }

    /// Runs one step's body on a blocking thread, bounded by the step deadline. The
    /// captures get the scenario's `$name` variables substituted first. A panic keeps
    /// its payload, so a typed [`crate::verdict::StepFailure`] keeps its verdict.
    pub async fn run(
        &mut self,
        caps: &[String],
        doc: Option<&str>,
        body: impl FnOnce(&mut Scenario, Caps) + Send + 'static,
    ) {
        let raw: Vec<String> = caps.to_vec();
        let doc = doc.map(|d| d.trim_start().to_string());
        let limit = crate::drivers::scaled(STEP_DEADLINE_MS);
        let failure =
            crate::drivers::step::blocking(&self.state, &self.evidence, limit, move |s| {
                let mut caps = vec![String::new()];
                caps.extend(raw.iter().map(|c| s.subst(c)));
                body(s, Caps::new(caps, doc));
                s.collect_stream_bytes();
            })
            .await;
        if let Some(f) = failure {
            if f.verdict != Verdict::UnsupportedOptional {
                crate::drivers::step::record_failure(&self.state, &self.evidence);
            }
            crate::drivers::step::fail(f, &mut self.failure);
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every step of the shipped suite matches exactly one definition; none is unused.
    #[test]
    fn every_step_matches_exactly_one_definition() {
        crate::step_check::assert_steps_match_once::<super::World>("recovery", "recovery");
    }
}
