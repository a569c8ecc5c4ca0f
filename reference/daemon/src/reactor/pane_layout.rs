//! Pane verbs that move or size an existing pane: `pane.place` (into another window
//! or beside another pane) and `pane.resize` (a float's geometry, a tiled pane's
//! split ratio). Spawning and the other pane verbs are in `panes.rs`.

use super::panes::{merged_spec, pane_not_found};
use super::params::Params;
use super::{Caller, State};
use crate::auth::{Resource, Right};
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::{PaneId, WindowId};
use crate::topology::float::{self, Length};
use crate::topology::tree::Axis;
use crate::topology::Layer;
use serde_json::{json, Value};

/// Where `pane.place` moves a pane.
enum Dest {
    Beside(PaneId),
    Into(WindowId),
}

impl State {
    pub(super) fn pane_place(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.pane("pane")?;
        let target = p.opt_pane("target")?;
        let into = p.opt_window("window")?;
        let axis = match p.opt_str("axis") {
            None => Axis::Cols,
            Some(a) => Axis::parse(a)
                .ok_or_else(|| ApiError::param("axis", "axis must be cols or rows"))?,
        };
        let ratio = p.opt_int("ratio", 1, 9999)?.map(|r| r as u16);
        let before = p.opt_bool("before").unwrap_or(false);
        // The second resource is authorized before it is looked up, like the first.
        let dest = match (target, into) {
            (Some(t), None) => {
                self.require(caller, Right::Write, Resource::Pane(t))?;
                Dest::Beside(t)
            }
            (None, Some(w)) => {
                self.require(caller, Right::Write, Resource::Window(w))?;
                Dest::Into(w)
            }
            _ => {
                return Err(ApiError::param(
                    "target",
                    "give exactly one of target and window",
                ))
            }
        };
        let pane = self.topology.panes.get(&id).ok_or_else(pane_not_found)?;
        if pane.layer != Layer::Tiled {
            return Err(ApiError::new(
                ErrorCode::Layer,
                "only tiled panes can be placed",
            ));
        }
        let window = match dest {
            Dest::Beside(t) => {
                if t == id {
                    return Err(ApiError::param(
                        "target",
                        "a pane cannot be placed next to itself",
                    ));
                }
                let t = self.topology.panes.get(&t).ok_or_else(pane_not_found)?;
                if t.layer != Layer::Tiled {
                    return Err(ApiError::new(ErrorCode::Layer, "the target is not tiled"));
                }
                t.window
            }
            Dest::Into(w) => {
                let win = self
                    .topology
                    .windows
                    .get(&w)
                    .ok_or_else(|| ApiError::code(ErrorCode::WindowNotFound))?;
                if win.tree.is_some() {
                    return Err(ApiError::new(
                        ErrorCode::NotEmpty,
                        "window already has a tiled pane",
                    ));
                }
                w
            }
        };
        let source = pane.window;
        let resized = self.topology.place(id, target, window, axis, ratio, before);
        self.apply_resizes(&resized);
        self.emit_placed(id, source);
        let w = &self.topology.windows[&window];
        Ok(
            json!({"window": window.to_string(), "session": w.session.to_string(), "revision": w.revision}),
        )
    }

    pub(super) fn pane_resize(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.pane("pane")?;
        let cols = p.opt_int("cols", 1, 65535)?.map(|n| n as u16);
        let rows = p.opt_int("rows", 1, 65535)?.map(|n| n as u16);
        let pane = self.topology.panes.get(&id).ok_or_else(pane_not_found)?;
        let window = pane.window;
        let (cur_cols, cur_rows) = (pane.cols, pane.rows);
        let mut resized = Vec::new();
        if matches!(pane.layer, Layer::Float { .. }) {
            let (area_cols, area_rows) = {
                let w = &self.topology.windows[&window];
                (w.cols, w.rows)
            };
            let merged_base = self.config.clone();
            let pane = self
                .topology
                .panes
                .get_mut(&id)
                .ok_or_else(pane_not_found)?;
            if let Layer::Float { spec, geometry, .. } = &mut pane.layer {
                if let Some(c) = cols {
                    spec.width = Some(Length::Cells(c));
                }
                if let Some(r) = rows {
                    spec.height = Some(Length::Cells(r));
                }
                *geometry = float::resolve(&merged_spec(&merged_base, spec), area_cols, area_rows);
                pane.cols = geometry.cols;
                pane.rows = geometry.rows;
                resized.push((id, pane.cols, pane.rows));
            }
        } else {
            let w = self
                .topology
                .windows
                .get_mut(&window)
                .ok_or_else(pane_not_found)?;
            let (wc, wr) = (w.cols, w.rows);
            for (axis, wanted, current) in
                [(Axis::Cols, cols, cur_cols), (Axis::Rows, rows, cur_rows)]
            {
                let Some(wanted) = wanted else { continue };
                let delta = i32::from(wanted) - i32::from(current);
                if delta == 0 {
                    continue;
                }
                let grown = w
                    .tree
                    .as_mut()
                    .is_some_and(|t| t.grow(id, axis, delta, wc, wr));
                if !grown {
                    // No split along this axis above the pane: the whole area changes.
                    let area = match axis {
                        Axis::Cols => &mut w.cols,
                        Axis::Rows => &mut w.rows,
                    };
                    *area = (i32::from(*area) + delta).clamp(1, 65535) as u16;
                }
            }
            w.revision += 1;
            resized = self.topology.relayout(window);
        }
        self.apply_resizes(&resized);
        self.emit_resized(id);
        let pane = &self.topology.panes[&id];
        Ok(json!({"cols": pane.cols, "rows": pane.rows}))
    }
}
