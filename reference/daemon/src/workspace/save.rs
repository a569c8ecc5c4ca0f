//! `workspace save`: every pane's record read from that exact pane (ADR-0068 §5),
//! the pane set read before and after those reads (a pane killed in between makes
//! the save read again, never archive a record that was reaped), then the canonical
//! archive, published atomically (temporary 0600 file, fsync, rename, directory
//! fsync). An invalid live record fails the save.

use super::limits::SAVE_ATTEMPTS;
use super::Client;
use crate::errors::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use vx_agentsession::archive::{self, Archive, Pane, Session, Window};
use vx_agentsession::record::Record;

const RECORD_KEY: &str = crate::agent::meta::AGENT_SESSION_KEY;

fn pane_ids(c: &Client) -> Result<Vec<Value>, Value> {
    let v = c.call("pane.list", json!({}))?;
    Ok(v["panes"].as_array().cloned().unwrap_or_default())
}

fn ids(panes: &[Value]) -> Vec<&str> {
    panes.iter().filter_map(|p| p["pane"].as_str()).collect()
}

/// The records of `panes`, or `None` when a pane vanished while they were read.
fn records(c: &Client, panes: &[Value]) -> Result<Option<BTreeMap<String, Record>>, Value> {
    let mut out = BTreeMap::new();
    for id in ids(panes) {
        let got = match c.call("meta.get", json!({"pane": id, "key": RECORD_KEY})) {
            Ok(v) => v,
            Err(e) if e["code"] == "not_found.pane" => return Ok(None),
            Err(e) => return Err(e),
        };
        if let Some(text) = got["value"].as_str() {
            let record = crate::agent::meta::check_record(text.as_bytes()).map_err(|e| {
                ApiError::code(ErrorCode::ArchiveCorrupt)
                    .with("rule", "archive.record")
                    .with("detail", e.data.get("rule").cloned().unwrap_or_default())
                    .to_json()
            })?;
            out.insert(id.to_string(), record);
        }
    }
    Ok(Some(out))
}

fn build(sessions: &Value, panes: &[Value], records: &BTreeMap<String, Record>) -> Archive {
    let mut archive = Archive::default();
    for s in sessions["sessions"].as_array().into_iter().flatten() {
        let mut session = Session {
            name: s["name"].as_str().unwrap_or_default().to_string(),
            ..Session::default()
        };
        for w in s["windows"].as_array().into_iter().flatten() {
            let mut window = Window {
                name: w["name"].as_str().unwrap_or_default().to_string(),
                ..Window::default()
            };
            for p in panes.iter().filter(|p| p["window"] == w["window"]) {
                let id = p["pane"].as_str().unwrap_or_default();
                window.panes.push(Pane {
                    cols: p["cols"].as_u64().and_then(|n| u16::try_from(n).ok()),
                    rows: p["rows"].as_u64().and_then(|n| u16::try_from(n).ok()),
                    agent_session: records.get(id).cloned(),
                    ..Pane::default()
                });
            }
            session.windows.push(window);
        }
        archive.sessions.push(session);
    }
    archive
}

fn file_io() -> Value {
    ApiError::code(ErrorCode::FileIo).to_json()
}

/// Publishes `bytes` at `path`: nothing partial is ever under the final name, and an
/// old archive stays intact until the rename.
fn publish(path: &Path, bytes: &[u8]) -> Result<(), Value> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let tmp = dir
        .unwrap_or(Path::new("."))
        .join(format!("ws-{}.tmp", uuid::Uuid::new_v4()));
    crate::paths::write_atomic(path, &tmp, bytes).map_err(|_| file_io())
}

pub fn run(c: &Client, output: Option<&Path>) -> Result<Value, Value> {
    for _ in 0..SAVE_ATTEMPTS {
        let sessions = c.call("session.list", json!({}))?;
        let before = pane_ids(c)?;
        let Some(records) = records(c, &before)? else {
            continue;
        };
        let after = pane_ids(c)?;
        if ids(&before) != ids(&after) {
            continue;
        }
        let archive = build(&sessions, &before, &records);
        let bytes = archive::write(&archive);
        let schema = if archive.has_records() { 2 } else { 1 };
        let summary = json!({
            "schema_version": schema,
            "sessions": archive.sessions.len(),
            "panes": before.len(),
            "records": records.len(),
        });
        return match output {
            Some(path) => {
                publish(path, &bytes)?;
                let mut s = summary;
                s["file"] = json!(path.display().to_string());
                Ok(s)
            }
            None => {
                let text = String::from_utf8(bytes).map_err(|_| ApiError::internal().to_json())?;
                Ok(Value::String(text))
            }
        };
    }
    Err(ApiError::new(
        ErrorCode::Revision,
        "the pane set kept changing during the save",
    )
    .to_json())
}
