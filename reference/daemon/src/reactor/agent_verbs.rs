//! ADR-0068's verbs: pane metadata (`meta.*`), `integration.list` and `agent.launch`.
//! Parsing and validation are vx-agentsession's (records, templates, expansion); the
//! registry and the metadata store are `crate::agent`. `agent.launch` resolves the
//! integration and expands the current template before anything is spawned, then
//! spawns and installs the record in one turn through the common spawn path.

use super::panes::{Placement, Program};
use super::params::Params;
use super::{Caller, State};
use crate::agent::meta::Writer;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::PaneId;
use serde_json::{json, Value};
use vx_agentsession::expand::{self, Cwd, ExpandError, Identity};
use vx_agentsession::record::{validate_native_id, Record};

/// What `server.info` lists, so a client knows whether to fall back (ADR-0068 §4)
/// and whether native restore is safe (§6).
/// `session_created_result`: `session.create {request_token}` leaves a one-shot
/// result at `session.created/v1/<token>` for its own connection.
pub const CAPABILITIES: [&str; 3] = [
    "agent_session_spawn",
    "reserved_session_created",
    "session_created_result",
];

fn expand_error(e: ExpandError) -> ApiError {
    let code = ErrorCode::parse(e.code()).unwrap_or(ErrorCode::Internal);
    let mut err = ApiError::code(code).with("rule", e.rule_id());
    if code == ErrorCode::Param("native_id") {
        err = err.with("param", "native_id");
    }
    err
}

impl State {
    pub(super) fn capabilities(&self) -> Vec<&'static str> {
        if self.identity.legacy_spawn {
            Vec::new()
        } else {
            CAPABILITIES.to_vec()
        }
    }

    fn client(&self) -> Writer {
        Writer::Client {
            legacy: self.identity.legacy_spawn,
        }
    }

    fn meta_pane<'a>(&self, p: &Params<'a>) -> ApiResult<(PaneId, &'a str)> {
        let pane = p.pane("pane")?;
        let key = p.str("key")?;
        crate::agent::meta::check_key(key)?;
        if !self.topology.panes.contains_key(&pane) {
            return Err(ApiError::code(ErrorCode::PaneNotFound));
        }
        Ok((pane, key))
    }

    pub(super) fn meta_get(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Value> {
        let key = p.str("key")?;
        let token = crate::agent::created::token_of(key).filter(|_| !self.identity.legacy_spawn);
        if let Some(token) = token {
            // A one-shot result is no pane's: like the probe, it needs no pane of its
            // own, and any reader but its own connection sees it absent.
            crate::agent::meta::check_key(key)?;
            let pane = p.pane("pane")?;
            let value = self.created.take(caller.conn, &caller.principal.id, token);
            return Ok(json!({"pane": pane.to_string(), "key": key, "value": value}));
        }
        let (pane, key) = self.meta_pane(p)?;
        Ok(json!({"pane": pane.to_string(), "key": key, "value": self.meta.get(pane, key)}))
    }

    pub(super) fn meta_set(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        // The namespace is judged before the pane is looked up, so restore's probe
        // needs no pane of its own (ADR-0068 §6).
        crate::agent::meta::check_write(self.client(), p.str("key")?)?;
        let (pane, key) = self.meta_pane(p)?;
        let value = p.str("value")?;
        let writer = self.client();
        self.meta.set(writer, pane, key, value)?;
        Ok(json!({}))
    }

    pub(super) fn meta_delete(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        crate::agent::meta::check_write(self.client(), p.str("key")?)?;
        let (pane, key) = self.meta_pane(p)?;
        let writer = self.client();
        self.meta.delete(writer, pane, key)?;
        Ok(json!({}))
    }

    pub(super) fn integration_list(&self) -> Value {
        self.config.integrations.to_json()
    }

    /// ADR-0068 §3: a given id resumes exactly that id; else a v4 UUID only when the
    /// template declares `fresh_args`; else a plain launch without a record. Every
    /// refusal comes before the spawn.
    pub(super) fn agent_launch(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Value> {
        let window = p.window("window")?;
        let integration = p.str("integration")?;
        let native_id = p.opt_str("native_id");
        if let Some(id) = native_id {
            validate_native_id(id).map_err(|rule| {
                ApiError::param("native_id", "native id refused").with("rule", rule.id())
            })?;
        }
        let size = self.empty_window(window, None, None)?;
        let integrations = self.config.integrations.clone();
        let entry = integrations.resolve(integration, p.opt_str("expect_plugin_id"))?;
        let (template, root) = (&entry.template, entry.plugin_root.as_str());
        let minted;
        let identity = match native_id {
            Some(id) => Some(Identity::Resume(id)),
            // The negative control mints for every restorable template.
            None if crate::negative::active(crate::negative::Defect::LaunchMintsWithoutFresh)
                && template.restorable() =>
            {
                minted = uuid::Uuid::new_v4().to_string();
                Some(Identity::Fresh(&minted))
            }
            None if template.fresh_identity() => {
                minted = uuid::Uuid::new_v4().to_string();
                Some(Identity::Fresh(&minted))
            }
            None => None,
        };
        let expansion = match identity {
            Some(identity) => expand::with_identity(template, root, identity),
            None => expand::plain(template, root),
        }
        .map_err(expand_error)?;
        let mut expansion = expansion;
        if crate::negative::active(crate::negative::Defect::ExpandIdSplitOnSpaces) {
            // The negative control's shell-like split of the identity element.
            if let Some((_, id)) = &expansion.env {
                let id = id.clone();
                expansion.argv = std::mem::take(&mut expansion.argv)
                    .into_iter()
                    .flat_map(|a| {
                        if a == id {
                            id.split(' ').map(str::to_owned).collect()
                        } else {
                            vec![a]
                        }
                    })
                    .collect();
            }
        }
        let record = match &expansion.env {
            Some((_, id)) => Some(
                Record::new(&entry.plugin_id, &template.id, id)
                    .map_err(|_| ApiError::code(ErrorCode::NativeRestore))?,
            ),
            None => None,
        };
        let encoded = record
            .as_ref()
            .map(|r| String::from_utf8(r.encode()).expect("a record encodes to UTF-8"));
        let program = Program {
            argv: expansion.argv,
            env: expansion.env.into_iter().collect(),
            cwd: match expansion.cwd {
                Cwd::Workspace => None,
                // The negative control ignores it on restore's launch only.
                Cwd::PluginRoot(_)
                    if crate::negative::active(crate::negative::Defect::RestoreCwdIgnored)
                        && p.opt_str("expect_plugin_id").is_some() =>
                {
                    None
                }
                Cwd::PluginRoot(dir) => Some(dir),
            },
            // An older server knows no spawn field: the client must set and confirm.
            record: encoded.clone().filter(|_| !self.identity.legacy_spawn),
        };
        let session = self.resize_empty_window(window, size);
        let mut out =
            self.spawn_pane(caller, p, program, (window, session), size, Placement::Root)?;
        let claims = crate::negative::active(crate::negative::Defect::LaunchReplyRestorable);
        out["restorable"] = json!(encoded.is_some() || claims);
        if let Some(e) = encoded {
            out["agent_session"] = json!(e);
        }
        Ok(out)
    }
}
