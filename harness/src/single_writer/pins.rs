//! The kit's pins of the single-writer contract: where the seed leaves a choice open
//! and the kit (with its reference) made one. A row that observes a pinned choice
//! records a deviation ([`crate::evidence::pin`], the scenario ends `non-strict`)
//! unless the profile's `[single_writer.pins]` declares the implementation's own
//! value for that key: then the row is judged strictly against that value.
//!
//! Each key belongs to one `level = "pin"` clause of features/single-writer/clauses.toml.

use crate::contract::Contract;
use crate::profile::{context, Profile};

/// One pin key: its clause, the kit's value (as TOML text) and what it means.
pub struct PinKey {
    pub key: &'static str,
    pub clause: &'static str,
    pub kit: &'static str,
    pub meaning: &'static str,
}

const fn p(
    key: &'static str,
    clause: &'static str,
    kit: &'static str,
    meaning: &'static str,
) -> PinKey {
    PinKey {
        key,
        clause,
        kit,
        meaning,
    }
}

pub const PHYSICAL_KEY: &str = "sw-pin-physical-key";
pub const LENGTH_CAPS: &str = "sw-pin-length-caps";
pub const REFUSAL_STYLE: &str = "sw-pin-refusal-style";
pub const ERROR_CODES: &str = "sw-pin-error-codes";
pub const CLOSE_CODES: &str = "sw-pin-close-codes";
pub const OWNER_SHAPE: &str = "sw-pin-owner-shape";

/// Every key `[single_writer.pins]` may hold.
pub const KEYS: &[PinKey] = &[
    p("physical_key", PHYSICAL_KEY, "\"{engine}@{id}\"", "the physical key (lock, socket and sidecar names) of {engine}:{id}"),
    p("key_max_bytes", LENGTH_CAPS, "96", "the longest session key accepted, in bytes"),
    p("engine_max_bytes", LENGTH_CAPS, "32", "the longest engine name accepted, in bytes"),
    p("ses_id_max_bytes", LENGTH_CAPS, "64", "the longest opencode id tail after ses_, in bytes"),
    p("refusal_style", REFUSAL_STYLE, "\"http\"", "how a malformed terminal request is refused: \"http\" (a 4xx status before the WebSocket upgrade) or \"close\" (a 4000-4999 close code after it)"),
    p("close_refused", CLOSE_CODES, "4500", "the close code of a refusal after the upgrade other than BUSY (a lock that cannot be taken, no socket at the socket path)"),
    p("close_launch_failed", CLOSE_CODES, "4502", "the close code of a launch that failed before the master served (bad cwd, missing program)"),
    p("close_exited", CLOSE_CODES, "1000", "the close code a viewer gets when the agent exited"),
    p("owner_shape", OWNER_SHAPE, "\"closed\"", "\"closed\": an owner file with members beyond fp, tab, label, since, heartbeat is refused; \"open\": such members are skipped"),
];

/// The key's entry; a key the kit does not know is the suite's own mistake.
fn entry(key: &str) -> &'static PinKey {
    KEYS.iter()
        .find(|k| k.key == key)
        .unwrap_or_else(|| crate::harness_error!("no single-writer pin named {key}"))
}

/// Checks the profile's `[single_writer.pins]`: known keys, values of the right type.
pub fn check(profile: &Profile) -> Result<(), String> {
    for (k, v) in &profile.claim(Contract::SingleWriter).pins {
        let Some(e) = KEYS.iter().find(|e| e.key == k) else {
            let known: Vec<&str> = KEYS.iter().map(|e| e.key).collect();
            return Err(format!(
                "[single_writer.pins] {k}: no such pin (the pins: {})",
                known.join(", ")
            ));
        };
        let kit: toml::Value = toml::from_str::<toml::Table>(&format!("v = {}", e.kit))
            .map_err(|e| e.to_string())?
            .remove("v")
            .ok_or("a pin's kit value")?;
        if std::mem::discriminant(&kit) != std::mem::discriminant(v) {
            return Err(format!(
                "[single_writer.pins] {k} = {v}: expected a value like the kit's {}",
                e.kit
            ));
        }
        let bad = match k.as_str() {
            "refusal_style" => !matches!(v.as_str(), Some("http" | "close")),
            "owner_shape" => !matches!(v.as_str(), Some("closed" | "open")),
            "physical_key" => v
                .as_str()
                .is_none_or(|t| !t.contains("{engine}") || !t.contains("{id}") || t.contains('/')),
            // BUSY's code is the seed's, for a lock that would block only.
            "close_refused" | "close_launch_failed" | "close_exited" => v
                .as_integer()
                .is_none_or(|n| n <= 0 || n == i64::from(BUSY)),
            _ => v.as_integer().is_none_or(|n| n <= 0),
        };
        if bad {
            return Err(format!("[single_writer.pins] {k} = {v}: {}", e.meaning));
        }
    }
    Ok(())
}

/// The implementation's own value of a pin, when the profile declares it.
pub fn declared(key: &str) -> Option<toml::Value> {
    entry(key);
    context()
        .profile
        .claim(Contract::SingleWriter)
        .pins
        .get(key)
        .cloned()
}

/// The kit's value of an integer pin.
pub fn kit_int(key: &str) -> i64 {
    entry(key)
        .kit
        .parse()
        .unwrap_or_else(|_| crate::harness_error!("pin {key} is not a number"))
}

/// The kit's value of a string pin.
pub fn kit_str(key: &str) -> &'static str {
    entry(key).kit.trim_matches('"')
}

/// The value rows go by: the declared one, else the kit's.
pub fn int(key: &str) -> i64 {
    declared(key)
        .and_then(|v| v.as_integer())
        .unwrap_or_else(|| kit_int(key))
}

pub fn string(key: &str) -> String {
    declared(key)
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| kit_str(key).to_string())
}

/// Judges one observed value of a pin: strictly against the declared value when
/// there is one (a mismatch fails under the pin's clause), else against the kit's (a
/// mismatch is a recorded deviation).
pub fn judge(key: &str, what: &str, kit: &str, own: Option<&str>, got: &str) {
    let clause = entry(key).clause;
    match own {
        Some(own) => crate::evidence::ensure(got == own, Some(clause), || {
            (
                format!("{what} {own} (the profile's [single_writer.pins] {key})"),
                format!("{what} {got}"),
            )
        }),
        None if got != kit => crate::evidence::pin(
            clause,
            format!("{what} {kit} (the kit's {key}; a profile may declare its own)"),
            format!("{what} {got}"),
        ),
        None => {}
    }
}

/// Judges an integer pin (a close code).
pub fn judge_int(key: &str, what: &str, got: Option<i64>) {
    let own = declared(key)
        .and_then(|v| v.as_integer())
        .map(|n| n.to_string());
    let got = got.map_or_else(|| "none".to_string(), |n| n.to_string());
    judge(key, what, &kit_int(key).to_string(), own.as_deref(), &got);
}

/// The seed's BUSY close code ("The ws path closes 4409"): a lock that would block.
pub const BUSY: u16 = 4409;

/// Judges how a viewer the broker refused was closed, against the close-code pin
/// `key`. A connection that ended without a close frame (a reset, an end of stream:
/// the broker crashed or dropped the request) is no code at all, so never a pin: it
/// fails the scenario's own requirement whatever the profile declares. So does the
/// seed's BUSY code for a refusal that is not BUSY (a lock that cannot be taken for
/// another reason is not "held by another instance").
pub fn judge_close(key: &str, viewer: &crate::drivers::broker_ws::Viewer) {
    if viewer.broken.is_some() {
        crate::evidence::fail(
            None,
            format!("a close frame with a refusal's code (the {key} code)"),
            viewer.ending(),
        );
    }
    let code = viewer.close_frame_code();
    crate::evidence::ensure(code != Some(BUSY), Some("sw-busy"), || {
        (
            format!("a refusal other than BUSY (the {key} code): nothing holds the lock"),
            format!("close code {BUSY}, BUSY, which says the lock would block"),
        )
    });
    judge_int(key, "close code", code.map(i64::from));
}

/// The physical key of `engine:id` under the profile's spelling (the kit's
/// `{engine}@{id}` unless `[single_writer.pins] physical_key` says otherwise).
pub fn physical_of(key: &str) -> String {
    let (engine, id) = key.split_once(':').unwrap_or((key, ""));
    string("physical_key")
        .replace("{engine}", engine)
        .replace("{id}", id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pin_key_names_a_pin_clause_of_the_registry() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../features/single-writer");
        let clauses = crate::run::clauses::load(
            &crate::run::clauses::registry_path(&dir),
            Contract::SingleWriter,
        )
        .unwrap();
        for k in KEYS {
            let c = clauses
                .iter()
                .find(|c| c.id == k.clause)
                .unwrap_or_else(|| panic!("pin {} names no clause {}", k.key, k.clause));
            assert_eq!(c.level, "pin", "{}", c.id);
            assert!(
                c.why.as_deref().is_some_and(|w| w.contains(k.key)),
                "clause {} does not name its profile key {}",
                c.id,
                k.key
            );
        }
    }
}
