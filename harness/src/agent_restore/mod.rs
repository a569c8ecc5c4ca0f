//! The agent-restore contract (phux ADR-0068, `features/agent-restore/`): its World
//! and steps. The offline rows judge the workspace-archive reader and the
//! integration-template validator (`checks`); the server rows (`@optional-agent-server`:
//! records through `meta.*` and spawn verbs, `agent.launch`) drive a live
//! implementation in its own sandbox (`live`), through the shared drivers.

pub(crate) mod checks;
pub(crate) mod listed;
pub(crate) mod live;
pub(crate) mod offline;
pub(crate) mod pins;
pub(crate) mod restored;
pub(crate) mod shapes;
mod steps;
pub(crate) mod templates;
mod twin_control;
mod twins;

use checks::Checks;

/// How long one step may take before it is a `timeout` (scaled).
const STEP_DEADLINE_MS: u64 = 30_000;

crate::contract_world!(Checks, new_checks, "agent_restore::World", STEP_DEADLINE_MS);

fn new_checks() -> Checks {
    Checks::new(crate::profile::context().bin_dir.clone())
}

/// Whether the profile's `[agent_restore]` table reads and holds the keys of every
/// part it claims, and whether its `[agent_restore.pins]` maps kit names to strings
/// (its programs are checked by preflight from the table itself).
pub fn check_profile(profile: &crate::profile::Profile) -> Result<(), String> {
    pins::check_profile(profile)?;
    let missing = checks::Templates::of(profile)?.missing(profile);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the profile's [agent_restore] table needs {}",
            missing.join(", ")
        ))
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
