//! `workspace restore` (ADR-0068 §6), in order: validate the archive; skip sessions
//! whose names exist (untouched); plan each other session's preferred pane against
//! the current `integration.list` (any failure creates nothing); probe that
//! `session.created/v1/*` is the server's; then create each session with `unique`,
//! its windows, the native pane through `agent.launch {native_id, expect_plugin_id}`
//! (the current template decides argv, env and cwd) confirmed by `meta.get`, and
//! every other pane with `--fallback-argv`. The archive's `command` and `cwd` are
//! never used: they are display data. All of it runs on one connection, on which
//! each `session.create {unique, request_token}` leaves the one-shot result that
//! tells this restore, and no other client, which session it created.

use super::layout;
use super::{archive_error, Client};
use crate::errors::{ApiError, ErrorCode};
use crate::negative::{self, Defect};
use serde_json::{json, Value};
use std::io::Read as _;
use std::path::Path;
use vx_agentsession::archive::{self, Layout, Session};
use vx_agentsession::limits::{MAX_ARGV_ELEMENTS, MIN_ARGV_ELEMENTS};
use vx_agentsession::record::Record;

const RECORD_KEY: &str = crate::agent::meta::AGENT_SESSION_KEY;
/// The `server.info` capability of the one-shot creation result.
const CREATED_RESULT_CAPABILITY: &str = "session_created_result";

fn err(code: ErrorCode) -> Value {
    ApiError::code(code).to_json()
}

fn read_archive(path: &Path) -> Result<Vec<u8>, Value> {
    let file = std::fs::File::open(path).map_err(|_| err(ErrorCode::FileIo))?;
    let len = file.metadata().map_err(|_| err(ErrorCode::FileIo))?.len();
    // Decided on the length alone, before a byte is read.
    archive::check_length(len).map_err(|e| archive_error(&e))?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(vx_agentsession::check::ARCHIVE_READ_LIMIT)
        .read_to_end(&mut bytes)
        .map_err(|_| err(ErrorCode::FileIo))?;
    Ok(bytes)
}

fn fallback_argv(text: Option<&String>) -> Result<Option<Vec<String>>, Value> {
    let Some(text) = text else { return Ok(None) };
    let bad = || {
        ApiError::param(
            "fallback_argv",
            "fallback argv must be a JSON array of 1-256 non-empty strings",
        )
        .to_json()
    };
    let v = crate::strict_json::parse_strict(text.as_bytes()).map_err(|_| bad())?;
    let argv: Vec<String> = v
        .as_array()
        .ok_or_else(bad)?
        .iter()
        .map(|a| a.as_str().filter(|s| !s.is_empty()).map(str::to_string))
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    if !(MIN_ARGV_ELEMENTS..=MAX_ARGV_ELEMENTS).contains(&argv.len()) {
        return Err(bad());
    }
    Ok(Some(argv))
}

/// The current owner of `record.integration_id`, judged as `agent.launch` will:
/// checked here first so that a failure creates nothing.
fn plan(record: &Record, integrations: &Value) -> Result<(), Value> {
    let owners: Vec<&Value> = integrations["integrations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["integration_id"] == json!(record.integration_id))
        .collect();
    if owners.is_empty() {
        return Err(err(ErrorCode::IntegrationNotFound));
    }
    let enabled: Vec<&&Value> = owners
        .iter()
        .filter(|e| e["enabled"] == json!(true))
        .collect();
    let owner = match enabled.as_slice() {
        [] => return Err(err(ErrorCode::IntegrationDisabled)),
        [one] => *one,
        [first, ..] if negative::active(Defect::RestoreAmbiguousTakesFirst) => *first,
        _ => return Err(err(ErrorCode::IntegrationAmbiguous)),
    };
    if owner["plugin_id"] != json!(record.plugin_id) {
        // The negative control's plan does not compare the owners (crate::negative).
        let unchecked = negative::active(Defect::RestoreOwnerUnchecked);
        if !unchecked {
            return Err(err(ErrorCode::IntegrationOwner));
        }
    }
    if owner["restorable"] != json!(true) {
        return Err(err(ErrorCode::NativeRestore));
    }
    Ok(())
}

/// §6's probe: a server that still lets clients write its reserved namespace is an
/// older one, refused before anything is created; any answer but the refusal fails
/// closed.
fn probe(c: &Client, any_pane: &str) -> Result<(), Value> {
    let key = format!(
        "{}{}",
        crate::agent::meta::RESERVED_PREFIX,
        uuid::Uuid::new_v4()
    );
    let params = json!({"pane": any_pane, "key": key, "value": "probe"});
    match c.call("meta.set", params) {
        Err(e) if e["code"] == "denied.reserved_key" => Ok(()),
        Ok(_) => {
            let _ = c.call("meta.delete", json!({"pane": any_pane, "key": key}));
            Err(ApiError::code(ErrorCode::NativeRestore)
                .with("rule", "restore.probe_writable")
                .to_json())
        }
        Err(_) => Err(ApiError::code(ErrorCode::NativeRestore)
            .with("rule", "restore.probe_unanswered")
            .to_json()),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> Result<&'a str, Value> {
    v[key].as_str().ok_or_else(|| err(ErrorCode::Internal))
}

/// Launches the native pane into `window` and confirms its record; a pane whose
/// record reads back different is killed.
fn launch_native(c: &Client, window: &str, record: &Record) -> Result<String, Value> {
    // The negative control names no expected owner (crate::negative).
    if negative::active(Defect::RestoreWithoutExpectedOwner) {
        let params = json!({"window": window, "integration": record.integration_id, "native_id": record.native_id});
        let launched = c.call("agent.launch", params)?;
        return confirm_native(c, &launched, record);
    }
    let launched = c.call(
        "agent.launch",
        json!({
            "window": window,
            "integration": record.integration_id,
            "native_id": record.native_id,
            "expect_plugin_id": record.plugin_id,
        }),
    )?;
    confirm_native(c, &launched, record)
}

/// The launched pane's record read back: a pane whose record differs is killed.
fn confirm_native(c: &Client, launched: &Value, record: &Record) -> Result<String, Value> {
    let pane = str_of(launched, "pane")?.to_string();
    let want = String::from_utf8(record.encode()).map_err(|_| err(ErrorCode::Internal))?;
    let read = c.call("meta.get", json!({"pane": pane, "key": RECORD_KEY}));
    if read.as_ref().ok().and_then(|v| v["value"].as_str()) != Some(want.as_str()) {
        let _ = c.call("pane.kill", json!({"pane": pane}));
        return Err(err(ErrorCode::AgentSessionUnconfirmed));
    }
    Ok(pane)
}

/// A window name the daemon accepts (archived names are display data).
fn window_name(name: &str) -> String {
    if crate::topology::validate::valid_name(name) {
        name.to_string()
    } else {
        "w".to_string()
    }
}

/// How this restore learns which session it created: from `session.create`'s reply
/// alone (an older server), or from the one-shot result the create left on this
/// connection, which must agree with the reply.
enum Creation {
    Reply,
    /// Read through `meta.get` naming this pane (any the caller may read: the result
    /// is no pane's).
    OneShot {
        pane: String,
    },
}

/// The one-shot result of the create made with `token`: this connection's, read once.
/// Absent, or naming another session or name, fails closed, and the session is left
/// alone: nothing says it is this restore's.
fn created_result(
    c: &Client,
    pane: &str,
    token: &str,
    reply_sid: &str,
    name: &str,
) -> Result<(), Value> {
    let key = format!("{}{token}", crate::agent::meta::RESERVED_PREFIX);
    let read = c.call("meta.get", json!({"pane": pane, "key": key}))?;
    let result = read["value"]
        .as_str()
        .and_then(|text| crate::strict_json::parse_strict(text.as_bytes()).ok());
    let want = json!({"session": reply_sid, "name": name, "request_token": token});
    if result.as_ref() == Some(&want) {
        Ok(())
    } else {
        Err(ApiError::code(ErrorCode::NativeRestore)
            .with("rule", "restore.created_result")
            .to_json())
    }
}

fn restore_session(
    c: &Client,
    session: &Session,
    creation: &Creation,
    fallback: Option<&[String]>,
    native: &mut Vec<Value>,
) -> Result<bool, Value> {
    let mut params = json!({"name": session.name, "unique": true});
    if negative::active(Defect::RestoreNotUnique) {
        params = json!({"name": session.name});
    }
    let token = uuid::Uuid::new_v4().simple().to_string();
    if let Creation::OneShot { .. } = creation {
        params["request_token"] = json!(token);
    }
    let created = match c.call("session.create", params) {
        Ok(v) => v,
        // Another restore (or a user) took the name since it was read: skipped. A
        // losing create leaves no result, so nothing of the winner's is learnt.
        Err(e) if e["code"] == "conflict.exists" => return Ok(false),
        Err(e) => return Err(e),
    };
    let sid = str_of(&created, "session")?.to_string();
    if let Creation::OneShot { pane } = creation {
        created_result(c, pane, &token, &sid, &session.name)?;
    }
    // Created with `unique`, the session is this restore's own: a failure past this
    // point (an unconfirmed record above all) removes it, so no half-made session
    // is left for the next restore to skip as existing.
    let built = build_session(c, &sid, session, fallback, native);
    if built.is_err() {
        let _ = c.call("session.kill", json!({"session": sid}));
    }
    built.map(|()| true)
}

/// The windows and panes of the just-created session `sid`.
fn build_session(
    c: &Client,
    sid: &str,
    session: &Session,
    fallback: Option<&[String]>,
    native: &mut Vec<Value>,
) -> Result<(), Value> {
    let preferred = session.preferred_pane();
    for (wi, w) in session.windows.iter().enumerate() {
        let mut params = json!({"session": sid, "name": window_name(&w.name)});
        let size_of = |i: usize| w.panes.get(i).and_then(|p| Some((p.cols?, p.rows?)));
        let size = match &w.layout {
            Some(l) => layout::window_size(l, &size_of),
            None => size_of(0).filter(|(c, r)| *c > 0 && *r > 0),
        };
        if let Some((cols, rows)) = size {
            params["cols"] = json!(cols);
            params["rows"] = json!(rows);
        }
        let window = c.call("window.create", params)?;
        let wid = str_of(&window, "window")?.to_string();
        // The native pane first: agent.launch starts an empty window's first pane.
        let native_index = preferred
            .filter(|(pw, pi)| *pw == wi && w.panes[*pi].agent_session.is_some())
            .map(|(_, pi)| pi);
        let argv = || fallback.ok_or_else(|| err(ErrorCode::Param("fallback_argv")));
        let first = match native_index {
            Some(pi) => {
                let record = w.panes[pi].agent_session.as_ref().expect("checked");
                let pane = launch_native(c, &wid, record)?;
                native.push(json!({"session": session.name, "pane": pane, "integration_id": record.integration_id}));
                Some(pane)
            }
            None if w.panes.is_empty() => None,
            None => {
                let archived = w.panes[0].command.clone();
                let argv = match archived.filter(|_| negative::active(Defect::ArchivedCommandRuns))
                {
                    Some(command) => command,
                    None => argv()?.to_vec(),
                };
                let reply = c.call("pane.create", json!({"window": wid, "argv": argv}))?;
                Some(str_of(&reply, "pane")?.to_string())
            }
        };
        let Some(first) = first else { continue };
        match &w.layout {
            Some(l) => {
                let seed = native_index.unwrap_or_else(|| layout::first_leaf(l));
                grow(c, &first, l, seed, &argv)?;
            }
            // No layout: the other panes side by side, in archive order.
            None => {
                let mut last = first;
                for _ in 1..w.panes.len() {
                    let params = json!({"pane": last, "axis": "cols", "argv": argv()?});
                    last = str_of(&c.call("pane.split", params)?, "pane")?.to_string();
                }
            }
        }
    }
    Ok(())
}

/// Rebuilds `node` in the area `pane` (archived leaf `seed`) holds now: each split
/// divides the pane holding the seed's side, the new pane (on the other side, the
/// archived direction and ratio) seeding that side's first leaf.
fn grow<'a>(
    c: &Client,
    pane: &str,
    node: &Layout,
    seed: usize,
    argv: &dyn Fn() -> Result<&'a [String], Value>,
) -> Result<(), Value> {
    let Layout::Split {
        dir,
        ratio,
        left,
        right,
    } = node
    else {
        return Ok(());
    };
    let seed_left = layout::holds(left, seed);
    let reply = c.call(
        "pane.split",
        json!({
            "pane": pane,
            "axis": layout::axis_of(*dir),
            "ratio": layout::daemon_ratio(*ratio),
            "before": !seed_left,
            "argv": argv()?,
        }),
    )?;
    let new = str_of(&reply, "pane")?.to_string();
    let (own, other) = if seed_left {
        (left, right)
    } else {
        (right, left)
    };
    grow(c, pane, own, seed, argv)?;
    grow(c, &new, other, layout::first_leaf(other), argv)
}

pub fn run(c: &Client, path: &Path, fallback_text: Option<&String>) -> Result<Value, Value> {
    let bytes = read_archive(path)?;
    let decoded = archive::read(&bytes).map_err(|e| archive_error(&e))?;
    let fallback = fallback_argv(fallback_text)?;
    let listed = c.call("session.list", json!({}))?;
    let existing: Vec<&str> = listed["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["name"].as_str())
        .collect();
    let (skipped, todo): (Vec<&Session>, Vec<&Session>) = decoded
        .archive
        .sessions
        .iter()
        .partition(|s| existing.contains(&s.name.as_str()));
    let integrations = c.call("integration.list", json!({}))?;
    let mut any_native = false;
    let mut needs_fallback = false;
    for s in &todo {
        let preferred = s.preferred_pane();
        let record = preferred.and_then(|(w, p)| s.windows[w].panes[p].agent_session.as_ref());
        if let Some(record) = record {
            if !negative::active(Defect::RestorePlanLate) {
                plan(record, &integrations)?;
            }
            any_native = true;
        }
        let panes = s.windows.iter().map(|w| w.panes.len()).sum::<usize>();
        needs_fallback |= panes > usize::from(record.is_some());
    }
    if needs_fallback && fallback.is_none() && !negative::active(Defect::FallbackCheckedLate) {
        return Err(ApiError::param(
            "fallback_argv",
            "panes without a record need --fallback-argv",
        )
        .to_json());
    }
    let info = c.call("server.info", json!({}))?;
    let offers_result = info["capabilities"]
        .as_array()
        .is_some_and(|caps| caps.iter().any(|cap| cap == CREATED_RESULT_CAPABILITY));
    let any_pane = || -> Result<String, Value> {
        let panes = c.call("pane.list", json!({}))?;
        Ok(panes["panes"][0]["pane"]
            .as_str()
            .unwrap_or("p1")
            .to_string())
    };
    let pane = if any_native || offers_result {
        Some(any_pane()?)
    } else {
        None
    };
    if any_native {
        if !negative::active(Defect::RestoreNoProbe) {
            probe(c, pane.as_deref().expect("listed above"))?;
        }
        // A native session's provenance is stamped only on a session this restore
        // is told, on its own connection, that it created.
        if !offers_result {
            return Err(ApiError::code(ErrorCode::NativeRestore)
                .with("rule", "restore.no_created_result")
                .to_json());
        }
    }
    let creation = match pane.filter(|_| offers_result) {
        Some(pane) => Creation::OneShot { pane },
        None => Creation::Reply,
    };
    let mut restored = Vec::new();
    let mut skipped_existing: Vec<String> = skipped.iter().map(|s| s.name.clone()).collect();
    let mut native = Vec::new();
    for s in todo {
        if restore_session(c, s, &creation, fallback.as_deref(), &mut native)? {
            restored.push(s.name.clone());
        } else {
            skipped_existing.push(s.name.clone());
        }
    }
    Ok(json!({
        "schema_version": decoded.schema_version,
        "restored": restored,
        "skipped_existing": skipped_existing,
        "native": native,
    }))
}
