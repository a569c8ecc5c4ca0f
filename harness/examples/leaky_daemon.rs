//! Deliberately non-conforming "implementations" for the harness's negative controls:
//! it runs the reference daemon on `<socket>.real` and relays the wire protocol on
//! `<socket>`, breaking one rule, chosen by MODE:
//! - `argv0-dir`: every `argv0` in `pane.list` results becomes the full `argv[0]` of
//!   the last `pane.create`, directory part included (RFC §8 "Secret exclusion").
//! - `restore-nonempty`: a `conflict.not_empty` refusal of `recovery.restore` is
//!   answered as a success, as if it had restored into a nonempty tree (RFC §5).
//! - `corrupt-as-valid`: `recovery.list` reports corrupt files as valid (RFC §3).
//! - `valid-as-corrupt`: `recovery.list` reports valid files as corrupt: a daemon
//!   that refuses every checkpoint, whose refusals of damaged files prove nothing.
//! - `resume-old-cursor`: an `events.subscribe` answered with `source_changed` is
//!   answered as a resume instead (`resumed: true`, no reason, no snapshot), as if
//!   an old daemon's cursor were valid in the new source (RFC §5 "Resume").
//! - `restored-to-all`: every `recovery.restored` event is also delivered to the
//!   event subscriptions of principals other than the owner, whatever their grants
//!   (RFC §8: it requires read on `server:root`).
//! - `reserved-writable`: a `denied.reserved_key` refusal of `meta.set`/`meta.delete`
//!   is answered as a success, as an older server whose `session.created/v1/*` is
//!   client-writable (ADR-0068 §6).
//! - `readback-lies`: every `agent-session/v1` value `meta.get` reads has another
//!   native id (ADR-0068 §4, §6: readback and confirmation).
//! - `drop-meta-set`: `meta.set` is answered `ok` and never reaches the reference.
//! - `deny-recovery-verbs`: every `recovery.*` request, the owner's too, is answered
//!   `denied.admin` and never reaches the reference: its denials of non-admin
//!   principals prove nothing.
//!
//! After the `ok` reply to `pane.attach` the relay copies bytes unchanged both ways:
//! the binary frames are not lines.
//!
//! Everything else is the reference's behaviour.
//!
//! Usage: leaky_daemon MODE <vxref binary> <socket>; it creates `<socket>.ready` once
//! it relays (profile `readiness = { kind = "file", path = "{socket}.ready" }`).

use nix::sys::signal::{SigSet, Signal};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    assert_eq!(args.len(), 4, "usage: leaky_daemon MODE <vxref> <socket>");
    let mode: &'static str = match args[1].as_str() {
        "argv0-dir" => "argv0-dir",
        "restore-nonempty" => "restore-nonempty",
        "corrupt-as-valid" => "corrupt-as-valid",
        "valid-as-corrupt" => "valid-as-corrupt",
        "resume-old-cursor" => "resume-old-cursor",
        "restored-to-all" => "restored-to-all",
        "reserved-writable" => "reserved-writable",
        "readback-lies" => "readback-lies",
        "drop-meta-set" => "drop-meta-set",
        "deny-recovery-verbs" => "deny-recovery-verbs",
        other => panic!("unknown mode {other}"),
    };
    let vxref = PathBuf::from(&args[2]);
    let socket = PathBuf::from(&args[3]);
    let real = suffixed(&socket, ".real");
    // A restart on the same socket finds the previous relay's files: readiness must
    // not be claimed before this relay holds the public path.
    let _ = std::fs::remove_file(suffixed(&socket, ".ready"));
    let _ = std::fs::remove_file(&real);
    // SIGTERM is taken by a thread of the relay and passed on to the reference, so
    // the relay's exit (what the harness waits for) comes after the reference's.
    let mut term = SigSet::empty();
    term.add(Signal::SIGTERM);
    term.thread_block().expect("block SIGTERM");
    let child = start_reference(&vxref, &socket);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    std::thread::spawn(move || {
        if term.wait().is_ok() {
            let _ = nix::sys::signal::kill(pid, Signal::SIGTERM);
        }
    });
    // No moment without a socket at the public path: a second name for the
    // reference's socket, then the relay's socket atomically replaces the public one.
    std::fs::hard_link(&socket, &real).expect("second name of the reference's socket");
    let staging = suffixed(&socket, ".relay");
    let listener = UnixListener::bind(&staging).expect("bind");
    std::fs::rename(&staging, &socket).expect("take the public path");
    // Readiness for the harness (profile: readiness kind "file").
    std::fs::write(suffixed(&socket, ".ready"), b"").expect("ready file");
    // The relay exits with the reference, with its status.
    let child = Arc::new(Mutex::new(child));
    {
        let child = child.clone();
        std::thread::spawn(move || loop {
            if let Ok(Some(status)) = child.lock().unwrap().try_wait() {
                std::process::exit(status.code().unwrap_or(1));
            }
            std::thread::sleep(Duration::from_millis(20));
        });
    }
    let last_argv0: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let owner_token = std::fs::read_to_string(suffixed(&socket, ".owner"))
        .unwrap_or_default()
        .trim()
        .to_string();
    // Event subscriptions of principals other than the owner, for `restored-to-all`.
    let others: Arc<Mutex<Vec<Writer>>> = Arc::new(Mutex::new(Vec::new()));
    for conn in listener.incoming() {
        let Ok(client) = conn else { continue };
        let Ok(upstream) = UnixStream::connect(&real) else {
            continue;
        };
        // The id of this connection's pane.attach request, once the client sent one.
        let attach_id: Arc<Mutex<Option<Value>>> = Arc::new(Mutex::new(None));
        let last = last_argv0.clone();
        let up_w = upstream.try_clone().expect("clone");
        let cl_w: Writer = Arc::new(Mutex::new(client.try_clone().expect("clone")));
        let ids = attach_id.clone();
        let (mine, owner, subs) = (cl_w.clone(), owner_token.clone(), others.clone());
        std::thread::spawn(move || {
            let mut up_w = up_w;
            let mut by_owner = false;
            let mut reader = BufReader::new(client);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let request = serde_json::from_slice::<Value>(&line);
                if let Some(reply) = request.as_ref().ok().and_then(|v| answer(mode, v)) {
                    if writeln!(mine.lock().unwrap(), "{reply}").is_err() {
                        break;
                    }
                    continue;
                }
                let attach = match request {
                    Ok(v) => {
                        if v["verb"] == "pane.create" {
                            if let Some(a0) = v["params"]["argv"][0].as_str() {
                                *last.lock().unwrap() = Some(a0.to_string());
                            }
                        }
                        if v["verb"] == "auth.login" {
                            by_owner = v["params"]["token"] == owner.as_str();
                        }
                        if v["verb"] == "events.subscribe" && !by_owner {
                            subs.lock().unwrap().push(mine.clone());
                        }
                        let attach = v["verb"] == "pane.attach";
                        if attach {
                            *ids.lock().unwrap() = Some(v["id"].clone());
                        }
                        attach
                    }
                    Err(_) => false,
                };
                if up_w.write_all(&line).is_err() {
                    break;
                }
                if attach {
                    raw_copy(reader, &mut up_w);
                    break;
                }
            }
            let _ = up_w.shutdown(std::net::Shutdown::Write);
        });
        let last = last_argv0.clone();
        let others = others.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(upstream);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let v = serde_json::from_slice::<Value>(&line).ok();
                let attached = v.as_ref().is_some_and(|v| {
                    v.get("ok").is_some() && attach_id.lock().unwrap().as_ref() == Some(&v["id"])
                });
                let restored = v
                    .as_ref()
                    .is_some_and(|v| v["event"]["type"] == "recovery.restored");
                if mode == "restored-to-all" && restored {
                    // Delivered to the others before this subscriber sees it, so a
                    // client that waits for its own copy knows the others have theirs.
                    for other in others.lock().unwrap().iter() {
                        if !Arc::ptr_eq(other, &cl_w) {
                            let _ = other.lock().unwrap().write_all(&line);
                        }
                    }
                }
                let out = match v {
                    Some(v) => match rewrite(mode, v, &last) {
                        Some(text) => format!("{text}\n").into_bytes(),
                        None => line,
                    },
                    None => line,
                };
                if cl_w.lock().unwrap().write_all(&out).is_err() {
                    break;
                }
                if attached {
                    // Attach connections are never subscriptions: no other writer.
                    raw_copy(reader, &mut cl_w.lock().unwrap());
                    break;
                }
            }
            let _ = cl_w.lock().unwrap().shutdown(std::net::Shutdown::Write);
        });
    }
}

/// Starts the reference on the public path and waits until it accepts connections.
/// The reference of a relay that was just killed may still hold the socket's lock
/// for a moment (it dies by its parent-death signal), so a start that fails early is
/// retried.
fn start_reference(vxref: &Path, socket: &Path) -> Child {
    let start = Instant::now();
    loop {
        let mut cmd = Command::new(vxref);
        cmd.arg("serve")
            .arg("--socket")
            .arg(socket)
            .stdin(Stdio::null());
        // SAFETY: prctl and sigprocmask are async-signal-safe; the reference dies
        // with its relay and gets SIGTERM back unblocked.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
                let mut term = SigSet::empty();
                term.add(Signal::SIGTERM);
                term.thread_unblock().map_err(std::io::Error::from)
            });
        }
        let mut child = cmd.spawn().expect("start the reference");
        loop {
            if UnixStream::connect(socket).is_ok() {
                return child;
            }
            if child.try_wait().ok().flatten().is_some() {
                break;
            }
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                std::process::exit(1);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if start.elapsed() > Duration::from_secs(20) {
            std::process::exit(1);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A client connection's write side, shared by the threads that may write to it.
type Writer = Arc<Mutex<UnixStream>>;

/// Copies what `reader` buffered and everything after it, unchanged.
fn raw_copy(mut reader: BufReader<UnixStream>, to: &mut UnixStream) {
    let buffered = reader.buffer().to_vec();
    if to.write_all(&buffered).is_err() {
        return;
    }
    let _ = std::io::copy(reader.get_mut(), to);
}

/// The relay's own reply to a request that never reaches the reference, if the mode
/// answers it.
fn answer(mode: &str, v: &Value) -> Option<Value> {
    let verb = v["verb"].as_str()?;
    match mode {
        "drop-meta-set" if verb == "meta.set" => Some(serde_json::json!({"id": v["id"], "ok": {}})),
        "deny-recovery-verbs" if verb.starts_with("recovery.") => Some(serde_json::json!({
            "id": v["id"],
            "error": {"code": "denied.admin", "message": "the recovery verbs need admin"}
        })),
        _ => None,
    }
}

/// The mode's defect applied to one reply; None leaves it as the reference sent it.
fn rewrite(mode: &str, mut v: Value, last: &Mutex<Option<String>>) -> Option<String> {
    match mode {
        "argv0-dir" => {
            let full = last.lock().unwrap().clone()?;
            let panes = v["ok"]["panes"].as_array_mut()?;
            for p in panes {
                if p.get("argv0").is_some() {
                    p["argv0"] = Value::String(full.clone());
                }
            }
        }
        "restore-nonempty" => {
            if v["error"]["code"] != "conflict.not_empty" {
                return None;
            }
            let id = v["id"].clone();
            v = serde_json::json!({"id": id, "ok": {"checkpoint": "", "sessions": [], "windows": [], "panes": []}});
        }
        "restored-to-all" | "drop-meta-set" | "deny-recovery-verbs" => return None,
        "reserved-writable" => {
            if v["error"]["code"] != "denied.reserved_key" {
                return None;
            }
            v = serde_json::json!({"id": v["id"], "ok": {}});
        }
        "readback-lies" => {
            if v["ok"]["key"] != "agent-session/v1" {
                return None;
            }
            let text = v["ok"]["value"].as_str()?;
            let mut record: Value = serde_json::from_str(text).ok()?;
            let native = record["native_id"].as_str()?.to_string();
            record["native_id"] = Value::String(format!("{native}-lie"));
            v["ok"]["value"] = Value::String(record.to_string());
        }
        "resume-old-cursor" => {
            let ok = v.get_mut("ok")?.as_object_mut()?;
            if ok.get("reason")? != "source_changed" {
                return None;
            }
            ok.remove("reason");
            ok.remove("snapshot");
            ok.insert("resumed".into(), Value::Bool(true));
        }
        _ => {
            let (from, to) = if mode == "valid-as-corrupt" {
                ("valid", "corrupt")
            } else {
                ("corrupt", "valid")
            };
            let list = v["ok"]["checkpoints"].as_array_mut()?;
            for c in list {
                if c["status"] == from {
                    c["status"] = Value::String(to.into());
                }
            }
        }
    }
    Some(v.to_string())
}

fn suffixed(p: &Path, suffix: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}
