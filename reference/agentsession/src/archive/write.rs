//! The canonical writer: members in the spec's order, optional members omitted
//! when absent (and `active` when false), no whitespace, minimal string escapes,
//! ratios as the shortest decimal that reads back to the same f64, one newline
//! at the end. Schema 2 exactly when a pane carries a record.

use vx_format::json::push_string;

use super::model::*;
use crate::limits::{ARCHIVE_SCHEMA_LEGACY, ARCHIVE_SCHEMA_NATIVE};

pub fn write(archive: &Archive) -> Vec<u8> {
    let schema = if archive.has_records() {
        ARCHIVE_SCHEMA_NATIVE
    } else {
        ARCHIVE_SCHEMA_LEGACY
    };
    let mut w = Writer {
        out: String::with_capacity(256),
        first: true,
    };
    w.out.push('{');
    w.key("schema_version");
    w.out.push_str(&schema.to_string());
    w.key("sessions");
    w.list(&archive.sessions, Writer::session);
    w.out.push_str("}\n");
    w.out.into_bytes()
}

struct Writer {
    out: String,
    /// No comma before the next member.
    first: bool,
}

impl Writer {
    fn key(&mut self, key: &str) {
        if !std::mem::take(&mut self.first) {
            self.out.push(',');
        }
        self.out.push('"');
        self.out.push_str(key);
        self.out.push_str("\":");
    }

    fn open(&mut self) {
        self.out.push('{');
        self.first = true;
    }

    fn close(&mut self) {
        self.out.push('}');
        self.first = false;
    }

    fn str_field(&mut self, key: &str, value: &str) {
        self.key(key);
        push_string(&mut self.out, value);
    }

    fn opt_str(&mut self, key: &str, value: &Option<String>) {
        if let Some(v) = value {
            self.str_field(key, v);
        }
    }

    fn active(&mut self, active: bool) {
        if active {
            self.key("active");
            self.out.push_str("true");
        }
    }

    fn argv(&mut self, key: &str, argv: &Option<Vec<String>>) {
        if let Some(argv) = argv {
            self.key(key);
            self.list(argv, |w, a| push_string(&mut w.out, a));
        }
    }

    fn list<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        self.out.push('[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.out.push(',');
            }
            each(self, item);
        }
        self.out.push(']');
        self.first = false;
    }

    fn session(&mut self, s: &Session) {
        self.open();
        self.str_field("name", &s.name);
        self.active(s.active);
        self.opt_str("cwd", &s.cwd);
        self.argv("command", &s.command);
        self.key("windows");
        self.list(&s.windows, Writer::window);
        self.close();
    }

    fn window(&mut self, w: &Window) {
        self.open();
        self.str_field("name", &w.name);
        self.active(w.active);
        if let Some(layout) = &w.layout {
            self.key("layout");
            self.layout(layout);
        }
        self.key("panes");
        self.list(&w.panes, Writer::pane);
        self.close();
    }

    fn pane(&mut self, p: &Pane) {
        self.open();
        self.active(p.active);
        self.opt_str("title", &p.title);
        self.opt_str("cwd", &p.cwd);
        self.argv("command", &p.command);
        if let Some(record) = &p.agent_session {
            self.key("agent_session");
            record.encode_into(&mut self.out);
        }
        for (key, value) in [("cols", p.cols), ("rows", p.rows)] {
            if let Some(v) = value {
                self.key(key);
                self.out.push_str(&v.to_string());
            }
        }
        self.close();
    }

    fn layout(&mut self, node: &Layout) {
        self.open();
        match node {
            Layout::Pane(i) => {
                self.str_field("kind", "pane");
                self.key("pane");
                self.out.push_str(&i.to_string());
            }
            Layout::Split {
                dir,
                ratio,
                left,
                right,
            } => {
                self.str_field("kind", "split");
                self.str_field("dir", dir.as_str());
                self.key("ratio");
                // Rust's Display is the shortest round-trip decimal, never an exponent.
                self.out.push_str(&ratio.to_string());
                self.key("left");
                self.layout(left);
                self.key("right");
                self.layout(right);
            }
        }
        self.close();
    }
}
