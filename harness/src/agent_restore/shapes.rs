//! Two shapes ADR-0068 leaves to the implementation, judged as pins (issue 45): the
//! one-shot creation result's content and the `server.info` capability that offers
//! it (`asr-pin-created-result`), and the member names of the restore command's
//! reply (`asr-pin-restore-reply`). What the seed defines stays a MUST in the steps:
//! the owner's first read names the session its create returned (here), and what a
//! restore restored, skipped and resumed natively is observed in `session.list`
//! (`steps/restore_reply.rs`). A profile may declare its own value of each key in
//! `[agent_restore.pins]`; a deviation from a declared value fails, from the kit's
//! undeclared one it is `non-strict`.

use crate::contract::Contract;
use crate::profile::context;
use serde_json::{json, Value};

/// The clause of the creation result's content and its capability name.
pub const CREATED_CLAUSE: &str = "asr-pin-created-result";
/// Pin key: the capability `server.info` lists for the one-shot result, or "none".
pub const CREATED_CAP_KEY: &str = "created_result_capability";
/// The kit's (the reference's) capability name.
pub const KIT_CREATED_CAP: &str = "session_created_result";
/// Pin key: the member names of the result, a JSON object (an array of strings).
pub const CREATED_MEMBERS_KEY: &str = "created_result_members";
/// The kit's result: `{"session": <id>, "name": <name>, "request_token": <token>}`.
pub const KIT_CREATED_MEMBERS: [&str; 3] = ["session", "name", "request_token"];

/// The clause of the restore reply's member names.
pub const REPLY_CLAUSE: &str = "asr-pin-restore-reply";
/// The reply's lists, each (pin key, the kit's member name): the sessions restored,
/// the sessions skipped as existing, the panes resumed natively. A declared value
/// names the implementation's member, or is "none" (its reply has no such list).
pub const REPLY_KEYS: [(&str, &str); 3] = [
    ("restore_reply_restored", "restored"),
    ("restore_reply_skipped", "skipped_existing"),
    ("restore_reply_native", "native"),
];

/// Whether `key` is one of this file's pin keys.
pub fn is_key(key: &str) -> bool {
    key == CREATED_CAP_KEY || key == CREATED_MEMBERS_KEY || REPLY_KEYS.iter().any(|k| k.0 == key)
}

/// Checks a declared value of one of this file's keys.
pub fn check(key: &str, v: &toml::Value) -> Result<(), String> {
    let ok = if key == CREATED_MEMBERS_KEY {
        v.as_array().is_some_and(|a| {
            !a.is_empty() && a.iter().all(|m| m.as_str().is_some_and(|s| !s.is_empty()))
        })
    } else {
        v.as_str().is_some_and(|s| !s.is_empty())
    };
    if ok {
        Ok(())
    } else if key == CREATED_MEMBERS_KEY {
        Err(format!(
            "[agent_restore.pins] {key} = {v}: expected the result's member names, a non-empty array of strings"
        ))
    } else {
        Err(format!(
            "[agent_restore.pins] {key} = {v}: expected the implementation's own name, or \"none\""
        ))
    }
}

/// The profile's declared value of `key`.
pub fn declared(key: &str) -> Option<toml::Value> {
    context()
        .profile
        .claim(Contract::AgentRestore)
        .pins
        .get(key)
        .cloned()
}

/// One thing a judgement found: a MUST violation (`clause` None, `strict`), a
/// deviation from a declared pin value (`strict`), or from the kit's (a pin).
#[derive(Debug, PartialEq)]
pub struct Finding {
    pub clause: Option<&'static str>,
    pub strict: bool,
    pub expected: String,
    pub observed: String,
}

fn must(expected: String, observed: String) -> Finding {
    Finding {
        clause: None,
        strict: true,
        expected,
        observed,
    }
}

fn deviation(clause: &'static str, declared: bool, expected: String, observed: String) -> Finding {
    Finding {
        clause: Some(clause),
        strict: declared,
        expected,
        observed,
    }
}

/// Records the findings: the first strict one fails the step, the others are pin
/// deviations (the scenario ends `non-strict`).
pub fn apply(findings: Vec<Finding>) {
    if let Some(f) = findings.iter().find(|f| f.strict) {
        crate::evidence::fail(f.clause, f.expected.clone(), f.observed.clone());
    }
    for f in findings {
        crate::evidence::pin(f.clause.unwrap_or(CREATED_CLAUSE), f.expected, f.observed);
    }
}

/// Whether `v` holds the string `s` anywhere (a member, an element, at any depth).
fn holds_string(v: &Value, s: &str) -> bool {
    match v {
        Value::String(t) => t == s,
        Value::Array(a) => a.iter().any(|x| holds_string(x, s)),
        Value::Object(m) => m.values().any(|x| holds_string(x, s)),
        _ => false,
    }
}

/// Judges the owner's first read of its creation result (`value`, as `meta.get`
/// returned it) after its create returned the session `sid` named `name` for
/// `token`. MUST: something is there and names `sid` (a string equal to it anywhere
/// in the JSON, or the id as a word of the text). The exact content is the pin:
/// the kit's three members, or the profile's declared member names (then each of
/// the kit's names among them holds the kit's value).
pub fn judge_created(
    value: &Value,
    sid: &str,
    name: &str,
    token: &str,
    members: Option<&[String]>,
) -> Vec<Finding> {
    let (text, parsed) = match value {
        Value::Null => {
            return vec![must(
                format!("the owner's first read to name the session {sid} it created"),
                "nothing (null)".into(),
            )]
        }
        Value::String(s) => (s.clone(), serde_json::from_str::<Value>(s).ok()),
        other => (other.to_string(), Some(other.clone())),
    };
    let word = text
        .split(|c: char| !(c.is_alphanumeric() || "-_.:$@".contains(c)))
        .any(|w| w == sid);
    if !(word || parsed.as_ref().is_some_and(|p| holds_string(p, sid))) {
        return vec![must(
            format!("the owner's first read to name the session {sid} it created"),
            format!("{text:?}"),
        )];
    }
    let kit = json!({"session": sid, "name": name, "request_token": token});
    match members {
        None if parsed.as_ref() != Some(&kit) => vec![deviation(
            CREATED_CLAUSE,
            false,
            format!("the kit's result {kit} (a profile may declare its own {CREATED_MEMBERS_KEY})"),
            format!("{text:?}"),
        )],
        None => vec![],
        Some(names) => {
            let obj = parsed.as_ref().and_then(Value::as_object);
            let same_names = obj
                .is_some_and(|o| o.len() == names.len() && names.iter().all(|n| o.contains_key(n)));
            let kit_values = obj.is_some_and(|o| {
                names
                    .iter()
                    .filter_map(|n| kit.get(n).map(|k| (n, k)))
                    .all(|(n, k)| o.get(n) == Some(k))
            });
            if same_names && kit_values {
                vec![]
            } else {
                vec![deviation(
                    CREATED_CLAUSE,
                    true,
                    format!(
                        "a JSON object with exactly the members {names:?} (the profile's {CREATED_MEMBERS_KEY}), the kit's among them as in {kit}"
                    ),
                    format!("{text:?}"),
                )]
            }
        }
    }
}

/// Judges `server.info`'s capabilities for the one that offers the result: the
/// profile's declared name (strictly), none when it declares "none", else the kit's
/// (a pin).
pub fn judge_capability(caps: &[Value], declared: Option<&str>) -> Vec<Finding> {
    let (want, strict) = match declared {
        Some("none") => return vec![],
        Some(own) => (own, true),
        None => (KIT_CREATED_CAP, false),
    };
    if caps.contains(&json!(want)) {
        return vec![];
    }
    let whose = if strict {
        format!("the profile's {CREATED_CAP_KEY}")
    } else {
        format!("the kit's name; a profile may declare its own {CREATED_CAP_KEY}, or \"none\"")
    };
    vec![deviation(
        CREATED_CLAUSE,
        strict,
        format!("server.info's capabilities to list {want:?} ({whose})"),
        format!("capabilities {}", Value::Array(caps.to_vec())),
    )]
}

/// The reply's member for list `i` of [`REPLY_KEYS`] (None: "none" declared), and
/// whether the profile declared it.
pub fn reply_member(i: usize, declared: Option<&str>) -> (Option<String>, bool) {
    match declared {
        Some("none") => (None, true),
        Some(own) => (Some(own.to_string()), true),
        None => (Some(REPLY_KEYS[i].1.to_string()), false),
    }
}

/// A deviation of a restore's reply from the pin (strict when `declared`).
pub fn reply_finding(declared: bool, expected: String, observed: String) -> Finding {
    deviation(REPLY_CLAUSE, declared, expected, observed)
}

/// The reply members of the profile (or the kit's), for [`judge_reply`].
pub fn reply_members() -> [(Option<String>, bool); 3] {
    [0, 1, 2].map(|i| {
        let d = declared(REPLY_KEYS[i].0);
        reply_member(i, d.as_ref().and_then(toml::Value::as_str))
    })
}

/// Judges a restore's reply against what was observed: each list the reply holds
/// under its member (`members`, from [`reply_member`]) has as many entries as
/// `observed` counts. A missing member, or a different count, is a deviation from
/// the pin (strict when declared), never a silent 0.
pub fn judge_reply(
    reply: &Value,
    members: &[(Option<String>, bool); 3],
    observed: [usize; 3],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, (member, declared)) in members.iter().enumerate() {
        let Some(member) = member else { continue };
        let whose = if *declared {
            "the profile's"
        } else {
            "the kit's; a profile may declare its own"
        };
        let expected = format!(
            "the reply's list {member:?} ({whose} {}) with {} entries, as observed",
            REPLY_KEYS[i].0, observed[i]
        );
        match reply.get(member).and_then(Value::as_array) {
            Some(a) if a.len() == observed[i] => {}
            Some(a) => out.push(deviation(
                REPLY_CLAUSE,
                *declared,
                expected,
                format!("{} entries: {}", a.len(), Value::Array(a.clone())),
            )),
            None => out.push(deviation(
                REPLY_CLAUSE,
                *declared,
                expected,
                format!("no such list in the reply {reply}"),
            )),
        }
    }
    out
}

/// This file's keys, as `vxcert profile --explain` lists them under
/// `[agent_restore.pins]`.
pub fn explain() -> String {
    let mut out = format!(
        "  {CREATED_CAP_KEY:<18} the server.info capability offering the one-shot creation result, or \"none\" (kit: \"{KIT_CREATED_CAP}\"; pin {CREATED_CLAUSE})\n  {CREATED_MEMBERS_KEY:<18} the creation result's member names, an array (kit: {KIT_CREATED_MEMBERS:?}; pin {CREATED_CLAUSE})\n"
    );
    for (key, kit) in REPLY_KEYS {
        out += &format!(
            "  {key:<18} the restore reply's member listing the {}, or \"none\" (kit: \"{kit}\"; pin {REPLY_CLAUSE})\n",
            match kit {
                "restored" => "sessions restored",
                "skipped_existing" => "sessions skipped as existing",
                _ => "panes resumed natively",
            }
        );
    }
    out
}

#[cfg(test)]
#[path = "shapes_tests.rs"]
mod tests;
