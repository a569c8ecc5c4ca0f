//! The config document as data, apart from its schema: ZON ↔ JSON for `config.get`
//! and `config.set`, dotted keys, and reading or setting a field by its path.

use super::zon::Zon;
use serde_json::{json, Map, Value};

/// Fields whose values are enum literals (so `config.set` can turn JSON strings into them).
pub const ENUM_FIELDS: &[&str] = &["terminal_text", "unknown_read", "anchor", "border"];

/// ZON → JSON for `config.get`: enum literals become strings.
pub fn zon_to_json(value: &Zon) -> Value {
    match value {
        Zon::Struct(fields) => {
            let mut m = Map::new();
            for (k, v) in fields {
                m.insert(k.clone(), zon_to_json(v));
            }
            Value::Object(m)
        }
        Zon::Tuple(items) => Value::Array(items.iter().map(zon_to_json).collect()),
        Zon::Str(s) | Zon::Enum(s) | Zon::Float(s) => json!(s),
        Zon::Int(n) => i64::try_from(*n).map_or(Value::Null, |n| json!(n)),
        Zon::Bool(b) => json!(b),
        Zon::Null => Value::Null,
    }
}

/// JSON → ZON for `config.set`: strings under an enum-valued field become literals.
pub fn json_to_zon(value: &Value, field: &str) -> Option<Zon> {
    Some(match value {
        Value::Object(m) => Zon::Struct(
            m.iter()
                .map(|(k, v)| json_to_zon(v, k).map(|z| (k.clone(), z)))
                .collect::<Option<Vec<_>>>()?,
        ),
        Value::Array(items) => Zon::Tuple(
            items
                .iter()
                .map(|v| json_to_zon(v, ""))
                .collect::<Option<Vec<_>>>()?,
        ),
        Value::String(s) if ENUM_FIELDS.contains(&field) => Zon::Enum(s.clone()),
        Value::String(s) => Zon::Str(s.clone()),
        Value::Number(n) => Zon::Int(i128::from(n.as_i64()?)),
        Value::Bool(b) => Zon::Bool(*b),
        Value::Null => Zon::Null,
    })
}

/// Splits a dotted key into field names. Under `floats.presets` the preset name
/// (`<namespace>.<name>`) is one segment.
pub fn split_key(key: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    if parts.len() >= 4 && parts[0] == "floats" && parts[1] == "presets" {
        let mut out = vec![
            "floats".to_string(),
            "presets".to_string(),
            format!("{}.{}", parts[2], parts[3]),
        ];
        out.extend(parts[4..].iter().map(|s| s.to_string()));
        return Some(out);
    }
    Some(parts.into_iter().map(String::from).collect())
}

/// Sets `path` in a document, creating intermediate structs.
pub fn set_path(doc: &mut Zon, path: &[String], value: Zon) -> bool {
    let Some((head, rest)) = path.split_first() else {
        *doc = value;
        return true;
    };
    let Zon::Struct(fields) = doc else {
        return false;
    };
    if let Some((_, v)) = fields.iter_mut().find(|(k, _)| k == head) {
        return set_path(v, rest, value);
    }
    let mut child = Zon::Struct(Vec::new());
    if !set_path(&mut child, rest, value) {
        return false;
    }
    fields.push((head.clone(), child));
    true
}

/// Reads a path from a document.
pub fn get_path<'a>(doc: &'a Zon, path: &[String]) -> Option<&'a Zon> {
    path.iter().try_fold(doc, |node, name| node.field(name))
}
