//! Dispatch: shape check, caller, dispatch grant and shutdown refusal, then the verb's
//! handler, found by one exhaustive `match` on its [`VerbId`] ([`handler`]). A verb
//! added to the manifest does not compile until it has a handler here, and the
//! handler's kind must be the one the manifest declares (checked by a test that walks
//! the manifest).

use super::params::{check_shape, Params};
use super::{recovery, Caller, Outcome, Reply, State};
use crate::auth::Resource;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::manifest::{Target, Verb, VerbId, VerbKind};
use crate::stream::{Answer, Encoded};
use serde_json::{json, Map, Value};

type TurnFn = fn(&mut State, &Caller, &Params<'_>) -> ApiResult<Value>;
type EncodedFn = fn(&mut State, &Caller, &Params<'_>) -> ApiResult<Encoded>;
type StreamFn = fn(&mut State, &Caller, &Params<'_>) -> Outcome;
type DeferredFn = fn(&mut State, &Caller, &Params<'_>, Reply);

/// A verb's handler, by the way it answers.
#[derive(Clone, Copy)]
pub enum Handler {
    /// `auth.login`: runs before any caller is resolved (the token is the credential)
    /// and may rebind or close the connection.
    Login(fn(&mut State, &Params<'_>) -> Outcome),
    /// Applied and answered in this turn.
    Turn(TurnFn),
    /// Answered in this turn with the reply body already encoded (the listings).
    Encoded(EncodedFn),
    /// Answered in this turn with a stream that takes the connection over.
    Stream(StreamFn),
    /// Checked in this turn; the answer comes from the worker or a later turn.
    Deferred(DeferredFn),
}

impl Handler {
    /// The manifest kind this handler serves.
    pub fn kind(self) -> VerbKind {
        match self {
            Handler::Login(_) | Handler::Turn(_) | Handler::Encoded(_) => VerbKind::Turn,
            Handler::Stream(_) => VerbKind::Streaming,
            Handler::Deferred(_) => VerbKind::Deferred,
        }
    }
}

/// The one verb → handler table.
pub fn handler(id: VerbId) -> Handler {
    use Handler::{Deferred, Encoded, Login, Stream, Turn};
    match id {
        VerbId::ServerInfo => Turn(|s, _, _| Ok(s.server_info())),
        VerbId::AuthLogin => Login(State::login),
        VerbId::AuthWhoami => Turn(|s, c, _| Ok(s.whoami(c))),
        VerbId::GrantIssue => Turn(State::grant_issue),
        VerbId::GrantRevoke => Turn(|s, _, p| s.grant_revoke(p)),
        VerbId::SessionCreate => Turn(State::session_create),
        VerbId::SessionList => Encoded(|s, c, _| Ok(s.session_list(c))),
        VerbId::SessionRename => Turn(|s, _, p| s.session_rename(p)),
        VerbId::SessionKill => Turn(|s, _, p| s.session_kill(p)),
        VerbId::WindowCreate => Turn(|s, _, p| s.window_create(p)),
        VerbId::WindowRename => Turn(|s, _, p| s.window_rename(p)),
        VerbId::WindowKill => Turn(|s, _, p| s.window_kill(p)),
        VerbId::WindowResize => Turn(|s, _, p| s.window_resize(p)),
        VerbId::WindowRatio => Turn(|s, _, p| s.window_ratio(p)),
        VerbId::PaneCreate => Turn(State::pane_create),
        VerbId::PaneSplit => Turn(State::pane_split),
        VerbId::PaneFloat => Turn(State::pane_float),
        VerbId::PaneRelaunch => Turn(State::pane_relaunch),
        VerbId::PaneList => Encoded(|s, c, p| {
            s.expire_archive_text(recovery::now());
            s.pane_list(c, p)
        }),
        VerbId::PaneCapture => Turn(|s, _, p| {
            s.expire_archive_text(recovery::now());
            s.pane_capture(p)
        }),
        VerbId::PaneAttach => Stream(State::pane_attach),
        VerbId::PaneSend => Turn(|s, _, p| s.pane_send(p)),
        VerbId::PaneTag => Turn(|s, _, p| s.pane_tag(p)),
        VerbId::PaneKill => Turn(|s, _, p| s.pane_kill(p)),
        VerbId::PanePlace => Turn(State::pane_place),
        VerbId::PaneResize => Turn(|s, _, p| s.pane_resize(p)),
        VerbId::ConfigGet => Turn(|s, _, p| s.config_get(p)),
        VerbId::ConfigSet => Deferred(|s, _, p, r| s.config_set(p, r)),
        VerbId::ConfigCheck => Deferred(|s, _, p, r| s.config_check(p, r)),
        VerbId::ConfigReload => Deferred(|s, _, _, r| s.start_reload(r)),
        VerbId::RecoveryCheckpoint => Deferred(|s, _, _, r| s.recovery_checkpoint(r)),
        VerbId::RecoveryList => Deferred(|s, _, _, r| s.recovery_list(r)),
        VerbId::RecoveryInspect => Deferred(|s, _, p, r| s.recovery_inspect(p, r)),
        VerbId::RecoveryRestore => Deferred(State::recovery_restore),
        VerbId::RecoveryForget => Deferred(|s, _, p, r| s.recovery_forget(p, r)),
        VerbId::EventsSubscribe => Stream(State::subscribe),
        VerbId::Doctor => Deferred(|s, _, _, r| s.doctor(r)),
        VerbId::MetaGet => Turn(State::meta_get),
        VerbId::MetaSet => Turn(|s, _, p| s.meta_set(p)),
        VerbId::MetaDelete => Turn(|s, _, p| s.meta_delete(p)),
        VerbId::IntegrationList => Turn(|s, _, _| Ok(s.integration_list())),
        VerbId::AgentLaunch => Turn(State::agent_launch),
    }
}

fn invalid_token() -> Outcome {
    Outcome {
        close: true,
        ..Outcome::reply(Err(ApiError::new(
            ErrorCode::DeniedToken,
            "token is not valid",
        )))
    }
}

impl State {
    pub(super) fn dispatch(
        &mut self,
        principal_id: &str,
        conn: Option<u64>,
        verb: &'static Verb,
        params: &Map<String, Value>,
        reply: Reply,
    ) {
        let outcome = self.decide(principal_id, conn, verb, &Params(params), reply);
        if let Some((outcome, reply)) = outcome {
            if outcome.result.is_ok() && verb.product {
                self.note_mutation();
            }
            let _ = reply.send(outcome);
        }
    }

    /// Runs the checks and the handler; returns the outcome to send now, or `None`
    /// when a deferred handler took the reply.
    pub(super) fn decide(
        &mut self,
        principal_id: &str,
        conn: Option<u64>,
        verb: &'static Verb,
        p: &Params<'_>,
        reply: Reply,
    ) -> Option<(Outcome, Reply)> {
        if let Err(e) = check_shape(verb, p.0) {
            return Some((Outcome::reply(Err(e)), reply));
        }
        let handler = handler(verb.id);
        debug_assert_eq!(handler.kind(), verb.kind, "{}", verb.name);
        let caller = match (handler, self.registry.get(principal_id)) {
            (Handler::Login(login), _) => return Some((login(self, p), reply)),
            (_, Some(principal)) => Caller {
                principal: principal.clone(),
                conn,
            },
            (_, None) => return Some((invalid_token(), reply)),
        };
        if let Err(e) = self.authorize(&caller, verb, p) {
            return Some((Outcome::reply(Err(e)), reply));
        }
        if self.stopping && verb.mutation {
            return Some((Outcome::reply(Err(ApiError::shutdown())), reply));
        }
        match handler {
            // (answered above, before the caller was resolved)
            Handler::Login(login) => Some((login(self, p), reply)),
            Handler::Turn(turn) => Some((Outcome::reply(turn(self, &caller, p)), reply)),
            Handler::Encoded(turn) => {
                let result = turn(self, &caller, p).map(Answer::Encoded);
                Some((Outcome::answer(result), reply))
            }
            Handler::Stream(stream) => Some((stream(self, &caller, p), reply)),
            Handler::Deferred(deferred) => {
                deferred(self, &caller, p, reply);
                None
            }
        }
    }

    fn login(&mut self, p: &Params<'_>) -> Outcome {
        match p
            .str("token")
            .ok()
            .and_then(|t| self.registry.resolve_token(t))
        {
            Some(id) => Outcome {
                principal: Some(id.to_string()),
                ..Outcome::reply(Ok(json!({"principal": id})))
            },
            None => invalid_token(),
        }
    }

    fn server_info(&self) -> Value {
        json!({
            "source": self.identity.source,
            "version": env!("CARGO_PKG_VERSION"),
            "protocol": 1,
            "capabilities": self.capabilities(),
        })
    }

    /// The dispatch grant, checked before any lookup: a missing resource has no
    /// ancestry, so the caller is denied exactly as for an existing one it may not touch.
    fn authorize(&self, caller: &Caller, verb: &Verb, p: &Params<'_>) -> ApiResult<()> {
        let resource = match verb.target {
            Target::Open | Target::Filtered => return Ok(()),
            Target::Server => Resource::Server,
            Target::Param(name) => match name {
                "session" => Resource::Session(p.session(name)?),
                "window" => Resource::Window(p.window(name)?),
                _ => Resource::Pane(p.pane(name)?),
            },
        };
        self.require(caller, verb.right, resource)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::VERBS;
    use tokio::sync::oneshot;

    #[test]
    fn every_verb_has_a_handler_of_its_declared_kind_and_every_handler_a_verb() {
        for verb in VERBS {
            let h = handler(verb.id);
            assert_eq!(h.kind(), verb.kind, "{}", verb.name);
            assert_eq!(
                matches!(h, Handler::Login(_)),
                verb.id == VerbId::AuthLogin,
                "{}",
                verb.name
            );
        }
        // `handler` matches every VerbId exhaustively; every id has its entry.
        for id in VerbId::ALL {
            assert_eq!(id.verb().id, *id);
            assert_eq!(crate::manifest::find(id.name()).map(|v| v.id), Some(*id));
        }
    }

    /// Each verb, sent as the owner with its required params, reaches a handler of
    /// its kind: turn verbs answer in the turn, deferred verbs hand their reply on,
    /// streaming verbs answer with a stream (or a handler's own error).
    #[tokio::test]
    async fn every_manifest_verb_reaches_its_handler() {
        for verb in VERBS {
            let mut state = super::super::test_state();
            let s = state.topology.create_session("s".into()).unwrap();
            let w = state.topology.create_window(s, "w".into(), 80, 24).unwrap();
            let mut params = Map::new();
            for p in verb.params.iter().filter(|p| p.required) {
                let value = match (p.name, p.kind) {
                    ("session", _) => json!(s.to_string()),
                    ("window", _) => json!(w.to_string()),
                    ("pane", _) => json!("p99"),
                    ("token", _) => json!("token"),
                    ("checkpoint", _) => json!("c01234567-89ab-4cde-8fab-0123456789ab"),
                    ("argv", _) => json!(["/nonexistent/vxref-test"]),
                    ("grants", _) => json!([]),
                    ("key", _) => json!("recovery.enabled"),
                    ("value", _) => json!(true),
                    ("axis", _) => json!("cols"),
                    ("cols" | "rows", _) => json!(10),
                    ("node", _) => json!(0),
                    ("ack_orphans", _) => json!(true),
                    ("integration", _) => json!("none"),
                    (_, crate::manifest::ParamKind::Integer) => json!(1),
                    (_, crate::manifest::ParamKind::Boolean) => json!(true),
                    _ => json!("x"),
                };
                params.insert(p.name.to_string(), value);
            }
            let (tx, mut rx) = oneshot::channel();
            let owner = crate::auth::OWNER;
            let answered = state.decide(owner, Some(1), verb, &Params(&params), tx);
            match (verb.kind, answered) {
                (VerbKind::Deferred, None) => {
                    // The worker of a test state is gone: the reply was handed on
                    // (and dropped with the job), or answered by the turn's checks.
                    assert!(!matches!(
                        rx.try_recv(),
                        Ok(Outcome { result: Err(ref e), .. }) if e.code.class() == crate::errors::Class::InvalidRequest
                    ));
                }
                (VerbKind::Deferred, Some(_)) => panic!("{} answered in the turn", verb.name),
                (_, None) => panic!("{} deferred its reply", verb.name),
                (kind, Some((outcome, _))) => {
                    if let Err(e) = &outcome.result {
                        assert!(
                            e.code.class() != crate::errors::Class::InvalidRequest,
                            "{}",
                            verb.name
                        );
                        assert!(
                            e.code.class() != crate::errors::Class::Denied,
                            "{}: {}",
                            verb.name,
                            e.code
                        );
                    } else if kind == VerbKind::Streaming {
                        assert!(outcome.stream.is_some(), "{}", verb.name);
                    }
                }
            }
        }
    }
}
