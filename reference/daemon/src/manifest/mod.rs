//! The verb table. Every verb has a typed [`VerbId`]; [`VERBS`] holds one entry per id,
//! in id order, with its params, grant, kind (answered in the reactor turn, deferred to
//! a worker, or streaming) and effects. The reactor reaches a verb's handler
//! through one exhaustive `match` on the id (`reactor/dispatch.rs`), so a verb without a
//! handler does not compile. The CLI (dotted verbs → spaced subcommands, params →
//! `--kebab-case` flags), `docs/spec/verbs.md` and the shell completions are generated
//! from [`VERBS`]; the event catalog ([`events`]) names its emitting verbs by id. Verb
//! names are matched as strings only here, by [`find`], when a request arrives.

mod errors;
mod events;
pub mod nouns;
pub mod shape;
mod verbs;

use serde_json::{json, Value};

pub use errors::ANY_VERB;
pub use events::{Cause, EventField, EventType, FieldKind, EVENTS, SILENT_MUTATIONS};
pub use verbs::VERBS;

/// Declares [`VerbId`] and its complete list [`VerbId::ALL`] from one list of names.
macro_rules! verb_ids {
    ($($id:ident),* $(,)?) => {
        /// A verb, by identity. Discriminants are the verb's index in [`VERBS`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum VerbId {
            $($id),*
        }

        impl VerbId {
            /// Every verb id, in declaration order.
            pub const ALL: &'static [VerbId] = &[$(VerbId::$id),*];
        }
    };
}

verb_ids!(
    ServerInfo,
    AuthLogin,
    AuthWhoami,
    GrantIssue,
    GrantRevoke,
    SessionCreate,
    SessionList,
    SessionRename,
    SessionKill,
    WindowCreate,
    WindowRename,
    WindowKill,
    WindowResize,
    WindowRatio,
    PaneCreate,
    PaneSplit,
    PaneFloat,
    PaneRelaunch,
    PaneList,
    PaneCapture,
    PaneAttach,
    PaneSend,
    PaneTag,
    PaneKill,
    PanePlace,
    PaneResize,
    ConfigGet,
    ConfigSet,
    ConfigCheck,
    ConfigReload,
    RecoveryCheckpoint,
    RecoveryList,
    RecoveryInspect,
    RecoveryRestore,
    RecoveryForget,
    EventsSubscribe,
    Doctor,
    MetaGet,
    MetaSet,
    MetaDelete,
    IntegrationList,
    AgentLaunch
);

impl VerbId {
    /// This verb's manifest entry.
    pub fn verb(self) -> &'static Verb {
        &VERBS[self as usize]
    }

    /// The dotted wire name (`pane.split`).
    pub fn name(self) -> &'static str {
        self.verb().name
    }
}

// The table is in id order and complete: `VerbId::verb` indexes it, and every id has
// exactly one entry. Product mutations are mutations.
const _: () = {
    assert!(VERBS.len() == VerbId::ALL.len());
    let mut i = 0;
    while i < VERBS.len() {
        assert!(VERBS[i].id as usize == i);
        assert!(!VERBS[i].product || VERBS[i].mutation);
        i += 1;
    }
};

/// How the reactor answers a verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerbKind {
    /// Checked and applied in one reactor turn, answered in that turn.
    Turn,
    /// Checked in the turn; its disk work (store, config file) runs on a worker, which
    /// answers, or hands a result back for a later turn to apply.
    Deferred,
    /// Answered in one turn; the `ok` reply then carries a stream ([`crate::stream`])
    /// that takes the connection over, and no further requests.
    Streaming,
}

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
    pub id: VerbId,
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [Param],
    pub right: RightName,
    pub target: Target,
    /// Mutations are refused once shutdown has begun.
    pub mutation: bool,
    /// A product mutation (RFC §3): its success activates checkpointing and makes the
    /// next periodic capture write.
    pub product: bool,
    pub kind: VerbKind,
    /// The closed shape of the `ok` object, for the docs and the MCP output schemas
    /// ([`shape`] is its grammar).
    pub result: &'static str,
}

/// How the `vxref` CLI offers a verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CliForm {
    /// A subcommand generated from the params: one request, one reply.
    Call,
    /// A subcommand that keeps the stream in a terminal (`pane attach`:
    /// `crate::attach::interactive`).
    Terminal,
    /// No subcommand: the stream is for programs.
    WireOnly,
}

impl Verb {
    pub fn streaming(&self) -> bool {
        self.kind == VerbKind::Streaming
    }

    pub fn cli_form(&self) -> CliForm {
        match (self.kind, self.id) {
            (VerbKind::Streaming, VerbId::PaneAttach) => CliForm::Terminal,
            (VerbKind::Streaming, _) => CliForm::WireOnly,
            (VerbKind::Turn | VerbKind::Deferred, _) => CliForm::Call,
        }
    }

    pub fn param(&self, name: &str) -> Option<&'static Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// The parsed [`Verb::result`] shorthand (an error for a streaming verb's).
    pub fn result_shape(&self) -> Result<shape::Shape, shape::ShapeError> {
        shape::parse(self.result)
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
            "streaming": self.streaming(),
            "result": self.result,
            "errors": self.error_codes().iter().map(|c| c.as_str()).collect::<Vec<_>>(),
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

/// A wire error code, its parameter codes resolved against every declared param
/// (`invalid_params.window`).
pub fn parse_error_code(code: &str) -> Option<crate::errors::ErrorCode> {
    crate::errors::ErrorCode::parse_with(code, |name| {
        VERBS
            .iter()
            .flat_map(|v| v.params)
            .find(|p| p.name == name)
            .map(|p| p.name)
    })
}

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
