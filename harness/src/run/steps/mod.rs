//! The step vocabulary. Every step of every feature is matched here, by text; a step
//! that matches nothing is a harness error, never a silent skip.

use super::world::{at, mode_of, scaled, Inner, World};
use nix::sys::signal::Signal;
use serde_json::{Map, Value};
use std::os::unix::fs::MetadataExt;
use std::sync::OnceLock;
use std::time::Duration;

struct Re(regex::Regex);

fn re(cell: &'static OnceLock<Re>, pat: &str) -> &'static regex::Regex {
    &cell
        .get_or_init(|| Re(regex::Regex::new(pat).expect("step regex")))
        .0
}

macro_rules! step {
    ($text:expr, $pat:literal) => {{
        static CELL: OnceLock<Re> = OnceLock::new();
        re(&CELL, $pat).captures($text)
    }};
}

mod calls;
mod lifecycle;
mod outcomes;
mod processes;
mod store;
pub(super) mod streams;

const ENABLED: &str = ".{ .recovery = .{ .enabled = true } }\n";

/// Runs one step's text against a scenario's state.
pub fn dispatch(w: &mut Inner, raw: &str, doc: Option<&str>) {
    let text = w.subst(raw);
    let t = text.as_str();

    if lifecycle::dispatch(w, t, doc) {
        return;
    }
    if calls::dispatch(w, t) {
        return;
    }
    if store::dispatch(w, t) {
        return;
    }
    if processes::dispatch(w, t) {
        return;
    }
    if outcomes::dispatch(w, t) {
        return;
    }
    if streams::dispatch(w, t) {
        return;
    }
    panic!("harness-error: undefined step: {raw}");
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The daemon's peak resident set (VmHWM), in KiB.
fn peak_kib(w: &Inner) -> u64 {
    let pid = w
        .daemon
        .as_ref()
        .expect("harness-error: no daemon is running")
        .id();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("harness-error: /proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("harness-error: no VmHWM")
}

/// RFC §3's publication, as the injector traced it: the temporary file is written
/// and fsynced, renamed to `<checkpoint>.json`, then the store directory is fsynced,
/// every call really done (`action` "pass") and successful.
fn check_publication(calls: &[Value], checkpoint: &str) {
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

fn walk_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => walk_files(&p, out),
                Ok(m) if m.is_file() => out.push(p),
                _ => {}
            }
        }
    }
}

/// The highest-generation file of the store, validated by the kit's strict reader:
/// (format, decoded payload).
fn newest_checkpoint(w: &Inner) -> (u64, Value) {
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

fn ok_value(w: &Inner) -> Value {
    match &w.last().result {
        Ok(v) => v.clone(),
        Err(e) => panic!("the call failed: {e}"),
    }
}

fn parse_params(text: Option<&str>) -> Map<String, Value> {
    match text {
        None => Map::new(),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => m,
            _ => panic!("harness-error: params are not a JSON object: {t}"),
        },
    }
}

fn create_pane(w: &mut Inner, name: &str, argv: Vec<String>) {
    let token = w.owner_token();
    let call = |w: &mut Inner, verb: &str, params: Value| -> Value {
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

/// The async step registered with cucumber for every keyword: moves the work onto a
/// blocking thread and bounds it by the scenario deadline.
pub fn run_step<'a>(
    world: &'a mut World,
    ctx: cucumber::step::Context,
) -> futures::future::LocalBoxFuture<'a, ()> {
    Box::pin(async move {
        let inner = world.inner.clone();
        let text = ctx.step.value.clone();
        let doc = ctx.step.docstring.clone();
        let limit = scaled(60_000);
        let handle = tokio::task::spawn_blocking(move || {
            let mut g = inner.lock().unwrap_or_else(|p| p.into_inner());
            dispatch(&mut g, &text, doc.as_deref().map(str::trim_start));
        });
        match tokio::time::timeout(limit, handle).await {
            Err(_) => panic!("timeout: step did not finish in {limit:?}"),
            Ok(Ok(())) => {}
            Ok(Err(e)) => match e.try_into_panic() {
                Ok(p) => std::panic::resume_unwind(p),
                Err(e) => panic!("harness-error: step task: {e}"),
            },
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_finds_only_real_occurrences() {
        assert!(contains(b"abcCANARYdef", b"CANARY"));
        assert!(!contains(b"abcCANARdef", b"CANARY"));
        assert!(!contains(b"abc", b""));
    }

    #[test]
    fn params_must_be_objects() {
        assert!(parse_params(Some("{\"a\":1}")).contains_key("a"));
        assert!(parse_params(None).is_empty());
        assert!(std::panic::catch_unwind(|| parse_params(Some("[1]"))).is_err());
    }
}
