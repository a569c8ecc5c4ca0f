//! The agent-restore contract (phux ADR-0068, `features/agent-restore/`): its World
//! and steps. Today the suite certifies what the offline checkers can show (the
//! workspace-archive reader and the integration-template validator); the server
//! rows (records through `meta.*`, `agent.launch`, save and restore) come with the
//! reference daemon's agent verbs.

pub(crate) mod checks;
mod steps;

use checks::Checks;

/// How long one step may take before it is a `timeout` (scaled).
const STEP_DEADLINE_MS: u64 = 30_000;

crate::contract_world!(Checks, "agent_restore::World", STEP_DEADLINE_MS);

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
