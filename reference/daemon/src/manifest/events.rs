//! The typed event catalog (re-exported as [`crate::manifest::EVENTS`]): every event
//! type the daemon emits, its resource kind, its data fields and the verbs (by id) that
//! emit it. `docs/spec/events.md` embeds the table generated from it, and the integration
//! tests check every received event against it.

use super::VerbId;

/// What makes the daemon emit an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    Verb(VerbId),
    /// A supervised process was reaped.
    ProcessExit,
}

impl Cause {
    /// The verb's name, or the daemon-side cause in parentheses (docs, manifest JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Verb(v) => v.name(),
            Cause::ProcessExit => "(process exit)",
        }
    }
}

use Cause::Verb as V;

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
    /// What emits it.
    pub emitted_by: &'static [Cause],
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
            "emitted_by": self.emitted_by.iter().map(|c| c.as_str()).collect::<Vec<_>>(),
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
        emitted_by: &[V(VerbId::SessionCreate), V(VerbId::RecoveryRestore)],
    },
    EventType {
        name: "session.renamed",
        resource: "session",
        summary: "A session has a new name",
        fields: &[SESSION, NAME],
        emitted_by: &[V(VerbId::SessionRename)],
    },
    EventType {
        name: "session.removed",
        resource: "session",
        summary: "A session is gone (after its windows' and panes' removals)",
        fields: &[SESSION],
        emitted_by: &[V(VerbId::SessionKill)],
    },
    EventType {
        name: "window.created",
        resource: "window",
        summary: "A window exists (revision 1 unless restored)",
        fields: &[WINDOW, SESSION, NAME],
        emitted_by: &[V(VerbId::WindowCreate), V(VerbId::RecoveryRestore)],
    },
    EventType {
        name: "window.renamed",
        resource: "window",
        summary: "A window has a new name",
        fields: &[WINDOW, NAME],
        emitted_by: &[V(VerbId::WindowRename)],
    },
    EventType {
        name: "window.removed",
        resource: "window",
        summary: "A window is gone (after its panes' removals)",
        fields: &[WINDOW, SESSION],
        emitted_by: &[V(VerbId::WindowKill), V(VerbId::SessionKill)],
    },
    EventType {
        name: "window.layout_changed",
        resource: "window",
        summary: "The window's revision changed: tiled tree, ratios or tiled area",
        fields: &[WINDOW, req("revision", I, "the new revision")],
        emitted_by: &[
            V(VerbId::PaneCreate),
            V(VerbId::PaneSplit),
            V(VerbId::AgentLaunch),
            V(VerbId::PaneKill),
            V(VerbId::PanePlace),
            V(VerbId::PaneResize),
            V(VerbId::PaneRelaunch),
            V(VerbId::WindowResize),
            V(VerbId::WindowRatio),
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
            V(VerbId::PaneCreate),
            V(VerbId::PaneSplit),
            V(VerbId::PaneFloat),
            V(VerbId::PaneRelaunch),
            V(VerbId::RecoveryRestore),
            V(VerbId::AgentLaunch),
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
        emitted_by: &[Cause::ProcessExit, V(VerbId::RecoveryRestore)],
    },
    EventType {
        name: "pane.removed",
        resource: "pane",
        summary: "A pane is gone (delivered by the ancestry it had)",
        fields: &[PANE, WINDOW],
        emitted_by: &[
            V(VerbId::PaneKill),
            V(VerbId::WindowKill),
            V(VerbId::SessionKill),
            V(VerbId::PaneRelaunch),
        ],
    },
    EventType {
        name: "pane.tagged",
        resource: "pane",
        summary: "A tag of the pane was set or removed (read `pane.list` for tags)",
        fields: &[PANE],
        emitted_by: &[V(VerbId::PaneTag)],
    },
    EventType {
        name: "pane.resized",
        resource: "pane",
        summary: "`pane.resize` applied; the pane's size now",
        fields: &[PANE, req("cols", I, "columns"), req("rows", I, "rows")],
        emitted_by: &[V(VerbId::PaneResize)],
    },
    EventType {
        name: "pane.placed",
        resource: "pane",
        summary: "A tiled pane moved (possibly to another window or session)",
        fields: &[PANE, WINDOW, SESSION],
        emitted_by: &[V(VerbId::PanePlace)],
    },
    EventType {
        name: "principal.issued",
        resource: "server|pane",
        summary: "A principal exists: `server:root` for grant.issue, `pane:<id>` for a pane's own",
        fields: &[PRINCIPAL],
        emitted_by: &[
            V(VerbId::GrantIssue),
            V(VerbId::PaneCreate),
            V(VerbId::PaneSplit),
            V(VerbId::PaneFloat),
            V(VerbId::PaneRelaunch),
            V(VerbId::AgentLaunch),
        ],
    },
    EventType {
        name: "principal.revoked",
        resource: "server|pane",
        summary: "A principal and its token are gone (pane principals on `pane:<id>`)",
        fields: &[PRINCIPAL],
        emitted_by: &[
            V(VerbId::GrantRevoke),
            V(VerbId::PaneKill),
            V(VerbId::WindowKill),
            V(VerbId::SessionKill),
        ],
    },
    EventType {
        name: "config.reloaded",
        resource: "server",
        summary: "A new effective config is active (read it with `config.get`)",
        fields: &[],
        emitted_by: &[V(VerbId::ConfigReload)],
    },
    EventType {
        name: "recovery.restored",
        resource: "server",
        summary: "A restore committed (last of its events)",
        fields: &[
            req("checkpoint", S, "checkpoint id"),
            req("cleanup_unverified", B, "always true"),
        ],
        emitted_by: &[V(VerbId::RecoveryRestore)],
    },
];

/// Mutation verbs that emit nothing, and why (listed in the docs).
pub const SILENT_MUTATIONS: &[(VerbId, &str)] = &[
    (
        VerbId::PaneSend,
        "input is not daemon state, and events never carry terminal text",
    ),
    (
        VerbId::ConfigSet,
        "writes the config file only; `config.reload` activates it",
    ),
    (VerbId::RecoveryCheckpoint, "writes the store only"),
    (VerbId::RecoveryForget, "writes the store only"),
    (
        VerbId::MetaSet,
        "pane metadata is read with `meta.get`; events never carry it (a record holds a native id)",
    ),
    (
        VerbId::MetaDelete,
        "pane metadata is read with `meta.get`; events never carry it",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::VERBS;

    #[test]
    fn every_mutation_verb_emits_or_is_listed_silent() {
        for v in VERBS.iter().filter(|v| v.mutation) {
            let emits = EVENTS
                .iter()
                .any(|e| e.emitted_by.contains(&Cause::Verb(v.id)));
            let silent = SILENT_MUTATIONS.iter().any(|(id, _)| *id == v.id);
            assert!(emits != silent, "{}", v.name);
        }
    }
}
