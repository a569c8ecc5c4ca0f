//! Strict JSON reading for wire frames (pins.md "JSON reading").
//!
//! The project's one strict scanner, `vx_format::json`, checks the text first
//! (UTF-8 without BOM, no lone surrogate escapes, no duplicate keys at any depth, safe
//! integers, depth at most 32 counted while scanning, nothing after the value); only
//! then does serde_json build the value. Frames add one rule of their own: every
//! number is an integer, since no verb takes a fraction.

use serde_json::Value;
use std::fmt;
use vx_format::json::check_document;
use vx_format::{Doc, Rule};

/// The top-level value is depth 1; each nested object or array adds one.
pub const MAX_DEPTH: usize = vx_format::limits::MAX_JSON_DEPTH;

/// Why a document is not strict JSON. No variant carries input bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrictJsonError {
    Syntax,
    DuplicateKey,
    UnsafeInteger,
    NotInteger,
    TooDeep,
}

impl StrictJsonError {
    pub fn describe(self) -> &'static str {
        match self {
            StrictJsonError::Syntax => "not valid JSON",
            StrictJsonError::DuplicateKey => "duplicate object key",
            StrictJsonError::UnsafeInteger => "integer outside the safe range",
            StrictJsonError::NotInteger => "number is not an integer",
            StrictJsonError::TooDeep => "nesting deeper than 32",
        }
    }
}

impl fmt::Display for StrictJsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Parses `bytes` as one strict JSON document (trailing JSON whitespace allowed).
pub fn parse_strict(bytes: &[u8]) -> Result<Value, StrictJsonError> {
    check_document(bytes, Doc::Frame).map_err(|e| match e.rule {
        Rule::DuplicateKey => StrictJsonError::DuplicateKey,
        Rule::UnsafeInteger => StrictJsonError::UnsafeInteger,
        Rule::Depth => StrictJsonError::TooDeep,
        _ => StrictJsonError::Syntax,
    })?;
    let value: Value = serde_json::from_slice(bytes).map_err(|_| StrictJsonError::Syntax)?;
    if has_fraction(&value) {
        return Err(StrictJsonError::NotInteger);
    }
    Ok(value)
}

/// Depth is at most 32 here, so recursion is bounded.
fn has_fraction(value: &Value) -> bool {
    match value {
        Value::Number(n) => !(n.is_i64() || n.is_u64()),
        Value::Array(items) => items.iter().any(has_fraction),
        Value::Object(map) => map.values().any(has_fraction),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_documents() {
        let v = parse_strict(b"{\"a\":[1,-2,\"x\",true,null]}\n").unwrap();
        assert_eq!(v["a"][1], -2);
    }

    #[test]
    fn refuses_duplicate_keys_at_any_depth() {
        assert_eq!(
            parse_strict(br#"{"a":1,"a":2}"#),
            Err(StrictJsonError::DuplicateKey)
        );
        assert_eq!(
            parse_strict(br#"{"x":{"b":1,"b":1}}"#),
            Err(StrictJsonError::DuplicateKey)
        );
    }

    #[test]
    fn refuses_non_integers_and_unsafe_integers() {
        assert_eq!(parse_strict(b"1.0"), Err(StrictJsonError::NotInteger));
        assert_eq!(parse_strict(b"1e0"), Err(StrictJsonError::NotInteger));
        assert_eq!(
            parse_strict(b"9007199254740991"),
            Ok(Value::from(vx_format::limits::MAX_SAFE_INTEGER))
        );
        assert_eq!(
            parse_strict(b"9007199254740992"),
            Err(StrictJsonError::UnsafeInteger)
        );
        assert_eq!(
            parse_strict(b"-9007199254740992"),
            Err(StrictJsonError::UnsafeInteger)
        );
        // An integer token outside the safe range is unsafe (pins.md), however long.
        assert_eq!(
            parse_strict(b"123456789012345678901234567890"),
            Err(StrictJsonError::UnsafeInteger)
        );
        assert_eq!(
            parse_strict(b"[1,{\"a\":2.5}]"),
            Err(StrictJsonError::NotInteger)
        );
    }

    #[test]
    fn depth_limit_is_32() {
        let ok = format!("{}{}", "[".repeat(32), "]".repeat(32));
        assert!(parse_strict(ok.as_bytes()).is_ok());
        let deep = format!("{}{}", "[".repeat(33), "]".repeat(33));
        assert_eq!(parse_strict(deep.as_bytes()), Err(StrictJsonError::TooDeep));
        let very_deep = "[".repeat(100_000);
        assert_eq!(
            parse_strict(very_deep.as_bytes()),
            Err(StrictJsonError::TooDeep)
        );
    }

    #[test]
    fn refuses_bad_text() {
        assert_eq!(
            parse_strict(b"\xef\xbb\xbf{}"),
            Err(StrictJsonError::Syntax)
        );
        assert_eq!(parse_strict(b"\"\\ud800\""), Err(StrictJsonError::Syntax));
        assert_eq!(parse_strict(b"\"\xff\""), Err(StrictJsonError::Syntax));
        assert_eq!(parse_strict(b"{} {}"), Err(StrictJsonError::Syntax));
        assert_eq!(parse_strict(b""), Err(StrictJsonError::Syntax));
    }
}
