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
    /// The key whose declared value this one takes when the profile declares only
    /// that one (a code split in two: a profile written before the split keeps its
    /// verdicts).
    pub follows: Option<&'static str>,
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
        follows: None,
    }
}

/// The length caps: a positive integer, or "none" for an implementation with no cap.
pub const CAPS: [&str; 3] = ["key_max_bytes", "engine_max_bytes", "ses_id_max_bytes"];
/// The value of a cap key that says the implementation has no cap.
pub const NO_CAP: &str = "none";

pub const PHYSICAL_KEY: &str = "sw-pin-physical-key";
pub const LENGTH_CAPS: &str = "sw-pin-length-caps";
pub const REFUSAL_STYLE: &str = "sw-pin-refusal-style";
pub const ERROR_CODES: &str = "sw-pin-error-codes";
pub const CLOSE_CODES: &str = "sw-pin-close-codes";
pub const OWNER_SHAPE: &str = "sw-pin-owner-shape";
pub const SEQ_AFTER_DELTA: &str = "sw-pin-seq-after-delta";
/// The key of [`SEQ_AFTER_DELTA`]: whether a `seq` frame follows a delta.
pub const SEQ_AFTER_DELTA_KEY: &str = "seq_after_delta";

/// Every key `[single_writer.pins]` may hold.
pub const KEYS: &[PinKey] = &[
    p("physical_key", PHYSICAL_KEY, "\"{engine}@{id}\"", "the physical key of {engine}:{id}: what the key checker prints and the session list shows, and the {physical} of lock_path and session_socket, which may spell their own names"),
    p("key_max_bytes", LENGTH_CAPS, "96", "the longest session key accepted, in bytes, or \"none\" (no cap: long valid keys must be accepted)"),
    p("engine_max_bytes", LENGTH_CAPS, "32", "the longest engine name accepted, in bytes, or \"none\" (no cap: a longer name is judged as any other engine name)"),
    p("ses_id_max_bytes", LENGTH_CAPS, "64", "the longest opencode id tail after ses_, in bytes, or \"none\" (no cap: long valid ids must be accepted)"),
    p("refusal_style", REFUSAL_STYLE, "\"http\"", "how a malformed terminal request is refused: \"http\" (a 4xx status before the WebSocket upgrade) or \"close\" (a 4000-4999 close code after it)"),
    p("close_refused", CLOSE_CODES, "4500", "the close code of a refusal after the upgrade other than BUSY (a lock that cannot be taken, no socket at the socket path)"),
    p("close_launch_failed", CLOSE_CODES, "4502", "the close code of a launch refused before anything was spawned (a cwd that does not exist, an orphan socket that cannot be unlinked)"),
    PinKey {
        follows: Some("close_launch_failed"),
        ..p("close_spawn_failed", CLOSE_CODES, "4502", "the close code of a launch whose spawn failed (the engine's program does not exist); absent: close_launch_failed's value")
    },
    p("close_exited", CLOSE_CODES, "1000", "the close code a viewer gets when the agent exited"),
    p(SEQ_AFTER_DELTA_KEY, SEQ_AFTER_DELTA, "false", "whether a seq frame follows the missed bytes of a delta reconnect (true or false; any seq frame carries the viewer's offset where it arrives)"),
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
        if CAPS.contains(&k.as_str()) {
            // A cap is a positive integer or "none"; nothing else reads as either.
            let ok = v.as_integer().is_some_and(|n| n > 0) || v.as_str() == Some(NO_CAP);
            if !ok {
                return Err(format!(
                    "[single_writer.pins] {k} = {v}: expected a positive integer or \"{NO_CAP}\" (no cap)"
                ));
            }
            continue;
        }
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
            // Either answer is a broker's choice; the type check above made it a bool.
            SEQ_AFTER_DELTA_KEY => false,
            "physical_key" => v
                .as_str()
                .is_none_or(|t| !t.contains("{engine}") || !t.contains("{id}") || t.contains('/')),
            // BUSY's code is the seed's, for a lock that would block only.
            "close_refused" | "close_launch_failed" | "close_spawn_failed" | "close_exited" => v
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

/// The implementation's own value of a pin, when the profile declares it (or
/// declares the key it follows).
pub fn declared(key: &str) -> Option<toml::Value> {
    declared_in(&context().profile, key)
}

fn declared_in(profile: &Profile, key: &str) -> Option<toml::Value> {
    let e = entry(key);
    let pins = &profile.claim(Contract::SingleWriter).pins;
    pins.get(key)
        .or_else(|| e.follows.and_then(|f| pins.get(f)))
        .cloned()
}

/// A length cap the rows go by: `Some(bytes)`, or `None` when the profile says the
/// implementation has no cap (`"none"`).
pub fn cap(key: &str) -> Option<i64> {
    if !CAPS.contains(&key) {
        crate::harness_error!("{key} is not a length cap");
    }
    match declared(key) {
        Some(v) if v.as_str() == Some(NO_CAP) => None,
        Some(v) => v.as_integer().or_else(|| Some(kit_int(key))),
        None => Some(kit_int(key)),
    }
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

/// The value a string pin's rows go by: the declared one, else the kit's.
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
            // Each key by its own name: a key that follows another is a choice of
            // its own, which the clause must say it opens.
            let named = c.why.as_deref().is_some_and(|w| w.contains(k.key));
            assert!(
                named,
                "clause {} does not name its profile key {}",
                c.id, k.key
            );
        }
    }

    fn profile(pins: &str) -> Result<Profile, String> {
        let text = format!(
            "name = \"x\"\ncontracts = [\"single-writer\"]\n[single_writer]\nparts = [\"broker\"]\n\
             broker = [\"b\"]\n[single_writer.pins]\n{pins}\n"
        );
        let p = Profile::parse(&text, std::path::Path::new("p.toml"))?;
        check(&p)?;
        Ok(p)
    }

    /// Every length cap takes a positive integer or "none"; any other value is a
    /// profile error naming the key and the value.
    #[test]
    fn a_cap_is_a_positive_integer_or_none() {
        for k in CAPS {
            profile(&format!("{k} = 200")).unwrap();
            profile(&format!("{k} = \"none\"")).unwrap();
            for bad in ["0", "-3", "\"unlimited\"", "1.5", "true"] {
                let e = profile(&format!("{k} = {bad}")).unwrap_err();
                assert!(e.contains(k) && e.contains(bad), "{e}");
            }
        }
    }

    /// close_spawn_failed takes close_launch_failed's declared value unless the
    /// profile declares its own; it is refused as BUSY's code like the others.
    #[test]
    fn the_spawn_code_follows_the_launch_code_unless_declared() {
        let p = profile("close_launch_failed = 4503").unwrap();
        assert_eq!(
            declared_in(&p, "close_spawn_failed").and_then(|v| v.as_integer()),
            Some(4503)
        );
        let p = profile("close_launch_failed = 4503\nclose_spawn_failed = 4504").unwrap();
        assert_eq!(
            declared_in(&p, "close_spawn_failed").and_then(|v| v.as_integer()),
            Some(4504)
        );
        assert_eq!(
            declared_in(&p, "close_launch_failed").and_then(|v| v.as_integer()),
            Some(4503)
        );
        let p = profile("").unwrap();
        assert!(declared_in(&p, "close_spawn_failed").is_none());
        assert_eq!(
            kit_int("close_spawn_failed"),
            kit_int("close_launch_failed")
        );
        let e = profile("close_spawn_failed = 4409").unwrap_err();
        assert!(e.contains("close_spawn_failed"), "{e}");
    }
}
