//! The strict JSON scanner (`vx_format::json::check_document`) against `serde_json`
//! on well-formedness. `serde_json` is made exactly as strict as pins.md where it can
//! be (a visitor that refuses duplicate keys, nesting deeper than 32 and integers
//! outside ±(2^53−1)), and the verdicts are compared class by class. What is left is
//! the documented strictness, each case checked on its own (fuzz/README.md,
//! "Differential targets"):
//!
//! - an integer token beyond 2^64 that `serde_json` reads as a float: the kit refuses
//!   it (`json.unsafe_integer`); the oracle checks the token at the kit's offset;
//! - a number `serde_json` cannot hold as an `f64` (`1e400`): `serde_json` refuses it
//!   ("number out of range"), the kit's scan passes fractions and exponents to the
//!   typed decoder (pins.md);
//! - the kit reads the whole text as UTF-8 (and a BOM) before its scan, so for
//!   `json.utf8` and `json.bom` only the refusal is compared, not the class;
//! - a high surrogate escape the text ends right after (`"\ud800`): the kit reports
//!   `json.lone_surrogate` at the escape, serde_json the end of the text.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Error as _, MapAccess, SeqAccess, Visitor};
use vx_format::json::check_document;
use vx_format::limits::{MAX_JSON_DEPTH, MAX_SAFE_INTEGER};
use vx_format::{Doc, Rule};

const DUPLICATE: &str = "vx-strict: duplicate key";
const DEPTH: &str = "vx-strict: nesting deeper than 32";
const UNSAFE: &str = "vx-strict: integer outside the safe range";

/// A verdict class both sides can be put in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Accept,
    Syntax,
    Duplicate,
    Depth,
    Unsafe,
    Surrogate,
    /// `serde_json` only: a number outside the `f64` range.
    OutOfRange,
    /// The kit only: the text is not UTF-8, or starts with a BOM.
    Encoding,
}

/// The kit's verdict: its class and the offset it reported.
pub fn kit(data: &[u8]) -> (Class, usize) {
    match check_document(data, Doc::File) {
        Ok(_) => (Class::Accept, 0),
        Err(e) => {
            let class = match e.rule {
                Rule::Syntax | Rule::ControlInString | Rule::TrailingData => Class::Syntax,
                Rule::DuplicateKey => Class::Duplicate,
                Rule::Depth => Class::Depth,
                Rule::UnsafeInteger => Class::Unsafe,
                Rule::LoneSurrogate => Class::Surrogate,
                Rule::Utf8 | Rule::Bom => Class::Encoding,
                other => panic!("the JSON scan reported a non-JSON rule {}", other.id()),
            };
            (class, e.offset.unwrap_or(0))
        }
    }
}

/// `serde_json` with pins.md's strictness added by [`Strict`].
pub fn serde(data: &[u8]) -> Class {
    let mut de = serde_json::Deserializer::from_slice(data);
    let result = Strict { depth: 0 }
        .deserialize(&mut de)
        .and_then(|()| de.end());
    match result {
        Ok(()) => Class::Accept,
        Err(e) => {
            let text = e.to_string();
            if text.starts_with(DUPLICATE) {
                Class::Duplicate
            } else if text.starts_with(DEPTH) {
                Class::Depth
            } else if text.starts_with(UNSAFE) {
                Class::Unsafe
            } else if text.contains("surrogate") || text.starts_with("unexpected end of hex escape")
            {
                Class::Surrogate
            } else if text.starts_with("number out of range") {
                Class::OutOfRange
            } else {
                Class::Syntax
            }
        }
    }
}

/// The integer token at `offset` (optional minus, digits, no fraction or exponent)
/// has a magnitude above 2^53−1: checked here without the kit's code.
pub fn unsafe_integer_at(data: &[u8], offset: usize) -> bool {
    let rest = &data[offset.min(data.len())..];
    let digits = rest.strip_prefix(b"-").unwrap_or(rest);
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || matches!(digits.get(n), Some(b'.' | b'e' | b'E')) {
        return false;
    }
    let text = std::str::from_utf8(&digits[..n]).expect("ASCII digits");
    text.parse::<u128>()
        .map_or(true, |v| v > u128::from(MAX_SAFE_INTEGER))
}

/// Compares the two verdicts; `Err` describes an unexplained disagreement.
pub fn compare(data: &[u8]) -> Result<(), String> {
    let (kit, offset) = kit(data);
    let serde = serde(data);
    let explained = match (kit, serde) {
        (a, b) if a == b => true,
        // serde_json's own strictness: a float outside f64 (the kit passes it on).
        (_, Class::OutOfRange) => true,
        // A big integer serde_json read as a float: the kit's token must be one.
        (Class::Unsafe, _) => unsafe_integer_at(data, offset),
        // A high surrogate escape the text ends right after (`"\ud800` or
        // `"\ud800\`): the kit names the surrogate, serde_json the end of the text.
        (Class::Surrogate, Class::Syntax) => offset + 8 > data.len(),
        // Encoding is judged before the scan: both refuse, the class may differ.
        (Class::Encoding, b) => b != Class::Accept,
        _ => false,
    };
    match explained {
        true => Ok(()),
        false => Err(format!(
            "kit {kit:?} (offset {offset}) but serde_json {serde:?} on {:?}",
            String::from_utf8_lossy(data)
        )),
    }
}

/// `serde_json`'s visitor made as strict as pins.md.
struct Strict {
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl Strict {
    fn nested<E: serde::de::Error>(&self) -> Result<Strict, E> {
        if self.depth + 1 > MAX_JSON_DEPTH {
            return Err(E::custom(DEPTH));
        }
        Ok(Strict {
            depth: self.depth + 1,
        })
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.visit_u64(v.unsigned_abs())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        match v > MAX_SAFE_INTEGER {
            true => Err(E::custom(UNSAFE)),
            false => Ok(()),
        }
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.nested()?;
        while seq
            .next_element_seed(Strict { depth: inner.depth })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.nested()?;
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key) {
                return Err(A::Error::custom(DUPLICATE));
            }
            map.next_value_seed(Strict { depth: inner.depth })?;
        }
        Ok(())
    }
}
