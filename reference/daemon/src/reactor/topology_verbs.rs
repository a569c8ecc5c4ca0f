//! Session and window verbs.

use super::panes::merged_spec;
use super::params::Params;
use super::{Caller, State};
use crate::auth::{Resource, Right};
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::SessionId;
use crate::stream::Encoded;
use crate::topology::json::{Keyed, SessionView, WindowView};
use crate::topology::validate::valid_name;
use crate::topology::{float, Layer};
use serde_json::{json, Value};
use std::collections::HashMap;

fn name_param(p: &Params<'_>) -> ApiResult<String> {
    let name = p.str("name")?;
    if valid_name(name) {
        Ok(name.to_string())
    } else {
        Err(ApiError::param(
            "name",
            "name must be 1-255 bytes without control characters",
        ))
    }
}

fn exhausted() -> ApiError {
    ApiError::new(ErrorCode::Ids, "id counter exhausted")
}

impl State {
    pub(super) fn session_create(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Value> {
        let name = name_param(p)?;
        // An older server (`--legacy-spawn`) knows no one-shot result.
        let token = p
            .opt_str("request_token")
            .filter(|_| !self.identity.legacy_spawn);
        if let Some(token) = token {
            crate::agent::created::check_request(&self.created, caller.conn, token)?;
        }
        // Checked and created in this one turn: two racing creates cannot both win,
        // and the loser records no result.
        if p.opt_bool("unique") == Some(true)
            && self.topology.sessions.values().any(|s| s.name == name)
        {
            return Err(ApiError::code(ErrorCode::Exists));
        }
        let id = self
            .topology
            .create_session(name.clone())
            .ok_or_else(exhausted)?;
        let data = json!({"session": id.to_string(), "name": name});
        self.emit("session.created", Resource::Session(id), data);
        if let (Some(token), Some(conn)) = (token, caller.conn) {
            let result = json!({"session": id.to_string(), "name": name, "request_token": token});
            let principal = &caller.principal.id;
            self.created
                .record(conn, principal, token, result.to_string());
        }
        Ok(json!({"session": id.to_string()}))
    }

    pub(super) fn session_list(&self, caller: &Caller) -> Encoded {
        let sessions = self.listed_sessions(caller);
        let windows: usize = sessions.iter().map(|s| s.windows.len()).sum();
        Encoded::of(&Keyed("sessions", &sessions), 64 + 320 * windows)
    }

    /// `session.list`'s entries: every session the caller may read whole, and those
    /// holding a window it may read, with the windows it may read.
    pub(super) fn listed_sessions(&self, caller: &Caller) -> Vec<SessionView<'_>> {
        let mut windows_of: HashMap<SessionId, Vec<WindowView<'_>>> = HashMap::new();
        for w in self.topology.windows.values() {
            windows_of.entry(w.session).or_default().push(WindowView(w));
        }
        let mut sessions = Vec::new();
        for s in self.topology.sessions.values() {
            let whole = self.can(caller, Right::Read, Resource::Session(s.id));
            let mut windows = windows_of.remove(&s.id).unwrap_or_default();
            if !whole {
                windows.retain(|w| self.can(caller, Right::Read, Resource::Window(w.0.id)));
            }
            if whole || !windows.is_empty() {
                sessions.push(SessionView {
                    session: s,
                    windows,
                });
            }
        }
        sessions
    }

    pub(super) fn session_rename(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.session("session")?;
        let name = name_param(p)?;
        let s = self
            .topology
            .sessions
            .get_mut(&id)
            .ok_or_else(|| ApiError::code(ErrorCode::SessionNotFound))?;
        s.name = name.clone();
        let data = json!({"session": id.to_string(), "name": name});
        self.emit("session.renamed", Resource::Session(id), data);
        Ok(json!({}))
    }

    pub(super) fn session_kill(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.session("session")?;
        if !self.topology.sessions.contains_key(&id) {
            return Err(ApiError::code(ErrorCode::SessionNotFound));
        }
        let principals = self.principals_in(|pane| pane.session == id);
        let events = self.session_removals(id);
        self.topology.remove_session(id);
        self.retire_panes(&principals);
        self.publish_all(events);
        Ok(json!({}))
    }

    pub(super) fn window_create(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let session = p.session("session")?;
        let name = name_param(p)?;
        let cols = p
            .opt_int("cols", 1, 65535)?
            .map_or(self.config.panes.default_cols, |n| n as u16);
        let rows = p
            .opt_int("rows", 1, 65535)?
            .map_or(self.config.panes.default_rows, |n| n as u16);
        if !self.topology.sessions.contains_key(&session) {
            return Err(ApiError::code(ErrorCode::SessionNotFound));
        }
        let id = self
            .topology
            .create_window(session, name.clone(), cols, rows)
            .ok_or_else(exhausted)?;
        let data = json!({"window": id.to_string(), "session": session.to_string(), "name": name});
        self.emit("window.created", Resource::Window(id), data);
        Ok(json!({"window": id.to_string()}))
    }

    pub(super) fn window_rename(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.window("window")?;
        let name = name_param(p)?;
        let w = self
            .topology
            .windows
            .get_mut(&id)
            .ok_or_else(|| ApiError::code(ErrorCode::WindowNotFound))?;
        w.name = name.clone();
        let data = json!({"window": id.to_string(), "name": name});
        self.emit("window.renamed", Resource::Window(id), data);
        Ok(json!({}))
    }

    pub(super) fn window_kill(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.window("window")?;
        if !self.topology.windows.contains_key(&id) {
            return Err(ApiError::code(ErrorCode::WindowNotFound));
        }
        let principals = self.principals_in(|pane| pane.window == id);
        let events = self.window_removals(id);
        self.topology.remove_window(id);
        self.retire_panes(&principals);
        self.publish_all(events);
        Ok(json!({}))
    }

    pub(super) fn window_resize(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.window("window")?;
        let cols = p.int("cols", 1, 65535)? as u16;
        let rows = p.int("rows", 1, 65535)? as u16;
        let w = self
            .topology
            .windows
            .get_mut(&id)
            .ok_or_else(|| ApiError::code(ErrorCode::WindowNotFound))?;
        w.cols = cols;
        w.rows = rows;
        w.revision += 1;
        let revision = w.revision;
        let floats = w.floats.clone();
        let mut resized = self.topology.relayout(id);
        // Floats given in percent follow the window.
        for f in floats {
            if let Some(pane) = self.topology.panes.get_mut(&f) {
                if let Layer::Float { spec, geometry, .. } = &mut pane.layer {
                    *geometry = float::resolve(&merged_spec(&self.config, spec), cols, rows);
                    if (pane.cols, pane.rows) != (geometry.cols, geometry.rows) {
                        pane.cols = geometry.cols;
                        pane.rows = geometry.rows;
                        resized.push((f, geometry.cols, geometry.rows));
                    }
                }
            }
        }
        self.apply_resizes(&resized);
        self.emit_layout_changed(id);
        Ok(json!({"revision": revision}))
    }

    pub(super) fn window_ratio(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.window("window")?;
        let index = p.int("node", 0, i64::from(u32::MAX))? as usize;
        let ratio = p.opt_int("ratio", 1, 9999)?.map(|r| r as u16);
        let expected = p.opt_int("revision", 1, crate::ids::MAX_SAFE_INTEGER as i64)?;
        let w = self
            .topology
            .windows
            .get_mut(&id)
            .ok_or_else(|| ApiError::code(ErrorCode::WindowNotFound))?;
        if expected.is_some_and(|r| r as u64 != w.revision) {
            return Err(ApiError::new(
                ErrorCode::Revision,
                "window revision changed",
            ));
        }
        match w.tree.as_mut().and_then(|t| t.ratio_mut(index)) {
            Some(r) => *r = ratio,
            None => {
                return Err(ApiError::param(
                    "node",
                    "node is not a split of this window",
                ))
            }
        }
        w.revision += 1;
        let revision = w.revision;
        let resized = self.topology.relayout(id);
        self.apply_resizes(&resized);
        self.emit_layout_changed(id);
        Ok(json!({"revision": revision}))
    }

    /// Panes matching `filter`, with their principals (for retirement).
    pub(super) fn principals_in(
        &self,
        filter: impl Fn(&crate::topology::Pane) -> bool,
    ) -> Vec<(crate::ids::PaneId, Option<String>)> {
        self.topology
            .panes
            .values()
            .filter(|p| filter(p))
            .map(|p| (p.id, p.principal.clone()))
            .collect()
    }
}
