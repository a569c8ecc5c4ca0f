//! The verb table. The dispatcher, the CLI (dotted verbs → spaced subcommands, params →
//! `--kebab-case` flags), `docs/spec/verbs.md` and the shell completions are all
//! generated from [`VERBS`]; nothing else lists verbs.

use serde_json::{json, Value};

pub use crate::event_catalog::{EventField, EventType, FieldKind, EVENTS, SILENT_MUTATIONS};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A JSON string; on the CLI, the flag's text as is.
    String,
    /// A JSON safe integer; on the CLI, decimal text.
    Integer,
    /// A JSON boolean; on the CLI, `true` or `false`.
    Boolean,
    /// Any JSON value; on the CLI, JSON text (`--argv '["/bin/sh"]'`).
    Json,
}

impl ParamKind {
    pub fn name(self) -> &'static str {
        match self {
            ParamKind::String => "string",
            ParamKind::Integer => "integer",
            ParamKind::Boolean => "boolean",
            ParamKind::Json => "json",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub kind: ParamKind,
    pub required: bool,
    pub help: &'static str,
}

/// Where the dispatch grant is checked, before the handler looks anything up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// No right needed (server identity, authentication).
    Open,
    /// `server:root`.
    Server,
    /// The resource named by this param (`session`, `window` or `pane` ID).
    Param(&'static str),
    /// Listing verbs: each entry is filtered by `read`; nothing is denied.
    Filtered,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RightName {
    Read,
    Write,
    Spawn,
    Admin,
}

impl RightName {
    pub fn as_str(self) -> &'static str {
        match self {
            RightName::Read => "read",
            RightName::Write => "write",
            RightName::Spawn => "spawn",
            RightName::Admin => "admin",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Verb {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [Param],
    pub right: RightName,
    pub target: Target,
    /// Mutations are refused once shutdown has begun.
    pub mutation: bool,
    /// After its `ok` reply the connection carries this verb's stream
    /// ([`crate::stream`]) and no further requests.
    pub streaming: bool,
    /// The closed shape of the `ok` object, for the docs.
    pub result: &'static str,
}

impl Verb {
    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// `pane.split` → `["pane", "split"]`.
    pub fn words(&self) -> impl Iterator<Item = &'static str> {
        self.name.split('.')
    }

    pub fn to_json(&self) -> Value {
        json!({
            "verb": self.name,
            "summary": self.summary,
            "params": self.params.iter().map(|p| json!({
                "name": p.name, "type": p.kind.name(), "required": p.required, "help": p.help,
            })).collect::<Vec<_>>(),
            "grant": match self.target {
                Target::Open => Value::Null,
                Target::Server => json!({"right": self.right.as_str(), "resource": "server:root"}),
                Target::Param(p) => json!({"right": self.right.as_str(), "resource": format!("<{p}>")}),
                Target::Filtered => json!({"right": "read", "resource": "<each entry>"}),
            },
            "mutation": self.mutation,
            "streaming": self.streaming,
            "result": self.result,
        })
    }
}

/// Kebab-case CLI flag for a param (`min_cols` → `min-cols`).
pub fn flag_name(param: &str) -> String {
    param.replace('_', "-")
}

const fn req(name: &'static str, kind: ParamKind, help: &'static str) -> Param {
    Param {
        name,
        kind,
        required: true,
        help,
    }
}

const fn opt(name: &'static str, kind: ParamKind, help: &'static str) -> Param {
    Param {
        name,
        kind,
        required: false,
        help,
    }
}

use ParamKind::{Boolean as B, Integer as I, Json as J, String as S};
use RightName::{Admin, Read, Spawn, Write};

const GRANTS_HELP: &str =
    "JSON array of \"right@resource\" strings for the child's token (default none); `pane:self` is the new pane";
const ARGV_HELP: &str = "JSON array of strings: the program and its arguments";

/// Every verb the core daemon serves.
pub const VERBS: &[Verb] = &[
    Verb {
        name: "server.info",
        summary: "Identity of this daemon start",
        params: &[],
        right: Read,
        target: Target::Open,
        mutation: false,
        streaming: false,
        result: "{source,version,protocol}",
    },
    Verb {
        name: "auth.login",
        summary: "Bind this connection to the principal of a token (an invalid token closes the connection)",
        params: &[req("token", S, "the token (VENOMX_TOKEN)")],
        right: Read,
        target: Target::Open,
        mutation: false,
        streaming: false,
        result: "{principal}",
    },
    Verb {
        name: "auth.whoami",
        summary: "The connection's principal and its grants",
        params: &[],
        right: Read,
        target: Target::Open,
        mutation: false,
        streaming: false,
        result: "{principal,namespace,grants:[\"right@resource\"]}",
    },
    Verb {
        name: "grant.issue",
        summary: "Issue a new principal and token with grants the caller holds",
        params: &[
            req("grants", J, "JSON array of \"right@resource\" strings"),
            opt("namespace", S, "tag namespace of the new principal (default: the caller's)"),
        ],
        right: Admin,
        target: Target::Server,
        mutation: true,
        streaming: false,
        result: "{principal,token}",
    },
    Verb {
        name: "grant.revoke",
        summary: "Revoke an issued or pane principal; its token stops working",
        params: &[req("principal", S, "principal id (t<n>)")],
        right: Admin,
        target: Target::Server,
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "session.create",
        summary: "Create an empty session",
        params: &[req("name", S, "1-255 bytes, no control characters")],
        right: Write,
        target: Target::Server,
        mutation: true,
        streaming: false,
        result: "{session}",
    },
    Verb {
        name: "session.list",
        summary: "Sessions, their windows and layouts, filtered by read grants",
        params: &[],
        right: Read,
        target: Target::Filtered,
        mutation: false,
        streaming: false,
        result: "{sessions:[{session,name,windows:[{window,name,revision,cols,rows,nodes,floats}]}]}",
    },
    Verb {
        name: "session.rename",
        summary: "Rename a session",
        params: &[req("session", S, "session id"), req("name", S, "new name")],
        right: Write,
        target: Target::Param("session"),
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "session.kill",
        summary: "Remove a session, its windows and panes (their processes are hung up)",
        params: &[req("session", S, "session id")],
        right: Write,
        target: Target::Param("session"),
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "window.create",
        summary: "Create an empty window in a session",
        params: &[
            req("session", S, "session id"),
            req("name", S, "1-255 bytes, no control characters"),
            opt("cols", I, "window width in cells (default from config)"),
            opt("rows", I, "window height in cells (default from config)"),
        ],
        right: Write,
        target: Target::Param("session"),
        mutation: true,
        streaming: false,
        result: "{window}",
    },
    Verb {
        name: "window.rename",
        summary: "Rename a window",
        params: &[req("window", S, "window id"), req("name", S, "new name")],
        right: Write,
        target: Target::Param("window"),
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "window.kill",
        summary: "Remove a window and its panes",
        params: &[req("window", S, "window id")],
        right: Write,
        target: Target::Param("window"),
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "window.resize",
        summary: "Resize a window's tiled area; tiled panes are laid out again",
        params: &[
            req("window", S, "window id"),
            req("cols", I, "1-65535"),
            req("rows", I, "1-65535"),
        ],
        right: Write,
        target: Target::Param("window"),
        mutation: true,
        streaming: false,
        result: "{revision}",
    },
    Verb {
        name: "window.ratio",
        summary: "Set or clear the ratio of a split node (its preorder index in `nodes`)",
        params: &[
            req("window", S, "window id"),
            req("node", I, "preorder index of a split node"),
            opt("ratio", I, "1-9999, the first child's share in 1/10000; absent = equal split"),
            opt("revision", I, "fail conflict.revision unless the window is at this revision"),
        ],
        right: Write,
        target: Target::Param("window"),
        mutation: true,
        streaming: false,
        result: "{revision}",
    },
    Verb {
        name: "pane.create",
        summary: "Start the first tiled pane of an empty window",
        params: &[
            req("window", S, "window id"),
            req("argv", J, ARGV_HELP),
            opt("cols", I, "window width (default: the window's)"),
            opt("rows", I, "window height (default: the window's)"),
            opt("grants", J, GRANTS_HELP),
        ],
        right: Spawn,
        target: Target::Param("window"),
        mutation: true,
        streaming: false,
        result: "{pane,window,session,principal,pid}",
    },
    Verb {
        name: "pane.split",
        summary: "Split a tiled pane and start a program in the new half",
        params: &[
            req("pane", S, "the pane to split"),
            req("axis", S, "`cols` (side by side) or `rows` (stacked)"),
            req("argv", J, ARGV_HELP),
            opt("ratio", I, "1-9999, the first child's share in 1/10000 (default: equal)"),
            opt("before", B, "put the new pane first (default false: second)"),
            opt("grants", J, GRANTS_HELP),
        ],
        right: Spawn,
        target: Target::Param("pane"),
        mutation: true,
        streaming: false,
        result: "{pane,window,session,principal,pid}",
    },
    Verb {
        name: "pane.float",
        summary: "Start a program in the window's float layer",
        params: &[
            req("window", S, "window id"),
            req("argv", J, ARGV_HELP),
            opt("preset", S, "<namespace>.<name> from config `.floats.presets` (unknown: `.floats.default`)"),
            opt("width", S, "\"N\" cells or \"N%\" of the window"),
            opt("height", S, "\"N\" cells or \"N%\" of the window"),
            opt("anchor", S, "top_left|top|top_right|left|center|right|bottom_left|bottom|bottom_right"),
            opt("x", I, "column offset from the anchor, -4096..4096"),
            opt("y", I, "row offset from the anchor, -4096..4096"),
            opt("min_cols", I, "1-65535"),
            opt("min_rows", I, "1-65535"),
            opt("border", S, "none|single|double|rounded|heavy"),
            opt("title", S, "1-128 bytes, no control characters"),
            opt("grants", J, GRANTS_HELP),
        ],
        right: Spawn,
        target: Target::Param("window"),
        mutation: true,
        streaming: false,
        result: "{pane,window,session,principal,pid,z}",
    },
    Verb {
        name: "pane.relaunch",
        summary: "Replace a restored archive with a new process (fresh pane id, principal and grants)",
        params: &[
            req("pane", S, "the archive pane"),
            req("argv", J, ARGV_HELP),
            req("ack_orphans", B, "must be true: old processes may survive and work may be duplicated"),
            opt("grants", J, GRANTS_HELP),
        ],
        right: Spawn,
        target: Target::Param("pane"),
        mutation: true,
        streaming: false,
        result: "{pane,window,session,principal,pid}",
    },
    Verb {
        name: "pane.list",
        summary: "Panes the caller may read (optionally of one window)",
        params: &[opt("window", S, "only this window (needs read on it)")],
        right: Read,
        target: Target::Filtered,
        mutation: false,
        streaming: false,
        result: "{panes:[{pane,window,session,cols,rows,state,exit_code?,signal?,argv0?,layer?,float?,tags?,recovery?}]}",
    },
    Verb {
        name: "pane.capture",
        summary: "Plain text of the pane's primary screen and history",
        params: &[req("pane", S, "pane id")],
        right: Read,
        target: Target::Param("pane"),
        mutation: false,
        streaming: false,
        result: "{pane,cols,rows,screen:[string],history:[string],exited,exit_code?,signal?,recovery?}",
    },
    Verb {
        name: "pane.attach",
        summary: "Stream the pane's output as binary frames with absolute offsets (docs/spec/attach.md)",
        params: &[
            req("pane", S, "pane id"),
            opt("resume", J, "{\"source\":S,\"offset\":N} from an earlier attach"),
        ],
        right: Read,
        target: Target::Param("pane"),
        mutation: false,
        streaming: true,
        result: "{pane,source,resumed,offset,cols,rows,input}",
    },
    Verb {
        name: "pane.send",
        summary: "Queue text as input to the pane's program",
        params: &[req("pane", S, "pane id"), req("text", S, "UTF-8 text, sent as is")],
        right: Write,
        target: Target::Param("pane"),
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "pane.tag",
        summary: "Set (or with no value, remove) a pane tag; `owner` is daemon-set",
        params: &[
            req("pane", S, "pane id"),
            req("key", S, "[a-z][a-z0-9_.-]{0,63}, not `owner`"),
            opt("value", S, "1-256 bytes, no control characters; absent removes the tag"),
        ],
        right: Write,
        target: Target::Param("pane"),
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "pane.kill",
        summary: "Remove a pane; its process group gets SIGHUP, then SIGKILL after 2000 ms",
        params: &[req("pane", S, "pane id")],
        right: Write,
        target: Target::Param("pane"),
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "pane.place",
        summary: "Move a tiled pane: split `target` with it, or make it the root of an empty `window`",
        params: &[
            req("pane", S, "the tiled pane to move"),
            opt("target", S, "a tiled pane to split (needs write on it)"),
            opt("window", S, "an empty window (needs write on it); exclusive with target"),
            opt("axis", S, "`cols` or `rows` (with target; default cols)"),
            opt("before", B, "place before the target (default false)"),
            opt("ratio", I, "1-9999 for the new split"),
        ],
        right: Write,
        target: Target::Param("pane"),
        mutation: true,
        streaming: false,
        result: "{window,session,revision}",
    },
    Verb {
        name: "pane.resize",
        summary: "Resize a pane: a float directly; a tiled pane through its nearest split on each axis",
        params: &[
            req("pane", S, "pane id"),
            opt("cols", I, "1-65535"),
            opt("rows", I, "1-65535"),
        ],
        right: Write,
        target: Target::Param("pane"),
        mutation: true,
        streaming: false,
        result: "{cols,rows}",
    },
    Verb {
        name: "config.get",
        summary: "The effective config, or one field by dotted key",
        params: &[opt("key", S, "dotted path such as `recovery.interval_ms`")],
        right: Read,
        target: Target::Server,
        mutation: false,
        streaming: false,
        result: "{config} or {key,value}",
    },
    Verb {
        name: "config.set",
        summary: "Persist one field to the config file (validated; takes effect on reload)",
        params: &[
            req("key", S, "dotted path such as `recovery.enabled`"),
            req("value", J, "JSON value; enum values are strings (\"plain\")"),
        ],
        right: Admin,
        target: Target::Server,
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "config.check",
        summary: "Validate the config file (or the given ZON text) without side effects",
        params: &[opt("text", S, "ZON text to check instead of the file")],
        right: Read,
        target: Target::Server,
        mutation: false,
        streaming: false,
        result: "{valid:true}",
    },
    Verb {
        name: "config.reload",
        summary: "Read, validate and activate the config file; on failure nothing changes",
        params: &[],
        right: Admin,
        target: Target::Server,
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "recovery.checkpoint",
        summary: "Capture and durably publish a checkpoint now (recovery must be enabled)",
        params: &[],
        right: Admin,
        target: Target::Server,
        mutation: true,
        streaming: false,
        result: "{checkpoint,generation}",
    },
    Verb {
        name: "recovery.list",
        summary: "Every checkpoint file with its status; no payload of invalid files",
        params: &[],
        right: Admin,
        target: Target::Server,
        mutation: false,
        streaming: false,
        result: "{checkpoints:[{checkpoint,status,generation?}]}",
    },
    Verb {
        name: "recovery.inspect",
        summary: "Counts of a valid checkpoint; no names or terminal content",
        params: &[req("checkpoint", S, CHECKPOINT_HELP)],
        right: Admin,
        target: Target::Server,
        mutation: false,
        streaming: false,
        result: "{checkpoint,generation,shutdown,sessions,windows,panes,text_panes,expired_text_panes}",
    },
    Verb {
        name: "recovery.restore",
        summary: "Restore a checkpoint into an empty daemon as archives (no process is started)",
        params: &[req("checkpoint", S, CHECKPOINT_HELP)],
        right: Admin,
        target: Target::Server,
        mutation: true,
        streaming: false,
        result: "{checkpoint,sessions:[{previous,current}],windows:[{previous,current}],panes:[{previous,current}]}",
    },
    Verb {
        name: "recovery.forget",
        summary: "Delete one checkpoint file (any status but unsafe) and sync the directory",
        params: &[req("checkpoint", S, CHECKPOINT_HELP)],
        right: Admin,
        target: Target::Server,
        mutation: true,
        streaming: false,
        result: "{}",
    },
    Verb {
        name: "events.subscribe",
        summary: "Stream events the caller may read, from a snapshot or after a cursor (wire only; docs/spec/events.md)",
        params: &[opt(
            "cursor",
            J,
            "{\"source\":S,\"sequence\":N} from a previous stream: resume after event N",
        )],
        right: Read,
        target: Target::Filtered,
        mutation: false,
        streaming: true,
        result: "{source,sequence,resumed,reason?,snapshot?:{sessions,windows,panes}} then event lines",
    },
    Verb {
        name: "doctor",
        summary: "Named health checks (store and config first, then recovery and its archives), each ok, info, warning or error; no user content",
        params: &[],
        right: Admin,
        target: Target::Server,
        mutation: false,
        streaming: false,
        result: "{checks:[{name,status,summary,…}]}",
    },
];

const CHECKPOINT_HELP: &str = "checkpoint id: c + lowercase UUID v4";

pub fn find(name: &str) -> Option<&'static Verb> {
    VERBS.iter().find(|v| v.name == name)
}

/// The manifest as JSON (`vxref manifest`).
pub fn manifest_json() -> Value {
    json!({
        "manifest": 1,
        "verbs": VERBS.iter().map(Verb::to_json).collect::<Vec<_>>(),
        "events": EVENTS.iter().map(EventType::to_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_dotted() {
        let mut names: Vec<_> = VERBS.iter().map(|v| v.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), VERBS.len());
        for v in VERBS {
            // The one top-level verb is `doctor`; it must not also be a group.
            if v.name == "doctor" {
                assert!(!VERBS
                    .iter()
                    .any(|o| o.words().next() == Some("doctor") && o.name != "doctor"));
                continue;
            }
            assert!(v.name.contains('.'), "{}", v.name);
            if let Target::Param(p) = v.target {
                assert!(v.param(p).is_some_and(|p| p.required), "{}", v.name);
            }
        }
    }

    #[test]
    fn surface_verbs_are_present() {
        for name in [
            "session.create",
            "session.list",
            "window.create",
            "pane.create",
            "pane.split",
            "pane.float",
            "pane.list",
            "pane.capture",
            "pane.send",
            "pane.tag",
            "pane.kill",
            "config.get",
            "config.set",
            "config.check",
            "config.reload",
            "recovery.checkpoint",
            "recovery.list",
            "recovery.inspect",
            "recovery.restore",
            "recovery.forget",
            "pane.relaunch",
            "doctor",
        ] {
            assert!(find(name).is_some(), "{name}");
        }
    }
}
