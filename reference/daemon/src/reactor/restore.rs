//! Restore (RFC §5, §8): validate the loaded checkpoint, prepare every resource, ID
//! and event with nothing visible, then commit all of it in one reactor turn.

use super::{Caller, State};
use crate::auth::{Resource, Right};
use crate::emulator::Emulator;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::{PaneId, SessionId, WindowId};
use crate::recovery::{self, Archive, ArchiveText};
use crate::topology::float::{self, FloatSpec, Length};
use crate::topology::tree::{Axis, Entry, Tree};
use crate::topology::{Layer, Pane, PaneState, Session, Window};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use vx_format as fmt;
use vx_format::{Checkpoint, PreviousState, Text};

pub(super) fn from_format_spec(spec: &fmt::FloatSpec) -> FloatSpec {
    let length = |e: fmt::Extent| match e {
        fmt::Extent::Cells(n) => Length::Cells(n),
        fmt::Extent::Percent(p) => Length::Percent(p),
    };
    FloatSpec {
        preset: spec.preset.clone(),
        width: spec.width.map(length),
        height: spec.height.map(length),
        anchor: spec.anchor.map(|a| a.as_str().to_string()),
        x: spec.x.map(i32::from),
        y: spec.y.map(i32::from),
        min_cols: spec.min_cols,
        min_rows: spec.min_rows,
        border: spec.border.map(|b| b.as_str().to_string()),
        title: spec.title.clone(),
    }
}

/// The live tree of a restored window, or None when the nodes are not one preorder
/// tree of known panes (the reader has checked that already).
pub(super) fn build_tree(nodes: &[fmt::Node], panes: &BTreeMap<u64, PaneId>) -> Option<Tree> {
    let entries = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| match *n {
            fmt::Node::Pane { pane } => panes.get(&pane).map(|p| Entry::Pane(*p)),
            fmt::Node::Split {
                axis,
                first,
                second,
                ratio,
            } => (first == i + 1).then_some(Entry::Split {
                axis: match axis {
                    fmt::Axis::Cols => Axis::Cols,
                    fmt::Axis::Rows => Axis::Rows,
                },
                ratio,
                second,
            }),
        })
        .collect::<Option<Vec<_>>>()?;
    Tree::from_entries(entries)
}

/// A prepared restore: every resource built and every ID allocated, nothing visible.
struct Prepared {
    sessions: Vec<Session>,
    windows: Vec<Window>,
    panes: Vec<Pane>,
    screens: Vec<(PaneId, Emulator)>,
    archives: Vec<(PaneId, Archive)>,
    mapping: Value,
    /// RFC §8's events in commit order, published at the commit boundary
    /// (`reactor/events.rs`). Their data is rendered from the committed state in the
    /// same turn, so the records hold only IDs.
    events: Vec<RestoreEvent>,
}

/// One event of a restore's commit (RFC §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RestoreEvent {
    SessionCreated(SessionId),
    WindowCreated(WindowId),
    /// A restored float's carries layer, window, resolved geometry and new z: all in
    /// its pane entity.
    PaneCreated(PaneId),
    /// Known exit code or signal included; interrupted archives have neither.
    PaneExited(PaneId),
    /// `{checkpoint, cleanup_unverified: true}` on `server:root`.
    RecoveryRestored {
        checkpoint: String,
    },
}

impl State {
    /// Restore's checks that need no disk: id syntax, enabled, empty tree.
    pub(super) fn restore_allowed(&self, id: &str) -> ApiResult<()> {
        if !vx_format::ids::is_checkpoint_id(id) {
            return Err(ApiError::param("checkpoint", "invalid checkpoint id"));
        }
        if !self.config.recovery.enabled {
            return Err(recovery::disabled());
        }
        if !self.topology.is_empty() {
            return Err(ApiError::new(
                ErrorCode::NotEmpty,
                "restore needs an empty daemon",
            ));
        }
        Ok(())
    }

    /// Phase two of restore, in one turn: recheck, prepare everything, commit.
    pub(super) fn restore_loaded(
        &mut self,
        loaded: recovery::LoadedCheckpoint,
        principal: &str,
    ) -> ApiResult<Value> {
        let Some(principal) = self.registry.get(principal).cloned() else {
            return Err(ApiError::new(ErrorCode::DeniedToken, "token is not valid"));
        };
        let caller = Caller { principal };
        self.require(&caller, Right::Admin, Resource::Server)?;
        if self.stopping {
            return Err(ApiError::shutdown());
        }
        self.restore_allowed(&loaded.checkpoint.checkpoint)?;
        let prepared = self.prepare_restore(&caller, &loaded.checkpoint)?;
        let Prepared {
            sessions,
            windows,
            panes,
            screens,
            archives,
            mapping,
            events,
        } = prepared;
        // Commit: nothing below can fail.
        self.topology.insert_restored(sessions, windows, panes);
        for (id, e) in screens {
            self.screens.insert(id, Arc::new(Mutex::new(e)));
        }
        self.recovery.archives.extend(archives);
        self.recovery.restores += 1;
        self.note_mutation();
        self.publish_restore(events);
        Ok(mapping)
    }

    fn prepare_restore(&mut self, caller: &Caller, cp: &Checkpoint) -> ApiResult<Prepared> {
        let exhausted = || ApiError::new(ErrorCode::Ids, "id counter exhausted");
        // IDs in numeric source order; consumed even if a later step fails.
        let mut smap = BTreeMap::new();
        for s in &cp.sessions {
            smap.insert(
                s.id,
                self.topology.allocate_session().ok_or_else(exhausted)?,
            );
        }
        let mut wmap = BTreeMap::new();
        for w in &cp.windows {
            wmap.insert(w.id, self.topology.allocate_window().ok_or_else(exhausted)?);
        }
        let mut pmap = BTreeMap::new();
        for p in &cp.panes {
            pmap.insert(p.id, self.topology.allocate_pane().ok_or_else(exhausted)?);
        }
        let sid = |n: u64| smap.get(&n).copied().unwrap_or(SessionId(n));
        let wid = |n: u64| wmap.get(&n).copied().unwrap_or(WindowId(n));
        let pid = |n: u64| pmap.get(&n).copied().unwrap_or(PaneId(n));
        let mut events = Vec::new();
        let sessions: Vec<Session> = cp
            .sessions
            .iter()
            .map(|s| Session {
                id: sid(s.id),
                name: s.name.clone(),
            })
            .collect();
        let sizes: HashMap<PaneId, (u16, u16)> = cp
            .panes
            .iter()
            .map(|p| (pid(p.id), (p.cols, p.rows)))
            .collect();
        let defaults = (
            self.config.panes.default_cols,
            self.config.panes.default_rows,
        );
        let mut windows: Vec<Window> = Vec::with_capacity(cp.windows.len());
        for w in &cp.windows {
            let tree = if w.nodes.is_empty() {
                None
            } else {
                Some(build_tree(&w.nodes, &pmap).ok_or_else(|| {
                    ApiError::new(ErrorCode::CheckpointCorrupt, "checkpoint corrupt")
                })?)
            };
            let (cols, rows) = tree.as_ref().map_or(defaults, |t| {
                let (c, r) = t.area_holding(|p| {
                    sizes
                        .get(&p)
                        .map_or((1, 1), |(c, r)| (u32::from(*c), u32::from(*r)))
                });
                (c.clamp(1, 65535) as u16, r.clamp(1, 65535) as u16)
            });
            windows.push(Window {
                id: wid(w.id),
                session: sid(w.session),
                name: w.name.clone(),
                revision: 1,
                cols,
                rows,
                tree,
                floats: Vec::new(),
            });
        }
        let areas: HashMap<WindowId, (u16, u16)> =
            windows.iter().map(|w| (w.id, (w.cols, w.rows))).collect();
        // Floats: fresh z above the counter in saved order (z, then source pane id).
        let mut floats: Vec<(u64, u64)> = cp
            .panes
            .iter()
            .filter_map(|p| p.float.as_ref().map(|f| (f.z, p.id)))
            .collect();
        floats.sort_unstable();
        let mut fresh_z = HashMap::new();
        for (_, source) in &floats {
            fresh_z.insert(*source, self.topology.next_z());
        }
        let history_rows = self.config.panes.history_rows as usize;
        let mut panes = Vec::with_capacity(cp.panes.len());
        let mut screens = Vec::with_capacity(cp.panes.len());
        let mut archives = Vec::with_capacity(cp.panes.len());
        let mut exits = Vec::new();
        for p in &cp.panes {
            let id = pid(p.id);
            let window = wid(p.window);
            let (exit_code, signal, known) = match &p.state {
                fmt::PaneState::Running => (None, None, false),
                fmt::PaneState::Exited { exit } => match exit {
                    Some(fmt::Exit::Code(c)) => (Some(i32::from(*c)), None, true),
                    Some(fmt::Exit::Signal(s)) => (None, Some(s.clone()), true),
                    None => (None, None, true),
                },
            };
            let process_state = p.previous_state.unwrap_or(if known {
                PreviousState::Exited
            } else {
                PreviousState::Interrupted
            });
            let (mut cols, mut rows) = (p.cols, p.rows);
            let unknown_preset = p
                .float
                .as_ref()
                .and_then(|f| f.preset.as_ref())
                .is_some_and(|name| !self.config.floats.presets.contains_key(name));
            let layer = match &p.float {
                None => Layer::Tiled,
                Some(f) => {
                    let spec = from_format_spec(f);
                    let area = areas.get(&window).copied().unwrap_or(defaults);
                    let geometry = float::resolve(
                        &super::panes::merged_spec(&self.config, &spec),
                        area.0,
                        area.1,
                    );
                    (cols, rows) = (geometry.cols, geometry.rows);
                    Layer::Float {
                        spec,
                        z: fresh_z.get(&p.id).copied().unwrap_or(0),
                        geometry,
                    }
                }
            };
            let mut tags: BTreeMap<String, String> = p
                .tags
                .iter()
                .map(|t| (t.key.clone(), t.value.clone()))
                .collect();
            if !tags.contains_key("owner") && tags.len() < vx_format::limits::MAX_TAGS {
                tags.insert("owner".into(), caller.principal.namespace.clone());
            }
            // Literal hydration at the saved size, then fitted to the pane's size.
            let (text, emulator, cut_rows) = match &p.text {
                Text::Plain(t) => {
                    let (mut e, cut) =
                        Emulator::literal(p.cols, p.rows, history_rows, &t.screen, &t.history);
                    e.resize(cols, rows);
                    (
                        ArchiveText::Plain {
                            saved_at: t.saved_at,
                            expires_at: t.expires_at,
                        },
                        e,
                        cut,
                    )
                }
                Text::Expired => (
                    ArchiveText::Expired,
                    Emulator::literal(cols, rows, history_rows, &[], &[]).0,
                    0,
                ),
                Text::Omitted => (
                    ArchiveText::Omitted,
                    Emulator::literal(cols, rows, history_rows, &[], &[]).0,
                    0,
                ),
            };
            let record = Pane {
                id,
                window,
                session: sid(p.session),
                cols,
                rows,
                layer,
                state: PaneState::Exited { exit_code, signal },
                argv0: None,
                tags,
                principal: None,
            };
            exits.push(RestoreEvent::PaneExited(id));
            archives.push((
                id,
                Archive {
                    checkpoint: cp.checkpoint.clone(),
                    previous_pane: format!("p{}", p.id),
                    process_state,
                    text,
                    cut_rows,
                    unknown_preset,
                },
            ));
            screens.push((id, emulator));
            panes.push(record);
        }
        for w in &mut windows {
            let mut fl: Vec<(u64, PaneId)> = panes
                .iter()
                .filter(|p| p.window == w.id)
                .filter_map(|p| match &p.layer {
                    Layer::Float { z, .. } => Some((*z, p.id)),
                    Layer::Tiled => None,
                })
                .collect();
            fl.sort_unstable();
            w.floats = fl.into_iter().map(|(_, id)| id).collect();
        }
        events.extend(sessions.iter().map(|s| RestoreEvent::SessionCreated(s.id)));
        events.extend(windows.iter().map(|w| RestoreEvent::WindowCreated(w.id)));
        events.extend(panes.iter().map(|p| RestoreEvent::PaneCreated(p.id)));
        events.extend(exits);
        events.push(RestoreEvent::RecoveryRestored {
            checkpoint: cp.checkpoint.clone(),
        });
        let pairs = |m: Vec<(String, String)>| {
            m.into_iter()
                .map(|(a, b)| json!({"previous": a, "current": b}))
                .collect::<Vec<_>>()
        };
        let mapping = json!({
            "checkpoint": cp.checkpoint,
            "sessions": pairs(smap.iter().map(|(k, v)| (format!("s{k}"), v.to_string())).collect()),
            "windows": pairs(wmap.iter().map(|(k, v)| (format!("w{k}"), v.to_string())).collect()),
            "panes": pairs(pmap.iter().map(|(k, v)| (format!("p{k}"), v.to_string())).collect()),
        });
        Ok(Prepared {
            sessions,
            windows,
            panes,
            screens,
            archives,
            mapping,
            events,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vx_format::{Shutdown, Timestamp};

    fn owner(state: &State) -> Caller {
        Caller {
            principal: state.registry.get(crate::auth::OWNER).cloned().unwrap(),
        }
    }

    fn record(id: u64, window: u64, session: u64, state: fmt::PaneState) -> fmt::Pane {
        fmt::Pane {
            id,
            window,
            session,
            cols: 20,
            rows: 5,
            state,
            previous_state: None,
            float: None,
            tags: vec![],
            text: Text::Omitted,
        }
    }

    #[test]
    fn prepare_restore_orders_events_and_maps_ids_without_touching_the_tree() {
        let mut state = super::super::test_state();
        // Consume some numbers and z values first: restore takes the next ones.
        state.topology.allocate_session();
        state.topology.allocate_pane();
        let z0 = state.topology.next_z();
        let mut float = record(9, 3, 5, fmt::PaneState::Running);
        float.float = Some(fmt::FloatSpec {
            z: 40,
            ..Default::default()
        });
        let mut exited = record(
            4,
            3,
            5,
            fmt::PaneState::Exited {
                exit: Some(fmt::Exit::Code(2)),
            },
        );
        exited.previous_state = Some(PreviousState::Interrupted);
        let cp = Checkpoint {
            checkpoint: "c01234567-89ab-4cde-8fab-0123456789ab".into(),
            generation: 1,
            socket: "/s".into(),
            uid: 0,
            captured_at: Timestamp(0),
            shutdown: Shutdown::Open,
            sessions: vec![
                fmt::Session {
                    id: 1,
                    name: "empty".into(),
                },
                fmt::Session {
                    id: 5,
                    name: "work".into(),
                },
            ],
            windows: vec![fmt::Window {
                id: 3,
                session: 5,
                name: "w".into(),
                revision: 9,
                nodes: vec![
                    fmt::Node::Split {
                        axis: fmt::Axis::Cols,
                        first: 1,
                        second: 2,
                        ratio: Some(3000),
                    },
                    fmt::Node::Pane { pane: 2 },
                    fmt::Node::Pane { pane: 4 },
                ],
            }],
            panes: vec![record(2, 3, 5, fmt::PaneState::Running), exited, float],
        };
        let caller = owner(&state);
        let prepared = state.prepare_restore(&caller, &cp).unwrap();
        assert!(
            state.topology.is_empty(),
            "nothing is visible before the commit"
        );
        assert_eq!(
            prepared.events,
            vec![
                RestoreEvent::SessionCreated(SessionId(1)),
                RestoreEvent::SessionCreated(SessionId(2)),
                RestoreEvent::WindowCreated(WindowId(0)),
                RestoreEvent::PaneCreated(PaneId(1)),
                RestoreEvent::PaneCreated(PaneId(2)),
                RestoreEvent::PaneCreated(PaneId(3)),
                RestoreEvent::PaneExited(PaneId(1)),
                RestoreEvent::PaneExited(PaneId(2)),
                RestoreEvent::PaneExited(PaneId(3)),
                RestoreEvent::RecoveryRestored {
                    checkpoint: cp.checkpoint.clone()
                },
            ]
        );
        assert_eq!(
            prepared.mapping["panes"],
            json!([
                {"previous": "p2", "current": "p1"},
                {"previous": "p4", "current": "p2"},
                {"previous": "p9", "current": "p3"},
            ])
        );
        let w = &prepared.windows[0];
        assert_eq!((w.revision, w.cols, w.rows), (1, 41, 5));
        assert_eq!(w.floats, vec![PaneId(3)]);
        assert!(matches!(
            w.tree.as_ref().map(|t| t.entries()[0]),
            Some(Entry::Split {
                ratio: Some(3000),
                ..
            })
        ));
        let by_id = |id: u64| prepared.panes.iter().find(|p| p.id == PaneId(id)).unwrap();
        assert!(matches!(by_id(3).layer, Layer::Float { z, .. } if z == z0 + 1));
        assert_eq!(
            by_id(2).state,
            PaneState::Exited {
                exit_code: Some(2),
                signal: None
            }
        );
        let archive = |id: u64| {
            &prepared
                .archives
                .iter()
                .find(|a| a.0 == PaneId(id))
                .unwrap()
                .1
        };
        assert_eq!(
            archive(2).process_state,
            PreviousState::Interrupted,
            "previous_state wins"
        );
        assert_eq!(archive(1).process_state, PreviousState::Interrupted);
        assert_eq!(archive(1).previous_pane, "p2");
        assert!(prepared
            .panes
            .iter()
            .all(|p| p.principal.is_none() && p.argv0.is_none()));
        assert!(prepared
            .panes
            .iter()
            .all(|p| p.tags.get("owner").map(String::as_str) == Some("venomx")));
    }
}
