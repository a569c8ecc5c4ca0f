//! The single-writer contract (agent-sessions, `features/single-writer/`): its World
//! and steps. The offline checkers' rows (session keys and their physical names, the
//! alias sidecar and owner file) run the profile's checker commands; the live rows
//! start the profile's broker, masters and client in a sandbox (`live`, the broker
//! driver `drivers::broker`) and judge what they do over the WebSocket routes, the
//! lock and the files.

pub(crate) mod checks;
pub(crate) mod effects;
pub(crate) mod engines;
pub(crate) mod live;
pub(crate) mod pins;
mod steps;
pub(crate) mod templates;
mod terminal;

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
    use std::path::Path;

    /// Whitespace runs as one space.
    fn normalized(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Every clause of the registry quotes its seed sentence verbatim (whitespace
    /// normalized), from the copy of the seed kept beside the suite; where the shared
    /// seed is checked out next to the repository, the copy is byte-for-byte it.
    #[test]
    fn every_clause_quotes_the_seed_verbatim() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = root.join("features/single-writer");
        let seed = std::fs::read_to_string(dir.join("seed.txt")).unwrap();
        let shared = root
            .join("../shared/seeds")
            .join(crate::contract::Contract::SingleWriter.seed());
        if let Ok(original) = std::fs::read_to_string(&shared) {
            assert_eq!(
                seed, original,
                "features/single-writer/seed.txt is not {shared:?}"
            );
        }
        let seed = normalized(&seed);
        let clauses = crate::run::clauses::load(
            &crate::run::clauses::registry_path(&dir),
            crate::contract::Contract::SingleWriter,
        )
        .unwrap();
        assert!(clauses.len() >= 40, "{}", clauses.len());
        for c in &clauses {
            let quote = c
                .quote
                .as_deref()
                .unwrap_or_else(|| panic!("clause {} has no quote", c.id));
            assert!(
                seed.contains(&normalized(quote)),
                "clause {}: its quote is not in the seed: {quote:?}",
                c.id
            );
        }
    }

    /// Every step of the shipped suite matches exactly one definition; none is unused.
    #[test]
    fn every_step_matches_exactly_one_definition() {
        crate::step_check::assert_steps_match_once::<super::World>(
            "single-writer",
            "single_writer",
        );
    }
}
