//! Minting immutable refs: `<node>/<ulid>` and `<node>/pause/<ulid>`. A ULID is 48
//! bits of milliseconds and 80 random bits (from vx-store's getrandom-backed uuid),
//! Crockford base-32.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::store::StateRef;

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

fn new_ulid() -> Option<String> {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()?
        .as_millis();
    let uuid = vx_store::names::new_uuid_v4().ok()?;
    let hex: String = uuid.chars().filter(|c| *c != '-').collect();
    let random = u128::from_str_radix(&hex, 16).ok()? & ((1u128 << 80) - 1);
    let value = ((ms & ((1u128 << 48) - 1)) << 80) | random;
    Some(
        (0..26)
            .rev()
            .map(|i| CROCKFORD[((value >> (i * 5)) & 31) as usize] as char)
            .collect(),
    )
}

/// A fresh ref for `node`; `None` only when no randomness is available (the
/// caller treats it as a failed put).
pub fn mint(node: &str, pause: bool) -> Option<StateRef> {
    let ulid = new_ulid()?;
    let text = match pause {
        true => format!("{node}/pause/{ulid}"),
        false => format!("{node}/{ulid}"),
    };
    StateRef::parse(&text).ok()
}
