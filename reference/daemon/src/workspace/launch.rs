//! `vxref agent launch`: the id from `--native-id`, else from the integration's
//! `$<native_env>`; `agent.launch`, then the read-back ADR-0068 §4 asks of a
//! launching client. A server with `agent_session_spawn` installed the record in the
//! pane's turn: `meta.get` must return exactly the bytes the reply names. An older
//! server ignored it: the client sets it with `meta.set` and confirms with `meta.get`,
//! at most 3 times within 2 s. A record that cannot be confirmed gets the new pane
//! killed and the launch fails `conflict.agent_session_unconfirmed`.

use super::Client;
use crate::errors::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const RECORD_KEY: &str = crate::agent::meta::AGENT_SESSION_KEY;
/// The fallback's tries and its whole budget.
const FALLBACK_TRIES: usize = 3;
const FALLBACK_BUDGET: Duration = Duration::from_secs(2);

fn reads_back(c: &Client, pane: &str, record: &str) -> bool {
    c.call("meta.get", json!({"pane": pane, "key": RECORD_KEY}))
        .ok()
        .is_some_and(|v| v["value"].as_str() == Some(record))
}

fn confirmed_by_fallback(c: &Client, pane: &str, record: &str) -> bool {
    // The negative control trusts the spawn field an older server ignores.
    if crate::negative::active(crate::negative::Defect::FallbackClientNoSet) {
        return true;
    }
    let start = Instant::now();
    for _ in 0..FALLBACK_TRIES {
        let set = c.call(
            "meta.set",
            json!({"pane": pane, "key": RECORD_KEY, "value": record}),
        );
        if set.is_ok() && reads_back(c, pane, record) {
            return true;
        }
        if start.elapsed() >= FALLBACK_BUDGET {
            break;
        }
        std::thread::sleep(FALLBACK_BUDGET / (FALLBACK_TRIES as u32 * 2));
    }
    false
}

/// Without `--native-id`, the caller's id is the integration's `$<native_env>`
/// (ADR-0068 §3: a caller-supplied native_env value resumes that exact identity).
/// The variable is named by the one enabled owner `integration.list` shows (the
/// expected one, when given); anything else leaves the id to `agent.launch`, which
/// judges the owner itself. An empty variable supplies nothing; an invalid one is
/// the daemon's to refuse.
fn native_id_from_env(c: &Client, params: &mut Value) -> Result<(), Value> {
    if params.get("native_id").is_some() {
        return Ok(());
    }
    let list = c.call("integration.list", json!({}))?;
    let owners: Vec<&Value> = list["integrations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["integration_id"] == params["integration"] && e["enabled"] == json!(true))
        .filter(|e| {
            params
                .get("expect_plugin_id")
                .is_none_or(|p| e["plugin_id"] == *p)
        })
        .collect();
    let [owner] = owners.as_slice() else {
        return Ok(());
    };
    let Some(name) = owner["native_env"].as_str() else {
        return Ok(());
    };
    if let Some(id) = std::env::var_os(name) {
        let id = id
            .into_string()
            .map_err(|_| ApiError::param("native_id", "the native id must be UTF-8").to_json())?;
        if !id.is_empty() {
            params["native_id"] = json!(id);
        }
    }
    Ok(())
}

pub fn run(c: &Client, mut params: Value) -> Result<Value, Value> {
    native_id_from_env(c, &mut params)?;
    let info = c.call("server.info", json!({}))?;
    let atomic = info["capabilities"]
        .as_array()
        .is_some_and(|caps| caps.contains(&json!("agent_session_spawn")));
    let launched = c.call("agent.launch", params)?;
    let Some(record) = launched["agent_session"].as_str() else {
        return Ok(launched);
    };
    let pane = launched["pane"].as_str().unwrap_or_default();
    let ok = if atomic {
        reads_back(c, pane, record)
    } else {
        confirmed_by_fallback(c, pane, record)
    };
    // The negative control trusts the reply (crate::negative).
    let ok =
        ok || (atomic && crate::negative::active(crate::negative::Defect::LaunchClientNoReadback));
    if !ok {
        let _ = c.call("pane.kill", json!({"pane": pane}));
        return Err(ApiError::code(ErrorCode::AgentSessionUnconfirmed).to_json());
    }
    Ok(launched)
}
