//! The agent-restore contract (phux ADR-0068, `features/agent-restore/`): its World
//! and steps. Today the suite certifies what the offline checkers can show (the
//! workspace-archive reader and the integration-template validator); the server
//! rows (records through `meta.*`, `agent.launch`, save and restore) come with the
//! reference daemon's agent verbs.

pub(crate) mod checks;
mod steps;

use crate::contract::SuiteWorld;
use crate::drivers::step::Caps;
use crate::verdict::Verdict;
use checks::Checks;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How long one step may take before it is a `timeout` (scaled).
const STEP_DEADLINE_MS: u64 = 30_000;

#[derive(cucumber::World)]
#[world(init = Self::new)]
pub struct World {
    state: Arc<Mutex<Checks>>,
    created: Instant,
    failure: Option<Verdict>,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("agent_restore::World")
    }
}

impl SuiteWorld for World {
    fn created(&self) -> Instant {
        self.created
    }
    fn failure(&self) -> Option<Verdict> {
        self.failure
    }
}

/// The programs the profile's `[agent_restore]` table names, by key, for preflight.
pub fn profile_programs(
    profile: &crate::profile::Profile,
) -> Result<Vec<(&'static str, String)>, String> {
    let table = profile
        .agent_restore
        .clone()
        .ok_or("the profile has no [agent_restore] table")?;
    let t: checks::Templates = toml::Value::Table(table)
        .try_into()
        .map_err(|e| format!("the profile's [agent_restore] table: {e}"))?;
    if t.archive_check.is_empty() {
        return Err("the profile's [agent_restore] table needs archive_check".into());
    }
    Ok([
        ("agent_restore.archive_check", &t.archive_check),
        ("agent_restore.template_check", &t.template_check),
        ("agent_restore.workspace_save", &t.workspace_save),
        ("agent_restore.workspace_restore", &t.workspace_restore),
        ("agent_restore.legacy_serve", &t.legacy_serve),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.first().map(|p| (k, p.clone())))
    .collect())
}

impl World {
    fn new() -> World {
        World {
            state: Arc::new(Mutex::new(Checks::new())),
            created: Instant::now(),
            failure: None,
        }
    }

    /// Runs one step's body on a blocking thread, bounded by the step deadline.
    pub async fn run(
        &mut self,
        caps: &[String],
        doc: Option<&str>,
        body: impl FnOnce(&mut Checks, Caps) + Send + 'static,
    ) {
        let mut all = vec![String::new()];
        all.extend(caps.iter().cloned());
        let caps = Caps::new(all, doc.map(|d| d.trim_start().to_string()));
        let limit = crate::drivers::scaled(STEP_DEADLINE_MS);
        let failure =
            crate::drivers::step::blocking(&self.state, limit, move |s| body(s, caps)).await;
        if let Some(f) = failure {
            crate::drivers::step::fail(f, &mut self.failure);
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every step of the shipped suite matches exactly one definition; none is unused.
    #[test]
    fn every_step_matches_exactly_one_definition() {
        crate::step_check::assert_steps_match_once::<super::World>(
            "agent-restore",
            "agent_restore",
        );
    }
}
