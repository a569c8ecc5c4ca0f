//! The `agent-session/v1` resume record (ADR-0068 points 1 and 7): exactly
//! `plugin_id`, `integration_id` and `native_id`, all strings, nothing else.
//!
//! [`parse`] bounds the length before scanning, then applies vx-format's strict JSON
//! scanner (UTF-8, no duplicate keys, no lone surrogates), then the closed shape, then
//! the id rules. [`Record::encode`] is canonical: that member order, no whitespace,
//! minimal escapes.

use vx_format::json::{scan_document, Checked, Cursor, Kind, ScanError, ScanOptions};
use vx_format::Doc;

use crate::limits::{MAX_NATIVE_ID_BYTES, MAX_OWNER_ID_BYTES, MAX_RECORD_BYTES, MIN_RECORD_BYTES};
use crate::rules::{has_control, is_trimmed, NativeRule, RecordRule, RECORD_CODE};

/// The record's members, in canonical order.
pub const FIELDS: [&str; 3] = ["plugin_id", "integration_id", "native_id"];

/// Inert provenance of one provider-native session. It never carries argv, env or
/// paths: restore re-resolves those from the current template.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Record {
    pub plugin_id: String,
    pub integration_id: String,
    pub native_id: String,
}

/// Why a record was refused. The reason names a rule and a field, never a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordError {
    /// A rule of the record itself; `field` when one member is at fault, `json`
    /// the scanner's rule id and byte offset when the JSON failed.
    Record {
        rule: RecordRule,
        field: Option<&'static str>,
        json: Option<(&'static str, usize)>,
    },
    /// The native id's rules.
    Native(NativeRule),
}

impl RecordError {
    fn rule(rule: RecordRule, field: Option<&'static str>) -> Self {
        RecordError::Record {
            rule,
            field,
            json: None,
        }
    }

    pub fn code(&self) -> &'static str {
        RECORD_CODE
    }

    /// The stable rule id (`record.*` or `native.*`).
    pub fn rule_id(&self) -> &'static str {
        match self {
            RecordError::Record { rule, .. } => rule.id(),
            RecordError::Native(rule) => rule.id(),
        }
    }

    /// The member at fault, when there is one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            RecordError::Record { field, .. } => *field,
            RecordError::Native(_) => Some("native_id"),
        }
    }

    pub fn reason(&self) -> String {
        let (id, text) = match self {
            RecordError::Record { rule, .. } => (rule.id(), rule.description()),
            RecordError::Native(rule) => (rule.id(), rule.description()),
        };
        let mut out = format!("{id}: {text}");
        if let RecordError::Record {
            json: Some((json_rule, offset)),
            ..
        } = self
        {
            out.push_str(&format!(" ({json_rule} at byte {offset})"));
        } else if let Some(field) = self.field() {
            out.push_str(&format!(" at {field}"));
        }
        out
    }
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.reason())
    }
}

impl std::error::Error for RecordError {}

/// The rules of `plugin_id` and `integration_id`: 1–120 bytes, trimmed, no Cc.
pub fn validate_owner_id(value: &str) -> Result<(), RecordRule> {
    if value.is_empty() || value.len() > MAX_OWNER_ID_BYTES {
        return Err(RecordRule::OwnerLength);
    }
    if !is_trimmed(value) {
        return Err(RecordRule::OwnerPadded);
    }
    if has_control(value) {
        return Err(RecordRule::OwnerControl);
    }
    Ok(())
}

/// The rules of a native id: 1–1024 bytes, trimmed, not option-shaped, no Cc.
pub fn validate_native_id(value: &str) -> Result<(), NativeRule> {
    if value.is_empty() || value.len() > MAX_NATIVE_ID_BYTES {
        return Err(NativeRule::Length);
    }
    if !is_trimmed(value) {
        return Err(NativeRule::Padded);
    }
    if value.starts_with('-') {
        return Err(NativeRule::OptionShaped);
    }
    if has_control(value) {
        return Err(NativeRule::Control);
    }
    Ok(())
}

impl Record {
    /// A record from its three ids, each checked.
    pub fn new(
        plugin_id: impl Into<String>,
        integration_id: impl Into<String>,
        native_id: impl Into<String>,
    ) -> Result<Self, RecordError> {
        let record = Record {
            plugin_id: plugin_id.into(),
            integration_id: integration_id.into(),
            native_id: native_id.into(),
        };
        record.validate()?;
        Ok(record)
    }

    /// The id rules, in member order.
    pub fn validate(&self) -> Result<(), RecordError> {
        validate_owner_id(&self.plugin_id)
            .map_err(|rule| RecordError::rule(rule, Some(FIELDS[0])))?;
        validate_owner_id(&self.integration_id)
            .map_err(|rule| RecordError::rule(rule, Some(FIELDS[1])))?;
        validate_native_id(&self.native_id).map_err(RecordError::Native)
    }

    /// The canonical encoding: `{"plugin_id":…,"integration_id":…,"native_id":…}`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = String::with_capacity(
            48 + self.plugin_id.len() + self.integration_id.len() + self.native_id.len(),
        );
        self.encode_into(&mut out);
        out.into_bytes()
    }

    /// Appends the canonical encoding (the archive writer embeds it).
    pub fn encode_into(&self, out: &mut String) {
        let values = [&self.plugin_id, &self.integration_id, &self.native_id];
        out.push('{');
        for (i, (key, value)) in FIELDS.iter().zip(values).enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(key);
            out.push_str("\":");
            vx_format::json::push_string(out, value);
        }
        out.push('}');
    }
}

/// Parses and checks an encoded record from any write path.
pub fn parse(bytes: &[u8]) -> Result<Record, RecordError> {
    if !(MIN_RECORD_BYTES..=MAX_RECORD_BYTES).contains(&bytes.len()) {
        return Err(RecordError::rule(RecordRule::Size, None));
    }
    let checked = scan_document(bytes, Doc::Frame, &ScanOptions::default()).map_err(|e| {
        let (json_rule, offset) = match e {
            ScanError::Json(e) => (e.rule.id(), e.offset.unwrap_or(0)),
            ScanError::Number { offset, .. } => ("json.number", offset),
        };
        RecordError::Record {
            rule: RecordRule::Json,
            field: None,
            json: Some((json_rule, offset)),
        }
    })?;
    let record = decode_checked(checked)?;
    record.validate()?;
    Ok(record)
}

fn decode_checked(checked: Checked<'_>) -> Result<Record, RecordError> {
    let mut cur = Cursor::new(checked);
    decode_fields(&mut cur).map_err(|field| RecordError::rule(RecordRule::Shape, field))
}

/// Reads the closed three-string object at the cursor (shared with the archive
/// reader). `Err(field)` names the member at fault, `None` for the object itself.
pub(crate) fn decode_fields(cur: &mut Cursor<'_>) -> Result<Record, Option<&'static str>> {
    if cur.kind() != Kind::Object {
        return Err(None);
    }
    cur.enter();
    let mut values: [Option<String>; 3] = [None, None, None];
    while let Some(key) = cur.next_key() {
        let Some(slot) = FIELDS.iter().position(|f| *f == key) else {
            return Err(None);
        };
        if cur.kind() != Kind::String {
            return Err(Some(FIELDS[slot]));
        }
        values[slot] = Some(cur.string().into_owned());
    }
    let [Some(plugin_id), Some(integration_id), Some(native_id)] = values else {
        let missing = values.iter().position(Option::is_none).map(|i| FIELDS[i]);
        return Err(missing);
    };
    Ok(Record {
        plugin_id,
        integration_id,
        native_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(bytes: &[u8]) -> &'static str {
        parse(bytes).expect_err("refused").rule_id()
    }

    #[test]
    fn round_trips_canonically() {
        let record = Record::new("com.phux.agents", "codex", "thread \"42\"\\x").unwrap();
        let bytes = record.encode();
        assert_eq!(
            bytes,
            br#"{"plugin_id":"com.phux.agents","integration_id":"codex","native_id":"thread \"42\"\\x"}"#
        );
        assert_eq!(parse(&bytes).unwrap(), record);
        let spaced = br#" { "native_id" : "n", "plugin_id":"p","integration_id":"i" } "#;
        assert_eq!(parse(spaced).unwrap(), Record::new("p", "i", "n").unwrap());
    }

    #[test]
    fn closed_shape_and_strict_json() {
        assert_eq!(
            refused(br#"{"plugin_id":"p","integration_id":"i","native_id":"n","argv":["sh"]}"#),
            "record.shape"
        );
        assert_eq!(
            refused(br#"{"plugin_id":"p","integration_id":"i"}"#),
            "record.shape"
        );
        assert_eq!(
            refused(br#"{"plugin_id":"p","integration_id":"i","native_id":7}"#),
            "record.shape"
        );
        assert_eq!(refused(br#"["p","i","n"]"#), "record.shape");
        assert_eq!(
            refused(br#"{"plugin_id":"p","plugin_id":"q","integration_id":"i","native_id":"n"}"#),
            "record.json"
        );
        assert_eq!(
            refused(br#"{"plugin_id":"p","integration_id":"i","native_id":"\ud800"}"#),
            "record.json"
        );
        assert_eq!(refused(b""), "record.size");
        let long = format!(
            r#"{{"plugin_id":"p","integration_id":"i","native_id":"n"}}{}"#,
            " ".repeat(4097)
        );
        assert_eq!(refused(long.as_bytes()), "record.size");
    }

    #[test]
    fn id_bounds() {
        let rec = |p: &str, n: &str| {
            Record::new(p, "i", n)
                .map(|_| "valid")
                .unwrap_or_else(|e| e.rule_id())
        };
        assert_eq!(rec(&"p".repeat(120), "n"), "valid");
        assert_eq!(rec(&"p".repeat(121), "n"), "record.owner_length");
        assert_eq!(rec(" p", "n"), "record.owner_padded");
        assert_eq!(rec("p\u{a0}", "n"), "record.owner_padded");
        assert_eq!(rec("a\tb", "n"), "record.owner_control");
        assert_eq!(rec("a\u{85}b", "n"), "record.owner_control");
        assert_eq!(rec("a\u{9c}b", "n"), "record.owner_control");
        assert_eq!(rec("p", &"n".repeat(1024)), "valid");
        assert_eq!(rec("p", &"n".repeat(1025)), "native.length");
        assert_eq!(
            rec("p", "--dangerously-bypass-approvals-and-sandbox"),
            "native.option_shaped"
        );
        assert_eq!(rec("p", "-x"), "native.option_shaped");
        assert_eq!(rec("p", "a\nb"), "native.control");
        assert_eq!(rec("p", "a\u{7f}"), "native.control");
        assert_eq!(rec("p", "team session; printf x"), "valid");
    }

    #[test]
    fn reasons_carry_no_content() {
        let err = parse(br#"{"plugin_id":"secret-plugin ","integration_id":"i","native_id":"n"}"#)
            .unwrap_err();
        assert!(!err.reason().contains("secret"), "{}", err.reason());
        assert!(err.reason().contains("plugin_id"));
    }
}
