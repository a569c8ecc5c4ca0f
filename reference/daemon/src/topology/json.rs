//! The wire shapes of sessions, windows and panes (`session.list`, `pane.list`, the
//! event snapshot), as `Serialize` views over the records.
//!
//! A listing of N panes serializes these straight into its reply bytes: building a
//! `serde_json::Value` per resource first (a map node and a string per field) only
//! to serialize and drop it cost more per pane the more panes there were, as the
//! allocator consolidated and re-faulted the freed trees (issue 14). Where a `Value`
//! is wanted (events, the snapshot) it is `serde_json::to_value` of the same view, so
//! there is one definition of each shape. Fields are written in sorted key order,
//! the order a `Value` map prints them, so both paths give the same bytes.

use super::tree::Nodes;
use super::{Layer, Pane, PaneState, Session, Window};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{json, Value};
use std::fmt::Display;

/// An ID (or anything `Display`) written as a JSON string without a `String`.
struct Text<T>(T);

impl<T: Display> Serialize for Text<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

/// A `pane.list` entry: the pane record, with its archive's `recovery` object when
/// it is a restored archive (the reactor's archive metadata, `R`).
pub struct PaneView<'a, R> {
    pub pane: &'a Pane,
    pub archive: Option<&'a R>,
}

impl<R: Serialize> Serialize for PaneView<'_, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = self.pane;
        let (exit_code, signal) = match &p.state {
            PaneState::Running => (None, None),
            PaneState::Exited { exit_code, signal } => (exit_code.as_ref(), signal.as_ref()),
        };
        let float = match &p.layer {
            Layer::Tiled => None,
            Layer::Float { spec, z, geometry } => {
                let mut f = spec.to_json();
                f.insert("z".into(), json!(z));
                f.insert("geometry".into(), geometry.to_json());
                Some(Value::Object(f))
            }
        };
        let mut m = s.serialize_map(None)?;
        if let Some(a) = &p.argv0 {
            m.serialize_entry("argv0", a)?;
        }
        m.serialize_entry("cols", &p.cols)?;
        if let Some(c) = exit_code {
            m.serialize_entry("exit_code", c)?;
        }
        if let Some(f) = &float {
            m.serialize_entry("float", f)?;
            m.serialize_entry("layer", "float")?;
        }
        m.serialize_entry("pane", &Text(p.id))?;
        if let Some(a) = self.archive {
            m.serialize_entry("recovery", a)?;
        }
        m.serialize_entry("rows", &p.rows)?;
        m.serialize_entry("session", &Text(p.session))?;
        if let Some(sig) = signal {
            m.serialize_entry("signal", sig)?;
        }
        let state = match p.state {
            PaneState::Running => "running",
            PaneState::Exited { .. } => "exited",
        };
        m.serialize_entry("state", state)?;
        if !p.tags.is_empty() {
            m.serialize_entry("tags", &Tags(p))?;
        }
        m.serialize_entry("window", &Text(p.window))?;
        m.end()
    }
}

struct Tags<'a>(&'a Pane);

impl Serialize for Tags<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.tags.len()))?;
        for (key, value) in self.0.tags.iter() {
            seq.serialize_element(&Tag { key, value })?;
        }
        seq.end()
    }
}

#[derive(serde::Serialize)]
struct Tag<'a> {
    key: &'a str,
    value: &'a str,
}

/// A window entry of `session.list` (and the snapshot's flat window list).
pub struct WindowView<'a>(pub &'a Window);

impl Serialize for WindowView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let w = self.0;
        let mut m = s.serialize_map(Some(8))?;
        m.serialize_entry("cols", &w.cols)?;
        m.serialize_entry("floats", &Floats(&w.floats))?;
        m.serialize_entry("name", &w.name)?;
        m.serialize_entry("nodes", &Nodes(w.tree.as_ref()))?;
        m.serialize_entry("revision", &w.revision)?;
        m.serialize_entry("rows", &w.rows)?;
        m.serialize_entry("session", &Text(w.session))?;
        m.serialize_entry("window", &Text(w.id))?;
        m.end()
    }
}

struct Floats<'a>(&'a [crate::ids::PaneId]);

impl Serialize for Floats<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|p| Text(*p)))
    }
}

/// A `session.list` entry: the session and the windows the caller may read.
pub struct SessionView<'a> {
    pub session: &'a Session,
    pub windows: Vec<WindowView<'a>>,
}

impl Serialize for SessionView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("name", &self.session.name)?;
        m.serialize_entry("session", &Text(self.session.id))?;
        m.serialize_entry("windows", &self.windows)?;
        m.end()
    }
}

/// `{"<key>": value}`: a listing's reply object.
pub struct Keyed<T>(pub &'static str, pub T);

impl<T: Serialize> Serialize for Keyed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(self.0, &self.1)?;
        m.end()
    }
}

/// A view as a `Value` (events and the snapshot want one).
pub fn to_value<T: Serialize>(view: &T) -> Value {
    serde_json::to_value(view).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{PaneId, SessionId, WindowId};
    use crate::topology::float::{FloatSpec, Geometry, Length};
    use crate::topology::tree::{Axis, Tree};

    /// Direct serialization writes what printing the view's `Value` writes (which
    /// sorts keys): the listings' bytes equal the shapes' `Value` form.
    fn same_bytes<T: Serialize>(view: &T) {
        let direct = serde_json::to_string(view).unwrap();
        assert_eq!(direct, to_value(view).to_string());
    }

    fn pane(id: u64) -> Pane {
        Pane {
            id: PaneId(id),
            window: WindowId(1),
            session: SessionId(1),
            cols: 80,
            rows: 24,
            layer: Layer::Tiled,
            state: PaneState::Running,
            argv0: None,
            tags: Default::default(),
            principal: None,
        }
    }

    #[test]
    fn views_print_their_value_form() {
        let plain = pane(1);
        let mut full = pane(2);
        full.argv0 = Some("sh \"x\"".into());
        full.state = PaneState::Exited {
            exit_code: Some(3),
            signal: Some("TERM".into()),
        };
        full.tags = [("owner".into(), "venomx".into()), ("a".into(), "b".into())].into();
        full.layer = Layer::Float {
            spec: Box::new(FloatSpec {
                preset: Some("a.b".into()),
                width: Some(Length::Percent(50)),
                height: Some(Length::Cells(10)),
                anchor: Some("left".into()),
                x: Some(-1),
                y: Some(2),
                min_cols: Some(3),
                min_rows: Some(4),
                border: Some("rounded".into()),
                title: Some("t".into()),
            }),
            z: 7,
            geometry: Geometry {
                col: -1,
                row: 2,
                cols: 40,
                rows: 10,
            },
        };
        for p in [&plain, &full] {
            same_bytes(&PaneView::<Value> {
                pane: p,
                archive: None,
            });
            same_bytes(&PaneView {
                pane: p,
                archive: Some(&json!({"checkpoint": "c", "cut_rows": 0})),
            });
        }
        let text = serde_json::to_string(&PaneView::<Value> {
            pane: &full,
            archive: None,
        })
        .unwrap();
        assert!(text.contains(r#""layer":"float""#) && text.contains(r#""exit_code":3"#));

        let mut tree = Tree::leaf(PaneId(1));
        tree.split_leaf(PaneId(1), PaneId(2), Axis::Cols, Some(3000), false);
        tree.split_leaf(PaneId(2), PaneId(3), Axis::Rows, None, true);
        let window = Window {
            id: WindowId(4),
            session: SessionId(1),
            name: "w\u{1}".into(),
            revision: 3,
            cols: 80,
            rows: 24,
            tree: Some(tree),
            floats: vec![PaneId(2), PaneId(9)],
        };
        let empty = Window {
            tree: None,
            floats: Vec::new(),
            ..window.clone()
        };
        same_bytes(&WindowView(&window));
        same_bytes(&WindowView(&empty));
        let session = Session {
            id: SessionId(1),
            name: "s".into(),
        };
        same_bytes(&Keyed(
            "sessions",
            [SessionView {
                session: &session,
                windows: vec![WindowView(&window), WindowView(&empty)],
            }],
        ));
    }
}
