//! Pane metadata: a small key → text map per pane. Two keys are special (ADR-0068
//! §1, §6): `agent-session/v1` holds only a valid resume record, whichever path
//! writes it, and `session.created/v1/*` belongs to the server (clients are refused,
//! unless the daemon plays an older server with `--legacy-spawn`). `agent/v1` is an
//! ordinary key: writing it never touches the record.

use super::limits::{MAX_META_KEYS, MAX_META_KEY_BYTES, MAX_META_VALUE_BYTES};
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::PaneId;
use std::collections::{BTreeMap, HashMap};

/// The resume record's key.
pub const AGENT_SESSION_KEY: &str = "agent-session/v1";
/// The server's one-shot session-creation results.
pub const RESERVED_PREFIX: &str = "session.created/v1/";

/// Who writes: a client through `meta.*`, or the daemon itself.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    Client { legacy: bool },
    Server,
}

/// `[A-Za-z0-9._/-]`, 1–255 bytes, not starting with `/`.
pub fn valid_key(key: &str) -> bool {
    (1..=MAX_META_KEY_BYTES).contains(&key.len())
        && !key.starts_with('/')
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-'))
}

/// Checks a record's bytes; the error names the rule and the field, never a value.
pub fn check_record(bytes: &[u8]) -> ApiResult<vx_agentsession::record::Record> {
    let parsed = vx_agentsession::record::parse(bytes);
    // A negative control's defective id rules (crate::negative), never by default.
    match &parsed {
        Err(e) => {
            if let Some(record) = crate::negative::lenient_record(bytes, e.rule_id()) {
                return Ok(record);
            }
        }
        Ok(record) => {
            if let Some((rule, field)) = crate::negative::record_too_strict(record) {
                return Err(
                    ApiError::param("agent_session", "agent-session record refused")
                        .with("rule", rule)
                        .with("field", field),
                );
            }
        }
    }
    parsed.map_err(|e| {
        let mut err = ApiError::param("agent_session", "agent-session record refused")
            .with("rule", e.rule_id());
        if let Some(field) = e.field() {
            err = err.with("field", field);
        }
        err
    })
}

fn key_param() -> ApiError {
    ApiError::param("key", "metadata key is not valid")
}

/// Checks a key a client names, for reading or writing.
pub fn check_key(key: &str) -> ApiResult<()> {
    if valid_key(key) {
        Ok(())
    } else {
        Err(key_param())
    }
}

/// The key's rules for a write by `writer` (the reserved namespace included).
pub fn check_write(writer: Writer, key: &str) -> ApiResult<()> {
    check_key(key)?;
    if key.starts_with(RESERVED_PREFIX) && writer == (Writer::Client { legacy: false }) {
        return Err(ApiError::code(ErrorCode::ReservedKey));
    }
    Ok(())
}

#[derive(Default)]
pub struct Metadata {
    panes: HashMap<PaneId, BTreeMap<String, String>>,
}

impl Metadata {
    pub fn get(&self, pane: PaneId, key: &str) -> Option<&str> {
        self.panes.get(&pane)?.get(key).map(String::as_str)
    }

    /// Sets one value after the key's and the value's rules.
    pub fn set(&mut self, writer: Writer, pane: PaneId, key: &str, value: &str) -> ApiResult<()> {
        check_write(writer, key)?;
        if key == AGENT_SESSION_KEY {
            check_record(value.as_bytes())?;
        } else if value.len() > MAX_META_VALUE_BYTES {
            return Err(ApiError::param("value", "metadata value too long"));
        }
        let map = self.panes.entry(pane).or_default();
        if !map.contains_key(key) && map.len() >= MAX_META_KEYS {
            return Err(ApiError::code(ErrorCode::MetaKeyLimit));
        }
        map.insert(key.to_string(), value.to_string());
        Ok(())
    }

    pub fn delete(&mut self, writer: Writer, pane: PaneId, key: &str) -> ApiResult<()> {
        check_write(writer, key)?;
        if let Some(map) = self.panes.get_mut(&pane) {
            map.remove(key);
            if map.is_empty() {
                self.panes.remove(&pane);
            }
        }
        Ok(())
    }

    /// Installs a checked record on a pane the same turn creates (no key limit can
    /// apply: the pane has no metadata yet).
    pub fn install_record(&mut self, pane: PaneId, encoded: String) {
        self.panes
            .entry(pane)
            .or_default()
            .insert(AGENT_SESSION_KEY.to_string(), encoded);
    }

    /// A removed pane's metadata goes with it.
    pub fn remove_pane(&mut self, pane: PaneId) {
        self.panes.remove(&pane);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane() -> PaneId {
        PaneId::parse("p1").unwrap()
    }

    const RECORD: &str = r#"{"plugin_id":"p","integration_id":"i","native_id":"n"}"#;

    #[test]
    fn the_record_key_takes_only_records_and_agent_v1_is_separate() {
        let mut m = Metadata::default();
        let client = Writer::Client { legacy: false };
        m.set(client, pane(), AGENT_SESSION_KEY, RECORD).unwrap();
        let bad = r#"{"plugin_id":"p","integration_id":"i","native_id":"n","argv":["x"]}"#;
        let e = m.set(client, pane(), AGENT_SESSION_KEY, bad).unwrap_err();
        assert_eq!(e.code, ErrorCode::Param("agent_session"));
        m.set(client, pane(), "agent/v1", "{}").unwrap();
        assert_eq!(m.get(pane(), AGENT_SESSION_KEY), Some(RECORD));
    }

    #[test]
    fn the_reserved_namespace_is_the_servers_unless_legacy() {
        let mut m = Metadata::default();
        let key = "session.created/v1/abc";
        let e = m
            .set(Writer::Client { legacy: false }, pane(), key, "x")
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::ReservedKey);
        m.set(Writer::Client { legacy: true }, pane(), key, "x")
            .unwrap();
        m.set(Writer::Server, pane(), key, "y").unwrap();
        assert!(!valid_key("/x") && !valid_key("") && !valid_key("a b"));
    }
}
