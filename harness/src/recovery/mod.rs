//! The recovery contract (venomx RFC, `features/recovery/`): its World, steps,
//! fixtures and judges.
//!
//! Layering: `steps/*` hold the cucumber step functions (one per step, registered by
//! `#[given]`/`#[when]`/`#[then]`); they call the helpers beside them (`scenario`,
//! `probes`, `streams`, `restore_events`, `fixtures`) and the shared drivers. No
//! helper imports a step module.

pub mod fixtures;
pub(crate) mod probes;
pub(crate) mod restore_events;
pub(crate) mod restored;
pub mod scenario;
mod steps;
pub(crate) mod streams;

use crate::verdict::{OrHarness, StepFailure, Verdict};
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
}

/// A step's regex captures (1-based, `$name` variables substituted) and docstring.
pub struct Caps {
    caps: Vec<String>,
    doc: Option<String>,
}

/// One optional capture that took part in the match.
#[derive(Clone, Copy)]
pub struct Cap<'a>(&'a str);

impl<'a> Cap<'a> {
    pub fn as_str(&self) -> &'a str {
        self.0
    }
}

impl Caps {
    /// An optional group: `None` when it did not match (or matched nothing).
    pub fn get(&self, i: usize) -> Option<Cap<'_>> {
        self.caps
            .get(i)
            .filter(|s| !s.is_empty())
            .map(|s| Cap(s.as_str()))
    }

    /// The step's docstring, leading whitespace trimmed.
    pub fn doc(&self) -> Option<&str> {
        self.doc.as_deref()
    }
}

impl std::ops::Index<usize> for Caps {
    type Output = str;
    fn index(&self, i: usize) -> &str {
        self.caps
            .get(i)
            .map(String::as_str)
            .or_harness("the step has no such capture")
    }
}

impl World {
    fn new() -> World {
        World {
            state: Arc::new(Mutex::new(Scenario::new())),
            created: Instant::now(),
            failure: None,
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
        let state = self.state.clone();
        let raw: Vec<String> = caps.to_vec();
        let doc = doc.map(|d| d.trim_start().to_string());
        let limit = crate::drivers::scaled(STEP_DEADLINE_MS);
        let task = tokio::task::spawn_blocking(move || {
            let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
            let mut caps = vec![String::new()];
            caps.extend(raw.iter().map(|c| s.subst(c)));
            body(&mut s, Caps { caps, doc });
            s.collect_stream_bytes();
        });
        let failure = match tokio::time::timeout(limit, task).await {
            Err(_) => Some(StepFailure {
                verdict: Verdict::Timeout,
                message: format!("the step did not finish in {limit:?}"),
            }),
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(match e.try_into_panic() {
                Ok(p) => StepFailure::from_panic(p.as_ref()),
                Err(e) => StepFailure {
                    verdict: Verdict::HarnessError,
                    message: format!("the step's task failed: {e}"),
                },
            }),
        };
        if let Some(f) = failure {
            // The verdict stays typed in the World; cucumber's writers get readable text.
            self.failure = Some(f.verdict);
            let text = match f.verdict {
                Verdict::Fail => f.message,
                _ => f.to_string(),
            };
            std::panic::panic_any(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::World;
    use cucumber::feature::Ext as _;
    use std::path::Path;

    /// Every step of the shipped suite matches exactly one step definition (an
    /// ambiguous step would be a harness error at run time), and every definition is
    /// used by some step.
    #[test]
    fn every_step_matches_exactly_one_definition() {
        let steps = <World as cucumber::World>::collection();
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../features/recovery");
        let mut problems = Vec::new();
        let mut matched = std::collections::BTreeSet::new();
        let mut count = 0;
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "feature"))
            .collect();
        files.sort();
        for file in files {
            let feature = cucumber::gherkin::Feature::parse_path(
                &file,
                cucumber::gherkin::GherkinEnv::default(),
            )
            .unwrap()
            .expand_examples()
            .unwrap();
            let background = feature.background.iter().flat_map(|b| b.steps.iter());
            let scenarios = feature.scenarios.iter().flat_map(|s| s.steps.iter());
            for step in background.chain(scenarios) {
                count += 1;
                match steps.find(step) {
                    Ok(Some(m)) => {
                        matched.insert(m.2.map(|l| (l.path, l.line)));
                    }
                    Ok(None) => {
                        problems.push(format!("undefined: {} {}", step.keyword, step.value))
                    }
                    Err(e) => problems.push(format!("ambiguous: {}: {e}", step.value)),
                }
            }
        }
        assert!(count > 1000, "only {count} steps");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        // A definition no step uses is dead vocabulary: every attribute in steps/ is used.
        let steps_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/recovery/steps");
        let defined: usize = std::fs::read_dir(steps_dir)
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .map(|src| {
                src.lines()
                    .filter(|l| {
                        ["#[given(", "#[when(", "#[then("]
                            .iter()
                            .any(|a| l.starts_with(a))
                    })
                    .count()
            })
            .sum();
        assert_eq!(
            matched.len(),
            defined,
            "some step definitions are never used"
        );
    }
}
