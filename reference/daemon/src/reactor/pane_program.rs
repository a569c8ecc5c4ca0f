//! What a spawn verb runs ([`Program`]: argv plus what `agent.launch` and
//! `agent_session` add) and the empty-window checks `pane.create` and `agent.launch`
//! share, so both refuse before anything is spawned or resized.

use super::params::Params;
use super::State;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::{SessionId, WindowId};

/// What a pane runs: its argv, and what `agent.launch` and `agent_session` add.
pub(super) struct Program {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
    /// A checked `agent-session/v1` record, installed in the pane's own turn.
    pub record: Option<String>,
}

impl Program {
    /// `argv` and the optional `agent_session` of a spawn verb. An older server
    /// (`--legacy-spawn`) does not know the field and ignores it.
    pub(super) fn of(p: &Params<'_>, legacy: bool) -> ApiResult<Program> {
        let argv = p.argv("argv")?;
        let record = match p.opt_str("agent_session") {
            Some(text) if !legacy => {
                crate::agent::meta::check_record(text.as_bytes())?;
                Some(text.to_string())
            }
            _ => None,
        };
        Ok(Program {
            argv,
            env: Vec::new(),
            cwd: None,
            record,
        })
    }
}

impl State {
    pub(super) fn spawn_program(&self, p: &Params<'_>) -> ApiResult<Program> {
        Program::of(p, self.identity.legacy_spawn)
    }

    /// An empty window's size with `cols`/`rows` applied (not yet stored).
    pub(super) fn empty_window(
        &self,
        window: WindowId,
        cols: Option<i64>,
        rows: Option<i64>,
    ) -> ApiResult<(u16, u16)> {
        let w = self
            .topology
            .windows
            .get(&window)
            .ok_or_else(|| ApiError::code(ErrorCode::WindowNotFound))?;
        if w.tree.is_some() {
            return Err(ApiError::new(
                ErrorCode::NotEmpty,
                "window already has a tiled pane",
            ));
        }
        Ok((
            cols.map_or(w.cols, |c| c as u16),
            rows.map_or(w.rows, |r| r as u16),
        ))
    }

    /// Stores the size [`Self::empty_window`] resolved; returns the window's session.
    pub(super) fn resize_empty_window(&mut self, window: WindowId, size: (u16, u16)) -> SessionId {
        let w = self
            .topology
            .windows
            .get_mut(&window)
            .expect("checked in this turn");
        (w.cols, w.rows) = size;
        w.session
    }
}
