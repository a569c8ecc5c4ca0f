//! A blocking `pane.attach` client for tests, benches, the conformance harness and
//! `vxref pane attach` (`super::interactive`):
//! connect, optionally log in, attach (optionally resuming), then exchange frames.

use super::frame::{self, HEADER, MAX_PAYLOAD};
use crate::wire;
use serde_json::{json, Map, Value};
use std::io::{self, BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// A daemon frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    Snapshot(Vec<u8>),
    Ready,
    Output {
        offset: u64,
        bytes: Vec<u8>,
    },
    Exit(Value),
    Close(String),
    /// Anything else, kept so a checker can report it.
    Other(u8, Vec<u8>),
}

pub struct Attached {
    /// The `ok` object of the attach reply.
    pub reply: Value,
    reader: BufReader<UnixStream>,
    writer: FrameSender,
}

/// The client-to-daemon half of an attached connection, so one thread can send
/// input while another blocks reading frames.
pub struct FrameSender {
    stream: UnixStream,
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// `Err(Ok(error))` is the daemon's error object; `Err(Err(_))` an I/O failure.
pub type AttachResult = Result<Attached, Result<Value, io::Error>>;

/// Connects to `socket`, logs in with `token` if given, and attaches to `pane`.
pub fn attach(
    socket: &Path,
    token: Option<&str>,
    pane: &str,
    resume: Option<(&str, u64)>,
) -> AttachResult {
    let stream = UnixStream::connect(socket).map_err(Err)?;
    let writer = stream.try_clone().map_err(Err)?;
    let mut reader = BufReader::with_capacity(512 * 1024, stream);
    let mut out = Vec::new();
    if let Some(t) = token {
        let mut p = Map::new();
        p.insert("token".into(), json!(t));
        out.extend(wire::encode_request(0, "auth.login", &p));
    }
    let mut p = Map::new();
    p.insert("pane".into(), json!(pane));
    if let Some((source, offset)) = resume {
        p.insert("resume".into(), json!({"source": source, "offset": offset}));
    }
    out.extend(wire::encode_request(
        1,
        crate::manifest::VerbId::PaneAttach.name(),
        &p,
    ));
    (&writer).write_all(&out).map_err(Err)?;
    let mut replies = if token.is_some() { 2 } else { 1 };
    loop {
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line).map_err(Err)? == 0 {
            return Err(Err(bad("connection closed before the reply")));
        }
        let v: Value = serde_json::from_slice(&line).map_err(|_| Err(bad("reply is not JSON")))?;
        if let Some(e) = v.get("error") {
            return Err(Ok(e.clone()));
        }
        replies -= 1;
        if replies == 0 {
            let reply = v.get("ok").cloned().ok_or_else(|| Err(bad("no ok")))?;
            return Ok(Attached {
                reply,
                reader,
                writer: FrameSender { stream: writer },
            });
        }
    }
}

impl Attached {
    /// The next frame; `None` when the daemon closed the connection.
    pub fn read_frame(&mut self) -> io::Result<Option<Frame>> {
        let mut h = [0u8; HEADER];
        match self.reader.read_exact(&mut h) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        }
        let (kind, len) = frame::parse_header(h);
        // Output frames are at most 256 KiB; a snapshot of a very large screen may
        // exceed the 1 MiB client-frame limit, so only absurd lengths are refused.
        if len > 64 * MAX_PAYLOAD {
            return Err(bad("frame too large"));
        }
        if kind == frame::OUTPUT && len >= 8 {
            // The offset is read apart so the bytes land in their own buffer as is.
            let mut offset = [0u8; 8];
            self.reader.read_exact(&mut offset)?;
            let mut bytes = vec![0u8; len - 8];
            self.reader.read_exact(&mut bytes)?;
            return Ok(Some(Frame::Output {
                offset: u64::from_be_bytes(offset),
                bytes,
            }));
        }
        let mut payload = vec![0u8; len];
        self.reader.read_exact(&mut payload)?;
        let json = |p: &[u8]| serde_json::from_slice::<Value>(p).map_err(|_| bad("bad JSON"));
        Ok(Some(match kind {
            frame::SNAPSHOT => Frame::Snapshot(payload),
            frame::READY => Frame::Ready,
            frame::EXIT => Frame::Exit(json(&payload)?),
            frame::CLOSE => {
                let v = json(&payload)?;
                let reason = v.get("reason").and_then(Value::as_str).unwrap_or("");
                Frame::Close(reason.to_string())
            }
            other => Frame::Other(other, payload),
        }))
    }

    /// A second handle on the connection's sending side.
    pub fn sender(&self) -> io::Result<FrameSender> {
        Ok(FrameSender {
            stream: self.writer.stream.try_clone()?,
        })
    }

    pub fn send(&mut self, kind: u8, payload: &[u8]) -> io::Result<()> {
        self.writer.send(kind, payload)
    }

    /// Bytes as they are, for malformed frames.
    pub fn send_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.stream.write_all(bytes)
    }

    pub fn send_input(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.send_input(bytes)
    }

    pub fn send_resize(&mut self, cols: u16, rows: u16) -> io::Result<()> {
        self.writer.send_resize(cols, rows)
    }

    pub fn send_detach(&mut self) -> io::Result<()> {
        self.writer.send_detach()
    }

    /// Bounds each blocking read (`None`: wait forever).
    pub fn set_read_timeout(&self, t: Option<std::time::Duration>) -> io::Result<()> {
        self.reader.get_ref().set_read_timeout(t)
    }

    pub fn source(&self) -> &str {
        self.reply["source"].as_str().unwrap_or("")
    }

    pub fn offset(&self) -> u64 {
        self.reply["offset"].as_u64().unwrap_or(0)
    }
}

impl FrameSender {
    pub fn send(&mut self, kind: u8, payload: &[u8]) -> io::Result<()> {
        self.stream.write_all(&frame::encode(kind, payload))
    }

    pub fn send_input(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.send(frame::INPUT, bytes)
    }

    pub fn send_resize(&mut self, cols: u16, rows: u16) -> io::Result<()> {
        self.send(frame::RESIZE, &frame::resize_payload(cols, rows))
    }

    pub fn send_detach(&mut self) -> io::Result<()> {
        self.send(frame::DETACH, &[])
    }
}
