//! `pane.attach` in the reactor: the attach turn (resume decision, snapshot and offset
//! taken together), resize frames, and closing the streams of removed panes.

use super::params::Params;
use super::{Caller, Outcome, State};
use crate::attach::ring::{CloseReason, ExitStatus, PaneOutput};
use crate::attach::stream::AttachStream;
use crate::auth::{Resource, Right};
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::PaneId;
use crate::topology::PaneState;
use serde_json::{json, Map, Value};

/// `resume` is absent, or exactly `{"source": string, "offset": safe integer >= 0}`.
fn parse_resume(v: Option<&Value>) -> ApiResult<Option<(&str, u64)>> {
    const MAX_SAFE: u64 = (1 << 53) - 1;
    let Some(v) = v else { return Ok(None) };
    let bad = || ApiError::param("resume", "resume must be {source, offset}");
    let o = v.as_object().filter(|o| o.len() == 2).ok_or_else(bad)?;
    let source = o.get("source").and_then(Value::as_str).ok_or_else(bad)?;
    let offset = o
        .get("offset")
        .and_then(Value::as_u64)
        .filter(|n| *n <= MAX_SAFE)
        .ok_or_else(bad)?;
    Ok(Some((source, offset)))
}

impl State {
    pub(super) fn pane_attach(&mut self, caller: &Caller, p: &Params<'_>) -> Outcome {
        match self.attach_turn(caller, p) {
            Ok((reply, stream)) => Outcome {
                stream: Some(Box::new(stream)),
                ..Outcome::reply(Ok(reply))
            },
            Err(e) => Outcome::reply(Err(e)),
        }
    }

    fn attach_turn(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<(Value, AttachStream)> {
        if self.stopping {
            return Err(ApiError::shutdown());
        }
        let id = p.pane("pane")?;
        let resume = parse_resume(p.json("resume"))?;
        let pane = self
            .topology
            .panes
            .get(&id)
            .ok_or_else(|| ApiError::code(ErrorCode::PaneNotFound))?;
        let screen = self.screens.get(&id).ok_or_else(ApiError::internal)?;
        // Archives (and panes restored before any output) get their stream here:
        // a fresh counter at 0, already ended.
        let output = self
            .outputs
            .entry(id)
            .or_insert_with(PaneOutput::new)
            .clone();
        if let PaneState::Exited { exit_code, signal } = &pane.state {
            output.set_exit(ExitStatus {
                exit_code: *exit_code,
                signal: signal.clone(),
            });
        }
        let (cols, rows) = (pane.cols, pane.rows);
        let write = self.can(caller, Right::Write, Resource::Pane(id));
        // The emulator counts the output it has consumed and is fed under its lock,
        // so the snapshot and `fed` are one pair; un-fed output is still in the ring
        // (the reader's back-pressure, attach::feed), and the stream starts there.
        let (resumed, offset, snapshot) = {
            let e = screen.lock().map_err(|_| ApiError::internal())?;
            let (start, end) = output.bounds();
            match resume {
                Some((source, n))
                    if source == self.identity.source && (start..=end).contains(&n) =>
                {
                    (true, n, None)
                }
                _ => (false, e.fed().max(start), Some(e.snapshot())),
            }
        };
        let input = if write {
            self.live.get(&id).map(|h| h.input_sender().downgrade())
        } else {
            None
        };
        let reply = json!({
            "pane": id.to_string(),
            "source": self.identity.source,
            "resumed": resumed,
            "offset": offset,
            "cols": cols,
            "rows": rows,
            "input": write,
        });
        let stream = AttachStream {
            pane: id,
            principal: caller.principal.id.clone(),
            output,
            offset,
            snapshot,
            write,
            input,
            reactor: self.resizes.clone(),
        };
        Ok((reply, stream))
    }

    /// A `Z` frame: `window.resize` of the pane's current window, if the viewer still
    /// holds write on the pane and the pane still exists.
    pub(super) fn attach_resize(&mut self, pane: PaneId, principal: &str, cols: u16, rows: u16) {
        if self.stopping {
            return;
        }
        let Some(principal) = self.registry.get(principal).cloned() else {
            return;
        };
        let caller = Caller::internal(principal);
        if !self.can(&caller, Right::Write, Resource::Pane(pane)) {
            return;
        }
        let Some(window) = self.topology.panes.get(&pane).map(|p| p.window) else {
            return;
        };
        let mut params = Map::new();
        params.insert("window".into(), json!(window.to_string()));
        params.insert("cols".into(), json!(cols));
        params.insert("rows".into(), json!(rows));
        if self.window_resize(&Params(&params)).is_ok() {
            self.note_mutation();
        }
    }

    /// Ends the streams of a pane leaving the topology.
    pub(super) fn close_output(&mut self, pane: PaneId, reason: CloseReason) {
        if let Some(o) = self.outputs.remove(&pane) {
            o.close(reason);
        }
    }

    pub(super) fn close_all_outputs(&mut self, reason: CloseReason) {
        for (_, o) in self.outputs.drain() {
            o.close(reason);
        }
    }
}
