//! The offline checkers' half of the agent-restore negative controls
//! (`crate::negative`, `VXREF_NEGATIVE_CONTROL`): `vxref workspace check` and
//! `vxref integration check` judged as an implementation with one mistake would.
//! Each mistake is emulated around the real verdict: a refusal the mistake would not
//! make is re-judged with the offending value replaced by a valid one (so every other
//! rule still applies), an acceptance it would not make becomes its refusal. Unset,
//! the real verdict is returned unchanged.
//!
//! - the record switches of `crate::negative` (`native-length-in-chars`,
//!   `owner-length-in-chars`, `trim-ascii-whitespace`, `unicode-space-anywhere`) apply to
//!   every archived record too;
//! - `env-suffix-only`: a template's `native_env` needs only the `_SESSION_ID`
//!   suffix, not the `PHUX_` prefix (`CLAUDE_SESSION_ID` passes);
//! - `archive-closed-shapes`: a session, window or pane with a member the reader
//!   does not know is refused (schema 2 is additive: they must be read past);
//! - `record-read-additively`: a record's unknown members are read past too (the
//!   record stays closed);
//! - `archive-depth-exclusive`: the 128-level nesting cap is exclusive, so an
//!   archive exactly 128 deep is refused;
//! - `evaluator-flag-alone`: a runner (python3, node…) is refused only when its
//!   evaluation flag stands alone (`python3 -c`): joined flags (`python3 -Sc`) are
//!   taken for a plugin's fixed options, and the identity becomes the source.

use crate::negative::{active, lenient_accepts, record_too_strict, Defect};
use serde_json::Value;
use vx_agentsession::check::{InputKind, Verdict};
use vx_agentsession::limits::MAX_ARCHIVE_DEPTH;
use vx_agentsession::record::Record;
use vx_agentsession::rules::ARCHIVE_CODE;

/// The verdict on `bytes` of a checker with the active defect, given the real one.
pub fn verdict(kind: InputKind, bytes: &[u8], real: Verdict) -> Verdict {
    match kind {
        InputKind::WorkspaceArchive => archive_verdict(bytes, real),
        InputKind::IntegrationTemplate => template_verdict(bytes, real),
    }
}

fn refused(rule: &'static str, reason: &str) -> Verdict {
    Verdict {
        result: ARCHIVE_CODE,
        rule: Some(rule),
        reason: Some(format!("{rule}: {reason}")),
    }
}

/// Every `agent_session` object of an archive's panes.
fn records(doc: &mut Value) -> Vec<&mut serde_json::Map<String, Value>> {
    let mut out = Vec::new();
    for s in doc["sessions"].as_array_mut().into_iter().flatten() {
        for w in s["windows"].as_array_mut().into_iter().flatten() {
            for p in w["panes"].as_array_mut().into_iter().flatten() {
                if let Some(r) = p.get_mut("agent_session").and_then(Value::as_object_mut) {
                    out.push(r);
                }
            }
        }
    }
    out
}

fn as_record(r: &serde_json::Map<String, Value>) -> Option<Record> {
    let field = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
    Some(Record {
        plugin_id: field("plugin_id")?,
        integration_id: field("integration_id")?,
        native_id: field("native_id")?,
    })
}

/// The nesting depth of a JSON text (brackets outside strings).
fn depth(bytes: &[u8]) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// The members the reader knows in a session, a window and a pane.
const SESSION_MEMBERS: [&str; 5] = ["name", "active", "cwd", "command", "windows"];
const WINDOW_MEMBERS: [&str; 4] = ["name", "active", "layout", "panes"];
const PANE_MEMBERS: [&str; 7] = [
    "active",
    "title",
    "cwd",
    "command",
    "cols",
    "rows",
    "agent_session",
];

fn unknown_member(doc: &Value) -> bool {
    let extra = |v: &Value, known: &[&str]| {
        v.as_object()
            .is_some_and(|o| o.keys().any(|k| !known.contains(&k.as_str())))
    };
    doc["sessions"].as_array().into_iter().flatten().any(|s| {
        extra(s, &SESSION_MEMBERS)
            || s["windows"].as_array().into_iter().flatten().any(|w| {
                extra(w, &WINDOW_MEMBERS)
                    || w["panes"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|p| extra(p, &PANE_MEMBERS))
            })
    })
}

fn archive_verdict(bytes: &[u8], real: Verdict) -> Verdict {
    let rejudge = |doc: &Value| match serde_json::to_vec(doc) {
        Ok(b) => InputKind::WorkspaceArchive.verdict(&b),
        Err(_) => real.clone(),
    };
    if real.is_valid() {
        if active(Defect::ArchiveDepthExclusive) && depth(bytes) >= MAX_ARCHIVE_DEPTH {
            return refused("archive.json", "nested too deep");
        }
        let Ok(mut doc) = serde_json::from_slice::<Value>(bytes) else {
            return real;
        };
        if active(Defect::ArchiveClosedShapes) && unknown_member(&doc) {
            return refused("archive.shape", "a member the reader does not know");
        }
        if records(&mut doc)
            .into_iter()
            .filter_map(|r| as_record(r))
            .any(|r| record_too_strict(&r).is_some())
        {
            return refused("archive.record", "a record's id is refused");
        }
        return real;
    }
    let Ok(mut doc) = serde_json::from_slice::<Value>(bytes) else {
        return real;
    };
    match real.rule {
        Some("archive.record") => {
            let mut changed = false;
            for r in records(&mut doc) {
                let Some(record) = as_record(r) else { continue };
                if record.validate().is_err() && lenient_accepts(&record) == Some(true) {
                    // The mistaken rules accept it: the rest of the archive decides.
                    for k in ["plugin_id", "integration_id", "native_id"] {
                        r.insert(k.to_string(), Value::from("x"));
                    }
                    changed = true;
                }
            }
            if changed {
                return rejudge(&doc);
            }
            real
        }
        Some("archive.shape") if active(Defect::RecordReadAdditively) => {
            for r in records(&mut doc) {
                r.retain(|k, _| vx_agentsession::record::FIELDS.contains(&k.as_str()));
            }
            rejudge(&doc)
        }
        _ => real,
    }
}

fn template_verdict(bytes: &[u8], real: Verdict) -> Verdict {
    if !real.is_valid() && active(Defect::EvaluatorFlagAlone) {
        return evaluator_flag_alone(bytes, real);
    }
    if real.is_valid() || !active(Defect::EnvSuffixOnly) {
        return real;
    }
    let Some(mut doc) = template_table(bytes) else {
        return real;
    };
    let Some(identity) = doc
        .get_mut("session_identity")
        .and_then(toml::Value::as_table_mut)
    else {
        return real;
    };
    let Some(name) = identity.get("native_env").and_then(toml::Value::as_str) else {
        return real;
    };
    let suffix = vx_agentsession::limits::NATIVE_ENV_SUFFIX;
    let mut chars = name.bytes();
    let syntax = matches!(chars.next(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_'))
        && chars.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let lenient = syntax
        && name.len() <= vx_agentsession::limits::MAX_NATIVE_ENV_BYTES
        && name.len() > vx_agentsession::limits::NATIVE_ENV_PREFIX.len() + suffix.len()
        && name.ends_with(suffix);
    if vx_agentsession::template::valid_native_env(name) || !lenient {
        return real;
    }
    identity.insert("native_env".into(), "PHUX_X_SESSION_ID".into());
    rejudged(&doc, real)
}

/// `evaluator-flag-alone`: a runner refusal for a template whose launch command's
/// first argument is a flag group holding `c` or `e` (`-Sc`) but not that flag alone
/// is re-judged with a plain program in its place, as a checker that looks for `-c`
/// as its own argument would.
fn evaluator_flag_alone(bytes: &[u8], real: Verdict) -> Verdict {
    if real.rule != Some("template.interpreter") {
        return real;
    }
    let Some(mut doc) = template_table(bytes) else {
        return real;
    };
    let Some(command) = doc
        .get_mut("launch")
        .and_then(toml::Value::as_table_mut)
        .and_then(|l| l.get_mut("command"))
        .and_then(toml::Value::as_array_mut)
    else {
        return real;
    };
    let joined = command
        .get(1)
        .and_then(toml::Value::as_str)
        .is_some_and(|a| {
            a.len() > 2
                && a.starts_with('-')
                && !a.starts_with("--")
                && a[1..].bytes().any(|b| b == b'c' || b == b'e')
        });
    if !joined {
        return real;
    }
    *command = vec![toml::Value::from("agent")];
    rejudged(&doc, real)
}

/// A template's TOML table, `None` for bytes that are not one.
fn template_table(bytes: &[u8]) -> Option<toml::Table> {
    std::str::from_utf8(bytes).ok().and_then(|t| t.parse().ok())
}

/// The real checker's verdict on `doc` as a defect edited it (`real` if it cannot be
/// written back).
fn rejudged(doc: &toml::Table, real: Verdict) -> Verdict {
    match toml::to_string(doc) {
        Ok(text) => InputKind::IntegrationTemplate.verdict(text.as_bytes()),
        Err(_) => real,
    }
}
