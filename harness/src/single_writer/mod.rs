//! The single-writer contract (agent-sessions, `features/single-writer/`): its World
//! and steps. Today the suite certifies what the offline checkers show (session keys
//! and their physical names, the resume plan, the alias sidecar and owner file); the
//! rows that need a running broker (lock hand-off, attach-never-relaunch over the
//! WebSocket routes, claims, aliases live) follow with the suite's broker driver.

pub(crate) mod checks;
pub(crate) mod live;
mod steps;

use checks::Checks;

/// How long one step may take before it is a `timeout` (scaled).
const STEP_DEADLINE_MS: u64 = 30_000;

crate::contract_world!(
    Checks,
    Checks::new,
    "single_writer::World",
    STEP_DEADLINE_MS
);

/// Whether the profile's `[single_writer]` table reads (its programs are checked
/// by preflight from the table itself).
pub fn check_profile(profile: &crate::profile::Profile) -> Result<(), String> {
    checks::Templates::of(profile).map(|_| ())
}

#[cfg(test)]
mod tests {
    /// Every step of the shipped suite matches exactly one definition; none is unused.
    #[test]
    fn every_step_matches_exactly_one_definition() {
        crate::step_check::assert_steps_match_once::<super::World>(
            "single-writer",
            "single_writer",
        );
    }
}
