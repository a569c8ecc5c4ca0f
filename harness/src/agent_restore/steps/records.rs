//! Steps of the record rows (`01_records`): the two write paths of an
//! `agent-session/v1` record (a spawn verb's `agent_session`, `meta.set`) and what
//! `meta.get` reads back.

use crate::agent_restore::live::{bad_value, record_text, Live, RECORD_KEY};
use crate::agent_restore::pins;
use crate::agent_restore::World;
use crate::drivers::step::Caps;
use crate::verdict::OrHarness;
use cucumber::{given, then, when};
use serde_json::{json, Value};

/// A record of the three ids with `field` replaced by `value`.
fn record_with(field: &str, value: &str) -> String {
    let mut ids = ["team", "stub", "n1"].map(str::to_string);
    let i = ["plugin_id", "integration_id", "native_id"]
        .iter()
        .position(|f| *f == field)
        .or_harness("a record field");
    ids[i] = value.to_string();
    record_text(&ids[0], &ids[1], &ids[2])
}

/// A valid record padded with JSON whitespace to exactly `n` bytes.
fn record_of_size(n: usize) -> String {
    let mut text = record_text("team", "stub", "n1");
    let close = text.pop().or_harness("a record");
    if n < text.len() + 1 {
        crate::harness_error!("{n} bytes cannot hold a record");
    }
    text.extend(std::iter::repeat_n(' ', n - text.len() - 1));
    text.push(close);
    text
}

/// The valid twin of every record row's defect: the record of "team" "stub" "n1".
fn twin() -> String {
    record_text("team", "stub", "n1")
}

/// pane.create in a new window with `record`, after its control: the same call with
/// the valid twin, in a window of its own.
fn create_after_control(l: &mut Live, record: &str) {
    let window = l.new_window();
    let argv = l.sleeper();
    l.control_call(
        "pane.create with the valid record of \"team\" \"stub\" \"n1\" in a new window",
        "pane.create",
        json!({"window": window, "argv": argv, "agent_session": twin()}),
    );
    create_with_record(l, record);
}

/// meta.set of `value` on `pane`, after its control: the same write of the valid
/// twin (the record those rows' panes already hold).
fn set_after_control(l: &mut Live, pane: &str, value: &str) {
    let target = l.subst(pane);
    l.control_call(
        "meta.set of the valid record of \"team\" \"stub\" \"n1\" on the same pane",
        "meta.set",
        json!({"pane": target, "key": RECORD_KEY, "value": twin()}),
    );
    set(l, pane, RECORD_KEY, value);
    l.written = Some((pane.to_string(), value.to_string()));
}

fn create_with_record(l: &mut Live, record: &str) {
    let window = l.new_window();
    let argv = l.sleeper();
    l.call(
        "pane.create",
        json!({"window": window, "argv": argv, "agent_session": record}),
    );
}

fn set(l: &mut Live, pane: &str, key: &str, value: &str) {
    let pane = l.subst(pane);
    l.call(
        "meta.set",
        json!({"pane": pane, "key": key, "value": value}),
    );
}

#[given(regex = r"^the daemon is running$")]
async fn daemon_running(w: &mut World) {
    w.run(&[], None, |s, _| s.live().ensure_running()).await;
}

#[given(
    regex = r#"^a pane "(\w+)" in a new window with the record of "([^"]*)" "([^"]*)" "([^"]*)"$"#
)]
async fn pane_with_record(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        create_with_record(l, &record_text(&c[2], &c[3], &c[4]));
        if let Err(e) = &l.last().result {
            panic!("pane.create with a valid record failed: {e}");
        }
        l.keep_pane(&c[1]);
        let session = l.subst("$window_session");
        l.s.vars.insert(format!("{}@session", &c[1]), session);
    })
    .await;
}

#[when(regex = r"^pane.create starts a pane in a new window with the record '(.*)'$")]
async fn create_with_text(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| create_after_control(s.live(), &c[1]))
        .await;
}

#[when(
    regex = r"^pane.create starts a pane in a new window with a record whose (plugin_id|integration_id|native_id) is (.+)$"
)]
async fn create_with_bad_field(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        create_after_control(s.live(), &record_with(&c[1], &bad_value(&c[2])))
    })
    .await;
}

#[when(regex = r"^pane.create starts a pane in a new window with a record of (\d+) bytes$")]
async fn create_with_sized(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let n = c[1].parse().or_harness("a byte count");
        create_after_control(s.live(), &record_of_size(n))
    })
    .await;
}

#[when(regex = r#"^meta.set writes "([^"]+)" on (\$\w+) with '(.*)'$"#)]
async fn meta_set_text(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        if &c[1] == RECORD_KEY {
            set_after_control(s.live(), &c[2], &c[3])
        } else {
            set(s.live(), &c[2], &c[1], &c[3])
        }
    })
    .await;
}

#[when(
    regex = r#"^meta.set writes "agent-session/v1" on (\$\w+) with a record whose (plugin_id|integration_id|native_id) is (.+)$"#
)]
async fn meta_set_bad_field(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let record = record_with(&c[2], &bad_value(&c[3]));
        set_after_control(s.live(), &c[1], &record)
    })
    .await;
}

#[when(regex = r#"^meta.set writes "agent-session/v1" on (\$\w+) with a record of (\d+) bytes$"#)]
async fn meta_set_sized(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let n = c[2].parse().or_harness("a byte count");
        set_after_control(s.live(), &c[1], &record_of_size(n))
    })
    .await;
}

/// The refused call's error. Every refusal row ran its valid twin first (the record
/// rows' steps, the launch and spawn twins): it must have been accepted, else the
/// refusal proves nothing and the row is `inconclusive`.
fn error_of(l: &Live) -> Value {
    crate::evidence::require_accepted_control();
    match &l.last().result {
        // Judged under the row's own clause (its tag).
        Ok(v) => crate::evidence::fail(None, "the call refused", format!("it succeeded: {v}")),
        Err(e) => e.clone(),
    }
}

#[then(regex = r#"^the call fails with "([a-z_.]+)"$"#)]
async fn call_fails(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c: Caps| {
        let e = error_of(s.live());
        pins::judge_error(&e, &c[1], None);
    })
    .await;
}

#[then(regex = r#"^the call fails with "([a-z_.]+)" by rule "([a-z0-9_.]+)"$"#)]
async fn call_fails_by_rule(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let e = error_of(s.live());
        pins::judge_error(&e, &c[1], Some(&c[2]));
    })
    .await;
}

/// ADR-0068 §1 calls the record "opaque", and §4 has the server validate "its
/// 1–4096-byte envelope"; whether the server also reads a record's content on
/// `meta.set` is the kit's reading. What the ADR does require of an invalid record is
/// §5's: "Invalid, padded, option-shaped, control-bearing, or oversized identities
/// fail closed." So a `meta.set` of an invalid record (its valid twin accepted first)
/// is either refused, the refusal judged as the other refusal rows (its names under
/// the pin) and the pane's record unchanged, or accepted, and then the next workspace
/// save fails, or archives nothing of that record for the pane's session.
#[then(
    regex = r#"^the write is refused with "([a-z_.]+)" by rule "([a-z0-9_.]+)", or the next save fails closed on it$"#
)]
async fn write_refused_or_save_fails_closed(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        crate::evidence::require_accepted_control();
        let (pane, written) = l.written.clone().or_harness("no meta.set of a record ran");
        if let Err(e) = &l.last().result {
            let e = e.clone();
            pins::judge_error(&e, &c[1], Some(&c[2]));
            let target = l.subst(&pane);
            let got = l.meta(&target, RECORD_KEY);
            let want: Value = serde_json::from_str(&twin()).or_harness("the twin");
            let got_json = got.as_deref().and_then(|t| serde_json::from_str::<Value>(t).ok());
            assert!(
                got_json.as_ref() == Some(&want),
                "the refused write left the pane's record unchanged ({want}); meta.get read {got:?}"
            );
            return;
        }
        let session = l
            .s
            .vars
            .get(&format!("{}@session", pane.trim_start_matches('$')))
            .cloned()
            .or_harness("the session of the written pane");
        super::restore::save(l, "fail-closed.json");
        let reply = l.client_reply.as_ref().or_harness("no save ran");
        if reply.result.is_err() {
            return;
        }
        let archive = super::restore::archive_of(l, "fail-closed.json");
        let written: Value = serde_json::from_str(&written).unwrap_or(Value::String(written));
        let carried = carried(&archive, &session, &written);
        assert!(
            carried.is_empty(),
            "meta.set accepted an invalid record and the save archived it: expected the save to fail, \
             or archive nothing of it for the session {session}; observed agent_session {}",
            carried.iter().map(Value::to_string).collect::<Vec<_>>().join(", ")
        );
    })
    .await;
}

/// The `agent_session` members of the archive's session `session` that carry the
/// invalid record `written`: the same value, a member beyond the three, or one of its
/// ids that differs from the valid twin's.
fn carried(archive: &Value, session: &str, written: &Value) -> Vec<Value> {
    let twin: Value = serde_json::from_str(&twin()).or_harness("the twin");
    let sessions = archive["sessions"].as_array().cloned().unwrap_or_default();
    let mine = sessions.iter().filter(|s| s["name"] == session);
    let records = mine
        .flat_map(|s| s["windows"].as_array().cloned().unwrap_or_default())
        .flat_map(|w| w["panes"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.get("agent_session").cloned());
    let ids = ["plugin_id", "integration_id", "native_id"];
    records
        .filter(|r| {
            r == written
                || r.as_object()
                    .is_some_and(|m| m.keys().any(|k| !ids.contains(&k.as_str())))
                || ids.iter().any(|k| {
                    written.get(k).is_some_and(|v| v != &twin[*k]) && r.get(k) == written.get(k)
                })
        })
        .collect()
}

#[then(regex = r"^the call succeeds$")]
async fn call_succeeds(w: &mut World) {
    w.run(&[], None, |s, _| {
        if let Err(e) = &s.live().last().result {
            panic!("the call failed: {e}");
        }
    })
    .await;
}

#[then(regex = r"^the new window has no pane$")]
async fn window_has_no_pane(w: &mut World) {
    w.run(&[], None, |s, _| {
        let l = s.live();
        let window = l.subst("$window");
        let panes = l.panes_of(&window);
        assert!(panes.is_empty(), "the window has panes: {panes:?}");
    })
    .await;
}

#[then(regex = r#"^meta.get "([^"]+)" on (\$\w+) is the record of "([^"]*)" "([^"]*)" "([^"]*)"$"#)]
async fn meta_is_record(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let pane = l.subst(&c[2]);
        let got = l
            .meta(&pane, &c[1])
            .unwrap_or_else(|| panic!("meta.get found no value under {}", &c[1]));
        let got: Value =
            serde_json::from_str(&got).unwrap_or_else(|_| panic!("the value is not JSON: {got:?}"));
        let want: Value = serde_json::from_str(&record_text(&c[3], &c[4], &c[5])).unwrap();
        assert_eq!(got, want);
    })
    .await;
}

#[then(regex = r#"^meta.get "([^"]+)" on (\$\w+) is '(.*)'$"#)]
async fn meta_is_text(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let pane = l.subst(&c[2]);
        assert_eq!(l.meta(&pane, &c[1]).as_deref(), Some(&c[3]));
    })
    .await;
}

#[then(regex = r#"^meta.get "([^"]+)" on (\$\w+) is unset$"#)]
async fn meta_is_unset(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let pane = l.subst(&c[2]);
        assert_eq!(l.meta(&pane, &c[1]), None);
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(session: &str, record: Value) -> Value {
        json!({"schema_version": 2, "sessions": [{"name": session, "windows": [
            {"name": "w", "panes": [{"cwd": "/", "agent_session": record}]}]}]})
    }

    /// The accepted-write branch fails on an archive that carries the invalid record
    /// (copied, stripped of nothing, or with its bad id), and passes one that does not.
    #[test]
    fn a_save_that_archives_the_invalid_record_is_caught() {
        let padded: Value = serde_json::from_str(&record_with("native_id", " padded ")).unwrap();
        assert_eq!(
            carried(&archive("asr-1", padded.clone()), "asr-1", &padded).len(),
            1
        );
        let mut other = padded.clone();
        other["plugin_id"] = json!("x");
        assert_eq!(carried(&archive("asr-1", other), "asr-1", &padded).len(), 1);
        let extra =
            json!({"plugin_id":"team","integration_id":"stub","native_id":"n1","argv":["sh"]});
        assert_eq!(
            carried(&archive("asr-1", extra.clone()), "asr-1", &extra).len(),
            1
        );
        // The pane's old, valid record, or another session's, is not the write's.
        let valid: Value = serde_json::from_str(&twin()).unwrap();
        assert!(carried(&archive("asr-1", valid), "asr-1", &padded).is_empty());
        assert!(carried(&archive("asr-2", padded.clone()), "asr-1", &padded).is_empty());
    }
}
