//! The event subscriber: one `events.subscribe` connection kept open for the rest of
//! a scenario, with a reader thread collecting what the implementation sends, as the
//! documented protocol describes it (docs/spec/events.md): the `ok` reply
//! `{source,sequence,resumed,reason?,snapshot?}`, then one `{"event":{…}}` line per
//! event and a final `{"closed":{"reason"}}` when the daemon ends the stream.

use super::collected::{self, Collected};
use super::scaled;
use super::wire::Reply;
use crate::verdict::OrHarness;
use serde_json::{json, Map, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// Everything received after the `ok` reply.
#[derive(Debug, Default)]
pub struct Received {
    /// The `event` objects, in arrival order.
    pub events: Vec<Value>,
    /// The `closed` object, when the daemon ended the stream.
    pub closed: Option<Value>,
    /// The connection reached end of file (or failed).
    pub eof: bool,
    /// A line that is neither an event nor `closed`: a protocol violation.
    pub bad: Option<String>,
    /// Raw bytes not yet copied into the scenario's transcript.
    pub raw: Vec<u8>,
}

type Shared = collected::Shared<Received>;

impl Collected for Received {
    fn ended(&self) -> bool {
        self.eof
    }
    fn violation(&self) -> Option<String> {
        self.bad.as_ref().map(|bad| {
            format!("the event stream carried a line that is neither an event nor closed: {bad:?}")
        })
    }
    fn summary(&self) -> String {
        format!("received {:?}", types(&self.events))
    }
}

pub struct Subscriber {
    stream: UnixStream,
    pub source: String,
    /// The head sequence of the `ok` reply: events after it have larger sequences.
    pub head: u64,
    shared: Shared,
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        // Ends the reader thread, which is blocked on this socket.
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// An open stream connection: its socket and the reader holding what was buffered.
pub type Open = (UnixStream, BufReader<UnixStream>);

/// Connects, logs in with `token` when there is one, and sends the request; returns
/// the reply (with the raw bytes seen) and the open connection's buffered reader.
pub fn open(
    socket: &Path,
    token: Option<&str>,
    verb: &str,
    params: Map<String, Value>,
) -> (Reply, Vec<u8>, Option<Open>) {
    let stream = UnixStream::connect(socket)
        .unwrap_or_else(|e| panic!("cannot connect to the implementation's socket: {e}"));
    stream.set_read_timeout(Some(scaled(10_000))).ok();
    let mut w = stream.try_clone().or_harness("clone stream");
    let mut reader = BufReader::new(stream.try_clone().or_harness("clone stream"));
    let mut seen = Vec::new();
    let mut read_reply = |reader: &mut BufReader<UnixStream>, what: &str| -> Value {
        let mut line = Vec::new();
        let n = reader
            .read_until(b'\n', &mut line)
            .unwrap_or_else(|e| crate::timed_out!("no reply to {what}: {e}"));
        seen.extend_from_slice(&line);
        if n == 0 {
            panic!("the implementation closed the connection without replying to {what}");
        }
        serde_json::from_slice(&line).unwrap_or_else(|_| {
            panic!(
                "reply to {what} is not a JSON line: {:?}",
                String::from_utf8_lossy(&line[..line.len().min(200)])
            )
        })
    };
    if let Some(t) = token {
        let req = json!({"id": 1, "verb": "auth.login", "params": {"token": t}});
        writeln!(w, "{req}").expect("write auth.login");
        let v = read_reply(&mut reader, "auth.login");
        if let Some(e) = v.get("error") {
            let reply = Reply {
                result: Err(e.clone()),
                exit: None,
            };
            return (reply, seen, None);
        }
    }
    let req = json!({"id": 2, "verb": verb, "params": params});
    writeln!(w, "{req}").expect("write request");
    let v = read_reply(&mut reader, verb);
    let result = match (v.get("ok"), v.get("error")) {
        (Some(ok), None) => Ok(ok.clone()),
        (None, Some(e)) => Err(e.clone()),
        _ => panic!("reply to {verb} has neither ok nor error: {v}"),
    };
    let ok = result.is_ok();
    let reply = Reply { result, exit: None };
    // From here on the reader threads block until the stream ends.
    stream.set_read_timeout(None).ok();
    (reply, seen, ok.then_some((stream, reader)))
}

/// `events.subscribe`, with an optional `{source,sequence}` cursor.
pub fn subscribe(
    socket: &Path,
    token: Option<&str>,
    cursor: Option<Value>,
) -> (Reply, Vec<u8>, Option<Subscriber>) {
    let mut params = Map::new();
    if let Some(c) = cursor {
        params.insert("cursor".into(), c);
    }
    let (reply, seen, open) = open(socket, token, "events.subscribe", params);
    let Some((stream, reader)) = open else {
        return (reply, seen, None);
    };
    let ok = reply.result.as_ref().expect("ok reply");
    let source = ok["source"]
        .as_str()
        .unwrap_or_else(|| panic!("events.subscribe: no string source in {ok}"))
        .to_string();
    let head = ok["sequence"]
        .as_u64()
        .unwrap_or_else(|| panic!("events.subscribe: no integer sequence in {ok}"));
    let shared: Shared = collected::shared();
    let s2 = shared.clone();
    std::thread::spawn(move || collect(reader, s2));
    let sub = Subscriber {
        stream,
        source,
        head,
        shared,
    };
    (reply, seen, Some(sub))
}

fn collect(mut reader: BufReader<UnixStream>, shared: Shared) {
    loop {
        let mut line = Vec::new();
        let n = reader.read_until(b'\n', &mut line).unwrap_or(0);
        let (lock, cv) = &*shared;
        let mut r = lock.lock().unwrap();
        if n == 0 {
            r.eof = true;
            cv.notify_all();
            return;
        }
        r.raw.extend_from_slice(&line);
        match serde_json::from_slice::<Value>(&line) {
            Ok(v) if v.get("event").is_some_and(Value::is_object) => {
                r.events.push(v["event"].clone())
            }
            Ok(v) if v.get("closed").is_some_and(Value::is_object) => {
                r.closed = Some(v["closed"].clone())
            }
            _ if line.iter().all(|b| b.is_ascii_whitespace()) => {}
            _ => {
                let text = String::from_utf8_lossy(&line[..line.len().min(200)]).into_owned();
                r.bad.get_or_insert(text);
            }
        }
        cv.notify_all();
    }
}

impl Subscriber {
    /// Waits (up to the scaled `limit_ms`) until `done` holds for what was received,
    /// then returns `f` of it. A stream that ends first is judged as it stands.
    pub fn wait<T>(
        &self,
        what: &str,
        limit_ms: u64,
        done: impl Fn(&Received) -> bool,
        f: impl FnOnce(&Received) -> T,
    ) -> T {
        collected::wait(&self.shared, what, limit_ms, done, f)
    }

    pub fn events(&self) -> Vec<Value> {
        self.shared.0.lock().unwrap().events.clone()
    }

    pub fn take_raw(&self) -> Vec<u8> {
        std::mem::take(&mut self.shared.0.lock().unwrap().raw)
    }
}

pub fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The number in an RFC-0007 ID (`s12` → 12), for numeric ordering.
pub fn id_number(id: &str) -> u64 {
    id.trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .unwrap_or_else(|_| panic!("{id:?} is not an RFC-0007 ID"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_order_numerically() {
        let mut ids = vec!["p10", "p9", "p100"];
        ids.sort_by_key(|i| id_number(i));
        assert_eq!(ids, ["p9", "p10", "p100"]);
        assert!(std::panic::catch_unwind(|| id_number("pane")).is_err());
    }
}
