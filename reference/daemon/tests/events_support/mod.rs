//! Helpers of the events tests: subscribing, reading stream lines checked against the
//! manifest's event catalog, bulk mutations, and a model that applies events to a
//! snapshot.
#![allow(dead_code)]

use crate::common::{Daemon, Wire};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write as _;

pub const SLEEP: &str = r#"["/bin/sh","-c","exec sleep 600"]"#;

/// A connection as `token`'s principal (None: the owner) that sent `events.subscribe`;
/// returns it and the whole reply.
pub fn subscribe(d: &Daemon, token: Option<&str>, cursor: Option<Value>) -> (Wire, Value) {
    let mut w = d.wire();
    match token {
        None => w.login_owner(d),
        Some(t) => {
            let r = w.request(json!({"id":0,"verb":"auth.login","params":{"token":t}}));
            assert!(r.get("ok").is_some(), "{r}");
        }
    }
    let params = cursor.map_or(json!({}), |c| json!({ "cursor": c }));
    let r = w.request(json!({"id":1,"verb":"events.subscribe","params":params}));
    (w, r)
}

/// The next stream line, checked against the manifest's catalog when it is an event.
pub fn line(w: &mut Wire) -> Value {
    let v = w.reply().expect("a stream line");
    if let Some(e) = v.get("event") {
        check_catalog(e);
    }
    v
}

pub fn event(w: &mut Wire) -> Value {
    let v = line(w);
    v.get("event")
        .cloned()
        .unwrap_or_else(|| panic!("not an event: {v}"))
}

pub fn check_catalog(e: &Value) {
    let t = vxref::manifest::EVENTS
        .iter()
        .find(|t| e["type"] == t.name)
        .unwrap_or_else(|| panic!("type not in the catalog: {e}"));
    let kind = e["resource"].as_str().unwrap().split(':').next().unwrap();
    assert!(t.resource.split('|').any(|k| k == kind), "{e}");
    let data = e["data"].as_object().expect("data object");
    for (name, value) in data {
        let f = t
            .field(name)
            .unwrap_or_else(|| panic!("{name} not in catalog: {e}"));
        let ok = match f.kind {
            vxref::manifest::FieldKind::String => value.is_string(),
            vxref::manifest::FieldKind::Integer => value.is_i64() || value.is_u64(),
            vxref::manifest::FieldKind::Boolean => value.is_boolean(),
            vxref::manifest::FieldKind::Object => value.is_object(),
        };
        assert!(ok, "{name} has the wrong type: {e}");
    }
    for f in t.fields.iter().filter(|f| f.required) {
        assert!(data.contains_key(f.name), "{} missing: {e}", f.name);
    }
}

pub fn id(v: &Value, key: &str) -> String {
    v[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {v}"))
        .to_string()
}

pub fn err_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

/// `n` `session.rename`s pipelined on one connection (a writer thread, replies read
/// here), so bulk events cost no process per request.
pub fn renames(d: &Daemon, session: &str, n: usize) {
    let mut w = d.wire();
    w.login_owner(d);
    let mut out = w.stream.try_clone().unwrap();
    let frame = format!(
        "{}\n",
        json!({"id":2,"verb":"session.rename","params":{"session":session,"name":"n"}})
    );
    let writer = std::thread::spawn(move || {
        for _ in 0..n {
            out.write_all(frame.as_bytes()).unwrap();
        }
    });
    for _ in 0..n {
        assert!(w.reply().expect("reply").get("ok").is_some());
    }
    writer.join().unwrap();
}

/// Sends `args` as the owner and returns the events that arrive before the marker
/// rename that follows it.
pub fn events_of(d: &Daemon, w: &mut Wire, marker: &str, args: &[&str]) -> Vec<Value> {
    d.ok(args);
    d.ok(&["session", "rename", "--session", marker, "--name", "marker"]);
    let mut got = Vec::new();
    loop {
        let e = event(w);
        if e["type"] == "session.renamed" && e["resource"] == format!("session:{marker}") {
            return got;
        }
        got.push(e);
    }
}

pub fn types(events: Vec<Value>) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| (id(e, "type"), id(e, "resource")))
        .collect()
}

pub fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(t, r)| (t.to_string(), r.to_string()))
        .collect()
}

/// Sessions, windows (session, revision) and panes (window) as the events tell them.
#[derive(Debug, Default, PartialEq)]
pub struct Model {
    pub sessions: BTreeMap<String, ()>,
    pub windows: BTreeMap<String, (String, u64)>,
    pub panes: BTreeMap<String, String>,
}

impl Model {
    pub fn from_snapshot(snap: &Value) -> Model {
        let mut m = Model::default();
        for s in snap["sessions"].as_array().unwrap() {
            m.sessions.insert(id(s, "session"), ());
        }
        for w in snap["windows"].as_array().unwrap() {
            let rev = w["revision"].as_u64().unwrap();
            m.windows.insert(id(w, "window"), (id(w, "session"), rev));
        }
        for p in snap["panes"].as_array().unwrap() {
            m.panes.insert(id(p, "pane"), id(p, "window"));
        }
        m
    }

    /// The daemon's state now, as the owner lists it.
    pub fn current(d: &Daemon) -> Model {
        let mut snap = json!({"windows": []});
        let sessions = d.ok(&["session", "list"])["sessions"].clone();
        for s in sessions.as_array().unwrap() {
            for w in s["windows"].as_array().unwrap() {
                snap["windows"].as_array_mut().unwrap().push(w.clone());
            }
        }
        snap["sessions"] = sessions;
        snap["panes"] = d.ok(&["pane", "list"])["panes"].clone();
        Model::from_snapshot(&snap)
    }

    /// Applies one event; a duplicate or a missing resource means the snapshot held
    /// part of a mutation whose events came after its head.
    pub fn apply(&mut self, e: &Value) {
        let d = &e["data"];
        match e["type"].as_str().unwrap() {
            "session.created" => {
                assert!(self.sessions.insert(id(d, "session"), ()).is_none(), "{e}")
            }
            "session.removed" => {
                let s = id(d, "session");
                assert!(self.sessions.remove(&s).is_some(), "{e}");
                assert!(self.windows.values().all(|(ws, _)| *ws != s), "{e}");
            }
            "window.created" => {
                let w = (id(d, "session"), 1);
                assert!(self.sessions.contains_key(&w.0), "{e}");
                assert!(self.windows.insert(id(d, "window"), w).is_none(), "{e}");
            }
            "window.removed" => {
                let w = id(d, "window");
                assert!(self.windows.remove(&w).is_some(), "{e}");
                assert!(self.panes.values().all(|pw| *pw != w), "{e}");
            }
            "window.layout_changed" => {
                let rev = d["revision"].as_u64().unwrap();
                let w = self
                    .windows
                    .get_mut(&id(d, "window"))
                    .expect("known window");
                assert!(rev > w.1, "revision goes forward: {e}");
                w.1 = rev;
            }
            "pane.created" => {
                assert!(self.windows.contains_key(&id(d, "window")), "{e}");
                assert!(
                    self.panes.insert(id(d, "pane"), id(d, "window")).is_none(),
                    "{e}"
                );
            }
            "pane.removed" => assert!(self.panes.remove(&id(d, "pane")).is_some(), "{e}"),
            "pane.placed" => {
                let p = self.panes.get_mut(&id(d, "pane")).expect("known pane");
                *p = id(d, "window");
            }
            _ => {}
        }
    }
}
