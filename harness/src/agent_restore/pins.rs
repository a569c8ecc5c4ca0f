//! The server rows' names that are the kit's, not the ADR's: the error codes a
//! refusal carries (`invalid_params.agent_session`, …) and the rule ids in its
//! `data.rule` (`record.shape`, …). ADR-0068 says what is refused, not how a refusal
//! is spelled, so each is judged under the pin `asr-pin-error-names`: a different
//! name is a recorded deviation (the scenario ends `non-strict`) unless the profile's
//! `[agent_restore.pins]` maps the kit's name to the implementation's own, which is
//! then judged strictly. Whether the call was refused at all stays a MUST.

use crate::contract::Contract;
use crate::profile::{context, Profile};
use serde_json::Value;

/// The clause every name below is judged under.
pub const CLAUSE: &str = "asr-pin-error-names";

/// Every kit name a server row observes: the error codes, then the rule ids. The
/// keys `[agent_restore.pins]` may hold.
pub const NAMES: [&str; 25] = [
    "invalid_params.agent_session",
    "invalid_params.native_id",
    "invalid_params.fallback_argv",
    "unsupported.native_restore",
    "unavailable.spawn",
    "conflict.agent_session_unconfirmed",
    "not_found.integration",
    "conflict.integration_disabled",
    "conflict.integration_ambiguous",
    "conflict.integration_owner",
    "denied.reserved_key",
    "conflict.exists",
    "record.shape",
    "record.json",
    "record.size",
    "record.owner_length",
    "record.owner_padded",
    "record.owner_control",
    "native.length",
    "native.option_shaped",
    "native.control",
    "native.padded",
    "expand.not_restorable",
    "restore.created_result",
    "restore.probe_writable",
];

/// The pin key of the archive's nesting cap (clause `asr-pin-archive-depth`): a
/// positive integer, or "none" for no cap.
pub const DEPTH_KEY: &str = "archive_max_depth";
/// The clause the depth rows are judged under.
pub const DEPTH_CLAUSE: &str = "asr-pin-archive-depth";
/// The kit's own cap, when the profile declares none.
pub const KIT_MAX_DEPTH: u64 = 128;

/// The archive depth cap the rows judge against (`None`: no cap), and whether the
/// profile declared it (then judged strictly) or it is the kit's (a pin).
pub fn archive_depth_cap() -> (Option<u64>, bool) {
    match context()
        .profile
        .claim(Contract::AgentRestore)
        .pins
        .get(DEPTH_KEY)
    {
        Some(v) => (v.as_integer().map(|n| n as u64), true),
        None => (Some(KIT_MAX_DEPTH), false),
    }
}

/// Checks the profile's `[agent_restore.pins]`: known kit names, string values; the
/// depth cap a positive integer or "none".
pub fn check_profile(profile: &Profile) -> Result<(), String> {
    for (k, v) in &profile.claim(Contract::AgentRestore).pins {
        if k == DEPTH_KEY {
            if !(v.as_integer().is_some_and(|n| n > 0) || v.as_str() == Some("none")) {
                return Err(format!(
                    "[agent_restore.pins] {DEPTH_KEY} = {v}: expected a positive integer or \"none\""
                ));
            }
            continue;
        }
        if super::shapes::is_key(k) {
            super::shapes::check(k, v)?;
            continue;
        }
        if !NAMES.contains(&k.as_str()) {
            return Err(format!(
                "[agent_restore.pins] {k:?}: not a kit name the server rows observe (the names: {})",
                NAMES.join(", ")
            ));
        }
        if !v.is_str() {
            return Err(format!(
                "[agent_restore.pins] {k:?} = {v}: expected the implementation's own name, a string"
            ));
        }
    }
    Ok(())
}

/// The implementation's own name for the kit's `kit`, when the profile declares one.
fn declared(kit: &str) -> Option<String> {
    context()
        .profile
        .claim(Contract::AgentRestore)
        .pins
        .get(kit)
        .and_then(|v| v.as_str().map(str::to_string))
}

/// Judges one name a refusal carried (`what`: "error code", "rule"), where the kit
/// expects `kit`: strictly against the profile's own name for it when declared, else
/// a difference is a pin deviation.
pub fn judge(what: &str, kit: &str, got: &Value) {
    let got = match got {
        Value::String(s) => s.clone(),
        Value::Null => "none".to_string(),
        other => other.to_string(),
    };
    match declared(kit) {
        Some(own) => crate::evidence::ensure(got == own, Some(CLAUSE), || {
            (
                format!("{what} {own} (the profile's [agent_restore.pins] {kit:?})"),
                format!("{what} {got}"),
            )
        }),
        None if got != kit => crate::evidence::pin(
            CLAUSE,
            format!("{what} {kit} (the kit's name; a profile may declare its own)"),
            format!("{what} {got}"),
        ),
        None => {}
    }
}

/// Judges a refusal's error: its `code`, and its `data.rule` when the row names one.
pub fn judge_error(e: &Value, code: &str, rule: Option<&str>) {
    judge("error code", code, &e["code"]);
    if let Some(rule) = rule {
        judge("rule", rule, &e["data"]["rule"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code and rule id the server rows quote is a key the profile may map.
    #[test]
    fn every_name_the_rows_quote_is_listed() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../features/agent-restore");
        let quoted =
            regex::Regex::new(r#"(?:fails with|refused with|by rule) "([a-z_.0-9]+)""#).unwrap();
        let mut seen = 0;
        for name in ["01_records", "03_launch", "05_restore"] {
            let text = std::fs::read_to_string(dir.join(format!("{name}.feature"))).unwrap();
            for c in quoted.captures_iter(&text) {
                assert!(NAMES.contains(&&c[1]), "{name}: {} is not listed", &c[1]);
                seen += 1;
            }
            // The outlines' rule and code columns.
            for line in text.lines().filter(|l| l.trim_start().starts_with('|')) {
                for cell in line.split('|').map(str::trim) {
                    let named = cell.contains('.')
                        && cell
                            .chars()
                            .all(|ch| ch.is_ascii_lowercase() || ch == '_' || ch == '.');
                    if named && !cell.starts_with('{') {
                        assert!(NAMES.contains(&cell), "{name}: {cell} is not listed");
                        seen += 1;
                    }
                }
            }
        }
        assert!(seen >= 20, "{seen}");
    }
}
