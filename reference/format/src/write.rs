//! The canonical writer: the compact payload in the RFC's field order, wrapped
//! exactly as the RFC's Python script wraps it (`json.dumps(..., ensure_ascii=False,
//! separators=(",", ":")) + "\n"`).

use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::model::*;
use crate::time::format_timestamp;
use crate::validate::validate;

/// Encodes a whole checkpoint file in `format`. Refuses (with the reader's verdict)
/// any state the reader would refuse, including features `format` cannot hold.
pub fn write(cp: &Checkpoint, format: Format) -> Result<Vec<u8>> {
    let payload = write_payload(cp, format)?;
    Ok(wrap_envelope(format.number(), &payload))
}

/// Wraps a payload exactly like the RFC's script (any format number, for fixtures).
pub fn wrap_envelope(format: u64, payload: &str) -> Vec<u8> {
    let digest = Sha256::digest(payload.as_bytes());
    let mut out = String::with_capacity(payload.len() + payload.len() / 8 + 128);
    let _ = write!(out, "{{\"format\":{format},\"payload\":");
    push_json_string(&mut out, payload);
    out.push_str(",\"sha256\":\"");
    for byte in digest {
        let _ = write!(out, "{byte:02x}");
    }
    out.push_str("\"}\n");
    out.into_bytes()
}

/// Python's `json.dumps(s, ensure_ascii=False)` string encoding.
pub(crate) fn push_json_string(out: &mut String, text: &str) {
    out.push('"');
    let bytes = text.as_bytes();
    let mut run_start = 0;
    loop {
        // Runs without `"`, `\` or control bytes are copied whole.
        let i = crate::json::string_stop(bytes, run_start);
        out.push_str(&text[run_start..i]);
        let Some(&b) = bytes.get(i) else { break };
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                let _ = write!(out, "\\u{b:04x}");
            }
        }
        run_start = i + 1;
    }
    out.push('"');
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
            _ => 0,
        })
        .sum();
    512 + 96 * (cp.sessions.len() + cp.windows.len()) + 256 * cp.panes.len() + text
}

struct PayloadWriter {
    out: String,
}

impl PayloadWriter {
    fn key(&mut self, key: &str) {
        self.out.push('"');
        self.out.push_str(key);
        self.out.push_str("\":");
    }

    fn str_field(&mut self, key: &str, value: &str) {
        self.key(key);
        push_json_string(&mut self.out, value);
    }

    /// `"key":"p17"`: resource IDs written without building a string first.
    fn id_field(&mut self, key: &str, prefix: char, n: u64) {
        self.key(key);
        self.out.push('"');
        self.out.push(prefix);
        let _ = write!(self.out, "{n}\"");
    }

    fn num_field(&mut self, key: &str, value: impl std::fmt::Display) {
        self.key(key);
        let _ = write!(self.out, "{value}");
    }

    fn time_field(&mut self, key: &str, ts: Timestamp) {
        let text = format_timestamp(ts).expect("validated timestamps are formattable");
        self.str_field(key, &text);
    }

    fn list<T>(&mut self, key: &str, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        self.key(key);
        self.out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            each(self, item);
        }
        self.out.push(']');
    }

    fn checkpoint(&mut self, cp: &Checkpoint) {
        self.out.push('{');
        self.str_field("checkpoint", &cp.checkpoint);
        self.out.push(',');
        self.num_field("generation", cp.generation);
        self.out.push(',');
        self.str_field("socket", &cp.socket);
        self.out.push(',');
        self.num_field("uid", cp.uid);
        self.out.push(',');
        self.time_field("captured_at", cp.captured_at);
        self.out.push(',');
        let shutdown = match cp.shutdown {
            Shutdown::Open => "open",
            Shutdown::Clean => "clean",
        };
        self.str_field("shutdown", shutdown);
        self.out.push(',');
        self.list("sessions", &cp.sessions, |w, s| {
            w.out.push('{');
            w.id_field("session", 's', s.id);
            w.out.push(',');
            w.str_field("name", &s.name);
            w.out.push('}');
        });
        self.out.push(',');
        self.list("windows", &cp.windows, Self::window);
        self.out.push(',');
        self.list("panes", &cp.panes, Self::pane);
        self.out.push('}');
    }

    fn window(&mut self, w: &Window) {
        self.out.push('{');
        self.id_field("window", 'w', w.id);
        self.out.push(',');
        self.id_field("session", 's', w.session);
        self.out.push(',');
        self.str_field("name", &w.name);
        self.out.push(',');
        self.num_field("revision", w.revision);
        self.out.push(',');
        self.list("nodes", &w.nodes, |w, node| match *node {
            Node::Pane { pane } => {
                w.out.push_str("{\"kind\":\"pane\",");
                w.id_field("pane", 'p', pane);
                w.out.push('}');
            }
            Node::Split {
                axis,
                first,
                second,
                ratio,
            } => {
                w.out.push_str("{\"kind\":\"split\",");
                w.str_field("axis", if axis == Axis::Cols { "cols" } else { "rows" });
                w.out.push(',');
                w.num_field("first", first);
                w.out.push(',');
                w.num_field("second", second);
                if let Some(r) = ratio {
                    w.out.push(',');
                    w.num_field("ratio", r);
                }
                w.out.push('}');
            }
        });
        self.out.push('}');
    }

    fn pane(&mut self, p: &Pane) {
        self.out.push('{');
        self.id_field("pane", 'p', p.id);
        self.out.push(',');
        self.id_field("window", 'w', p.window);
        self.out.push(',');
        self.id_field("session", 's', p.session);
        self.out.push(',');
        self.num_field("cols", p.cols);
        self.out.push(',');
        self.num_field("rows", p.rows);
        self.out.push(',');
        match &p.state {
            PaneState::Running => self.str_field("state", "running"),
            PaneState::Exited { exit } => {
                self.str_field("state", "exited");
                match exit {
                    Some(Exit::Code(code)) => {
                        self.out.push(',');
                        self.num_field("exit_code", code);
                    }
                    Some(Exit::Signal(name)) => {
                        self.out.push(',');
                        self.str_field("signal", name);
                    }
                    None => {}
                }
            }
        }
        if let Some(prev) = p.previous_state {
            self.out.push(',');
            let prev = match prev {
                PreviousState::Exited => "exited",
                PreviousState::Interrupted => "interrupted",
            };
            self.str_field("previous_state", prev);
        }
        if let Some(spec) = &p.float {
            self.out.push_str(",\"layer\":\"float\",");
            self.float_spec(spec);
        }
        if !p.tags.is_empty() {
            self.out.push(',');
            self.list("tags", &p.tags, |w, tag| {
                w.out.push('{');
                w.str_field("key", &tag.key);
                w.out.push(',');
                w.str_field("value", &tag.value);
                w.out.push('}');
            });
        }
        self.out.push(',');
        self.text(&p.text);
        self.out.push('}');
    }

    fn float_spec(&mut self, spec: &FloatSpec) {
        self.key("float");
        self.out.push('{');
        let start = self.out.len();
        let sep = |w: &mut Self| {
            if w.out.len() > start {
                w.out.push(',');
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
        self.out.push('}');
    }

    fn text(&mut self, text: &Text) {
        self.key("text");
        match text {
            Text::Omitted => self.out.push_str("{\"availability\":\"omitted\"}"),
            Text::Expired => self.out.push_str("{\"availability\":\"expired\"}"),
            Text::Plain(plain) => {
                self.out.push_str("{\"availability\":\"plain\",");
                self.time_field("saved_at", plain.saved_at);
                self.out.push(',');
                self.time_field("expires_at", plain.expires_at);
                self.out.push(',');
                let rows = |w: &mut Self, line: &String| push_json_string(&mut w.out, line);
                self.list("screen", &plain.screen, rows);
                self.out.push(',');
                self.list("history", &plain.history, rows);
                self.out.push('}');
            }
        }
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
}
