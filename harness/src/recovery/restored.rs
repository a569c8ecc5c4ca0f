//! What a restore's result says it created, as the stream judges use it.

use crate::drivers::events::id_number;
use serde_json::Value;
use std::collections::BTreeSet;

/// What a restore's result says it created: old and new IDs, by kind.
#[derive(Clone)]
pub struct Restored {
    pub checkpoint: String,
    /// (previous, current) of sessions, windows and panes, current in numeric order.
    pub sessions: Vec<(String, String)>,
    pub windows: Vec<(String, String)>,
    pub panes: Vec<(String, String)>,
}

impl Restored {
    pub fn from_result(v: &Value) -> Restored {
        let map = |kind: &str| -> Vec<(String, String)> {
            let mut out: Vec<(String, String)> = v[kind]
                .as_array()
                .unwrap_or_else(|| panic!("restore result has no {kind} mapping: {v}"))
                .iter()
                .map(|m| {
                    let s = |k: &str| {
                        m[k].as_str()
                            .unwrap_or_else(|| panic!("mapping entry without {k}: {m}"))
                            .to_string()
                    };
                    (s("previous"), s("current"))
                })
                .collect();
            out.sort_by_key(|(_, cur)| id_number(cur));
            out
        };
        Restored {
            checkpoint: v["checkpoint"].as_str().unwrap_or("").to_string(),
            sessions: map("sessions"),
            windows: map("windows"),
            panes: map("panes"),
        }
    }

    /// Every restored resource as an RFC resource name (`pane:p3`).
    pub fn resources(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for (kind, list) in [
            ("session", &self.sessions),
            ("window", &self.windows),
            ("pane", &self.panes),
        ] {
            out.extend(list.iter().map(|(_, cur)| format!("{kind}:{cur}")));
        }
        out
    }

    pub fn current_of(&self, previous: &str) -> String {
        self.panes
            .iter()
            .find(|(p, _)| p == previous)
            .map(|(_, c)| c.clone())
            .unwrap_or_else(|| crate::harness_error!("the restore mapped no pane {previous}"))
    }

    /// The event types a restore must emit, in order (pane.exited in pane order).
    pub fn expected_types(&self) -> Vec<String> {
        let mut t = Vec::new();
        t.extend(self.sessions.iter().map(|_| "session.created".to_string()));
        t.extend(self.windows.iter().map(|_| "window.created".to_string()));
        t.extend(self.panes.iter().map(|_| "pane.created".to_string()));
        t.extend(self.panes.iter().map(|_| "pane.exited".to_string()));
        t.push("recovery.restored".into());
        t
    }
}
