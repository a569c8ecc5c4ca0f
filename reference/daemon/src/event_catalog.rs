//! The typed event catalog (re-exported as [`crate::manifest::EVENTS`]): every event
//! type the daemon emits, its resource kind, its data fields and the verbs that emit
//! it. `docs/spec/events.md` embeds the table generated from it, and the integration
//! tests check every received event against it.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    String,
    Integer,
    Boolean,
    Object,
}

impl FieldKind {
    pub fn name(self) -> &'static str {
        match self {
            FieldKind::String => "string",
            FieldKind::Integer => "integer",
            FieldKind::Boolean => "boolean",
            FieldKind::Object => "object",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct EventField {
    pub name: &'static str,
    pub kind: FieldKind,
    pub required: bool,
    pub help: &'static str,
}

#[derive(Debug, Clone, Copy)]
pub struct EventType {
    pub name: &'static str,
    /// `session`, `window`, `pane`, `server`, or `server|pane`.
    pub resource: &'static str,
    pub summary: &'static str,
    pub fields: &'static [EventField],
    /// What emits it: verbs, or a daemon-side cause in parentheses.
    pub emitted_by: &'static [&'static str],
}

impl EventType {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "type": self.name,
            "resource": self.resource,
            "summary": self.summary,
            "data": self.fields.iter().map(|f| serde_json::json!({
                "name": f.name, "type": f.kind.name(), "required": f.required, "help": f.help,
            })).collect::<Vec<_>>(),
            "emitted_by": self.emitted_by,
        })
    }

    pub fn field(&self, name: &str) -> Option<&'static EventField> {
        self.fields.iter().find(|f| f.name == name)
    }
}

const fn req(name: &'static str, kind: FieldKind, help: &'static str) -> EventField {
    EventField {
        name,
        kind,
        required: true,
        help,
    }
}

const fn opt(name: &'static str, kind: FieldKind, help: &'static str) -> EventField {
    EventField {
        name,
        kind,
        required: false,
        help,
    }
}

use FieldKind::{Boolean as B, Integer as I, Object as O, String as S};

const SESSION: EventField = req("session", S, "session id");
const WINDOW: EventField = req("window", S, "window id");
const PANE: EventField = req("pane", S, "pane id");
const NAME: EventField = req("name", S, "the (new) name");
const PRINCIPAL: EventField = req("principal", S, "principal id (t<n>)");

pub const EVENTS: &[EventType] = &[
    EventType {
        name: "session.created",
        resource: "session",
        summary: "A session exists",
        fields: &[SESSION, NAME],
        emitted_by: &["session.create", "recovery.restore"],
    },
    EventType {
        name: "session.renamed",
        resource: "session",
        summary: "A session has a new name",
        fields: &[SESSION, NAME],
        emitted_by: &["session.rename"],
    },
    EventType {
        name: "session.removed",
        resource: "session",
        summary: "A session is gone (after its windows' and panes' removals)",
        fields: &[SESSION],
        emitted_by: &["session.kill"],
    },
    EventType {
        name: "window.created",
        resource: "window",
        summary: "A window exists (revision 1 unless restored)",
        fields: &[WINDOW, SESSION, NAME],
        emitted_by: &["window.create", "recovery.restore"],
    },
    EventType {
        name: "window.renamed",
        resource: "window",
        summary: "A window has a new name",
        fields: &[WINDOW, NAME],
        emitted_by: &["window.rename"],
    },
    EventType {
        name: "window.removed",
        resource: "window",
        summary: "A window is gone (after its panes' removals)",
        fields: &[WINDOW, SESSION],
        emitted_by: &["window.kill", "session.kill"],
    },
    EventType {
        name: "window.layout_changed",
        resource: "window",
        summary: "The window's revision changed: tiled tree, ratios or tiled area",
        fields: &[WINDOW, req("revision", I, "the new revision")],
        emitted_by: &[
            "pane.create",
            "pane.split",
            "pane.kill",
            "pane.place",
            "pane.resize",
            "pane.relaunch",
            "window.resize",
            "window.ratio",
        ],
    },
    EventType {
        name: "pane.created",
        resource: "pane",
        summary: "A pane exists (for restored archives: as an exited archive)",
        fields: &[
            PANE,
            WINDOW,
            SESSION,
            req("layer", S, "`tiled` or `float`"),
            opt(
                "argv0",
                S,
                "basename of argv[0]; absent for restored archives",
            ),
            opt(
                "float",
                O,
                "only for layer float: `{z, geometry:{col,row,cols,rows}}`",
            ),
        ],
        emitted_by: &[
            "pane.create",
            "pane.split",
            "pane.float",
            "pane.relaunch",
            "recovery.restore",
        ],
    },
    EventType {
        name: "pane.exited",
        resource: "pane",
        summary: "The pane's process was reaped, or a restored archive is exited",
        fields: &[
            PANE,
            opt("exit_code", I, "when it exited normally"),
            opt("signal", S, "when a signal ended it (e.g. `SIGKILL`)"),
        ],
        emitted_by: &["(process exit)", "recovery.restore"],
    },
    EventType {
        name: "pane.removed",
        resource: "pane",
        summary: "A pane is gone (delivered by the ancestry it had)",
        fields: &[PANE, WINDOW],
        emitted_by: &["pane.kill", "window.kill", "session.kill", "pane.relaunch"],
    },
    EventType {
        name: "pane.tagged",
        resource: "pane",
        summary: "A tag of the pane was set or removed (read `pane.list` for tags)",
        fields: &[PANE],
        emitted_by: &["pane.tag"],
    },
    EventType {
        name: "pane.resized",
        resource: "pane",
        summary: "`pane.resize` applied; the pane's size now",
        fields: &[PANE, req("cols", I, "columns"), req("rows", I, "rows")],
        emitted_by: &["pane.resize"],
    },
    EventType {
        name: "pane.placed",
        resource: "pane",
        summary: "A tiled pane moved (possibly to another window or session)",
        fields: &[PANE, WINDOW, SESSION],
        emitted_by: &["pane.place"],
    },
    EventType {
        name: "principal.issued",
        resource: "server|pane",
        summary: "A principal exists: `server:root` for grant.issue, `pane:<id>` for a pane's own",
        fields: &[PRINCIPAL],
        emitted_by: &[
            "grant.issue",
            "pane.create",
            "pane.split",
            "pane.float",
            "pane.relaunch",
        ],
    },
    EventType {
        name: "principal.revoked",
        resource: "server|pane",
        summary: "A principal and its token are gone (pane principals on `pane:<id>`)",
        fields: &[PRINCIPAL],
        emitted_by: &["grant.revoke", "pane.kill", "window.kill", "session.kill"],
    },
    EventType {
        name: "config.reloaded",
        resource: "server",
        summary: "A new effective config is active (read it with `config.get`)",
        fields: &[],
        emitted_by: &["config.reload"],
    },
    EventType {
        name: "recovery.restored",
        resource: "server",
        summary: "A restore committed (last of its events)",
        fields: &[
            req("checkpoint", S, "checkpoint id"),
            req("cleanup_unverified", B, "always true"),
        ],
        emitted_by: &["recovery.restore"],
    },
];

/// Mutation verbs that emit nothing, and why (listed in the docs).
pub const SILENT_MUTATIONS: &[(&str, &str)] = &[
    (
        "pane.send",
        "input is not daemon state, and events never carry terminal text",
    ),
    (
        "config.set",
        "writes the config file only; `config.reload` activates it",
    ),
    ("recovery.checkpoint", "writes the store only"),
    ("recovery.forget", "writes the store only"),
];

pub fn find(name: &str) -> Option<&'static EventType> {
    EVENTS.iter().find(|e| e.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::VERBS;

    #[test]
    fn every_mutation_verb_emits_or_is_listed_silent() {
        for v in VERBS.iter().filter(|v| v.mutation) {
            let emits = EVENTS.iter().any(|e| e.emitted_by.contains(&v.name));
            let silent = SILENT_MUTATIONS.iter().any(|(n, _)| *n == v.name);
            assert!(emits != silent, "{}", v.name);
        }
        for e in EVENTS {
            for cause in e.emitted_by {
                assert!(cause.starts_with('(') || crate::manifest::find(cause).is_some());
            }
        }
    }
}
