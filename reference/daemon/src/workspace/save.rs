//! `workspace save`: every pane's record read from that exact pane (ADR-0068 §5),
//! the pane set read before and after those reads (a pane killed in between makes
//! the save read again, never archive a record that was reaped), then the canonical
//! archive, published atomically (temporary 0600 file, fsync, rename, directory
//! fsync). An invalid live record fails the save.

use super::layout;
use super::limits::SAVE_ATTEMPTS;
use super::Client;
use crate::errors::{ApiError, ErrorCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use vx_agentsession::archive::{self, Archive, Layout, Pane, Session, Window};
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

/// The archive of these listings, or `None` when a window's split tree does not
/// name exactly the tiled panes `pane.list` gave for it (the topology changed
/// between the two reads: the save reads again).
///
/// Panes keep `pane.list`'s order (creation order, so a launched agent pane stays
/// the first, the pane restore prefers); the layout's leaves index into it. What
/// the reference daemon does not know is not written: it has no focus (`active`:
/// focus is an attached client's), no pane working directory (its panes start in
/// the daemon's) and publishes only argv[0]'s basename (no `command`). A float's
/// title is its `title`. A window with floats has no `layout`, since an archive
/// layout must hold every pane and cannot place a float.
fn build(sessions: &Value, panes: &[Value], records: &BTreeMap<String, Record>) -> Option<Archive> {
    let mut archive = Archive::default();
    for s in sessions["sessions"].as_array().into_iter().flatten() {
        let mut session = Session {
            name: s["name"].as_str().unwrap_or_default().to_string(),
            ..Session::default()
        };
        for w in s["windows"].as_array().into_iter().flatten() {
            let mine: Vec<&Value> = panes
                .iter()
                .filter(|p| p["window"] == w["window"])
                .collect();
            let mut window = Window {
                name: w["name"].as_str().unwrap_or_default().to_string(),
                layout: window_layout(w, &mine)?,
                ..Window::default()
            };
            for p in mine {
                let id = p["pane"].as_str().unwrap_or_default();
                window.panes.push(Pane {
                    title: p["float"]["title"].as_str().map(str::to_string),
                    cols: p["cols"].as_u64().and_then(|n| u16::try_from(n).ok()),
                    rows: p["rows"].as_u64().and_then(|n| u16::try_from(n).ok()),
                    agent_session: records.get(id).cloned(),
                    ..Pane::default()
                });
                // The negative control's split taken for the same agent: a pane
                // without a record gets the one of the pane before it.
                if crate::negative::active(crate::negative::Defect::SaveSplitInheritsRecord) {
                    let n = window.panes.len();
                    if n > 1 && window.panes[n - 1].agent_session.is_none() {
                        window.panes[n - 1].agent_session =
                            window.panes[n - 2].agent_session.clone();
                    }
                }
            }
            session.windows.push(window);
        }
        archive.sessions.push(session);
    }
    Some(archive)
}

/// `Some(layout)` for a window of tiled panes whose tree names each exactly once
/// (`Some(None)`: no layout to write); `None` when tree and listing disagree.
fn window_layout(w: &Value, panes: &[&Value]) -> Option<Option<Layout>> {
    let nodes = w["nodes"].as_array().map_or(&[][..], Vec::as_slice);
    let floats = panes.iter().any(|p| p["layer"] == "float");
    if floats || panes.is_empty() {
        return Some(None);
    }
    let index_of = |id: &str| panes.iter().position(|p| p["pane"] == id);
    let tiled_leaves = nodes.iter().filter(|n| n["kind"] == "pane").count();
    if tiled_leaves != panes.len() {
        return None;
    }
    // A tree too deep for an archive is archived without its layout.
    let Some(layout) = layout::from_nodes(nodes, &index_of) else {
        let known = nodes
            .iter()
            .filter(|n| n["kind"] == "pane")
            .all(|n| n["pane"].as_str().is_some_and(|id| index_of(id).is_some()));
        return known.then_some(None);
    };
    let mut leaves = layout.leaves();
    leaves.sort_unstable();
    leaves.dedup();
    (leaves.len() == panes.len()).then_some(Some(layout))
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
            // The negative control compares the counts only (crate::negative).
            let count_only = crate::negative::active(crate::negative::Defect::SaveRecheckCountOnly);
            if !count_only || before.len() != after.len() {
                continue;
            }
        }
        let Some(archive) = build(&sessions, &before, &records) else {
            continue;
        };
        let mut bytes = archive::write(&archive);
        let mut schema = if archive.has_records() { 2 } else { 1 };
        if schema == 1 && crate::negative::active(crate::negative::Defect::SaveAlwaysSchema2) {
            // The negative control's writer stamps 2 whatever the panes hold.
            let text = String::from_utf8_lossy(&bytes).replacen(
                "\"schema_version\":1",
                "\"schema_version\":2",
                1,
            );
            (bytes, schema) = (text.into_bytes(), 2);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn listings() -> (Value, Vec<Value>) {
        let sessions = json!({"sessions": [
            {"name": "nested", "session": "s1", "windows": [
                {"name": "w", "window": "w1", "nodes": [
                    {"kind":"split","axis":"cols","first":1,"second":4,"ratio":3000},
                    {"kind":"split","axis":"rows","first":2,"second":3,"ratio":7500},
                    {"kind":"pane","pane":"p3"},
                    {"kind":"pane","pane":"p1"},
                    {"kind":"pane","pane":"p2"},
                ]},
                {"name": "floats", "window": "w2", "nodes": [{"kind":"pane","pane":"p4"}]},
            ]},
        ]});
        let pane = |id: &str, w: &str| json!({"pane": id, "window": w, "cols": 10, "rows": 5});
        let mut float = pane("p5", "w2");
        float["layer"] = json!("float");
        float["float"] = json!({"title": "notes", "z": 1});
        let panes = vec![
            pane("p1", "w1"),
            pane("p2", "w1"),
            pane("p3", "w1"),
            pane("p4", "w2"),
            float,
        ];
        (sessions, panes)
    }

    #[test]
    fn the_reader_takes_back_what_save_writes() {
        let (sessions, panes) = listings();
        let record = Record {
            plugin_id: "team".into(),
            integration_id: "stub".into(),
            native_id: "n-1".into(),
        };
        let records: BTreeMap<String, Record> = [("p1".to_string(), record.clone())].into();
        let archive = build(&sessions, &panes, &records).expect("a consistent listing");
        let bytes = archive::write(&archive);
        let decoded = archive::read(&bytes).expect("the reader accepts the writer's archive");
        assert_eq!(decoded.schema_version, 2);
        assert_eq!(decoded.archive, archive);
        let w = &decoded.archive.sessions[0].windows[0];
        assert_eq!(w.panes[0].agent_session, Some(record));
        let Some(Layout::Split { ratio, left, .. }) = &w.layout else {
            panic!("no layout: {w:?}");
        };
        assert_eq!(*ratio, 0.3);
        assert_eq!(left.leaves(), vec![2, 0]);
        let floats = &decoded.archive.sessions[0].windows[1];
        assert_eq!(floats.layout, None, "a window with a float has no layout");
        assert_eq!(floats.panes[1].title.as_deref(), Some("notes"));
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.contains(r#""layout":{"kind":"split","dir":"horizontal","ratio":0.3,"left":{"kind":"split","dir":"vertical","ratio":0.75,"left":{"kind":"pane","pane":2},"right":{"kind":"pane","pane":0}},"right":{"kind":"pane","pane":1}},"panes":"#),
            "{text}"
        );
    }

    #[test]
    fn a_tree_that_disagrees_with_the_pane_list_makes_the_save_read_again() {
        let (sessions, mut panes) = listings();
        panes.remove(1);
        assert!(build(&sessions, &panes, &BTreeMap::new()).is_none());
        let (sessions, mut panes) = listings();
        panes.push(json!({"pane": "p9", "window": "w1"}));
        assert!(build(&sessions, &panes, &BTreeMap::new()).is_none());
    }
}
