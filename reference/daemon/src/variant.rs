//! Conforming choices of the reference daemon that differ from its defaults, for the
//! kit's own tests only (`harness/tests/negative_controls.rs`): `VXREF_VARIANT` names
//! one, and the recovery suite must pass it as it passes the reference. No shipped
//! profile sets it; unset (or an unknown name), `vxref` is the reference.
//!
//! - `tick-at-activation`: the periodic checkpoint timer fires as soon as the first
//!   mutation activates the daemon, then every interval (RFC §3 forbids an automatic
//!   checkpoint only before that first mutation).

use std::sync::OnceLock;

/// The variable that names the variant.
pub const ENV: &str = "VXREF_VARIANT";

/// Whether the periodic tick fires at activation (read once).
pub fn tick_at_activation() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var(ENV).is_ok_and(|v| v == "tick-at-activation"))
}
