//! The alias sidecar `<runtime>/aliases.json`: `{"version":1,"aliases":{placeholder:
//! real}}` in physical names, read strictly and written canonically
//! (docs/spec/single-writer.md "Aliases").
//!
//! Check order, first failure wins: strict JSON; an object; `version` present and an
//! integer; `version` is 1; no other key than `version` and `aliases`; `aliases` present
//! and an object; every entry `<engine>@new-<uuid>` to a real id of the same engine;
//! no real id named twice. A later version may shape `aliases` differently, so its
//! verdict is the version, whatever follows.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use vx_format::json::Kind;

use crate::error::{BrokerError, Result, Rule};
use crate::key::SessionKey;
use crate::limits::SIDECAR_VERSION;
use crate::small_file::object_cursor;

/// Placeholder key → real key, both checked; the inverse is unique.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AliasMap {
    forward: BTreeMap<SessionKey, SessionKey>,
}

impl AliasMap {
    pub fn new() -> Self {
        AliasMap::default()
    }

    pub fn len(&self) -> usize {
        self.forward.len()
    }

    pub fn is_empty(&self) -> bool {
        self.forward.is_empty()
    }

    /// Records `placeholder → real`. Refused when the first is not a placeholder, the
    /// second is one, they belong to different engines, or `real` already has another
    /// placeholder.
    pub fn insert(&mut self, placeholder: SessionKey, real: SessionKey) -> Result<()> {
        if !placeholder.is_placeholder() {
            return Err(Rule::AliasPlaceholderSyntax.into());
        }
        if real.is_placeholder() {
            return Err(Rule::AliasTargetSyntax.into());
        }
        if placeholder.engine() != real.engine() {
            return Err(Rule::AliasEngineMismatch.into());
        }
        if self
            .placeholder_of(&real)
            .is_some_and(|p| p != &placeholder)
        {
            return Err(Rule::AliasTargetDuplicate.into());
        }
        self.forward.insert(placeholder, real);
        Ok(())
    }

    /// The real key a placeholder was reconciled to.
    pub fn real_of(&self, placeholder: &SessionKey) -> Option<&SessionKey> {
        self.forward.get(placeholder)
    }

    /// The placeholder whose resources a real key lives under (the lookup every
    /// attach by real id does first).
    pub fn placeholder_of(&self, real: &SessionKey) -> Option<&SessionKey> {
        self.forward
            .iter()
            .find(|(_, r)| *r == real)
            .map(|(p, _)| p)
    }

    /// The physical key an attach of `key` resolves to.
    pub fn physical_key<'a>(&'a self, key: &'a SessionKey) -> &'a SessionKey {
        self.placeholder_of(key).unwrap_or(key)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&SessionKey, &SessionKey)> {
        self.forward.iter()
    }
}

/// One `aliases` member as written; a `None` value is not a string, judged only once
/// the version is known.
type RawEntry<'a> = (Cow<'a, str>, Option<Cow<'a, str>>);

/// Reads an alias sidecar.
pub fn decode(bytes: &[u8]) -> Result<AliasMap> {
    let mut c = object_cursor(bytes)?;
    let mut version = None;
    let mut unknown = false;
    let mut entries: Option<Result<Vec<RawEntry<'_>>>> = None;
    while let Some(key) = c.next_key() {
        match &*key {
            "version" => {
                version = Some(match c.kind() {
                    Kind::Number => c.number().integer(),
                    _ => {
                        c.skip();
                        None
                    }
                })
            }
            "aliases" if c.kind() == Kind::Object => {
                c.enter();
                let mut list = Vec::new();
                while let Some(k) = c.next_key() {
                    let v = (c.kind() == Kind::String).then(|| c.string());
                    if v.is_none() {
                        c.skip();
                    }
                    list.push((k, v));
                }
                entries = Some(Ok(list));
            }
            "aliases" => {
                c.skip();
                entries = Some(Err(Rule::FieldType.into()));
            }
            _ => {
                c.skip();
                unknown = true;
            }
        }
    }
    match version {
        None => return Err(Rule::MissingField.into()),
        Some(None) => return Err(Rule::FieldType.into()),
        Some(Some(SIDECAR_VERSION)) => {}
        Some(Some(_)) => return Err(Rule::VersionUnsupported.into()),
    }
    if unknown {
        return Err(Rule::UnknownField.into());
    }
    let entries = entries.ok_or(BrokerError::new(Rule::MissingField))??;
    let mut map = AliasMap::new();
    let mut reals = BTreeSet::new();
    for (k, v) in entries {
        let v = v.ok_or(BrokerError::new(Rule::FieldType))?;
        let placeholder = SessionKey::from_physical(&k)
            .filter(SessionKey::is_placeholder)
            .ok_or(BrokerError::new(Rule::AliasPlaceholderSyntax))?;
        let real = SessionKey::from_physical(&v)
            .filter(|r| !r.is_placeholder())
            .ok_or(BrokerError::new(Rule::AliasTargetSyntax))?;
        if !reals.insert(real.clone()) {
            return Err(Rule::AliasTargetDuplicate.into());
        }
        map.insert(placeholder, real)?;
    }
    Ok(map)
}

/// The canonical encoding: keys sorted, compact, one trailing newline. Physical
/// names hold no character JSON would escape.
pub fn encode(map: &AliasMap) -> Vec<u8> {
    let mut out = String::from("{\"version\":1,\"aliases\":{");
    for (i, (p, r)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(&p.physical());
        out.push_str("\":\"");
        out.push_str(&r.physical());
        out.push('"');
    }
    out.push_str("}}\n");
    out.into_bytes()
}

/// Publishes `map` as `<runtime>/aliases.json` (atomic replace).
pub fn publish(runtime: &std::path::Path, map: &AliasMap) -> Result<()> {
    crate::small_file::publish(runtime, crate::small_file::ALIAS_FILE_NAME, &encode(map))
}

/// Reads `<runtime>/aliases.json`; an absent file is an empty map.
pub fn load(runtime: &std::path::Path) -> Result<AliasMap> {
    let path = runtime.join(crate::small_file::ALIAS_FILE_NAME);
    // Only a missing name is "no aliases": a dangling symlink or an unreadable
    // file is refused by the bounded read, never taken as empty.
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(AliasMap::new()),
        _ => decode(&crate::small_file::read_capped(&path)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "opencode@new-6a73c0de-1234-4abc-8def-0123456789ab";
    const Q: &str = "opencode@new-00000000-1234-4abc-8def-0123456789ab";

    fn rule(text: &str) -> &'static str {
        decode(text.as_bytes()).unwrap_err().rule.id()
    }

    #[test]
    fn reads_writes_and_resolves() {
        let text = format!("{{\"version\":1,\"aliases\":{{\"{P}\":\"opencode@ses_Ab1\"}}}}\n");
        let map = decode(text.as_bytes()).unwrap();
        assert_eq!(encode(&map), text.as_bytes());
        let real = SessionKey::from_physical("opencode@ses_Ab1").unwrap();
        assert_eq!(map.physical_key(&real).physical(), P);
        assert_eq!(decode(b"{\"aliases\":{},\"version\":1}").unwrap().len(), 0);
    }

    #[test]
    fn refusals() {
        assert_eq!(rule("[]"), "schema.not_object");
        assert_eq!(rule("{\"aliases\":{}}"), "schema.missing_field");
        assert_eq!(rule("{\"version\":\"1\",\"aliases\":{}}"), "schema.type");
        assert_eq!(rule("{\"version\":1.0,\"aliases\":{}}"), "schema.type");
        assert_eq!(
            rule("{\"version\":2,\"aliases\":[],\"x\":0}"),
            "alias.version_unsupported"
        );
        assert_eq!(
            rule("{\"version\":1,\"aliases\":{},\"x\":0}"),
            "schema.unknown_field"
        );
        assert_eq!(rule("{\"version\":1}"), "schema.missing_field");
        assert_eq!(rule("{\"version\":1,\"aliases\":[]}"), "schema.type");
        assert_eq!(
            rule(&format!("{{\"version\":1,\"aliases\":{{\"{P}\":1}}}}")),
            "schema.type"
        );
        assert_eq!(
            rule("{\"version\":1,\"aliases\":{\"opencode@ses_a\":\"opencode@ses_b\"}}"),
            "alias.placeholder_syntax"
        );
        assert_eq!(
            rule(&format!(
                "{{\"version\":1,\"aliases\":{{\"{P}\":\"{Q}\"}}}}"
            )),
            "alias.target_syntax"
        );
        assert_eq!(
            rule(&format!(
                "{{\"version\":1,\"aliases\":{{\"{P}\":\"claude@ses_b\"}}}}"
            )),
            "alias.engine_mismatch"
        );
        assert_eq!(
            rule(&format!("{{\"version\":1,\"aliases\":{{\"{P}\":\"opencode@ses_b\",\"{Q}\":\"opencode@ses_b\"}}}}")),
            "alias.target_duplicate"
        );
        assert_eq!(
            rule(&format!(
                "{{\"version\":1,\"aliases\":{{\"{P}\":\"a\",\"{P}\":\"b\"}}}}"
            )),
            "json.duplicate_key"
        );
    }
}
