//! A `session.list` reply as the restore rows read it: each session's id, name and
//! panes. Kept apart from `live` and `restored`, which both use it.

use serde_json::Value;

/// One listed session: its id, its name and its panes (the leaves of its windows).
#[derive(Clone, Debug, PartialEq)]
pub struct Listed {
    pub id: String,
    pub name: String,
    pub panes: Vec<String>,
}

/// The sessions of a `session.list` reply.
pub fn listed(v: &Value) -> Vec<Listed> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    v["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| Listed {
            id: text(&s["session"]),
            name: text(&s["name"]),
            panes: s["windows"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|w| w["nodes"].as_array().cloned().unwrap_or_default())
                .filter(|n| n["kind"] == "pane")
                .map(|n| text(&n["pane"]))
                .collect(),
        })
        .collect()
}
