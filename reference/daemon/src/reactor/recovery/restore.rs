//! Restore (RFC §5, §8): the worker loaded and validated the file; here, in one reactor
//! turn, the checks are repeated, every resource, ID and event is prepared with
//! nothing visible (ids, then windows, then panes, then events), and all of it is
//! committed with no fallible step.

use super::archive::{Archive, ArchiveText};
use super::durable::{build_tree, from_format_spec, from_pane_state};
use super::id_map::Ids;
use crate::auth::{Resource, Right};
use crate::emulator::Emulator;
use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::{PaneId, SessionId, WindowId};
use crate::reactor::{Caller, State};
use crate::stream::Encoded;
use crate::topology::float;
use crate::topology::{Layer, Pane, Session, Window};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use vx_format as fmt;
use vx_format::{Checkpoint, PreviousState, Text};

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
        checkpoint: Box<str>,
    },
}

/// The prepared panes of a restore, with what each needs besides its record, built
/// as the maps the commit swaps in (the tree is empty): built as vectors and moved
/// into the maps, both were alive at once at the commit (issue 14).
struct PreparedPanes {
    panes: BTreeMap<PaneId, Pane>,
    screens: HashMap<PaneId, Arc<Mutex<Emulator>>>,
    archives: HashMap<PaneId, Archive>,
}

/// A prepared restore: every resource built and every ID allocated, nothing visible.
struct Prepared {
    sessions: BTreeMap<SessionId, Session>,
    windows: BTreeMap<WindowId, Window>,
    panes: PreparedPanes,
    mapping: Encoded,
    /// RFC §8's events in commit order, published at the commit boundary
    /// (`reactor/events.rs`). Their data is rendered from the committed state in the
    /// same turn, so the records hold only IDs.
    events: Vec<RestoreEvent>,
}

impl State {
    /// Restore's checks that need no disk (the id was checked when the verb was
    /// parsed): enabled, empty tree.
    pub(super) fn restore_allowed(&self) -> ApiResult<()> {
        if !self.config.recovery.enabled {
            return Err(ApiError::code(ErrorCode::RecoveryDisabled));
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
    pub(in crate::reactor) fn restore_loaded(
        &mut self,
        loaded: vx_store::Loaded,
        principal: &str,
    ) -> ApiResult<Encoded> {
        let Some(principal) = self.registry.get(principal).cloned() else {
            return Err(ApiError::code(ErrorCode::DeniedToken));
        };
        let caller = Caller::internal(principal);
        self.require(&caller, Right::Admin, Resource::Server)?;
        if self.stopping {
            return Err(ApiError::shutdown());
        }
        self.restore_allowed()?;
        let prepared = self.prepare_restore(&caller, &loaded.checkpoint)?;
        // The decoded model is not needed past preparation: freeing it before the
        // commit keeps it out of the peak beside the committed state, and its pages,
        // freed in the worker's arena, are handed back rather than kept resident.
        drop(loaded);
        super::worker::release_freed_memory();
        Ok(self.commit_restore(prepared))
    }

    fn prepare_restore(&mut self, caller: &Caller, cp: &Checkpoint) -> ApiResult<Prepared> {
        let ids = self.restore_ids(cp)?;
        let sessions: BTreeMap<SessionId, Session> = cp
            .sessions
            .iter()
            .map(|s| {
                let id = ids.session(s.id);
                let name = s.name.clone();
                (id, Session { id, name })
            })
            .collect();
        let mut windows = self.restore_windows(cp, &ids)?;
        let panes = self.restore_panes(caller, cp, &ids, &windows);
        let mut floats = float_order(panes.panes.values());
        for w in windows.values_mut() {
            w.floats = floats.remove(&w.id).unwrap_or_default();
        }
        let events = restore_events(&sessions, &windows, &panes.panes, &cp.checkpoint);
        Ok(Prepared {
            sessions,
            windows,
            mapping: ids.mapping(&cp.checkpoint),
            panes,
            events,
        })
    }

    /// Phase: ids, in numeric source order; consumed even if a later step fails.
    fn restore_ids(&mut self, cp: &Checkpoint) -> ApiResult<Ids> {
        let exhausted = || ApiError::code(ErrorCode::Ids);
        // Collected, not inserted one by one: a map built from the pairs has full
        // nodes (allocation order is source order, so later pairs win as inserts did).
        let topology = &mut self.topology;
        let sessions = cp
            .sessions
            .iter()
            .map(|s| Ok((s.id, topology.allocate_session().ok_or_else(exhausted)?)))
            .collect::<ApiResult<Vec<_>>>()?;
        let windows = cp
            .windows
            .iter()
            .map(|w| Ok((w.id, topology.allocate_window().ok_or_else(exhausted)?)))
            .collect::<ApiResult<Vec<_>>>()?;
        let panes = cp
            .panes
            .iter()
            .map(|p| Ok((p.id, topology.allocate_pane().ok_or_else(exhausted)?)))
            .collect::<ApiResult<Vec<_>>>()?;
        Ok(Ids {
            sessions: sessions.into_iter().collect(),
            windows: windows.into_iter().collect(),
            panes: panes.into_iter().collect(),
        })
    }

    /// Phase: windows, revision 1, sized to hold their saved pane sizes (floats are
    /// filled in after the panes).
    fn restore_windows(&self, cp: &Checkpoint, ids: &Ids) -> ApiResult<BTreeMap<WindowId, Window>> {
        let sizes: HashMap<PaneId, (u32, u32)> = cp
            .panes
            .iter()
            .map(|p| (ids.pane(p.id), (u32::from(p.cols), u32::from(p.rows))))
            .collect();
        let defaults = (
            self.config.panes.default_cols,
            self.config.panes.default_rows,
        );
        let mut windows = Vec::with_capacity(cp.windows.len());
        for w in &cp.windows {
            let tree = if w.nodes.is_empty() {
                None
            } else {
                Some(
                    build_tree(&w.nodes, &ids.panes)
                        .ok_or_else(|| ApiError::code(ErrorCode::CheckpointCorrupt))?,
                )
            };
            let (cols, rows) = tree.as_ref().map_or(defaults, |t| {
                let (c, r) = t.area_holding(|p| sizes.get(&p).copied().unwrap_or((1, 1)));
                (c.clamp(1, 65535) as u16, r.clamp(1, 65535) as u16)
            });
            let id = ids.window(w.id);
            windows.push((
                id,
                Window {
                    id,
                    session: ids.session(w.session),
                    name: w.name.clone(),
                    revision: 1,
                    cols,
                    rows,
                    tree,
                    floats: Vec::new(),
                },
            ));
        }
        Ok(windows.into_iter().collect())
    }

    /// Phase: panes, as exited archives with their screens and RFC §5 metadata.
    fn restore_panes(
        &mut self,
        caller: &Caller,
        cp: &Checkpoint,
        ids: &Ids,
        windows: &BTreeMap<WindowId, Window>,
    ) -> PreparedPanes {
        let defaults = (
            self.config.panes.default_cols,
            self.config.panes.default_rows,
        );
        let areas: HashMap<WindowId, (u16, u16)> =
            windows.values().map(|w| (w.id, (w.cols, w.rows))).collect();
        // Floats: fresh z above the counter in saved order (z, then source pane id).
        let mut floats: Vec<(u64, u64)> = cp
            .panes
            .iter()
            .filter_map(|p| p.float.as_ref().map(|f| (f.z, p.id)))
            .collect();
        floats.sort_unstable();
        let fresh_z: HashMap<u64, u64> = floats
            .iter()
            .map(|(_, source)| (*source, self.topology.next_z()))
            .collect();
        let history_rows = self.config.panes.history_rows as usize;
        let checkpoint: Arc<str> = cp.checkpoint.as_str().into();
        let n = cp.panes.len();
        let mut panes = Vec::with_capacity(n);
        let mut out = PreparedPanes {
            panes: BTreeMap::new(),
            screens: HashMap::with_capacity(n),
            archives: HashMap::with_capacity(n),
        };
        for p in &cp.panes {
            let id = ids.pane(p.id);
            let window = ids.window(p.window);
            let (state, known) = from_pane_state(&p.state);
            let process_state = p.previous_state.unwrap_or(if known {
                PreviousState::Exited
            } else {
                PreviousState::Interrupted
            });
            let unknown_preset = p
                .float
                .as_ref()
                .and_then(|f| f.preset.as_ref())
                .is_some_and(|name| !self.config.floats.presets.contains_key(name));
            let (mut cols, mut rows) = (p.cols, p.rows);
            let layer = match &p.float {
                None => Layer::Tiled,
                Some(f) => {
                    let spec = from_format_spec(f);
                    let area = areas.get(&window).copied().unwrap_or(defaults);
                    let merged = crate::reactor::panes::merged_spec(&self.config, &spec);
                    let geometry = float::resolve(&merged, area.0, area.1);
                    (cols, rows) = (geometry.cols, geometry.rows);
                    Layer::Float {
                        spec: Box::new(spec),
                        z: fresh_z.get(&p.id).copied().unwrap_or(0),
                        geometry,
                    }
                }
            };
            let mut tags: crate::topology::tags::Tags = p
                .tags
                .iter()
                .map(|t| (t.key.clone(), t.value.clone()))
                .collect();
            if !tags.contains_key("owner") && tags.len() < vx_format::limits::MAX_TAGS {
                tags.insert("owner".into(), caller.principal.namespace.clone());
            }
            let (text, emulator, cut_rows) = hydrate(p, cols, rows, history_rows);
            out.archives.insert(
                id,
                Archive {
                    checkpoint: Arc::clone(&checkpoint),
                    previous_pane: format!("p{}", p.id),
                    process_state,
                    text,
                    cut_rows,
                    unknown_preset,
                },
            );
            out.screens.insert(id, Arc::new(Mutex::new(emulator)));
            panes.push((
                id,
                Pane {
                    id,
                    window,
                    session: ids.session(p.session),
                    cols,
                    rows,
                    layer,
                    state,
                    argv0: None,
                    tags,
                    principal: None,
                },
            ));
        }
        // Ids grow in source order, so the pairs are sorted: a bulk build.
        out.panes = panes.into_iter().collect();
        out
    }

    /// Commit: nothing here can fail.
    fn commit_restore(&mut self, prepared: Prepared) -> Encoded {
        let Prepared {
            sessions,
            windows,
            panes,
            mapping,
            events,
        } = prepared;
        self.topology
            .insert_restored(sessions, windows, panes.panes);
        // The daemon is empty, so these are normally empty too: then the prepared
        // maps are swapped in rather than rehashed into them.
        swap_or_extend(&mut self.screens, panes.screens);
        swap_or_extend(&mut self.recovery.archives, panes.archives);
        self.recovery.restores += 1;
        self.note_mutation();
        self.publish_restore(events);
        mapping
    }
}

fn swap_or_extend<V>(into: &mut HashMap<PaneId, V>, from: HashMap<PaneId, V>) {
    if into.is_empty() {
        *into = from;
    } else {
        into.extend(from);
    }
}

/// Literal hydration at the saved size, then fitted to the pane's size.
fn hydrate(
    p: &fmt::Pane,
    cols: u16,
    rows: u16,
    history_rows: usize,
) -> (ArchiveText, Emulator, u64) {
    let plain = |t: &fmt::PlainText| {
        let (mut e, cut) = Emulator::literal(p.cols, p.rows, history_rows, &t.screen, &t.history);
        e.resize(cols, rows);
        let text = ArchiveText::Plain {
            saved_at: t.saved_at,
            expires_at: t.expires_at,
        };
        (text, e, cut)
    };
    match &p.text {
        Text::Plain(t) => plain(t),
        // The reader never gives this form; it is the same text.
        Text::Encoded(t) => plain(&t.to_plain()),
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
    }
}

/// Each window's float panes, lowest z first, in one pass over the panes (per window
/// it was a pass over all of them: 1010 × 33 330 at the bench's scale).
fn float_order<'a>(panes: impl Iterator<Item = &'a Pane>) -> HashMap<WindowId, Vec<PaneId>> {
    let mut fl: Vec<(WindowId, u64, PaneId)> = panes
        .filter_map(|p| match &p.layer {
            Layer::Float { z, .. } => Some((p.window, *z, p.id)),
            Layer::Tiled => None,
        })
        .collect();
    fl.sort_unstable();
    let mut out: HashMap<WindowId, Vec<PaneId>> = HashMap::new();
    for (window, _, id) in fl {
        out.entry(window).or_default().push(id);
    }
    out
}

/// Phase: events, in RFC §8's commit order.
/// The maps are keyed by fresh id, allocated in source order: the same order.
fn restore_events(
    sessions: &BTreeMap<SessionId, Session>,
    windows: &BTreeMap<WindowId, Window>,
    panes: &BTreeMap<PaneId, Pane>,
    checkpoint: &str,
) -> Vec<RestoreEvent> {
    let mut events = Vec::with_capacity(sessions.len() + windows.len() + 2 * panes.len() + 1);
    events.extend(sessions.keys().map(|s| RestoreEvent::SessionCreated(*s)));
    events.extend(windows.keys().map(|w| RestoreEvent::WindowCreated(*w)));
    events.extend(panes.keys().map(|p| RestoreEvent::PaneCreated(*p)));
    events.extend(panes.keys().map(|p| RestoreEvent::PaneExited(*p)));
    events.push(RestoreEvent::RecoveryRestored {
        checkpoint: checkpoint.into(),
    });
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::tree::Entry;
    use crate::topology::PaneState;
    use serde_json::{json, Value};
    use vx_format::{Shutdown, Timestamp};

    fn owner(state: &State) -> Caller {
        Caller::internal(state.registry.get(crate::auth::OWNER).cloned().unwrap())
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
        let mut state = crate::reactor::test_state();
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
                    checkpoint: cp.checkpoint.as_str().into()
                },
            ]
        );
        assert_eq!(
            serde_json::from_slice::<Value>(prepared.mapping.as_bytes()).unwrap()["panes"],
            json!([
                {"previous": "p2", "current": "p1"},
                {"previous": "p4", "current": "p2"},
                {"previous": "p9", "current": "p3"},
            ])
        );
        let w = &prepared.windows[&WindowId(0)];
        assert_eq!((w.revision, w.cols, w.rows), (1, 41, 5));
        assert_eq!(w.floats, vec![PaneId(3)]);
        assert!(matches!(
            w.tree.as_ref().map(|t| t.entries()[0]),
            Some(Entry::Split {
                ratio: Some(3000),
                ..
            })
        ));
        let by_id = |id: u64| &prepared.panes.panes[&PaneId(id)];
        assert!(matches!(by_id(3).layer, Layer::Float { z, .. } if z == z0 + 1));
        assert_eq!(
            by_id(2).state,
            PaneState::Exited {
                exit_code: Some(2),
                signal: None
            }
        );
        let archive = |id: u64| &prepared.panes.archives[&PaneId(id)];
        assert_eq!(
            archive(2).process_state,
            PreviousState::Interrupted,
            "previous_state wins"
        );
        assert_eq!(archive(1).process_state, PreviousState::Interrupted);
        assert_eq!(archive(1).previous_pane, "p2");
        assert!(prepared
            .panes
            .panes
            .values()
            .all(|p| p.principal.is_none() && p.argv0.is_none()));
        assert!(prepared
            .panes
            .panes
            .values()
            .all(|p| p.tags.get("owner").map(String::as_str) == Some("venomx")));
    }
}
