//! Running one step's body: on a blocking thread (cucumber polls every scenario's
//! future from one task, and the drivers block on sockets and processes), bounded by
//! a deadline, with the typed verdict of a failure kept for the runner.

use crate::verdict::{OrHarness, StepFailure, Verdict};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Runs `body` on the scenario's state on a blocking thread, with the scenario's
/// evidence collector installed there; the failure, if any.
pub async fn blocking<S: Send + 'static>(
    state: &Arc<Mutex<S>>,
    evidence: &crate::evidence::Shared,
    limit: Duration,
    body: impl FnOnce(&mut S) + Send + 'static,
) -> Option<StepFailure> {
    let state = state.clone();
    let evidence = evidence.clone();
    let task = tokio::task::spawn_blocking(move || {
        let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
        crate::evidence::scope(&evidence, || body(&mut s));
    });
    match tokio::time::timeout(limit, task).await {
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
    }
}

/// What a contract's state adds to a failed step's evidence: the implementation's
/// long-running processes and the files it changed, as they stand (nothing unless
/// the state says).
pub trait OnFailure {
    fn on_failure(&mut self) {}
}

/// Runs the state's [`OnFailure`] in the scenario's evidence scope, unless the step
/// still holds the state (a step past its deadline keeps running).
pub fn record_failure<S: OnFailure>(state: &Mutex<S>, evidence: &crate::evidence::Shared) {
    let mut guard = match state.try_lock() {
        Ok(g) => g,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return,
    };
    crate::evidence::scope(evidence, || guard.on_failure());
}

/// Ends the step with `failure`: its verdict goes into the World's `slot` (typed, for
/// the runner), its text to cucumber's writers.
pub fn fail(failure: StepFailure, slot: &mut Option<Verdict>) -> ! {
    *slot = Some(failure.verdict);
    let text = match failure.verdict {
        Verdict::Fail => failure.message,
        _ => failure.to_string(),
    };
    std::panic::panic_any(text)
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
    /// `caps[0]` stands for the whole match; the groups follow from 1.
    pub fn new(caps: Vec<String>, doc: Option<String>) -> Caps {
        Caps { caps, doc }
    }

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

/// Declares a contract's cucumber `World` over a state type `$state` (built by
/// `$init()`), with the runner's [`crate::contract::SuiteWorld`] and a `run`
/// that executes a step body on a blocking thread bounded by `$deadline_ms` (scaled).
/// Captures are passed as they matched (1-based), the docstring trimmed.
#[macro_export]
macro_rules! contract_world {
    ($state:ty, $init:path, $name:literal, $deadline_ms:expr) => {
        #[derive(cucumber::World)]
        #[world(init = Self::new)]
        pub struct World {
            state: std::sync::Arc<std::sync::Mutex<$state>>,
            created: std::time::Instant,
            failure: Option<$crate::verdict::Verdict>,
            evidence: $crate::evidence::Shared,
        }

        impl std::fmt::Debug for World {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($name)
            }
        }

        impl $crate::contract::SuiteWorld for World {
            fn created(&self) -> std::time::Instant {
                self.created
            }
            fn failure(&self) -> Option<$crate::verdict::Verdict> {
                self.failure
            }
            fn evidence(&self) -> $crate::evidence::Shared {
                self.evidence.clone()
            }
        }

        impl World {
            fn new() -> World {
                World {
                    state: std::sync::Arc::new(std::sync::Mutex::new($init())),
                    created: std::time::Instant::now(),
                    failure: None,
                    evidence: $crate::evidence::new_shared(),
                }
            }

            /// Runs one step's body on a blocking thread, bounded by the step deadline.
            pub async fn run(
                &mut self,
                caps: &[String],
                doc: Option<&str>,
                body: impl FnOnce(&mut $state, $crate::drivers::step::Caps) + Send + 'static,
            ) {
                let mut all = vec![String::new()];
                all.extend(caps.iter().cloned());
                let caps =
                    $crate::drivers::step::Caps::new(all, doc.map(|d| d.trim_start().to_string()));
                let limit = $crate::drivers::scaled($deadline_ms);
                let failure =
                    $crate::drivers::step::blocking(&self.state, &self.evidence, limit, move |s| {
                        body(s, caps)
                    })
                    .await;
                if let Some(f) = failure {
                    if f.verdict != $crate::verdict::Verdict::UnsupportedOptional {
                        $crate::drivers::step::record_failure(&self.state, &self.evidence);
                    }
                    $crate::drivers::step::fail(f, &mut self.failure);
                }
            }
        }
    };
}
