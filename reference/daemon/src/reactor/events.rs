//! Emission and subscription inside reactor turns (docs/spec/events.md). Every event
//! is published in the turn of its state change, with the ancestry its resource had
//! then; a subscription's snapshot and registration share one turn, so a snapshot
//! holds all of a mutation or none and the first live event is head + 1.

use super::params::Params;
use super::recovery;
use super::recovery::RestoreEvent;
use super::{Caller, Outcome, State};
use crate::auth::{Resource, Right};
use crate::errors::{ApiError, ApiResult};
use crate::events::{Access, CloseReason, CursorFit, EventStream, Pending};
use crate::ids::{PaneId, SessionId, WindowId, MAX_SAFE_INTEGER};
use crate::topology::json::{to_value, WindowView};
use crate::topology::{Layer, Pane, PaneState};
use serde_json::{json, Map, Value};

fn cursor_error() -> ApiError {
    ApiError::param(
        "cursor",
        "cursor must be {source: string, sequence: integer >= 0}",
    )
}

/// `{source, sequence}` exactly, or None when absent.
fn cursor(p: &Params<'_>) -> ApiResult<Option<(String, u64)>> {
    let Some(value) = p.json("cursor") else {
        return Ok(None);
    };
    let obj = value
        .as_object()
        .filter(|o| o.len() == 2)
        .ok_or_else(cursor_error)?;
    let source = obj
        .get("source")
        .and_then(Value::as_str)
        .ok_or_else(cursor_error)?;
    let sequence = obj
        .get("sequence")
        .and_then(Value::as_u64)
        .filter(|n| *n <= MAX_SAFE_INTEGER)
        .ok_or_else(cursor_error)?;
    Ok(Some((source.to_string(), sequence)))
}

/// `pane.created` data: never argv beyond argv0, env, cwd or pid.
fn created_data(p: &Pane) -> Value {
    let mut d = json!({
        "pane": p.id.to_string(),
        "window": p.window.to_string(),
        "session": p.session.to_string(),
        "layer": "tiled",
    });
    if let Some(a) = &p.argv0 {
        d["argv0"] = json!(a);
    }
    if let Layer::Float { z, geometry, .. } = &p.layer {
        d["layer"] = json!("float");
        d["float"] = json!({"z": z, "geometry": geometry.to_json()});
    }
    d
}

fn exited_data(p: &Pane) -> Value {
    let mut d = json!({"pane": p.id.to_string()});
    if let PaneState::Exited { exit_code, signal } = &p.state {
        if let Some(c) = exit_code {
            d["exit_code"] = json!(c);
        }
        if let Some(s) = signal {
            d["signal"] = json!(s);
        }
    }
    d
}

impl State {
    /// Numbers and delivers one event; subscribers are filtered by `read` with the
    /// event's recorded ancestry and the grants they hold now.
    pub(super) fn publish(&mut self, event: Pending) {
        let registry = &self.registry;
        self.events
            .publish(event, |id, resource, ancestry| match registry.get(id) {
                None => Access::Revoked,
                Some(p) if registry.allows(p, Right::Read, resource, ancestry) => Access::Allowed,
                Some(_) => Access::Denied,
            });
    }

    pub(super) fn publish_all(&mut self, events: Vec<Pending>) {
        for e in events {
            self.publish(e);
        }
    }

    /// An event on `resource` with its current ancestry.
    pub(super) fn pending(&self, kind: &'static str, resource: Resource, data: Value) -> Pending {
        Pending {
            kind,
            resource,
            ancestry: self.topology.ancestry(resource),
            data,
        }
    }

    pub(super) fn emit(&mut self, kind: &'static str, resource: Resource, data: Value) {
        let e = self.pending(kind, resource, data);
        self.publish(e);
    }

    pub(super) fn emit_layout_changed(&mut self, window: WindowId) {
        if let Some(w) = self.topology.windows.get(&window) {
            let data = json!({"window": window.to_string(), "revision": w.revision});
            self.emit("window.layout_changed", Resource::Window(window), data);
        }
    }

    pub(super) fn emit_pane(&mut self, kind: &'static str, pane: PaneId, data: Value) {
        self.emit(kind, Resource::Pane(pane), data);
    }

    /// After a spawn committed: the pane's principal, the archive it replaced (relaunch),
    /// the new pane, then the layout change a tiled pane makes (RFC §6 order).
    pub(super) fn emit_spawned(&mut self, id: PaneId, replaced: Option<PaneId>, principal: &str) {
        let Some(pane) = self.topology.panes.get(&id) else {
            return;
        };
        let (window, tiled, data) = (pane.window, pane.layer == Layer::Tiled, created_data(pane));
        self.emit_pane("principal.issued", id, json!({"principal": principal}));
        if let Some(archive) = replaced {
            // The archive held the same place, so it had the new pane's ancestry.
            let e = Pending {
                kind: "pane.removed",
                resource: Resource::Pane(archive),
                ancestry: self.topology.ancestry(Resource::Pane(id)),
                data: json!({"pane": archive.to_string(), "window": window.to_string()}),
            };
            self.publish(e);
        }
        self.emit_pane("pane.created", id, data);
        if tiled {
            self.emit_layout_changed(window);
        }
    }

    /// `pane.place` moved `pane` out of window `source`.
    pub(super) fn emit_placed(&mut self, pane: PaneId, source: WindowId) {
        let Some(p) = self.topology.panes.get(&pane) else {
            return;
        };
        let (window, session) = (p.window, p.session);
        let data = json!({
            "pane": pane.to_string(),
            "window": window.to_string(),
            "session": session.to_string(),
        });
        self.emit_pane("pane.placed", pane, data);
        if source != window {
            self.emit_layout_changed(source);
        }
        self.emit_layout_changed(window);
    }

    /// `pane.resize` applied; a tiled pane changed its window's layout too.
    pub(super) fn emit_resized(&mut self, pane: PaneId) {
        let Some(p) = self.topology.panes.get(&pane) else {
            return;
        };
        let (window, tiled) = (p.window, p.layer == Layer::Tiled);
        let data = json!({"pane": pane.to_string(), "cols": p.cols, "rows": p.rows});
        self.emit_pane("pane.resized", pane, data);
        if tiled {
            self.emit_layout_changed(window);
        }
    }

    /// `pane.removed` (and `principal.revoked` for its own principal) for panes still
    /// in the topology; publish after the removal and the revocation.
    pub(super) fn pane_removals(&self, panes: impl Iterator<Item = PaneId>) -> Vec<Pending> {
        let mut out = Vec::new();
        for id in panes {
            let Some(p) = self.topology.panes.get(&id) else {
                continue;
            };
            let data = json!({"pane": id.to_string(), "window": p.window.to_string()});
            out.push(self.pending("pane.removed", Resource::Pane(id), data));
            if let Some(principal) = &p.principal {
                let data = json!({"principal": principal});
                out.push(self.pending("principal.revoked", Resource::Pane(id), data));
            }
        }
        out
    }

    pub(super) fn window_removals(&self, window: WindowId) -> Vec<Pending> {
        let panes: Vec<PaneId> = self.topology.panes_of(window).map(|p| p.id).collect();
        let mut out = self.pane_removals(panes.into_iter());
        if let Some(w) = self.topology.windows.get(&window) {
            let data = json!({"window": window.to_string(), "session": w.session.to_string()});
            out.push(self.pending("window.removed", Resource::Window(window), data));
        }
        out
    }

    pub(super) fn session_removals(&self, session: SessionId) -> Vec<Pending> {
        let windows: Vec<WindowId> = self.topology.windows_of(session).map(|w| w.id).collect();
        let mut out = Vec::new();
        for w in windows {
            out.extend(self.window_removals(w));
        }
        let data = json!({"session": session.to_string()});
        out.push(self.pending("session.removed", Resource::Session(session), data));
        out
    }

    /// `grant.revoke` succeeded: a pane's own principal is announced on its pane.
    pub(super) fn emit_principal_revoked(&mut self, principal: &str) {
        let pane = self
            .topology
            .panes
            .values()
            .find(|p| p.principal.as_deref() == Some(principal))
            .map(|p| p.id);
        let resource = pane.map_or(Resource::Server, Resource::Pane);
        self.emit(
            "principal.revoked",
            resource,
            json!({"principal": principal}),
        );
    }

    /// A supervised process was reaped while its pane is in the topology.
    pub(super) fn emit_exited(&mut self, pane: PaneId) {
        if let Some(p) = self.topology.panes.get(&pane) {
            let data = exited_data(p);
            self.emit_pane("pane.exited", pane, data);
        }
    }

    /// RFC §8: a committed restore's events, in the order prepared.
    pub(super) fn publish_restore(&mut self, events: Vec<RestoreEvent>) {
        // With no stream open, all but the last ring-full of the batch would be
        // evicted by the rest of it before anyone could read them: they are numbered
        // without being rendered.
        let unread = if self.events.has_readers() {
            0
        } else {
            events.len().saturating_sub(crate::events::RING_CAPACITY)
        };
        let mut passed = 0u64;
        for (i, e) in events.into_iter().enumerate() {
            if i < unread {
                passed += u64::from(self.restore_event_exists(&e));
                continue;
            }
            if passed > 0 {
                self.events.pass_unread(std::mem::take(&mut passed));
            }
            match e {
                RestoreEvent::SessionCreated(id) => {
                    if let Some(s) = self.topology.sessions.get(&id) {
                        let data = json!({"session": id.to_string(), "name": s.name});
                        self.emit("session.created", Resource::Session(id), data);
                    }
                }
                RestoreEvent::WindowCreated(id) => {
                    if let Some(w) = self.topology.windows.get(&id) {
                        let data = json!({
                            "window": id.to_string(),
                            "session": w.session.to_string(),
                            "name": w.name,
                        });
                        self.emit("window.created", Resource::Window(id), data);
                    }
                }
                RestoreEvent::PaneCreated(id) => {
                    if let Some(p) = self.topology.panes.get(&id) {
                        let data = created_data(p);
                        self.emit_pane("pane.created", id, data);
                    }
                }
                RestoreEvent::PaneExited(id) => self.emit_exited(id),
                RestoreEvent::RecoveryRestored { checkpoint } => {
                    let data = json!({"checkpoint": checkpoint, "cleanup_unverified": true});
                    self.emit("recovery.restored", Resource::Server, data);
                }
            }
        }
        self.events.pass_unread(passed);
    }

    /// Whether [`Self::publish_restore`] would publish `e` (its resource exists).
    fn restore_event_exists(&self, e: &RestoreEvent) -> bool {
        match e {
            RestoreEvent::SessionCreated(id) => self.topology.sessions.contains_key(id),
            RestoreEvent::WindowCreated(id) => self.topology.windows.contains_key(id),
            RestoreEvent::PaneCreated(id) | RestoreEvent::PaneExited(id) => {
                self.topology.panes.contains_key(id)
            }
            RestoreEvent::RecoveryRestored { .. } => true,
        }
    }

    /// Shutdown began: every stream ends with `closed: shutdown`.
    pub(super) fn close_event_streams(&mut self) {
        self.events.close_all(CloseReason::Shutdown);
    }

    /// `events.subscribe`: reply, snapshot or replay, and registration in this turn.
    pub(super) fn subscribe(&mut self, caller: &Caller, p: &Params<'_>) -> Outcome {
        match self.subscribe_inner(caller, p) {
            Ok(outcome) => outcome,
            Err(e) => Outcome::reply(Err(e)),
        }
    }

    fn subscribe_inner(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Outcome> {
        let cursor = cursor(p)?;
        let head = self.events.head();
        let (resume_after, reason) = match &cursor {
            None => (None, None),
            Some((source, n)) => match self.events.fit(source, *n) {
                CursorFit::Resumable => (Some(*n), None),
                CursorFit::SourceChanged => (None, Some("source_changed")),
                CursorFit::Expired => (None, Some("cursor_expired")),
                CursorFit::Future => return Err(cursor_error()),
            },
        };
        let mut reply = json!({
            "source": self.events.source(),
            "sequence": head,
            "resumed": resume_after.is_some(),
        });
        if let Some(r) = reason {
            reply["reason"] = json!(r);
        }
        if resume_after.is_none() {
            reply["snapshot"] = self.snapshot(caller)?;
        }
        let registry = &self.registry;
        let principal = &caller.principal;
        let queue = self
            .events
            .subscribe(&principal.id, resume_after, |resource, ancestry| {
                registry.allows(principal, Right::Read, resource, ancestry)
            });
        if self.stopping {
            queue.close(CloseReason::Shutdown);
        }
        Ok(Outcome {
            stream: Some(Box::new(EventStream { queue })),
            ..Outcome::reply(Ok(reply))
        })
    }

    /// What the caller may read, in `session.list` / `pane.list` entry shapes, plus
    /// the flat window entries of `session.list`.
    fn snapshot(&mut self, caller: &Caller) -> ApiResult<Value> {
        self.expire_archive_text(recovery::now());
        let sessions = to_value(&self.listed_sessions(caller));
        let windows: Vec<WindowView<'_>> = self
            .topology
            .windows
            .values()
            .filter(|w| self.can(caller, Right::Read, Resource::Window(w.id)))
            .map(WindowView)
            .collect();
        let no_params = Map::new();
        let panes = to_value(&self.listed_panes(caller, &Params(&no_params))?);
        Ok(json!({"sessions": sessions, "windows": to_value(&windows), "panes": panes}))
    }
}
