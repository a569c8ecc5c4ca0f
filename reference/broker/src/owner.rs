//! The owner file `<physical>.owner` of `--takeover`: who holds a session across
//! broker instances (docs/spec/single-writer.md "Owner file").
//!
//! `{"fp","tab","label","since","heartbeat"}`, all required, nothing else; `since`
//! and `heartbeat` are integer milliseconds since the Unix epoch with
//! `since <= heartbeat`. A member with an unknown name or the wrong JSON type fails
//! where it stands (document order); then missing members; then the values.

use vx_format::json::Kind;

use crate::claims::{Claim, ClaimKey};
use crate::error::{BrokerError, Result, Rule};
use crate::limits::{MAX_LABEL_BYTES, MAX_SAFE_INTEGER};
use crate::small_file::object_cursor;

/// One owner record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerRecord {
    pub key: ClaimKey,
    /// Shown to non-owners as `holder.label`; never identity.
    pub label: String,
    pub since_ms: u64,
    pub heartbeat_ms: u64,
}

impl OwnerRecord {
    /// The record as the claim layer sees it.
    pub fn claim(&self) -> Claim {
        Claim {
            key: self.key,
            last_seen_ms: self.heartbeat_ms,
        }
    }
}

/// 0–128 bytes without C0, DEL or C1 characters.
pub fn is_label(s: &str) -> bool {
    s.len() <= MAX_LABEL_BYTES
        && !s
            .chars()
            .any(|c| c <= '\u{1f}' || ('\u{7f}'..='\u{9f}').contains(&c))
}

const FIELDS: [&str; 5] = ["fp", "tab", "label", "since", "heartbeat"];

/// A member's value, typed but not yet judged.
enum Value<'a> {
    Text(std::borrow::Cow<'a, str>),
    /// An integer token's value, or `None` for a fraction or exponent.
    Number(Option<i64>),
}

fn text(v: Result<Value<'_>>) -> Result<std::borrow::Cow<'_, str>> {
    match v? {
        Value::Text(t) => Ok(t),
        Value::Number(_) => Err(BrokerError::new(Rule::FieldType)),
    }
}

fn millis(v: Result<Value<'_>>) -> Result<u64> {
    match v? {
        Value::Number(Some(n)) if n >= 0 && n as u64 <= MAX_SAFE_INTEGER => Ok(n as u64),
        Value::Number(_) => Err(BrokerError::new(Rule::OwnerTimeRange)),
        Value::Text(_) => Err(BrokerError::new(Rule::FieldType)),
    }
}

/// Reads an owner file.
pub fn decode(bytes: &[u8]) -> Result<OwnerRecord> {
    let mut c = object_cursor(bytes)?;
    let mut values: [Option<Value<'_>>; 5] = Default::default();
    while let Some(key) = c.next_key() {
        let Some(slot) = FIELDS.iter().position(|f| *f == key) else {
            if crate::variant::on() {
                c.skip();
                continue;
            }
            return Err(Rule::UnknownField.into());
        };
        let want_text = slot < 3;
        values[slot] = Some(match c.kind() {
            Kind::String if want_text => Value::Text(c.string()),
            Kind::Number if !want_text => Value::Number(c.number().integer()),
            _ => return Err(Rule::FieldType.into()),
        });
    }
    let [fp, tab, label, since, heartbeat] =
        values.map(|v| v.ok_or(BrokerError::new(Rule::MissingField)));
    let (fp, tab, label) = (text(fp)?, text(tab)?, text(label)?);
    let (since_ms, heartbeat_ms) = (millis(since)?, millis(heartbeat)?);
    let key = ClaimKey::new(&fp, &tab).map_err(|e| {
        BrokerError::new(if e.rule == Rule::FpSyntax {
            Rule::OwnerFpSyntax
        } else {
            Rule::OwnerTabSyntax
        })
    })?;
    if !is_label(&label) {
        return Err(Rule::OwnerLabelSyntax.into());
    }
    if heartbeat_ms < since_ms {
        return Err(Rule::OwnerHeartbeatBeforeSince.into());
    }
    Ok(OwnerRecord {
        key,
        label: label.into_owned(),
        since_ms,
        heartbeat_ms,
    })
}

/// The canonical encoding, one trailing newline. Refuses a record the reader would
/// refuse, so a writer can never publish what it cannot read back.
pub fn encode(rec: &OwnerRecord) -> Result<Vec<u8>> {
    if !is_label(&rec.label) {
        return Err(Rule::OwnerLabelSyntax.into());
    }
    if rec.since_ms > MAX_SAFE_INTEGER || rec.heartbeat_ms > MAX_SAFE_INTEGER {
        return Err(Rule::OwnerTimeRange.into());
    }
    if rec.heartbeat_ms < rec.since_ms {
        return Err(Rule::OwnerHeartbeatBeforeSince.into());
    }
    let label = serde_json::to_string(&rec.label).expect("a string always serializes");
    let extra = if crate::variant::on() {
        "\"instance\":\"variant\","
    } else {
        ""
    };
    Ok(format!(
        "{{{extra}\"fp\":\"{}\",\"tab\":\"{}\",\"label\":{label},\"since\":{},\"heartbeat\":{}}}\n",
        rec.key.fp(),
        rec.key.tab(),
        rec.since_ms,
        rec.heartbeat_ms
    )
    .into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FP: &str = "0123456789abcdef0123456789abcdef";
    const TAB: &str = "fedcba9876543210";

    fn doc(fp: &str, tab: &str, label: &str, since: &str, hb: &str) -> String {
        format!(
            "{{\"fp\":{fp},\"tab\":{tab},\"label\":{label},\"since\":{since},\"heartbeat\":{hb}}}"
        )
    }

    fn rule(text: &str) -> &'static str {
        decode(text.as_bytes()).unwrap_err().rule.id()
    }

    #[test]
    fn round_trip() {
        let text = doc(
            &format!("\"{FP}\""),
            &format!("\"{TAB}\""),
            "\"desk \\\"A\\\" é\"",
            "1000",
            "6000",
        );
        let rec = decode(text.as_bytes()).unwrap();
        assert_eq!(rec.label, "desk \"A\" é");
        let bytes = encode(&rec).unwrap();
        assert_eq!(decode(&bytes).unwrap(), rec);
        assert_eq!(rec.claim().last_seen_ms, 6000);
    }

    #[test]
    fn refusals() {
        let (fp, tab) = (format!("\"{FP}\""), format!("\"{TAB}\""));
        assert_eq!(
            rule(&doc(&fp, &tab, "\"\"", "1", "0")),
            "owner.heartbeat_before_since"
        );
        assert_eq!(rule(&doc(&fp, &tab, "\"\"", "-1", "0")), "owner.time_range");
        assert_eq!(
            rule(&doc(&fp, &tab, "\"\"", "1.5", "2")),
            "owner.time_range"
        );
        assert_eq!(rule(&doc(&fp, &tab, "\"\"", "\"1\"", "2")), "schema.type");
        assert_eq!(
            rule(&doc(&fp.to_uppercase(), &tab, "\"\"", "1", "2")),
            "owner.fp_syntax"
        );
        assert_eq!(
            rule(&doc(&fp, "\"abc\"", "\"\"", "1", "2")),
            "owner.tab_syntax"
        );
        assert_eq!(
            rule(&doc(&fp, &tab, "\"a\\u0007\"", "1", "2")),
            "owner.label_syntax"
        );
        assert_eq!(
            rule(&doc(
                &fp,
                &tab,
                &format!("\"{}\"", "x".repeat(129)),
                "1",
                "2"
            )),
            "owner.label_syntax"
        );
        assert_eq!(
            rule(&format!(
                "{{\"fp\":{fp},\"tab\":{tab},\"label\":\"\",\"since\":1}}"
            )),
            "schema.missing_field"
        );
        assert_eq!(
            rule(&format!("{{\"fp\":{fp},\"x\":1}}")),
            "schema.unknown_field"
        );
        assert_eq!(
            rule(&format!("{{\"fp\":{fp},\"fp\":{fp}}}")),
            "json.duplicate_key"
        );
    }
}
