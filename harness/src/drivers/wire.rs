//! The JSON-lines wire protocol over a Unix socket: one connection per call, or one
//! kept across calls ([`Connection`]); `auth.login` first when there is a token, then
//! `{"id","verb","params"}`.

use super::scaled;
use serde_json::{json, Map, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// A reply from the implementation, through the wire or the CLI.
#[derive(Debug, Clone)]
pub struct Reply {
    pub result: Result<Value, Value>,
    /// CLI exit code (None for wire calls).
    pub exit: Option<i32>,
}

/// One request on its own connection, after `auth.login` when a token is given:
/// the reply and the raw bytes received.
pub fn call(
    socket: &Path,
    token: Option<&str>,
    verb: &str,
    params: Map<String, Value>,
) -> (Reply, Vec<u8>) {
    let limit = scaled(10_000);
    let mut seen = Vec::new();
    let stream = UnixStream::connect(socket)
        .unwrap_or_else(|e| panic!("cannot connect to the implementation's socket: {e}"));
    stream.set_read_timeout(Some(limit)).ok();
    let mut w = stream
        .try_clone()
        .unwrap_or_else(|e| crate::harness_error!("clone stream: {e}"));
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    if let Some(t) = token {
        let req = json!({"id": 1, "verb": "auth.login", "params": {"token": t}});
        writeln!(w, "{req}").expect("write auth.login");
        if let Err(e) = reader.read_line(&mut line) {
            crate::timed_out!("reading the auth.login reply: {e}");
        }
        seen.extend_from_slice(line.as_bytes());
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("auth.login reply is not JSON: {line:?}"));
        if let Some(e) = v.get("error") {
            let reply = Reply {
                result: Err(e.clone()),
                exit: None,
            };
            return (reply, seen);
        }
    }
    let req = json!({"id": 2, "verb": verb, "params": params});
    crate::evidence::frame(format!("→ {req}"));
    let asked = std::time::Instant::now();
    writeln!(w, "{req}").expect("write request");
    line.clear();
    let n = match reader.read_line(&mut line) {
        Ok(n) => {
            // The scenario's pace, for the settle windows of negative observations.
            crate::evidence::reply_took(asked.elapsed());
            n
        }
        Err(e) => crate::timed_out!("no reply to {verb}: {e}"),
    };
    seen.extend_from_slice(line.as_bytes());
    crate::evidence::frame(format!("← {}", line.trim_end()));
    if n == 0 {
        panic!("the implementation closed the connection without replying to {verb}");
    }
    (reply_of(verb, &line), seen)
}

/// The reply line to `verb` as a [`Reply`]; anything but `ok` xor `error` fails the step.
fn reply_of(verb: &str, line: &str) -> Reply {
    let v: Value = serde_json::from_str(line)
        .unwrap_or_else(|_| panic!("reply to {verb} is not JSON: {line:?}"));
    let result = match (v.get("ok"), v.get("error")) {
        (Some(ok), None) => Ok(ok.clone()),
        (None, Some(e)) => Err(e.clone()),
        _ => panic!("reply to {verb} has neither ok nor error: {line}"),
    };
    Reply { result, exit: None }
}

/// A connection kept across calls (the one-shot `session.created/v1/<token>`
/// results are bound to one): `auth.login` once, then requests in turn.
pub struct Connection {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
}

impl Connection {
    pub fn open(socket: &Path, token: Option<&str>) -> Connection {
        let stream = UnixStream::connect(socket)
            .unwrap_or_else(|e| panic!("cannot connect to the implementation's socket: {e}"));
        stream.set_read_timeout(Some(scaled(10_000))).ok();
        let writer = stream
            .try_clone()
            .unwrap_or_else(|e| crate::harness_error!("clone stream: {e}"));
        let mut c = Connection {
            writer,
            reader: BufReader::new(stream),
            next_id: 1,
        };
        if let Some(t) = token {
            let mut p = Map::new();
            p.insert("token".into(), json!(t));
            if let Err(e) = c.call("auth.login", p).result {
                panic!("auth.login on a kept connection failed: {e}");
            }
        }
        c
    }

    /// One request and its reply on this connection.
    pub fn call(&mut self, verb: &str, params: Map<String, Value>) -> Reply {
        let req = json!({"id": self.next_id, "verb": verb, "params": params});
        self.next_id += 1;
        crate::evidence::frame(format!("→ {req}"));
        writeln!(self.writer, "{req}").expect("write request");
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => panic!("the implementation closed a kept connection at {verb}"),
            Ok(_) => {}
            Err(e) => crate::timed_out!("no reply to {verb}: {e}"),
        }
        crate::evidence::frame(format!("← {}", line.trim_end()));
        reply_of(verb, &line)
    }
}
