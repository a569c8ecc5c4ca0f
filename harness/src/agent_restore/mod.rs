//! The agent-restore contract (phux ADR-0068, `features/agent-restore/`): its World
//! and steps. The offline rows judge the workspace-archive reader and the
//! integration-template validator (`checks`); the server rows (`@optional-agent-server`:
//! records through `meta.*` and spawn verbs, `agent.launch`) drive a live
//! implementation in its own sandbox (`live`), through the shared drivers.

pub(crate) mod checks;
pub(crate) mod live;
mod steps;

use checks::Checks;

/// How long one step may take before it is a `timeout` (scaled).
const STEP_DEADLINE_MS: u64 = 30_000;

crate::contract_world!(Checks, new_checks, "agent_restore::World", STEP_DEADLINE_MS);

fn new_checks() -> Checks {
    Checks::new(crate::profile::context().bin_dir.clone())
}

/// Whether the profile's `[agent_restore]` table reads (its programs are checked
/// by preflight from the table itself).
pub fn check_profile(profile: &crate::profile::Profile) -> Result<(), String> {
    let t = checks::Templates::of(profile)?;
    if t.archive_check.is_empty() {
        return Err("the profile's [agent_restore] table needs archive_check".into());
    }
    Ok(())
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
