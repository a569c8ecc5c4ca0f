//! Strict JSON reading for wire frames (pins.md "JSON reading").
//!
//! serde_json does the tokenizing; this visitor adds the rules it does not enforce:
//! duplicate keys are errors, numbers must be safe integers (no fraction, no
//! exponent, |n| <= 2^53-1), and nesting deeper than [`MAX_DEPTH`] is refused while
//! scanning, before the value is built. serde_json already refuses invalid UTF-8, lone
//! surrogate escapes and trailing data other than whitespace.
//!
//! Note for the lead: `vx_format::json` will be the project's one strict scanner; when
//! it exposes a value type, this module should delegate to it.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::fmt;

/// The top-level value is depth 1; each nested object or array adds one.
pub const MAX_DEPTH: usize = 32;
const MAX_SAFE: u64 = crate::ids::MAX_SAFE_INTEGER;

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

// Markers carried through serde_json's error message so the kind survives the round trip.
const TAG_DUP: &str = "\u{1}dup";
const TAG_UNSAFE: &str = "\u{1}unsafe";
const TAG_FLOAT: &str = "\u{1}float";
const TAG_DEPTH: &str = "\u{1}depth";

/// Parses `bytes` as one strict JSON document (trailing JSON whitespace allowed).
pub fn parse_strict(bytes: &[u8]) -> Result<Value, StrictJsonError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = StrictSeed { depth: 1 }
        .deserialize(&mut de)
        .map_err(classify)?;
    de.end().map_err(|_| StrictJsonError::Syntax)?;
    Ok(value)
}

fn classify(err: serde_json::Error) -> StrictJsonError {
    let text = err.to_string();
    if text.starts_with(TAG_DUP) {
        StrictJsonError::DuplicateKey
    } else if text.starts_with(TAG_UNSAFE) {
        StrictJsonError::UnsafeInteger
    } else if text.starts_with(TAG_FLOAT) {
        StrictJsonError::NotInteger
    } else if text.starts_with(TAG_DEPTH) || err.to_string().contains("recursion limit") {
        StrictJsonError::TooDeep
    } else {
        StrictJsonError::Syntax
    }
}

struct StrictSeed {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for StrictSeed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor { depth: self.depth })
    }
}

struct StrictVisitor {
    depth: usize,
}

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("strict JSON")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        if v.unsigned_abs() > MAX_SAFE {
            return Err(E::custom(TAG_UNSAFE));
        }
        Ok(Value::Number(Number::from(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        if v > MAX_SAFE {
            return Err(E::custom(TAG_UNSAFE));
        }
        Ok(Value::Number(Number::from(v)))
    }

    fn visit_f64<E: serde::de::Error>(self, _v: f64) -> Result<Value, E> {
        // serde_json reports integers beyond u64/i64 as floats too; both are refused.
        Err(E::custom(TAG_FLOAT))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        if self.depth > MAX_DEPTH {
            return Err(A::Error::custom(TAG_DEPTH));
        }
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(StrictSeed {
            depth: self.depth + 1,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        if self.depth > MAX_DEPTH {
            return Err(A::Error::custom(TAG_DEPTH));
        }
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(A::Error::custom(TAG_DUP));
            }
            let value = map.next_value_seed(StrictSeed {
                depth: self.depth + 1,
            })?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
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
        assert_eq!(parse_strict(b"9007199254740991"), Ok(Value::from(MAX_SAFE)));
        assert_eq!(
            parse_strict(b"9007199254740992"),
            Err(StrictJsonError::UnsafeInteger)
        );
        assert_eq!(
            parse_strict(b"-9007199254740992"),
            Err(StrictJsonError::UnsafeInteger)
        );
        assert_eq!(
            parse_strict(b"123456789012345678901234567890"),
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
