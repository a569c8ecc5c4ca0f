//! The pin variant of the reference, for the kit's own tests only
//! (`harness/tests/pin_variant_single_writer.rs`): with `VXBROKER_PIN_VARIANT=1` the
//! broker differs from the reference only where the seed leaves the choice open and
//! the kit pins one reading (features/single-writer/clauses.toml, level `pin`). Every
//! MUST holds as in the reference. Unset (the only way the kit's profiles run it),
//! the broker is the reference.
//!
//! - a request refused before the upgrade (bad key, unknown engine, bad counter) is
//!   upgraded and closed instead, with [`CLOSE_REFUSED`] and the error code as the
//!   close reason (pin `refusal_style`, kit `"http"`);
//! - every other refusal after the upgrade closes [`CLOSE_REFUSED`] (pin
//!   `close_refused`, kit 4500);
//! - the offline checkers print no rule ids (`"rule": null` on a refusal, no `rule`
//!   in a usage error) (pin `sw-pin-checker-verdict`; a profile says `verdict_only`);
//! - the owner file carries one member more (`"instance"`), and the reader skips
//!   members it does not know (pin `owner_shape`, kit `"closed"`).

use std::sync::OnceLock;

/// The variable that selects the variant.
pub const ENV: &str = "VXBROKER_PIN_VARIANT";

/// The variant's close code for a refusal after the upgrade.
pub const CLOSE_REFUSED: u16 = 4501;

/// Whether the variant is selected (read once).
pub fn on() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var(ENV).is_ok_and(|v| v == "1"))
}

/// The profile-keys variant (`harness/tests/single_writer_profile_keys.rs`): with
/// `VXBROKER_KEYS_VARIANT=1` the broker makes the choices of a real broker the seed
/// leaves open and the profile's keys describe, every MUST holding as in the
/// reference:
///
/// - it knows its own engines, the seed's three and `codex` (uuid), and ignores any
///   other engine of the engines file, so an engine it does not know (the fixture's
///   `ghost`) is refused before any launch (`known_engines`,
///   `missing_program_engine`);
/// - no length cap on a key, an engine name or an `ses_` tail (`key_max_bytes`,
///   `engine_max_bytes`, `ses_id_max_bytes` = "none");
/// - a launch whose spawn failed closes [`CLOSE_SPAWN_FAILED`], one refused before
///   anything was spawned (a cwd that does not exist, an orphan socket that cannot
///   be unlinked) still 4502 (`close_spawn_failed`);
/// - lock files are `{engine}_{id}.lock` and master sockets `{engine}-{id}.sock`,
///   while the physical key it prints and lists stays `{engine}@{id}`
///   (`lock_path`, `session_socket`);
/// - its scope wrapper's probe is `CMD --user --version` and a launch names its unit
///   `--unit=NAME` (the seed names the probe of `systemd-run --user`, not its words).
///
/// Unset (the only way the kit's profiles run it), the broker is the reference.
pub const KEYS_ENV: &str = "VXBROKER_KEYS_VARIANT";

/// The keys variant's close code for a launch whose spawn failed.
pub const CLOSE_SPAWN_FAILED: u16 = 4504;

/// The keys variant's one engine beyond the seed's.
pub const OWN_ENGINE: &str = "codex";

/// Whether the profile-keys variant is selected (read once).
pub fn keys() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var(KEYS_ENV).is_ok_and(|v| v == "1"))
}

/// The engines the keys variant knows.
pub fn known_engine(name: &str) -> bool {
    ["claude", "gemini", "opencode", OWN_ENGINE].contains(&name)
}
