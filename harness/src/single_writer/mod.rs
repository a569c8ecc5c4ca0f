//! The single-writer contract (agent-sessions, `features/single-writer/`): its World
//! and steps. Today the suite certifies what the offline checkers show (session keys
//! and their physical names, the resume plan, the alias sidecar and owner file); the
//! rows that need a running broker (lock hand-off, attach-never-relaunch over the
//! WebSocket routes, claims, aliases live) follow with the suite's broker driver.

pub(crate) mod checks;
mod steps;

use checks::Checks;

/// How long one step may take before it is a `timeout` (scaled).
const STEP_DEADLINE_MS: u64 = 30_000;

crate::contract_world!(Checks, "single_writer::World", STEP_DEADLINE_MS);

/// The programs the profile's `[single_writer]` table names, by key, for preflight.
pub fn profile_programs(
    profile: &crate::profile::Profile,
) -> Result<Vec<(&'static str, String)>, String> {
    let t = checks::Templates::of(profile)?;
    Ok([
        ("single_writer.key_check", &t.key_check),
        ("single_writer.key_check_new", &t.key_check_new),
        ("single_writer.resume_plan", &t.resume_plan),
        ("single_writer.sidecar_check", &t.sidecar_check),
        ("single_writer.broker", &t.broker),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.first().map(|p| (k, p.clone())))
    .collect())
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
