//! Pane verbs: spawning (create, split, float), listing, capture, input, tags, kill,
//! place and resize.

pub(super) use super::pane_program::Program;
use super::params::Params;
use super::{Caller, State};
use crate::auth::{PrincipalKind, Resource, Right};
use crate::config::Config;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::{PaneId, SessionId, WindowId};
use crate::pty::{self, InputError, SpawnSpec};
use crate::stream::Encoded;
use crate::topology::float::{self, FloatSpec, Length};
use crate::topology::json::{Keyed, PaneView};
use crate::topology::tree::{split_sizes, Axis};
use crate::topology::validate::{argv0_of, valid_tag_key, valid_tag_value, valid_title};
use crate::topology::{Layer, Pane, PaneState};
use serde_json::{json, Value};

/// Where a new pane goes.
pub(super) enum Placement {
    Root,
    Split {
        target: PaneId,
        axis: Axis,
        ratio: Option<u16>,
        before: bool,
    },
    Float {
        spec: FloatSpec,
        geometry: float::Geometry,
    },
    /// `pane.relaunch`: takes the archive's place (its leaf, or its float slot with
    /// the same spec and z).
    Replace {
        archive: PaneId,
        layer: Layer,
    },
}

/// A float's spec resolved over its preset (unknown presets: `.floats.default`) and
/// the default.
pub fn merged_spec(config: &Config, spec: &FloatSpec) -> FloatSpec {
    let default = &config.floats.default;
    let base = spec
        .preset
        .as_ref()
        .and_then(|name| config.floats.presets.get(name))
        .map_or_else(|| default.clone(), |preset| preset.over(default));
    spec.over(&base)
}

pub(super) fn pane_not_found() -> ApiError {
    ApiError::code(ErrorCode::PaneNotFound)
}

impl State {
    /// Spawns `program` and inserts the pane at `placement`; its record (if any) is
    /// installed in this same turn, so nobody sees the pane without it, and a failed
    /// spawn leaves neither.
    pub(super) fn spawn_pane(
        &mut self,
        caller: &Caller,
        p: &Params<'_>,
        program: Program,
        (window, session): (WindowId, SessionId),
        size: (u16, u16),
        placement: Placement,
    ) -> ApiResult<Value> {
        let Program {
            argv,
            env: extra_env,
            cwd,
            record: agent_record,
        } = program;
        let id = self
            .topology
            .allocate_pane()
            .ok_or_else(|| ApiError::new(ErrorCode::Ids, "id counter exhausted"))?;
        let grants = self.parse_grants(caller, p, Some(id), Some((window, session)))?;
        let (principal, token) = self
            .registry
            .issue(
                PrincipalKind::Pane(id),
                caller.principal.namespace.clone(),
                grants,
            )
            .map_err(|_| ApiError::internal())?;
        let spec = SpawnSpec {
            argv: &argv,
            cols: size.0,
            rows: size.1,
            env: [
                ("VENOMX_TOKEN", token),
                ("VENOMX_SOCKET", self.identity.socket.clone()),
                ("VENOMX_PANE", id.to_string()),
                ("TERM", "xterm-256color".to_string()),
            ]
            .map(|(k, v)| (k.to_string(), v))
            .into_iter()
            .chain(extra_env)
            .collect(),
            cwd: cwd.as_deref(),
            history_rows: self.config.panes.history_rows as usize,
        };
        let handle = match pty::spawn(id, spec, self.exits.clone()) {
            Ok(h) => h,
            Err(_) => {
                if matches!(placement, Placement::Root)
                    && crate::negative::active(crate::negative::Defect::SpawnFailureKeepsPane)
                {
                    self.keep_unstarted_pane(id, (window, session), size, &argv, principal, caller);
                    if let Some(encoded) = agent_record {
                        self.meta.install_record(id, encoded);
                    }
                } else {
                    self.registry.revoke(&principal);
                }
                return Err(ApiError::new(ErrorCode::Spawn, "executable unavailable"));
            }
        };
        let pid = handle.pid;
        if crate::negative::active(crate::negative::Defect::SpawnLog) {
            spawn_log(&argv);
        }
        let mut tags: crate::topology::tags::Tags =
            [("owner".to_string(), caller.principal.namespace.clone())].into();
        if crate::negative::active(crate::negative::Defect::CheckpointKeepsPid) {
            tags.insert("pid".into(), pid.to_string());
        }
        let mut record = Pane {
            id,
            window,
            session,
            cols: size.0,
            rows: size.1,
            layer: Layer::Tiled,
            state: PaneState::Running,
            argv0: argv0_of(&argv[0]),
            tags,
            principal: Some(principal.clone()),
        };
        self.screens.insert(id, handle.emulator.clone());
        self.outputs.insert(id, handle.output.clone());
        self.live.insert(id, handle);
        self.publish_supervised();
        let mut extra = json!({});
        let replaced = match &placement {
            Placement::Replace { archive, .. } => Some(*archive),
            _ => None,
        };
        let resized = match placement {
            Placement::Root => self.topology.insert_root(record),
            Placement::Split {
                target,
                axis,
                ratio,
                before,
            } => self
                .topology
                .insert_split(target, record, axis, ratio, before),
            Placement::Float { spec, geometry } => {
                let z = self.topology.next_z();
                extra = json!({"z": z});
                record.layer = Layer::Float {
                    spec: Box::new(spec),
                    z,
                    geometry,
                };
                self.topology.insert_float(record);
                Vec::new()
            }
            Placement::Replace { archive, layer } => {
                record.layer = layer;
                // The archive's screen, history and recovery metadata go with it.
                self.topology.replace_pane(archive, record);
                self.screens.remove(&archive);
                self.close_output(archive, crate::attach::ring::CloseReason::PaneRemoved);
                self.recovery.archives.remove(&archive);
                Vec::new()
            }
        };
        if let Some(encoded) = agent_record {
            self.meta.install_record(id, encoded);
        }
        self.apply_resizes(&resized);
        self.emit_spawned(id, replaced, &principal);
        let mut out = json!({
            "pane": id.to_string(),
            "window": window.to_string(),
            "session": session.to_string(),
            "principal": principal,
            "pid": pid,
        });
        if let Some(z) = extra.get("z") {
            out["z"] = z.clone();
        }
        Ok(out)
    }

    /// The negative control `spawn-failure-keeps-pane`: the pane whose program could
    /// not start is kept in its new window as an exited pane.
    fn keep_unstarted_pane(
        &mut self,
        id: PaneId,
        (window, session): (WindowId, SessionId),
        (cols, rows): (u16, u16),
        argv: &[String],
        principal: String,
        caller: &Caller,
    ) {
        let pane = Pane {
            id,
            window,
            session,
            cols,
            rows,
            layer: Layer::Tiled,
            state: PaneState::Exited {
                exit_code: Some(127),
                signal: None,
            },
            argv0: argv0_of(&argv[0]),
            tags: [("owner".to_string(), caller.principal.namespace.clone())].into(),
            principal: Some(principal),
        };
        let resized = self.topology.insert_root(pane);
        self.apply_resizes(&resized);
    }

    pub(super) fn pane_create(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Value> {
        let window = p.window("window")?;
        let cols = p.opt_int("cols", 1, 65535)?;
        let rows = p.opt_int("rows", 1, 65535)?;
        let size = self.empty_window(window, cols, rows)?;
        let program = self.spawn_program(p)?;
        let session = self.resize_empty_window(window, size);
        self.spawn_pane(caller, p, program, (window, session), size, Placement::Root)
    }

    pub(super) fn pane_split(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Value> {
        let target = p.pane("pane")?;
        let axis = Axis::parse(p.str("axis")?)
            .ok_or_else(|| ApiError::param("axis", "axis must be cols or rows"))?;
        let ratio = p.opt_int("ratio", 1, 9999)?.map(|r| r as u16);
        let before = p.opt_bool("before").unwrap_or(false);
        let t = self
            .topology
            .panes
            .get(&target)
            .ok_or_else(pane_not_found)?;
        if t.layer != Layer::Tiled {
            return Err(ApiError::new(
                ErrorCode::Layer,
                "only tiled panes can be split",
            ));
        }
        let (first, second) = match axis {
            Axis::Cols => split_sizes(t.cols, ratio),
            Axis::Rows => split_sizes(t.rows, ratio),
        };
        let new_side = if before { first } else { second };
        let size = match axis {
            Axis::Cols => (new_side, t.rows),
            Axis::Rows => (t.cols, new_side),
        };
        let (window, session) = (t.window, t.session);
        let program = self.spawn_program(p)?;
        self.spawn_pane(
            caller,
            p,
            program,
            (window, session),
            size,
            Placement::Split {
                target,
                axis,
                ratio,
                before,
            },
        )
    }

    pub(super) fn pane_float(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Value> {
        let window = p.window("window")?;
        let spec = float_spec_params(p)?;
        let w = self
            .topology
            .windows
            .get(&window)
            .ok_or_else(|| ApiError::code(ErrorCode::WindowNotFound))?;
        let geometry = float::resolve(&merged_spec(&self.config, &spec), w.cols, w.rows);
        let session = w.session;
        let program = self.spawn_program(p)?;
        self.spawn_pane(
            caller,
            p,
            program,
            (window, session),
            (geometry.cols, geometry.rows),
            Placement::Float { spec, geometry },
        )
    }

    /// RFC §6 `pane.relaunch`: new execution in an archive's place. Spawn on the pane
    /// was the dispatch grant; write is checked here, still before any lookup.
    pub(super) fn pane_relaunch(&mut self, caller: &Caller, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.pane("pane")?;
        self.require(caller, Right::Write, Resource::Pane(id))?;
        if p.opt_bool("ack_orphans") != Some(true) {
            return Err(ApiError::param(
                "ack_orphans",
                "relaunch needs ack_orphans=true",
            ));
        }
        let program = Program {
            record: None,
            ..Program::of(p, true)?
        };
        let pane = self.topology.panes.get(&id).ok_or_else(pane_not_found)?;
        if !self.recovery.archives.contains_key(&id) {
            return Err(ApiError::new(
                ErrorCode::NotArchive,
                "only a restored archive can be relaunched",
            ));
        }
        let (window, session, size, layer) = (
            pane.window,
            pane.session,
            (pane.cols, pane.rows),
            pane.layer.clone(),
        );
        self.spawn_pane(
            caller,
            p,
            program,
            (window, session),
            size,
            Placement::Replace { archive: id, layer },
        )
    }

    pub(super) fn pane_list(&self, caller: &Caller, p: &Params<'_>) -> ApiResult<Encoded> {
        let panes = self.listed_panes(caller, p)?;
        Ok(Encoded::of(&Keyed("panes", &panes), 256 * panes.len()))
    }

    /// `pane.list`'s entries: the panes (of `window`, when given) the caller may read.
    pub(super) fn listed_panes(
        &self,
        caller: &Caller,
        p: &Params<'_>,
    ) -> ApiResult<Vec<PaneView<'_, impl serde::Serialize>>> {
        let window = p.opt_window("window")?;
        if let Some(w) = window {
            self.require(caller, Right::Read, Resource::Window(w))?;
            if !self.topology.windows.contains_key(&w) {
                return Err(ApiError::code(ErrorCode::WindowNotFound));
            }
        }
        Ok(self
            .topology
            .panes
            .values()
            .filter(|pane| window.is_none_or(|w| pane.window == w))
            .filter(|pane| self.can(caller, Right::Read, Resource::Pane(pane.id)))
            .map(|pane| PaneView {
                pane,
                archive: self.archive(pane.id),
            })
            .collect())
    }

    pub(super) fn pane_capture(&self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.pane("pane")?;
        let pane = self.topology.panes.get(&id).ok_or_else(pane_not_found)?;
        let capture = self
            .screens
            .get(&id)
            .and_then(|e| e.lock().ok().map(|e| e.capture()))
            .ok_or_else(ApiError::internal)?;
        let mut out = json!({
            "pane": id.to_string(),
            "cols": pane.cols,
            "rows": pane.rows,
            "screen": capture.screen,
            "history": capture.history,
            "exited": pane.state != PaneState::Running,
        });
        if let PaneState::Exited { exit_code, signal } = &pane.state {
            if let Some(c) = exit_code {
                out["exit_code"] = json!(c);
            }
            if let Some(s) = signal {
                out["signal"] = json!(s);
            }
        }
        if let Some(r) = self.archive_json(id) {
            out["recovery"] = r;
        }
        Ok(out)
    }

    pub(super) fn pane_send(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.pane("pane")?;
        let text = p.str("text")?;
        let pane = self.topology.panes.get(&id).ok_or_else(pane_not_found)?;
        if pane.state != PaneState::Running {
            return Err(ApiError::new(ErrorCode::Exited, "pane has exited"));
        }
        let handle = self
            .live
            .get(&id)
            .ok_or_else(|| ApiError::new(ErrorCode::Exited, "pane has exited"))?;
        match handle.send_input(text.as_bytes().to_vec()) {
            Ok(()) => Ok(json!({})),
            Err(InputError::Full) => Err(ApiError::new(
                ErrorCode::InputFull,
                "pane input queue is full",
            )),
            Err(InputError::Closed) => Err(ApiError::new(ErrorCode::Exited, "pane has exited")),
        }
    }

    pub(super) fn pane_tag(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.pane("pane")?;
        let key = p.str("key")?;
        if !valid_tag_key(key) {
            return Err(ApiError::param(
                "key",
                "tag key must match [a-z][a-z0-9_.-]{0,63}",
            ));
        }
        if key == "owner" {
            return Err(ApiError::param("key", "the owner tag is set by the daemon"));
        }
        let value = p.opt_str("value");
        if value.is_some_and(|v| !valid_tag_value(v)) {
            return Err(ApiError::param(
                "value",
                "tag value must be 1-256 bytes without control characters",
            ));
        }
        let pane = self
            .topology
            .panes
            .get_mut(&id)
            .ok_or_else(pane_not_found)?;
        match value {
            Some(v) => {
                if !pane.tags.contains_key(key) && pane.tags.len() >= 16 {
                    return Err(ApiError::new(
                        ErrorCode::TagLimit,
                        "a pane holds at most 16 tags",
                    ));
                }
                pane.tags.insert(key.to_string(), v.to_string());
            }
            None => {
                pane.tags.remove(key);
            }
        }
        self.emit_pane("pane.tagged", id, json!({"pane": id.to_string()}));
        Ok(json!({}))
    }

    pub(super) fn pane_kill(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let id = p.pane("pane")?;
        let events = self.pane_removals(std::iter::once(id));
        let (pane, resized) = self.topology.remove_pane(id).ok_or_else(pane_not_found)?;
        self.retire_panes(&[(id, pane.principal)]);
        self.apply_resizes(&resized);
        self.publish_all(events);
        if pane.layer == Layer::Tiled {
            self.emit_layout_changed(pane.window);
        }
        Ok(json!({}))
    }
}

fn float_spec_params(p: &Params<'_>) -> ApiResult<FloatSpec> {
    let length = |name: &'static str| -> ApiResult<Option<Length>> {
        p.opt_str(name)
            .map(|t| {
                Length::parse(t).ok_or_else(|| ApiError::param(name, "expected \"N\" or \"N%\""))
            })
            .transpose()
    };
    let choice = |name: &'static str, allowed: &[&str]| -> ApiResult<Option<String>> {
        p.opt_str(name)
            .map(|t| {
                if allowed.contains(&t) {
                    Ok(t.to_string())
                } else {
                    Err(ApiError::param(name, "unknown value"))
                }
            })
            .transpose()
    };
    let preset = match p.opt_str("preset") {
        Some(name) if float::valid_preset_name(name) => Some(name.to_string()),
        Some(_) => {
            return Err(ApiError::param(
                "preset",
                "preset must be <namespace>.<name>",
            ))
        }
        None => None,
    };
    let title = match p.opt_str("title") {
        Some(t) if valid_title(t) => Some(t.to_string()),
        Some(_) => {
            return Err(ApiError::param(
                "title",
                "title must be 1-128 bytes without control characters",
            ))
        }
        None => None,
    };
    Ok(FloatSpec {
        preset,
        width: length("width")?,
        height: length("height")?,
        anchor: choice("anchor", float::ANCHORS)?,
        x: p.opt_int("x", -4096, 4096)?.map(|n| n as i32),
        y: p.opt_int("y", -4096, 4096)?.map(|n| n as i32),
        min_cols: p.opt_int("min_cols", 1, 65535)?.map(|n| n as u16),
        min_rows: p.opt_int("min_rows", 1, 65535)?.map(|n| n as u16),
        border: choice("border", float::BORDERS)?,
        title,
    })
}

/// The `spawn-log` negative control: `argv` appended to a log under the state home.
fn spawn_log(argv: &[String]) {
    use std::io::Write;
    let Some(state) = std::env::var_os("XDG_STATE_HOME") else {
        return;
    };
    let path = std::path::Path::new(&state).join("vxref-spawn.log");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{}", argv.join(" "));
    }
}
