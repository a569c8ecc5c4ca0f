//! The reader: envelope checks in pins.md's order, then the payload under the rules
//! of its own format.

use std::borrow::Cow;

use sha2::{Digest, Sha256};

pub use crate::context::ReadContext;
use crate::error::{Doc, FormatError, Result, Rule};
use crate::json::{check_document, check_text, Cursor, Kind};
use crate::limits::effective_max_bytes;
use crate::model::*;
use crate::validate::{validate, validate_context};

mod payload;

use payload::PayloadDecoder;

/// A checkpoint that passed every rule, with the format it was read under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub format: Format,
    pub checkpoint: Checkpoint,
}

/// An envelope that passed checks 1–5: a supported format and a payload whose
/// checksum matches. The payload itself is not yet checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub format: Format,
    pub payload: String,
}

/// Check 1, for callers that know the length before reading (fstat).
pub fn check_length(len: u64, max_bytes: u64) -> Result<()> {
    if len > effective_max_bytes(max_bytes) {
        return Err(FormatError::new(Rule::FileTooLarge, Doc::File));
    }
    Ok(())
}

fn envelope_err(rule: Rule, key: Option<&'static str>) -> FormatError {
    let e = FormatError::new(rule, Doc::Envelope);
    match key {
        Some(k) => e.in_key(k),
        None => e,
    }
}

/// The member's value when it is of `kind`, else `None` with the member skipped: a
/// member of the wrong type is its own error, reported after the key check.
fn typed<'a, T>(
    cur: &mut Cursor<'a>,
    kind: Kind,
    read: impl FnOnce(&mut Cursor<'a>) -> T,
) -> Option<T> {
    if cur.kind() == kind {
        Some(read(cur))
    } else {
        cur.skip();
        None
    }
}

/// Checks 1–5 of pins.md's envelope order.
pub fn read_envelope(bytes: &[u8], ctx: &ReadContext) -> Result<Envelope> {
    check_length(bytes.len() as u64, ctx.max_bytes)?;
    let mut cur = Cursor::new(check_document(bytes, Doc::Envelope)?);
    if cur.kind() != Kind::Object {
        return Err(envelope_err(Rule::EnvelopeNotObject, None));
    }
    cur.enter();
    let mut format_value: Option<Option<i64>> = None;
    let mut payload: Option<Option<Cow<str>>> = None;
    let mut sha256: Option<Option<Cow<str>>> = None;
    let mut other_keys = false;
    while let Some(key) = cur.next_key() {
        match key.as_ref() {
            "format" => {
                format_value =
                    Some(typed(&mut cur, Kind::Number, |c| c.number().integer()).flatten())
            }
            "payload" => payload = Some(typed(&mut cur, Kind::String, Cursor::string)),
            "sha256" => sha256 = Some(typed(&mut cur, Kind::String, Cursor::string)),
            _ => {
                other_keys = true;
                cur.skip();
            }
        }
    }
    let format = match format_value {
        None => return Err(envelope_err(Rule::FormatMissing, Some("format"))),
        Some(None) => return Err(envelope_err(Rule::FormatType, Some("format"))),
        Some(Some(n)) => u64::try_from(n)
            .ok()
            .and_then(Format::from_number)
            .ok_or_else(|| envelope_err(Rule::FormatUnsupported, Some("format")))?,
    };
    let (Some(payload), Some(sha256), false) = (payload, sha256, other_keys) else {
        return Err(envelope_err(Rule::EnvelopeKeys, None));
    };
    let payload = payload.ok_or_else(|| envelope_err(Rule::PayloadType, Some("payload")))?;
    let expected = sha256
        .and_then(|hex| parse_sha256_hex(hex.as_bytes()))
        .ok_or_else(|| envelope_err(Rule::Sha256Syntax, Some("sha256")))?;
    let actual: [u8; 32] = Sha256::digest(payload.as_bytes()).into();
    if actual != expected {
        return Err(envelope_err(Rule::Checksum, Some("sha256")));
    }
    Ok(Envelope {
        format,
        payload: payload.into_owned(),
    })
}

fn parse_sha256_hex(raw: &[u8]) -> Option<[u8; 32]> {
    if raw.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in raw.chunks_exact(2).enumerate() {
        let nibble = |c: u8| match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        };
        out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

/// Reads and fully validates one checkpoint file's bytes.
pub fn read(bytes: &[u8], ctx: &ReadContext) -> Result<Decoded> {
    let envelope = read_envelope(bytes, ctx)?;
    let checked = check_text(&envelope.payload, Doc::Payload)?;
    let checkpoint = PayloadDecoder::new(checked, envelope.format).checkpoint()?;
    validate(&checkpoint, envelope.format)?;
    validate_context(&checkpoint, ctx)?;
    Ok(Decoded {
        format: envelope.format,
        checkpoint,
    })
}
