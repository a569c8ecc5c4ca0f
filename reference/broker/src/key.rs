//! Session keys (pure): `{engine}:{native_id}`, the one identity every socket, lock,
//! ring and metadata name derives from (docs/spec/single-writer.md "Identity").
//!
//! The physical name `<engine>@<native_id>` is what goes on disk. Neither part can
//! hold `@`, `:` or `/`, so the mapping is injective and every name stays one path
//! component; the peer's `[^A-Za-z0-9_.-] -> _` squashing is not (`a_b:c` and `a:b_c`
//! share one lock there).

use std::collections::BTreeMap;
use std::fmt;

use crate::error::{BrokerError, Result, Rule};
use crate::limits::{MAX_ENGINE_BYTES, MAX_KEY_BYTES, MAX_SES_TAIL_BYTES, UUID_BYTES};

/// The grammar of an engine's native ids (`id = "uuid"|"ses"` in E.toml).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdKind {
    /// Canonical lower-case UUID, 8-4-4-4-12 hex.
    Uuid,
    /// `ses_[A-Za-z0-9]{1,64}`.
    Ses,
}

/// Whether the engine accepts an id minted before launch (`pin = "flag"`) or mints
/// its own (`pin = "none"`, launched under a placeholder and aliased later).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pin {
    Flag,
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EngineSpec {
    pub id: IdKind,
    pub pin: Pin,
}

/// The engines a broker runs, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineTable(BTreeMap<String, EngineSpec>);

impl EngineTable {
    pub fn new() -> Self {
        EngineTable::default()
    }

    /// The seed's three engines: `claude` and `gemini` pin uuids, `opencode` mints
    /// `ses_` ids. The offline checker's default when no table is given.
    pub fn seed() -> Self {
        let mut t = EngineTable::new();
        let pinned = EngineSpec {
            id: IdKind::Uuid,
            pin: Pin::Flag,
        };
        t.insert("claude", pinned);
        t.insert("gemini", pinned);
        t.insert(
            "opencode",
            EngineSpec {
                id: IdKind::Ses,
                pin: Pin::None,
            },
        );
        if crate::variant::keys() {
            t.insert(crate::variant::OWN_ENGINE, pinned);
        }
        t
    }

    /// Adds or replaces an engine; false (and no change) when the name is not an
    /// engine name.
    pub fn insert(&mut self, name: &str, spec: EngineSpec) -> bool {
        if !is_engine(name) {
            return false;
        }
        self.0.insert(name.to_owned(), spec);
        true
    }

    pub fn get(&self, name: &str) -> Option<EngineSpec> {
        self.0.get(name).copied()
    }

    /// The engines' names, in order (the fuzz dictionary is made from them).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

/// Whether an id is the engine's own or a launch placeholder `new-<uuid>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdClass {
    Real(IdKind),
    Placeholder,
}

/// A checked session key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionKey {
    /// `engine:id`; `sep` is the index of the `:`.
    text: String,
    sep: usize,
}

impl SessionKey {
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn engine(&self) -> &str {
        &self.text[..self.sep]
    }

    pub fn native_id(&self) -> &str {
        &self.text[self.sep + 1..]
    }

    pub fn is_placeholder(&self) -> bool {
        self.native_id().starts_with(PLACEHOLDER_PREFIX)
    }

    /// `<engine>@<native_id>`: the name of the socket, lock file, ring and metadata.
    pub fn physical(&self) -> String {
        format!("{}@{}", self.engine(), self.native_id())
    }

    /// The lock file's name without `.lock`: the physical key, or under the keys
    /// variant (`crate::variant::keys`) `<engine>_<native_id>`.
    pub fn lock_stem(&self) -> String {
        if crate::variant::keys() {
            format!("{}_{}", self.engine(), self.native_id())
        } else {
            self.physical()
        }
    }

    /// The master socket's name without `.sock`: the physical key, or under the keys
    /// variant `<engine>-<native_id>`.
    pub fn socket_stem(&self) -> String {
        if crate::variant::keys() {
            format!("{}-{}", self.engine(), self.native_id())
        } else {
            self.physical()
        }
    }

    /// The key a socket's name (without `.sock`) was derived from, if it is one.
    pub fn from_socket_stem(stem: &str) -> Option<SessionKey> {
        if !crate::variant::keys() {
            return SessionKey::from_physical(stem);
        }
        // The variant's engines have no '-', so the first one ends the engine.
        let (engine, id) = stem.split_once('-')?;
        SessionKey::from_physical(&format!("{engine}@{id}"))
    }

    /// The key a physical name was derived from, if it is one (grammar only: no
    /// engine table, placeholders allowed).
    pub fn from_physical(name: &str) -> Option<SessionKey> {
        let sep = name.find('@')?;
        let (engine, id) = (&name[..sep], &name[sep + 1..]);
        if name.len() > MAX_KEY_BYTES || !is_engine(engine) || id_class(id).is_none() {
            return None;
        }
        Some(SessionKey {
            text: format!("{engine}:{id}"),
            sep,
        })
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

pub const PLACEHOLDER_PREFIX: &str = "new-";

/// Checks a key against the engines the broker runs. `new` is the request's `new=1`:
/// the only context in which a placeholder id is a key at all.
///
/// Rules in order, first failure wins: length, separator, engine grammar, engine
/// known, placeholder allowed, id grammar.
pub fn parse_key(key: &str, engines: &EngineTable, new: bool) -> Result<SessionKey> {
    if key.len() > MAX_KEY_BYTES && !crate::variant::keys() {
        return Err(Rule::KeyTooLong.into());
    }
    let sep = key
        .find(':')
        .ok_or(BrokerError::new(Rule::KeyNoSeparator))?;
    let (engine, id) = (&key[..sep], &key[sep + 1..]);
    if !is_engine(engine) {
        return Err(Rule::KeyEngineSyntax.into());
    }
    let spec = engines
        .get(engine)
        .ok_or(BrokerError::new(Rule::KeyEngineUnknown))?;
    let refused = match id_class(id) {
        Some(IdClass::Placeholder) if spec.pin == Pin::Flag => Some(Rule::KeyPlaceholderPinned),
        Some(IdClass::Placeholder) if !new => Some(Rule::KeyPlaceholderNotNew),
        Some(IdClass::Placeholder) => None,
        Some(IdClass::Real(kind)) if kind == spec.id => None,
        _ => Some(Rule::KeyIdSyntax),
    };
    if let Some(rule) = refused {
        return Err(rule.into());
    }
    Ok(SessionKey {
        text: key.to_owned(),
        sep,
    })
}

/// `[a-z][a-z0-9_-]{0,31}` (no length cap under the keys variant).
pub fn is_engine(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b.first(), Some(b'a'..=b'z'))
        && (b.len() <= MAX_ENGINE_BYTES || crate::variant::keys())
        && b[1..]
            .iter()
            .all(|c| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

/// Canonical lower-case UUID text.
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == UUID_BYTES
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => matches!(c, b'0'..=b'9' | b'a'..=b'f'),
        })
}

/// `ses_[A-Za-z0-9]{1,64}`.
pub fn is_ses(s: &str) -> bool {
    let cap = if crate::variant::keys() {
        usize::MAX
    } else {
        MAX_SES_TAIL_BYTES
    };
    s.strip_prefix("ses_").is_some_and(|tail| {
        (1..=cap).contains(&tail.len()) && tail.bytes().all(|c| c.is_ascii_alphanumeric())
    })
}

/// Which grammar an id matches, if any.
pub fn id_class(id: &str) -> Option<IdClass> {
    if let Some(uuid) = id.strip_prefix(PLACEHOLDER_PREFIX) {
        return is_uuid(uuid).then_some(IdClass::Placeholder);
    }
    if is_uuid(id) {
        Some(IdClass::Real(IdKind::Uuid))
    } else if is_ses(id) {
        Some(IdClass::Real(IdKind::Ses))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: &str = "6a73c0de-1234-4abc-8def-0123456789ab";

    fn rule(key: &str, new: bool) -> Option<&'static str> {
        parse_key(key, &EngineTable::seed(), new)
            .err()
            .map(|e| e.rule.id())
    }

    #[test]
    fn valid_keys_and_physical_names() {
        let k = parse_key(&format!("claude:{U}"), &EngineTable::seed(), false).unwrap();
        assert_eq!(k.physical(), format!("claude@{U}"));
        let k = parse_key("opencode:ses_AbC9", &EngineTable::seed(), false).unwrap();
        assert_eq!(k.physical(), "opencode@ses_AbC9");
        let k = parse_key(&format!("opencode:new-{U}"), &EngineTable::seed(), true).unwrap();
        assert!(k.is_placeholder());
    }

    #[test]
    fn refusals_name_their_rule() {
        assert_eq!(rule("claude", false), Some("key.no_separator"));
        assert_eq!(rule("Claude:x", false), Some("key.engine_syntax"));
        assert_eq!(rule(":x", false), Some("key.engine_syntax"));
        assert_eq!(
            rule(&format!("codex:{U}"), false),
            Some("key.engine_unknown")
        );
        assert_eq!(rule("claude:6a73-bad/../x", false), Some("key.id_syntax"));
        assert_eq!(
            rule(&format!("claude:{}", U.to_uppercase()), false),
            Some("key.id_syntax")
        );
        assert_eq!(rule("opencode:ses_", false), Some("key.id_syntax"));
        assert_eq!(
            rule(&format!("opencode:ses_{}", "a".repeat(65)), false),
            Some("key.id_syntax")
        );
        assert_eq!(
            rule(&format!("opencode:ses_{}", "a".repeat(84)), false),
            Some("key.too_long")
        );
        assert_eq!(
            rule(&format!("opencode:new-{U}"), false),
            Some("key.placeholder_not_new")
        );
        assert_eq!(
            rule(&format!("claude:new-{U}"), true),
            Some("key.placeholder_pinned")
        );
        assert_eq!(rule(&format!("claude:{U}:x"), false), Some("key.id_syntax"));
        assert_eq!(
            parse_key(&format!("codex:{U}"), &EngineTable::seed(), false)
                .unwrap_err()
                .code
                .as_str(),
            "not_found.engine"
        );
    }

    #[test]
    fn peer_collisions_are_refused_or_distinct() {
        let mut t = EngineTable::seed();
        let ses = EngineSpec {
            id: IdKind::Ses,
            pin: Pin::None,
        };
        assert!(t.insert("a_b", ses));
        assert!(t.insert("a", ses));
        // `a:b_c` has no valid id; `a_b:c` neither: refused, never squashed together.
        assert!(parse_key("a_b:c", &t, false).is_err());
        assert!(parse_key("a:b_c", &t, false).is_err());
        let x = parse_key("a_b:ses_c", &t, false).unwrap().physical();
        let y = parse_key("a:ses_b", &t, false).unwrap().physical();
        assert_ne!(x, y);
    }

    #[test]
    fn the_length_bound_is_96_bytes() {
        let mut t = EngineTable::seed();
        let engine = "e".repeat(28);
        assert!(t.insert(
            &engine,
            EngineSpec {
                id: IdKind::Ses,
                pin: Pin::None
            }
        ));
        let at = |n: usize| format!("{engine}:ses_{}", "a".repeat(n));
        assert_eq!(at(63).len(), 96);
        assert!(parse_key(&at(63), &t, false).is_ok());
        assert_eq!(
            parse_key(&at(64), &t, false).unwrap_err().rule,
            Rule::KeyTooLong
        );
    }

    #[test]
    fn physical_names_round_trip() {
        let k = parse_key(&format!("opencode:new-{U}"), &EngineTable::seed(), true).unwrap();
        assert_eq!(SessionKey::from_physical(&k.physical()), Some(k));
        assert_eq!(SessionKey::from_physical("opencode:ses_a"), None);
        assert_eq!(SessionKey::from_physical("a@b@ses_a"), None);
    }
}
