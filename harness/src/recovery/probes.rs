//! Judges and small actions the recovery steps share: the traced publication, the
//! newest checkpoint in the store read by the kit's strict reader, a pane made
//! through the wire, request parameters.

use super::scenario::Scenario;
use serde_json::{Map, Value};

/// The configuration that enables recovery and nothing else.
pub const ENABLED: &str = ".{ .recovery = .{ .enabled = true } }\n";

/// RFC §3's publication, as the injector traced it: the temporary file is written
/// and fsynced, renamed to `<checkpoint>.json`, then the store directory is fsynced,
/// every call really done (`action` "pass") and successful.
pub fn check_publication(calls: &[Value], checkpoint: &str) {
    let done = |c: &Value| c["action"] == "pass" && c["errno"] == 0;
    let final_name = format!("/{checkpoint}.json");
    let (ri, rename) = calls
        .iter()
        .enumerate()
        .find(|(_, c)| {
            c["op"] == "rename"
                && c["path2"]
                    .as_str()
                    .is_some_and(|p| p.ends_with(&final_name))
        })
        .unwrap_or_else(|| panic!("no rename to {checkpoint}.json in the trace"));
    assert!(done(rename), "the rename was not done: {rename}");
    let tmp = rename["path"].as_str().unwrap_or("");
    let dest = rename["path2"].as_str().unwrap_or("");
    let dir = dest.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let before = &calls[..ri];
    let last_write = before
        .iter()
        .rposition(|c| c["op"] == "write" && c["path"] == tmp)
        .unwrap_or_else(|| panic!("no write of {tmp} before the rename"));
    let synced = before[last_write..]
        .iter()
        .find(|c| c["op"] == "fsync" && c["path"] == tmp)
        .unwrap_or_else(|| panic!("the temporary file was not fsynced after its last write"));
    assert!(
        done(synced),
        "the temporary file's fsync was not done: {synced}"
    );
    let dir_sync = calls[ri..]
        .iter()
        .find(|c| c["op"] == "fsync" && c["path"] == dir)
        .unwrap_or_else(|| panic!("the store directory was not fsynced after the rename"));
    assert!(
        done(dir_sync),
        "the store directory's fsync was not done: {dir_sync}"
    );
}

/// The highest-generation file of the store, validated by the kit's strict reader:
/// (format, decoded payload).
pub fn newest_checkpoint(w: &Scenario) -> (u64, Value) {
    let mut best: Option<(u64, u64, Value)> = None;
    for (name, m) in w.store_entries() {
        if !(name.starts_with('c') && name.ends_with(".json")) {
            continue;
        }
        assert!(m.is_file(), "{name} is not a regular file");
        let bytes = std::fs::read(w.ph.store.join(&name)).expect("read checkpoint");
        let ctx = vx_format::ReadContext {
            file_name: Some(&name),
            socket: None,
            uid: Some(u64::from(nix::unistd::geteuid().as_raw())),
            max_bytes: vx_format::limits::DEFAULT_MAX_CHECKPOINT_BYTES,
        };
        if let Err(e) = vx_format::read(&bytes, &ctx) {
            panic!(
                "{name} written by the implementation is invalid: {}",
                e.reason()
            );
        }
        let env: Value = serde_json::from_slice(&bytes).expect("envelope");
        let payload: Value =
            serde_json::from_str(env["payload"].as_str().expect("payload")).expect("payload");
        let gen = payload["generation"].as_u64().expect("generation");
        let format = env["format"].as_u64().expect("format");
        if best.as_ref().is_none_or(|b| gen > b.0) {
            best = Some((gen, format, payload));
        }
    }
    let (_, format, payload) = best.expect("the store holds no checkpoint file");
    (format, payload)
}

pub fn ok_value(w: &Scenario) -> Value {
    match &w.last().result {
        Ok(v) => v.clone(),
        Err(e) => panic!("the call failed: {e}"),
    }
}

pub fn parse_params(text: Option<&str>) -> Map<String, Value> {
    match text {
        None => Map::new(),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(mut m)) => {
                // The profile's spelling of a grant, when it declares one.
                let declared = crate::profile::try_context().and_then(|c| c.profile.grant.as_ref());
                if let Some(t) = declared {
                    super::grants::spell_with(t, &mut m);
                }
                m
            }
            _ => crate::harness_error!("params are not a JSON object: {t}"),
        },
    }
}

pub fn create_pane(w: &mut Scenario, name: &str, argv: Vec<String>) {
    let token = w.owner_token();
    let call = |w: &mut Scenario, verb: &str, params: Value| -> Value {
        let Value::Object(p) = params else {
            unreachable!()
        };
        match w.wire(Some(&token), verb, p).result {
            Ok(v) => v,
            Err(e) => panic!("{verb} failed: {e}"),
        }
    };
    let s = call(w, "session.create", serde_json::json!({"name": name}));
    let session = s["session"].as_str().expect("session id").to_string();
    let win = call(
        w,
        "window.create",
        serde_json::json!({"session": session, "name": "main"}),
    );
    let window = win["window"].as_str().expect("window id").to_string();
    let p = call(
        w,
        "pane.create",
        serde_json::json!({"window": window, "argv": argv}),
    );
    let pane = p["pane"].as_str().expect("pane id").to_string();
    if let Some(pid) = p["pid"].as_i64() {
        w.vars.insert("pid".into(), pid.to_string());
    }
    w.vars.insert("session".into(), session);
    w.vars.insert("window".into(), window);
    w.vars.insert("pane".into(), pane);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_must_be_objects() {
        assert!(parse_params(Some("{\"a\":1}")).contains_key("a"));
        assert!(parse_params(None).is_empty());
        assert!(std::panic::catch_unwind(|| parse_params(Some("[1]"))).is_err());
    }
}
