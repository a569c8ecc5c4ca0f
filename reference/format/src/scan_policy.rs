//! Limits of one strict scan beyond pins.md's fixed ones: nesting depth and how
//! number tokens are judged ([`NumberPolicy`]). The defaults are pins.md's, so
//! the JSON layer's `check_document` behaves as it always did; other contracts' readers
//! (the workspace archive's split ratios) pass their own.

use crate::error::{Doc, FormatError, Rule};
use crate::limits::MAX_JSON_DEPTH;

/// How pass one judges number tokens. Every policy refuses integers outside the
/// safe range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberPolicy {
    /// pins.md: fractions and exponents pass; the typed decoder judges them.
    SafeIntegers,
    /// Only integers, except a fraction `0.DIGITS` (no exponent, at most
    /// `max_len` bytes) whose value is strictly between 0 and 1, as the value of a
    /// member named `key` of an object inside the value of a member named `scope`
    /// (at any depth). Other contracts' documents (the workspace archive's split
    /// ratios) need this; checkpoints keep [`NumberPolicy::SafeIntegers`].
    IntegersAndUnitFraction {
        scope: &'static str,
        key: &'static str,
        max_len: usize,
    },
}

/// The limits of one scan: nesting depth and the number policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanOptions {
    pub max_depth: usize,
    pub numbers: NumberPolicy,
}

impl Default for ScanOptions {
    /// pins.md's: depth 32, safe integers.
    fn default() -> Self {
        ScanOptions {
            max_depth: MAX_JSON_DEPTH,
            numbers: NumberPolicy::SafeIntegers,
        }
    }
}

/// Why a [`NumberPolicy`] refused a number token that is otherwise valid JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberRefusal {
    /// A fraction or exponent where only integers are allowed.
    NotInteger,
    /// At the policy's fraction position, a fraction that is not `0.DIGITS` in
    /// (0, 1) of at most `max_len` bytes.
    UnitFraction,
}

/// A failed scan under [`ScanOptions`]: a pins.md JSON rule, or the number policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScanError {
    Json(FormatError),
    Number {
        refusal: NumberRefusal,
        offset: usize,
    },
}

impl ScanError {
    /// The pins.md view: under [`NumberPolicy::SafeIntegers`] a scan fails only
    /// with [`ScanError::Json`]; a policy refusal reads as a syntax error there.
    pub fn into_format_error(self) -> FormatError {
        match self {
            ScanError::Json(e) => e,
            ScanError::Number { offset, .. } => {
                FormatError::at_offset(Rule::Syntax, Doc::File, offset)
            }
        }
    }
}

/// `0.DIGITS` of at most `max_len` bytes whose value, as the nearest f64, is
/// strictly between 0 and 1 (so `0.99999999999999999` that rounds to 1 is refused).
pub(crate) fn is_unit_fraction(token: &[u8], max_len: usize) -> bool {
    token.len() <= max_len
        && token.len() > 2
        && token.starts_with(b"0.")
        && token[2..].iter().all(u8::is_ascii_digit)
        && std::str::from_utf8(token)
            .ok()
            .and_then(|t| t.parse::<f64>().ok())
            .is_some_and(|v| v > 0.0 && v < 1.0)
}
