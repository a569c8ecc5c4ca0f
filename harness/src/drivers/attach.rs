//! The attach viewer: one `pane.attach` connection kept open, with a reader thread
//! collecting the binary frames that follow the `ok` line (docs/spec/attach.md): one
//! type byte, a u32 big-endian length, the payload. Daemon to client: `S` snapshot
//! (VT bytes), `R` ready, `O` output (u64 big-endian absolute offset, then bytes),
//! `X` exit (JSON), `C` close (JSON `{reason}`).

use super::collected::{self, Collected};
use super::events::open;
use super::wire::Reply;
use serde_json::{Map, Value};
use std::io::{BufReader, Read};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// A frame larger than this is taken for a framing error, not allocated.
const MAX_FRAME: u32 = 64 << 20;

#[derive(Debug, Clone)]
pub struct Frame {
    pub kind: u8,
    pub payload: Vec<u8>,
}

impl Frame {
    /// The JSON payload of an `X` or `C` frame.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.payload).unwrap_or_else(|_| {
            panic!(
                "the {} frame's payload is not JSON: {:?}",
                self.kind as char,
                String::from_utf8_lossy(&self.payload[..self.payload.len().min(200)])
            )
        })
    }
}

#[derive(Debug, Default)]
pub struct Frames {
    pub frames: Vec<Frame>,
    pub eof: bool,
    /// A frame that could not be read whole: a framing error.
    pub bad: Option<String>,
}

type Shared = collected::Shared<Frames>;

impl Collected for Frames {
    fn ended(&self) -> bool {
        self.eof
    }
    fn violation(&self) -> Option<String> {
        self.bad.as_ref().map(|bad| {
            format!(
                "attach stream framing error: {bad}; frames {}",
                kinds(&self.frames)
            )
        })
    }
    fn summary(&self) -> String {
        format!("frames {}", kinds(&self.frames))
    }
}

pub struct Viewer {
    stream: UnixStream,
    shared: Shared,
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

/// `pane.attach`, with an optional `{source,offset}` resume.
pub fn attach(
    socket: &Path,
    token: Option<&str>,
    pane: &str,
    resume: Option<Value>,
) -> (Reply, Vec<u8>, Option<Viewer>) {
    let mut params = Map::new();
    params.insert("pane".into(), Value::String(pane.into()));
    if let Some(r) = resume {
        params.insert("resume".into(), r);
    }
    let (reply, seen, open) = open(socket, token, "pane.attach", params);
    let Some((stream, reader)) = open else {
        return (reply, seen, None);
    };
    let shared: Shared = collected::shared();
    let s2 = shared.clone();
    std::thread::spawn(move || collect(reader, s2));
    (reply, seen, Some(Viewer { stream, shared }))
}

fn collect(mut reader: BufReader<UnixStream>, shared: Shared) {
    let (lock, cv) = &*shared;
    loop {
        let mut head = [0u8; 5];
        let got = read_full(&mut reader, &mut head);
        let mut r = lock.lock().unwrap();
        match got {
            Ok(0) => {
                r.eof = true;
                cv.notify_all();
                return;
            }
            Ok(5) => {}
            _ => {
                r.bad
                    .get_or_insert("the stream ended inside a frame header".into());
                r.eof = true;
                cv.notify_all();
                return;
            }
        }
        drop(r);
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]);
        let mut payload = vec![0u8; len.min(MAX_FRAME) as usize];
        let got = if len > MAX_FRAME {
            Err(format!("a {} frame announces {len} bytes", head[0] as char))
        } else {
            match read_full(&mut reader, &mut payload) {
                Ok(n) if n == payload.len() => Ok(()),
                _ => Err(format!(
                    "the stream ended inside a {} frame",
                    head[0] as char
                )),
            }
        };
        let mut r = lock.lock().unwrap();
        match got {
            Ok(()) => r.frames.push(Frame {
                kind: head[0],
                payload,
            }),
            Err(e) => {
                r.bad.get_or_insert(e);
                r.eof = true;
                cv.notify_all();
                return;
            }
        }
        cv.notify_all();
    }
}

/// Reads until `buf` is full or the stream ends; the count read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return if n == 0 { Ok(0) } else { Err(e) },
        }
    }
    Ok(n)
}

impl Viewer {
    /// Waits (up to the scaled `limit_ms`) until `done` holds for the frames, or the
    /// stream ends, then returns `f` of them.
    pub fn wait<T>(
        &self,
        what: &str,
        limit_ms: u64,
        done: impl Fn(&Frames) -> bool,
        f: impl FnOnce(&Frames) -> T,
    ) -> T {
        collected::wait(&self.shared, what, limit_ms, done, f)
    }
}

/// `S R O X` for the frames' types.
pub fn kinds(frames: &[Frame]) -> String {
    frames
        .iter()
        .map(|f| (f.kind as char).to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames split across reads, and a stream that ends mid-frame, are told apart.
    #[test]
    fn frames_are_read_whole_and_truncation_is_an_error() {
        let (a, b) = UnixStream::pair().unwrap();
        let shared: Shared = collected::shared();
        let s2 = shared.clone();
        let t = std::thread::spawn(move || collect(BufReader::new(b), s2));
        use std::io::Write;
        let mut w = &a;
        w.write_all(b"R\0\0\0\0X\0\0\0\x0f{\"exit_code\":3}")
            .unwrap();
        w.write_all(b"O\0\0\0\x09\0\0\0\0\0\0\0\0").unwrap();
        a.shutdown(std::net::Shutdown::Both).unwrap();
        t.join().unwrap();
        let r = shared.0.lock().unwrap();
        assert_eq!(kinds(&r.frames), "R X");
        assert_eq!(r.frames[1].json()["exit_code"], 3);
        assert!(r.bad.as_deref().unwrap().contains("inside a O frame"));
    }
}
