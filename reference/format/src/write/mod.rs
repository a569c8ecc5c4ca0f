//! The canonical writer: the compact payload in the RFC's field order, wrapped
//! exactly as the RFC's Python script wraps it (`json.dumps(..., ensure_ascii=False,
//! separators=(",", ":")) + "\n"`).

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::escape::push_json_string;
use crate::model::*;
use crate::time::stamp;
use crate::validate::validate;

mod cache;
mod sink;

pub use cache::RecordCache;
use sink::{EnvelopeSink, Sink, Split};

/// Encodes a whole checkpoint file in `format`. Refuses (with the reader's verdict)
/// any state the reader would refuse, including features `format` cannot hold.
///
/// One pass: the payload is written straight into the envelope's JSON string (each
/// of its `"` and `\` escaped as it is written, not found again by scanning the
/// finished payload) while its own bytes are hashed in cache-sized chunks. The bytes
/// are exactly `wrap_envelope(format, &write_payload(cp, format)?)` (tested on the
/// RFC examples, the corpus and random states).
pub fn write(cp: &Checkpoint, format: Format) -> Result<Vec<u8>> {
    validate(cp, format)?;
    Ok(envelope(cp, format, None))
}

/// [`write`], reusing the bytes of every session, window and pane (up to its text)
/// that is the same as in the previous write through `cache`; the rest are encoded
/// and kept for the next. The bytes are exactly [`write`]'s (tested on sequences
/// of random states through one cache). A refused state leaves `cache` as it was.
pub fn write_cached(cp: &Checkpoint, format: Format, cache: &mut RecordCache) -> Result<Vec<u8>> {
    validate(cp, format)?;
    Ok(envelope(cp, format, Some(cache)))
}

fn envelope(cp: &Checkpoint, format: Format, cache: Option<&mut RecordCache>) -> Vec<u8> {
    let size = estimate(cp);
    let mut out = Vec::with_capacity(size + size / 4 + 128);
    let _ = std::io::Write::write_fmt(&mut out, format_args!("{{\"format\":{}", format.number()));
    out.extend_from_slice(b",\"payload\":\"");
    let mut w = PayloadWriter {
        out: EnvelopeSink::new(out),
    };
    match cache {
        Some(cache) => w.checkpoint_cached(cp, cache.for_format(format)),
        None => w.checkpoint(cp),
    }
    let (mut out, digest) = w.out.finish();
    out.extend_from_slice(b"\",\"sha256\":\"");
    push_hex(&mut out, &digest);
    out.extend_from_slice(b"\"}\n");
    out
}

/// Wraps a payload exactly like the RFC's script (any format number, for fixtures).
pub fn wrap_envelope(format: u64, payload: &str) -> Vec<u8> {
    let digest = Sha256::digest(payload.as_bytes());
    let mut out = String::with_capacity(payload.len() + payload.len() / 8 + 128);
    let _ = write!(out, "{{\"format\":{format},\"payload\":");
    push_json_string(&mut out, payload);
    out.push_str(",\"sha256\":\"");
    let mut out = out.into_bytes();
    push_hex(&mut out, &digest);
    out.extend_from_slice(b"\"}\n");
    out
}

fn push_hex(out: &mut Vec<u8>, digest: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &byte in digest {
        out.push(HEX[usize::from(byte >> 4)]);
        out.push(HEX[usize::from(byte & 15)]);
    }
}

/// `"screen":[…],"history":[…]` as the payload holds them (for [`crate::EncodedRows`]).
pub(crate) fn push_rows(out: &mut String, screen: &[String], history: &[String]) {
    let mut w = PayloadWriter {
        out: std::mem::take(out),
    };
    w.rows(screen, history);
    *out = w.out;
}

/// The payload text alone, validated first.
pub fn write_payload(cp: &Checkpoint, format: Format) -> Result<String> {
    validate(cp, format)?;
    let mut w = PayloadWriter {
        out: String::with_capacity(estimate(cp)),
    };
    w.checkpoint(cp);
    Ok(w.out)
}

fn estimate(cp: &Checkpoint) -> usize {
    let text: usize = cp
        .panes
        .iter()
        .map(|p| match &p.text {
            Text::Plain(t) => t.screen.iter().chain(&t.history).map(|l| l.len() + 3).sum(),
            Text::Encoded(e) => e.rows.payload_len() + 96,
            _ => 0,
        })
        .sum();
    512 + 96 * (cp.sessions.len() + cp.windows.len()) + 256 * cp.panes.len() + text
}

struct PayloadWriter<S> {
    out: S,
}

impl<S: Sink> PayloadWriter<S> {
    /// `"key":`; keys are the RFC's field names (no character to escape).
    fn key(&mut self, key: &str) {
        self.out.key(key);
    }

    fn str_field(&mut self, key: &str, value: &str) {
        self.key(key);
        crate::escape::escape_into(&mut self.out, value);
    }

    /// `"key":"p17"`: resource IDs written without building a string first.
    fn id_field(&mut self, key: &str, prefix: char, n: u64) {
        self.key(key);
        self.out.quote();
        let mut buf = [0u8; 4];
        self.out.text(prefix.encode_utf8(&mut buf));
        self.number(n);
        self.out.quote();
    }

    fn num_field(&mut self, key: &str, value: impl itoa::Integer) {
        self.key(key);
        self.number(value);
    }

    /// An integer's text (digits and `-`: never escaped).
    fn number(&mut self, value: impl itoa::Integer) {
        self.out.text(itoa::Buffer::new().format(value));
    }

    fn time_field(&mut self, key: &str, ts: Timestamp) {
        let text = stamp(ts).expect("validated timestamps are formattable");
        self.key(key);
        // Digits and separators: nothing to escape.
        self.out.quote();
        self.out.text(text.as_str());
        self.out.quote();
    }

    fn list<T>(&mut self, key: &str, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        self.key(key);
        self.out.lit("[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.lit(",");
            }
            each(self, item);
            self.out.boundary();
        }
        self.out.lit("]");
    }

    fn checkpoint(&mut self, cp: &Checkpoint) {
        self.header(cp);
        self.list("sessions", &cp.sessions, Self::session);
        self.out.lit(",");
        self.list("windows", &cp.windows, Self::window);
        self.out.lit(",");
        self.list("panes", &cp.panes, |w, p| {
            w.pane_head(p);
            w.pane_text(p);
        });
        self.out.lit("}");
    }

    /// [`Self::checkpoint`] with each record's bytes from `cache` where it holds
    /// the same record, and kept there for the next write.
    fn checkpoint_cached(&mut self, cp: &Checkpoint, cache: &mut cache::Records) {
        self.header(cp);
        let mut sessions = cache.sessions.walk(cp.sessions.len());
        self.list("sessions", &cp.sessions, |w, s| {
            sessions.write(w, s, PayloadWriter::session)
        });
        cache.sessions = sessions.finish();
        self.out.lit(",");
        let mut windows = cache.windows.walk(cp.windows.len());
        self.list("windows", &cp.windows, |w, window| {
            windows.write(w, window, PayloadWriter::window)
        });
        cache.windows = windows.finish();
        self.out.lit(",");
        let mut panes = cache.panes.walk(cp.panes.len());
        self.list("panes", &cp.panes, |w, p| {
            panes.write(w, p, PayloadWriter::pane_head);
            w.pane_text(p);
        });
        cache.panes = panes.finish();
        self.out.lit("}");
    }

    /// `{` and the checkpoint's own fields, up to its first list.
    fn header(&mut self, cp: &Checkpoint) {
        self.out.lit("{");
        self.str_field("checkpoint", &cp.checkpoint);
        self.out.lit(",");
        self.num_field("generation", cp.generation);
        self.out.lit(",");
        self.str_field("socket", &cp.socket);
        self.out.lit(",");
        self.num_field("uid", cp.uid);
        self.out.lit(",");
        self.time_field("captured_at", cp.captured_at);
        self.out.lit(",");
        let shutdown = match cp.shutdown {
            Shutdown::Open => "open",
            Shutdown::Clean => "clean",
        };
        self.str_field("shutdown", shutdown);
        self.out.lit(",");
    }

    fn session(&mut self, s: &Session) {
        self.out.lit("{");
        self.id_field("session", 's', s.id);
        self.out.lit(",");
        self.str_field("name", &s.name);
        self.out.lit("}");
    }

    fn window(&mut self, w: &Window) {
        self.out.lit("{");
        self.id_field("window", 'w', w.id);
        self.out.lit(",");
        self.id_field("session", 's', w.session);
        self.out.lit(",");
        self.str_field("name", &w.name);
        self.out.lit(",");
        self.num_field("revision", w.revision);
        self.out.lit(",");
        self.list("nodes", &w.nodes, |w, node| match *node {
            Node::Pane { pane } => {
                w.out.lit("{\"kind\":\"pane\",");
                w.id_field("pane", 'p', pane);
                w.out.lit("}");
            }
            Node::Split {
                axis,
                first,
                second,
                ratio,
            } => {
                w.out.lit("{\"kind\":\"split\",");
                w.str_field("axis", if axis == Axis::Cols { "cols" } else { "rows" });
                w.out.lit(",");
                w.num_field("first", first);
                w.out.lit(",");
                w.num_field("second", second);
                if let Some(r) = ratio {
                    w.out.lit(",");
                    w.num_field("ratio", r);
                }
                w.out.lit("}");
            }
        });
        self.out.lit("}");
    }

    /// A pane's record up to its `text` field (the part the record cache keeps).
    fn pane_head(&mut self, p: &Pane) {
        self.out.lit("{");
        self.id_field("pane", 'p', p.id);
        self.out.lit(",");
        self.id_field("window", 'w', p.window);
        self.out.lit(",");
        self.id_field("session", 's', p.session);
        self.out.lit(",");
        self.num_field("cols", p.cols);
        self.out.lit(",");
        self.num_field("rows", p.rows);
        self.out.lit(",");
        match &p.state {
            PaneState::Running => self.str_field("state", "running"),
            PaneState::Exited { exit } => {
                self.str_field("state", "exited");
                match exit {
                    Some(Exit::Code(code)) => {
                        self.out.lit(",");
                        self.num_field("exit_code", *code);
                    }
                    Some(Exit::Signal(name)) => {
                        self.out.lit(",");
                        self.str_field("signal", name);
                    }
                    None => {}
                }
            }
        }
        if let Some(prev) = p.previous_state {
            self.out.lit(",");
            let prev = match prev {
                PreviousState::Exited => "exited",
                PreviousState::Interrupted => "interrupted",
            };
            self.str_field("previous_state", prev);
        }
        if let Some(spec) = &p.float {
            self.out.lit(",\"layer\":\"float\",");
            self.float_spec(spec);
        }
        if !p.tags.is_empty() {
            self.out.lit(",");
            self.list("tags", &p.tags, |w, tag| {
                w.out.lit("{");
                w.str_field("key", &tag.key);
                w.out.lit(",");
                w.str_field("value", &tag.value);
                w.out.lit("}");
            });
        }
        self.out.lit(",");
    }

    /// A pane's `text` field and the end of its record.
    fn pane_text(&mut self, p: &Pane) {
        self.text(&p.text);
        self.out.lit("}");
    }

    fn float_spec(&mut self, spec: &FloatSpec) {
        self.key("float");
        self.out.lit("{");
        // A comma before every field but the first written.
        let mut written = spec.preset.is_some();
        let mut sep = |w: &mut Self| {
            if std::mem::replace(&mut written, true) {
                w.out.lit(",");
            }
        };
        if let Some(preset) = &spec.preset {
            self.str_field("preset", preset);
        }
        for (key, extent) in [("width", spec.width), ("height", spec.height)] {
            if let Some(extent) = extent {
                sep(self);
                let text = match extent {
                    Extent::Cells(n) => n.to_string(),
                    Extent::Percent(n) => format!("{n}%"),
                };
                self.str_field(key, &text);
            }
        }
        if let Some(anchor) = spec.anchor {
            sep(self);
            self.str_field("anchor", anchor.as_str());
        }
        for (key, value) in [("x", spec.x), ("y", spec.y)] {
            if let Some(v) = value {
                sep(self);
                self.num_field(key, v);
            }
        }
        for (key, value) in [("min_cols", spec.min_cols), ("min_rows", spec.min_rows)] {
            if let Some(v) = value {
                sep(self);
                self.num_field(key, v);
            }
        }
        if let Some(border) = spec.border {
            sep(self);
            self.str_field("border", border.as_str());
        }
        if let Some(title) = &spec.title {
            sep(self);
            self.str_field("title", title);
        }
        sep(self);
        self.num_field("z", spec.z);
        self.out.lit("}");
    }

    fn text(&mut self, text: &Text) {
        self.key("text");
        match text {
            Text::Omitted => self.out.lit("{\"availability\":\"omitted\"}"),
            Text::Expired => self.out.lit("{\"availability\":\"expired\"}"),
            Text::Plain(plain) => {
                self.out.lit("{\"availability\":\"plain\",");
                self.time_field("saved_at", plain.saved_at);
                self.out.lit(",");
                self.time_field("expires_at", plain.expires_at);
                self.out.lit(",");
                self.rows(&plain.screen, &plain.history);
                self.out.lit("}");
            }
            Text::Encoded(e) => {
                self.out.lit("{\"availability\":\"plain\",");
                self.time_field("saved_at", e.saved_at);
                self.out.lit(",");
                self.time_field("expires_at", e.expires_at);
                self.out.lit(",");
                self.out.encoded(&e.rows);
                self.out.lit("}");
            }
        }
    }

    /// `"screen":[…],"history":[…]`.
    fn rows(&mut self, screen: &[String], history: &[String]) {
        let row = |w: &mut Self, line: &String| crate::escape::escape_into(&mut w.out, line);
        self.list("screen", screen, row);
        self.out.lit(",");
        self.list("history", history, row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape_like_python_json_dumps() {
        // python3 -c 'import json; print(json.dumps("a\x01\x1f\n\r\t\b\f\"\\/é\x7f", ensure_ascii=False))'
        let mut out = String::new();
        push_json_string(&mut out, "a\u{1}\u{1f}\n\r\t\u{8}\u{c}\"\\/é\u{7f}");
        assert_eq!(out, "\"a\\u0001\\u001f\\n\\r\\t\\b\\f\\\"\\\\/é\u{7f}\"");
        let mut long = String::new();
        push_json_string(&mut long, "0123456789abcdef\"0123456789abcdef");
        assert_eq!(long, "\"0123456789abcdef\\\"0123456789abcdef\"");
    }

    #[test]
    fn the_envelope_sink_escapes_what_the_payload_holds() {
        // Every byte class: plain, `"`, `\`, short escapes, other controls, DEL,
        // multi-byte; each string alone and in runs of every length up to 20.
        let pieces = [
            "a",
            "\"",
            "\\",
            "\n",
            "\r",
            "\t",
            "\u{8}",
            "\u{c}",
            "\u{1}",
            "\u{1f}",
            "\u{7f}",
            "é",
            "漢",
            "\u{1f600}",
            "/",
        ];
        let mut seed = 7u64;
        for len in 0..400 {
            let mut text = String::new();
            for _ in 0..len % 20 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            let mut payload = String::new();
            push_json_string(&mut payload, &text);
            let mut sink = Split::default();
            crate::escape::escape_into(&mut sink, &text);
            assert_eq!(sink.payload, payload.as_bytes(), "{text:?}");
            let mut escaped = String::new();
            push_json_string(&mut escaped, &payload);
            assert_eq!(
                sink.envelope,
                &escaped.as_bytes()[1..escaped.len() - 1],
                "{text:?}"
            );
        }
    }
}
