//! `vxref agent launch`: `agent.launch`, then the read-back ADR-0068 §4 asks of a
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

pub fn run(c: &Client, params: Value) -> Result<Value, Value> {
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
    if !ok {
        let _ = c.call("pane.kill", json!({"pane": pane}));
        return Err(ApiError::code(ErrorCode::AgentSessionUnconfirmed).to_json());
    }
    Ok(launched)
}
