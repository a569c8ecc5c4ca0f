//! `GET /api/sessions` (states `starting`, `attached`, `detached`, `exited`, `stored`) and `POST /api/sessions/{key}/archive` (retire).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use super::{error_response, App};
use crate::key::{parse_key, SessionKey};
use crate::lock::Acquired;
use crate::master::frame;
use crate::open::{probe, Liveness};

/// `{sessions:[{key,physical_key,state,alive,viewers,alias?}]}`: one row per live or
/// stale socket in the runtime directory, listed under the real key once a
/// placeholder is reconciled, then one `stored` row per session of an engine's index
/// that has none (resolved through the aliases first, so a reconciled real id is
/// never a second row beside its placeholder's).
pub(crate) async fn list(State(app): State<Arc<App>>) -> Response {
    let aliases = match crate::alias::load(&app.runtime) {
        Ok(a) => a,
        Err(e) => return error_response(e),
    };
    let viewers = app
        .viewers
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    let starting = app.opener.starting();
    let mut rows: Vec<Value> = Vec::new();
    let entries = std::fs::read_dir(&app.runtime)
        .into_iter()
        .flatten()
        .flatten();
    for entry in entries {
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".sock")) else {
            continue;
        };
        let Some(physical) = SessionKey::from_socket_stem(stem) else {
            continue;
        };
        let stem = &physical.physical();
        let alive = probe(&entry.path()) == Liveness::Live;
        let count = viewers.get(stem).copied().unwrap_or(0);
        let state = match (alive, count) {
            _ if starting.contains(&stem.to_owned()) => "starting",
            (false, _) => "exited",
            (true, 0) => "detached",
            (true, _) => "attached",
        };
        let mut row = json!({
            "key": physical.as_str(),
            "physical_key": stem,
            "state": state,
            "alive": alive,
            "viewers": count,
        });
        if let Some(real) = aliases.real_of(&physical) {
            row["key"] = real.as_str().into();
            row["alias"] = physical.as_str().into();
        }
        rows.push(row);
    }
    // A launch whose master has not bound its socket yet is listed too.
    for stem in &starting {
        if rows.iter().any(|r| r["physical_key"] == stem.as_str()) {
            continue;
        }
        if let Some(physical) = SessionKey::from_physical(stem) {
            rows.push(json!({
                "key": physical.as_str(),
                "physical_key": stem,
                "state": "starting",
                "alive": false,
                "viewers": 0,
            }));
        }
    }
    for key in indexed_sessions(&app) {
        let physical = if crate::negative::is(crate::negative::Defect::GhostRow) {
            &key
        } else {
            aliases.physical_key(&key)
        };
        let stem = physical.physical();
        if rows.iter().any(|r| r["physical_key"] == stem.as_str()) {
            continue;
        }
        let mut row = json!({
            "key": key.as_str(),
            "physical_key": stem,
            "state": "stored",
            "alive": false,
            "viewers": 0,
        });
        if physical != &key {
            row["alias"] = physical.as_str().into();
        }
        rows.push(row);
    }
    rows.sort_by(|a, b| a["key"].as_str().cmp(&b["key"].as_str()));
    Json(json!({ "sessions": rows })).into_response()
}

/// The sessions the engines' indexes hold (read-only). An index template naming `{id}`
/// or `{cwd}` is per session or per directory, not a list, and an index file two
/// engines share cannot say whose ids it holds: neither is scanned. Ids not of the
/// engine's kind are skipped.
fn indexed_sessions(app: &App) -> Vec<SessionKey> {
    let history = app.history.to_string_lossy();
    let bin_dir = app.bin_dir.to_string_lossy();
    let vars = crate::engines::Vars {
        bin_dir: &bin_dir,
        history: &history,
        ..Default::default()
    };
    let indexes: Vec<(&str, &crate::engines::Engine, std::path::PathBuf)> = app
        .engines
        .iter()
        .filter_map(|(name, engine)| {
            let template = engine.index.as_deref()?;
            let listed = !(template.contains("{id}") || template.contains("{cwd}"));
            listed.then(|| (name, engine, crate::engines::expand(template, &vars).into()))
        })
        .collect();
    let mut out = Vec::new();
    for (name, engine, index) in &indexes {
        if indexes
            .iter()
            .filter(|(_, _, other)| other == index)
            .count()
            > 1
        {
            continue;
        }
        for id in super::reconcile::read_index(index, engine.spec.id, None) {
            if let Ok(key) = parse_key(&format!("{name}:{id}"), &app.table, false) {
                out.push(key);
            }
        }
    }
    out
}

/// Retire: stop the master through its socket, clear the claim (and the owner file
/// under `--takeover`), and unlink a leftover socket under the lock. Best effort; history is never touched.
pub(crate) async fn archive(Path(key): Path<String>, State(app): State<Arc<App>>) -> Response {
    let key = match parse_key(&key, &app.table, true) {
        Ok(k) => k,
        Err(e) => return error_response(e),
    };
    let aliases = match crate::alias::load(&app.runtime) {
        Ok(a) => a,
        Err(e) => return error_response(e),
    };
    let physical = aliases.physical_key(&key).clone();
    let sock = app.opener.socket_path(&physical);
    let mut stopped = false;
    if probe(&sock) == Liveness::Live {
        if let Ok(mut s) = tokio::net::UnixStream::connect(&sock).await {
            let mut bytes = frame::encode(frame::HELLO, &frame::hello(None, None));
            bytes.extend(frame::encode(frame::STOP, &[]));
            let _ = s.write_all(&bytes).await;
            let deadline = Instant::now() + Duration::from_secs(5);
            while probe(&sock) == Liveness::Live && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            stopped = probe(&sock) != Liveness::Live;
        }
    }
    app.claims.clear(&physical.physical());
    if app.takeover {
        super::takeover::clear(&app.runtime, &physical.physical());
    }
    if crate::negative::is(crate::negative::Defect::ReapWithoutLock)
        && probe(&sock) == Liveness::Stale
    {
        let _ = nix::unistd::unlink(&sock);
    }
    let reap = Arc::clone(&app);
    let reaped =
        tokio::task::spawn_blocking(move || match reap.opener.locks().acquire(&physical) {
            Ok(Acquired::Won(lock)) => {
                let stale = probe(&sock) == Liveness::Stale && nix::unistd::unlink(&sock).is_ok();
                let _ = lock.release();
                stale
            }
            _ => false,
        })
        .await
        .unwrap_or(false);
    Json(json!({ "key": key.as_str(), "stopped": stopped, "reaped": reaped })).into_response()
}
