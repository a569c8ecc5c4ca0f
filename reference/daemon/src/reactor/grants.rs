//! `auth.whoami`, `grant.issue`, `grant.revoke`, and the delegation check every
//! spawning verb shares.

use super::params::Params;
use super::{Caller, State};
use crate::auth::Resource;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::{PaneId, SessionId, WindowId};
use serde_json::{json, Value};

impl State {
    pub(super) fn whoami(&self, caller: &Caller) -> Value {
        let grants: Vec<String> = self
            .registry
            .grants_of(&caller.principal)
            .iter()
            .map(ToString::to_string)
            .collect();
        json!({
            "principal": caller.principal.id,
            "namespace": caller.principal.namespace,
            "grants": grants,
        })
    }

    pub(super) fn grant_issue(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Value> {
        let grants = self.parse_grants(caller, p, None, None)?;
        let namespace = match p.opt_str("namespace") {
            Some(ns) if crate::topology::validate::valid_namespace(ns) => ns.to_string(),
            Some(_) => {
                return Err(ApiError::param(
                    "namespace",
                    "namespace must match [a-z][a-z0-9_-]{0,63}",
                ))
            }
            None => caller.principal.namespace.clone(),
        };
        let (id, token) = self
            .registry
            .issue(crate::auth::PrincipalKind::Issued, namespace, grants)
            .map_err(|_| ApiError::internal())?;
        self.emit(
            "principal.issued",
            Resource::Server,
            json!({"principal": id}),
        );
        Ok(json!({"principal": id, "token": token}))
    }

    pub(super) fn grant_revoke(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.str("principal")?;
        if id == crate::auth::OWNER || id == crate::auth::UNKNOWN {
            return Err(ApiError::param(
                "principal",
                "the owner and unknown cannot be revoked",
            ));
        }
        if self.registry.revoke(id) {
            self.emit_principal_revoked(id);
            Ok(json!({}))
        } else {
            Err(ApiError::code(ErrorCode::PrincipalNotFound))
        }
    }

    /// Parses `grants` and checks each against what the caller holds (delegation never
    /// exceeds the delegator). `new_pane` is the pane `pane:self` names, inside `window`.
    pub fn parse_grants(
        &self,
        caller: &Caller,
        p: &Params<'_>,
        new_pane: Option<PaneId>,
        window: Option<(WindowId, SessionId)>,
    ) -> ApiResult<Vec<crate::auth::Grant>> {
        let mut grants = Vec::new();
        for text in p.string_list("grants")? {
            let grant = crate::auth::Grant::parse(&text, new_pane)
                .ok_or_else(|| ApiError::param("grants", "grant must be right@resource"))?;
            let ancestry = match (grant.resource, new_pane, window) {
                (Resource::Pane(id), Some(new), Some((w, s))) if id == new => {
                    vec![Resource::Window(w), Resource::Session(s)]
                }
                (r, _, _) => self.topology.ancestry(r),
            };
            if !self
                .registry
                .allows(&caller.principal, grant.right, grant.resource, &ancestry)
            {
                return Err(ApiError::new(
                    ErrorCode::DeniedDelegation,
                    "asked grants exceed the caller's",
                )
                .with("right", grant.right.as_str())
                .with("resource", grant.resource.to_string()));
            }
            if !grants.contains(&grant) {
                grants.push(grant);
            }
        }
        Ok(grants)
    }
}
