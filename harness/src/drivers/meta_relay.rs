//! A Unix-socket relay between a client under test and the daemon, for the wire's
//! newline-delimited JSON (docs/spec/wire.md), that breaks the agent-session record
//! on its way (ADR-0068 §4, §6). It runs in lock-step, one request then its one
//! reply (the daemon answers in order, blank lines get none), so it knows which
//! reply answers which request without trusting ids. Modes:
//! - `readback-lies`: an `agent-session/v1` value in a `meta.get` reply comes back
//!   with another (still valid) native id;
//! - `drop-meta-set`: a `meta.set` of `agent-session/v1` is answered `ok` by the
//!   relay and never reaches the daemon;
//! - `hide-created-result`: a `meta.get` of a one-shot `session.created/v1/<token>`
//!   result reaches the daemon (which consumes it) and comes back unset;
//! - `reserved-writable`: a `meta.set` or `meta.delete` of `session.created/v1/*` is
//!   answered `ok` by the relay, as an older server that lets clients write there;
//! - `name-taken`: before the first `session.create` reaches the daemon, the relay
//!   creates a session of that name itself (with `unique`), as another client that
//!   won the name between the client's read of the sessions and its create;
//! - `replace-after-read`: after the first `meta.get` that returns a record, the relay
//!   kills that pane and splits another with the spare argv before the client gets
//!   the reply: the pane set changed during the reads, its size did not;
//! - `reload-before-launch`: before the first request whose verb is one of the
//!   launch verbs it was given (the profile's `restore_launch_verbs`, by default the
//!   kit's `agent.launch`; ADR-0068 names none), the relay sends `config.reload`.
//!
//! The last three act once per relay, on the client's own connection (so as its
//! principal), with request ids of their own.
//!
//! After the `ok` reply to a streaming verb (`pane.attach`, `events.subscribe`) the
//! relay copies bytes unchanged both ways.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The record key the relay breaks.
const RECORD_KEY: &str = "agent-session/v1";
/// The namespace of the one-shot session-creation results.
const CREATED_PREFIX: &str = "session.created/v1/";
/// Longest frame it reads (the wire's limit plus its newline).
const MAX_FRAME_BYTES: u64 = 1024 * 1024 + 1;
/// How long either side may stay silent before the relay gives the connection up.
const IDLE: Duration = Duration::from_secs(30);
/// What the lying readback appends to the native id.
const LIE_SUFFIX: &str = "-relayed";

/// Which rule the relay breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RelayMode {
    ReadbackLies,
    DropMetaSet,
    HideCreatedResult,
    ReservedWritable,
    NameTaken,
    ReplaceAfterRead,
    ReloadBeforeLaunch,
}

impl RelayMode {
    pub fn parse(name: &str) -> Option<RelayMode> {
        match name {
            "readback-lies" => Some(RelayMode::ReadbackLies),
            "drop-meta-set" => Some(RelayMode::DropMetaSet),
            "hide-created-result" => Some(RelayMode::HideCreatedResult),
            "reserved-writable" => Some(RelayMode::ReservedWritable),
            "name-taken" => Some(RelayMode::NameTaken),
            "replace-after-read" => Some(RelayMode::ReplaceAfterRead),
            "reload-before-launch" => Some(RelayMode::ReloadBeforeLaunch),
            _ => None,
        }
    }
}

/// A running relay; it stops accepting when dropped.
pub struct MetaRelay {
    pub socket: PathBuf,
    altered: Arc<AtomicUsize>,
    requests: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl MetaRelay {
    /// Listens on `socket` in front of the daemon's `upstream` socket; `spare_argv` is
    /// the program `replace-after-read` starts, `launch_verbs` the verbs
    /// `reload-before-launch` precedes.
    pub fn start(
        mode: RelayMode,
        socket: &Path,
        upstream: &Path,
        spare_argv: &[String],
        launch_verbs: &[String],
    ) -> std::io::Result<MetaRelay> {
        let _ = std::fs::remove_file(socket);
        let listener = UnixListener::bind(socket)?;
        listener.set_nonblocking(true)?;
        let altered = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (a, st, up) = (altered.clone(), stop.clone(), upstream.to_path_buf());
        let acted = Arc::new(AtomicBool::new(false));
        let spare = Arc::new(spare_argv.to_vec());
        let launch = Arc::new(launch_verbs.to_vec());
        let seen = requests.clone();
        std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((client, _)) => {
                        let (a, up) = (a.clone(), up.clone());
                        let once = Once {
                            acted: acted.clone(),
                            spare: spare.clone(),
                            launch: launch.clone(),
                            requests: seen.clone(),
                        };
                        std::thread::spawn(move || {
                            let _ = relay(mode, client, &up, &a, &once);
                        });
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Ok(MetaRelay {
            socket: socket.to_path_buf(),
            altered,
            requests,
            stop,
        })
    }

    /// How many requests of its clients it has relayed or answered.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// How many requests or replies it has altered or answered itself.
    pub fn altered(&self) -> usize {
        self.altered.load(Ordering::SeqCst)
    }
}

impl Drop for MetaRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Reads one line of at most the frame limit; `None` at end of stream.
fn read_line(r: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    let n = r
        .by_ref()
        .take(MAX_FRAME_BYTES)
        .read_until(b'\n', &mut line)?;
    Ok((n > 0).then_some(line))
}

/// What the acting modes share across a relay's connections.
struct Once {
    acted: Arc<AtomicBool>,
    spare: Arc<Vec<String>>,
    /// The verbs `reload-before-launch` precedes.
    launch: Arc<Vec<String>>,
    /// Every client request, counted.
    requests: Arc<AtomicUsize>,
}

impl Once {
    /// True the first time only.
    fn first(&self) -> bool {
        !self.acted.swap(true, Ordering::SeqCst)
    }
}

/// One request of the relay's own on the client's upstream connection, and its reply.
fn call(
    to_up: &mut UnixStream,
    from_up: &mut BufReader<UnixStream>,
    verb: &str,
    params: Value,
) -> std::io::Result<Value> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let id = 900_000_000 + NEXT.fetch_add(1, Ordering::SeqCst);
    writeln!(
        to_up,
        "{}",
        json!({"id": id, "verb": verb, "params": params})
    )?;
    to_up.flush()?;
    let line = read_line(from_up)?.unwrap_or_default();
    Ok(serde_json::from_slice(&line).unwrap_or(Value::Null))
}

/// `replace-after-read`: kills `pane` and splits another pane of the listing with
/// the spare argv.
fn replace_pane(
    to_up: &mut UnixStream,
    from_up: &mut BufReader<UnixStream>,
    pane: &Value,
    spare: &[String],
) -> std::io::Result<()> {
    let listed = call(to_up, from_up, "pane.list", json!({}))?;
    let other = listed["ok"]["panes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p["pane"].clone())
        .find(|p| p != pane);
    call(to_up, from_up, "pane.kill", json!({"pane": pane}))?;
    if let Some(other) = other {
        let params = json!({"pane": other, "axis": "cols", "argv": spare});
        call(to_up, from_up, "pane.split", params)?;
    }
    Ok(())
}

fn relay(
    mode: RelayMode,
    client: UnixStream,
    upstream: &Path,
    altered: &AtomicUsize,
    once: &Once,
) -> std::io::Result<()> {
    client.set_read_timeout(Some(IDLE))?;
    let up = UnixStream::connect(upstream)?;
    up.set_read_timeout(Some(IDLE))?;
    let mut from_client = BufReader::new(client.try_clone()?);
    let mut to_client = client;
    let mut from_up = BufReader::new(up.try_clone()?);
    let mut to_up = up;
    while let Some(line) = read_line(&mut from_client)? {
        if line.iter().all(|b| b" \t\r\n".contains(b)) {
            continue;
        }
        let request: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
        once.requests.fetch_add(1, Ordering::SeqCst);
        let names_record = request["params"]["key"] == RECORD_KEY;
        let names_result = request["params"]["key"]
            .as_str()
            .is_some_and(|k| k.starts_with(CREATED_PREFIX));
        let writes = matches!(request["verb"].as_str(), Some("meta.set" | "meta.delete"));
        let answered = match mode {
            RelayMode::DropMetaSet => request["verb"] == "meta.set" && names_record,
            RelayMode::ReservedWritable => writes && names_result,
            _ => false,
        };
        if answered {
            altered.fetch_add(1, Ordering::SeqCst);
            writeln!(to_client, "{}", json!({"id": request["id"], "ok": {}}))?;
            continue;
        }
        if mode == RelayMode::NameTaken && request["verb"] == "session.create" && once.first() {
            let name = request["params"]["name"].clone();
            call(
                &mut to_up,
                &mut from_up,
                "session.create",
                json!({"name": name, "unique": true}),
            )?;
            altered.fetch_add(1, Ordering::SeqCst);
        }
        // A plugin change already on disk reaches the daemon between the client's
        // plan (integration.list) and its launch (the first launch verb it sends).
        let launches = request["verb"]
            .as_str()
            .is_some_and(|v| once.launch.iter().any(|l| l == v));
        if mode == RelayMode::ReloadBeforeLaunch && launches && once.first() {
            call(&mut to_up, &mut from_up, "config.reload", json!({}))?;
            altered.fetch_add(1, Ordering::SeqCst);
        }
        to_up.write_all(&line)?;
        to_up.flush()?;
        let Some(reply) = read_line(&mut from_up)? else {
            return Ok(());
        };
        let is_get = request["verb"] == "meta.get";
        if mode == RelayMode::ReplaceAfterRead
            && is_get
            && names_record
            && holds_value(&reply)
            && once.first()
        {
            replace_pane(
                &mut to_up,
                &mut from_up,
                &request["params"]["pane"],
                &once.spare,
            )?;
            altered.fetch_add(1, Ordering::SeqCst);
        }
        let lie = match mode {
            RelayMode::ReadbackLies if is_get && names_record => lying_readback(&reply),
            RelayMode::HideCreatedResult if is_get && names_result => hidden_result(&reply),
            _ => None,
        };
        match lie {
            Some(text) => {
                altered.fetch_add(1, Ordering::SeqCst);
                writeln!(to_client, "{text}")?;
            }
            None => to_client.write_all(&reply)?,
        }
        to_client.flush()?;
        if matches!(
            request["verb"].as_str(),
            Some("pane.attach" | "events.subscribe")
        ) {
            return stream_through(from_client, to_up, from_up, to_client);
        }
    }
    Ok(())
}

/// A `meta.get` reply whose record has another native id; None when it holds none.
fn lying_readback(reply: &[u8]) -> Option<String> {
    let mut v: Value = serde_json::from_slice(reply).ok()?;
    let text = v["ok"]["value"].as_str()?;
    let mut record: Value = serde_json::from_str(text).ok()?;
    let native = record["native_id"].as_str()?;
    record["native_id"] = Value::String(format!("{native}{LIE_SUFFIX}"));
    v["ok"]["value"] = Value::String(record.to_string());
    Some(v.to_string())
}

/// Whether a `meta.get` reply holds a value.
fn holds_value(reply: &[u8]) -> bool {
    serde_json::from_slice::<Value>(reply).is_ok_and(|v| v["ok"]["value"].is_string())
}

/// A `meta.get` reply whose one-shot result reads as unset; None when it held none.
fn hidden_result(reply: &[u8]) -> Option<String> {
    let mut v: Value = serde_json::from_slice(reply).ok()?;
    v["ok"]["value"].as_str()?;
    v["ok"]["value"] = Value::Null;
    Some(v.to_string())
}

/// Copies both directions unchanged until either side closes.
fn stream_through(
    mut from_client: BufReader<UnixStream>,
    mut to_up: UnixStream,
    mut from_up: BufReader<UnixStream>,
    mut to_client: UnixStream,
) -> std::io::Result<()> {
    let _ = from_client.get_ref().set_read_timeout(None);
    let _ = from_up.get_ref().set_read_timeout(None);
    let upward = std::thread::spawn(move || {
        let _ = std::io::copy(&mut from_client, &mut to_up);
        let _ = to_up.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut from_up, &mut to_client);
    let _ = to_client.shutdown(std::net::Shutdown::Both);
    let _ = upward.join();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A daemon stand-in: answers `meta.get` with a fixed record, anything else `ok`,
    /// and counts the requests it saw.
    fn upstream(dir: &Path, seen: Arc<AtomicUsize>) -> PathBuf {
        let path = dir.join("up.sock");
        let l = UnixListener::bind(&path).unwrap();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let s = s.unwrap();
                let seen = seen.clone();
                std::thread::spawn(move || {
                    let mut r = BufReader::new(s.try_clone().unwrap());
                    let mut w = s;
                    while let Ok(Some(line)) = read_line(&mut r) {
                        seen.fetch_add(1, Ordering::SeqCst);
                        let v: Value = serde_json::from_slice(&line).unwrap();
                        let record = r#"{"plugin_id":"p","integration_id":"i","native_id":"n"}"#;
                        let ok = if v["verb"] == "meta.get" {
                            json!({"key": v["params"]["key"], "value": record})
                        } else {
                            json!({})
                        };
                        writeln!(w, "{}", json!({"id": v["id"], "ok": ok})).unwrap();
                    }
                });
            }
        });
        path
    }

    fn ask(c: &mut UnixStream, r: &mut BufReader<UnixStream>, verb: &str, key: &str) -> Value {
        let req = json!({"id": 1, "verb": verb, "params": {"pane": "p1", "key": key}});
        writeln!(c, "{req}").unwrap();
        serde_json::from_slice(&read_line(r).unwrap().unwrap()).unwrap()
    }

    fn connect(relay: &MetaRelay) -> (UnixStream, BufReader<UnixStream>) {
        let c = UnixStream::connect(&relay.socket).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let r = BufReader::new(c.try_clone().unwrap());
        (c, r)
    }

    #[test]
    fn readback_lies_alters_only_the_record_key() {
        let dir = tempfile::tempdir().unwrap();
        let seen = Arc::new(AtomicUsize::new(0));
        let up = upstream(dir.path(), seen.clone());
        let relay = MetaRelay::start(
            RelayMode::ReadbackLies,
            &dir.path().join("r.sock"),
            &up,
            &[],
            &[],
        )
        .unwrap();
        let (mut c, mut r) = connect(&relay);
        let got = ask(&mut c, &mut r, "meta.get", RECORD_KEY);
        let record: Value = serde_json::from_str(got["ok"]["value"].as_str().unwrap()).unwrap();
        assert_eq!(record["native_id"], json!(format!("n{LIE_SUFFIX}")));
        let other = ask(&mut c, &mut r, "meta.get", "agent/v1");
        let record: Value = serde_json::from_str(other["ok"]["value"].as_str().unwrap()).unwrap();
        assert_eq!(record["native_id"], json!("n"));
        assert_eq!(relay.altered(), 1);
        assert_eq!(seen.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn drop_meta_set_answers_the_record_write_itself() {
        let dir = tempfile::tempdir().unwrap();
        let seen = Arc::new(AtomicUsize::new(0));
        let up = upstream(dir.path(), seen.clone());
        let relay = MetaRelay::start(
            RelayMode::DropMetaSet,
            &dir.path().join("r.sock"),
            &up,
            &[],
            &[],
        )
        .unwrap();
        let (mut c, mut r) = connect(&relay);
        assert_eq!(ask(&mut c, &mut r, "meta.set", RECORD_KEY)["ok"], json!({}));
        assert_eq!(
            seen.load(Ordering::SeqCst),
            0,
            "the write reached the daemon"
        );
        ask(&mut c, &mut r, "meta.set", "agent/v1");
        assert_eq!(seen.load(Ordering::SeqCst), 1);
        assert_eq!(relay.altered(), 1);
    }

    #[test]
    fn reserved_writable_answers_a_reserved_write_itself() {
        let dir = tempfile::tempdir().unwrap();
        let seen = Arc::new(AtomicUsize::new(0));
        let up = upstream(dir.path(), seen.clone());
        let relay = MetaRelay::start(
            RelayMode::ReservedWritable,
            &dir.path().join("r.sock"),
            &up,
            &[],
            &[],
        )
        .unwrap();
        let (mut c, mut r) = connect(&relay);
        let key = format!("{CREATED_PREFIX}probe");
        assert_eq!(ask(&mut c, &mut r, "meta.set", &key)["ok"], json!({}));
        assert_eq!(
            seen.load(Ordering::SeqCst),
            0,
            "the write reached the daemon"
        );
        ask(&mut c, &mut r, "meta.set", RECORD_KEY);
        assert_eq!(seen.load(Ordering::SeqCst), 1);
        assert_eq!(relay.altered(), 1);
    }

    /// `reload-before-launch` reloads before the first of the launch verbs it was
    /// given (the profile's `restore_launch_verbs`), not before `agent.launch` when
    /// that is not one of them, and only once.
    #[test]
    fn reload_before_launch_precedes_the_given_launch_verb_once() {
        let dir = tempfile::tempdir().unwrap();
        let seen = Arc::new(AtomicUsize::new(0));
        let up = upstream(dir.path(), seen.clone());
        let verbs = ["x.spawn".to_string()];
        let relay = MetaRelay::start(
            RelayMode::ReloadBeforeLaunch,
            &dir.path().join("r.sock"),
            &up,
            &[],
            &verbs,
        )
        .unwrap();
        let (mut c, mut r) = connect(&relay);
        ask(&mut c, &mut r, "agent.launch", "k");
        assert_eq!((seen.load(Ordering::SeqCst), relay.altered()), (1, 0));
        ask(&mut c, &mut r, "x.spawn", "k");
        assert_eq!((seen.load(Ordering::SeqCst), relay.altered()), (3, 1));
        ask(&mut c, &mut r, "x.spawn", "k");
        assert_eq!((seen.load(Ordering::SeqCst), relay.altered()), (4, 1));
        assert_eq!(relay.requests(), 3);
    }
}
