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
