//! The session-persist contract (ADR-089, `features/session-persist/`): its World and
//! steps. The suite plants sessions in pods (one backend root each, wiped between
//! visits), drives the implementation's packer and store through the `[persist]`
//! profile table, and judges trees, blobs and replies itself.

mod bench;
mod blobs;
mod bounded;
pub(crate) mod caps;
mod drive;
mod layout;
mod pods;
mod steps;
mod store_adapter;

use bench::Persist;
#[cfg(test)] // profile_explain checks its keys
pub use bench::Templates;

/// How long one step may take before it is a `timeout` (scaled): the crash sweep
/// runs the unpacker once per rename.
const STEP_DEADLINE_MS: u64 = 60_000;

crate::contract_world!(
    Persist,
    Persist::new,
    "session_persist::World",
    STEP_DEADLINE_MS
);

/// Whether the profile's `[persist]` table reads and its `[persist.pins]` are caps
/// the suite can judge (its programs are checked by preflight from the table itself).
pub fn check_profile(profile: &crate::profile::Profile) -> Result<(), String> {
    caps::check(profile)?;
    bench::Templates::of(profile).map(|_| ())
}

/// Why a twin's rows cannot run with this profile here, when they cannot.
pub fn twin_unavailable(profile: &crate::profile::Profile, twin: &str) -> Option<String> {
    let twins = bench::Templates::of(profile)
        .map(|t| t.s3_twins)
        .unwrap_or_default();
    store_adapter::twin_unavailable(twin, &twins)
}

#[cfg(test)]
mod tests {
    /// Every step of the shipped suite matches exactly one definition; none is unused.
    #[test]
    fn every_step_matches_exactly_one_definition() {
        crate::step_check::assert_steps_match_once::<super::World>(
            "session-persist",
            "session_persist",
        );
    }
}
