//! The resource tree: sessions hold windows, windows hold a split tree of tiled panes
//! and a float layer. Pure data: no processes, no I/O; the reactor owns one
//! [`Topology`] and is the only code that mutates it.

pub mod float;
pub mod json;
pub mod tags;
pub mod tree;
pub mod validate;

use crate::auth::Resource;
use crate::ids::{Counter, PaneId, SessionId, WindowId};
use float::{FloatSpec, Geometry};
use std::collections::BTreeMap;
use tree::{Axis, Tree};

#[derive(Debug, Clone)]
pub struct Session {
    pub id: SessionId,
    pub name: String,
}

#[derive(Debug, Clone)]
pub struct Window {
    pub id: WindowId,
    pub session: SessionId,
    pub name: String,
    /// Starts at 1; increments whenever `nodes` or the tiled area changes.
    pub revision: u64,
    pub cols: u16,
    pub rows: u16,
    pub tree: Option<Tree>,
    /// Float panes, lowest z first.
    pub floats: Vec<PaneId>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Layer {
    Tiled,
    Float {
        /// Boxed: inline, the spec (~130 bytes, four optional strings) made every
        /// pane record, tiled or not, that much larger (issue 14).
        spec: Box<FloatSpec>,
        z: u64,
        geometry: Geometry,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaneState {
    Running,
    Exited {
        exit_code: Option<i32>,
        signal: Option<String>,
    },
}

#[derive(Debug, Clone)]
pub struct Pane {
    pub id: PaneId,
    pub window: WindowId,
    pub session: SessionId,
    pub cols: u16,
    pub rows: u16,
    pub layer: Layer,
    pub state: PaneState,
    /// Basename of argv[0], at most 255 bytes (RFC history note 2026-11-10).
    pub argv0: Option<String>,
    pub tags: tags::Tags,
    /// The principal whose token the child holds.
    pub principal: Option<String>,
}

#[derive(Debug, Default)]
pub struct Topology {
    pub sessions: BTreeMap<SessionId, Session>,
    pub windows: BTreeMap<WindowId, Window>,
    pub panes: BTreeMap<PaneId, Pane>,
    session_ids: Counter,
    window_ids: Counter,
    pane_ids: Counter,
    z_counter: u64,
}

/// Sizes that changed in a relayout: the PTYs to resize.
pub type Resized = Vec<(PaneId, u16, u16)>;

impl Topology {
    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty() && self.windows.is_empty() && self.panes.is_empty()
    }

    pub fn create_session(&mut self, name: String) -> Option<SessionId> {
        let id = SessionId(self.session_ids.take()?);
        self.sessions.insert(id, Session { id, name });
        Some(id)
    }

    pub fn create_window(
        &mut self,
        session: SessionId,
        name: String,
        cols: u16,
        rows: u16,
    ) -> Option<WindowId> {
        let id = WindowId(self.window_ids.take()?);
        self.windows.insert(
            id,
            Window {
                id,
                session,
                name,
                revision: 1,
                cols,
                rows,
                tree: None,
                floats: Vec::new(),
            },
        );
        Some(id)
    }

    /// Consumes a pane number; it stays consumed even if the spawn then fails.
    pub fn allocate_pane(&mut self) -> Option<PaneId> {
        self.pane_ids.take().map(PaneId)
    }

    /// Restore (RFC §5): consumes a session number without creating the session.
    pub fn allocate_session(&mut self) -> Option<SessionId> {
        self.session_ids.take().map(SessionId)
    }

    /// Restore: consumes a window number without creating the window.
    pub fn allocate_window(&mut self) -> Option<WindowId> {
        self.window_ids.take().map(WindowId)
    }

    /// Restore's commit: inserts prepared records as they are (no relayout: restored
    /// panes keep their saved sizes). Into an empty tree (restore's precondition),
    /// `append` swaps the prepared maps in: they were bulk-built from sorted ids, so
    /// their nodes are full, where inserting one by one leaves them ~60 % full and
    /// holds the prepared records and the tree at once (issue 14).
    pub fn insert_restored(
        &mut self,
        mut sessions: BTreeMap<SessionId, Session>,
        mut windows: BTreeMap<WindowId, Window>,
        mut panes: BTreeMap<PaneId, Pane>,
    ) {
        self.sessions.append(&mut sessions);
        self.windows.append(&mut windows);
        self.panes.append(&mut panes);
    }

    /// Relaunch (RFC §6): replaces pane `old` with the record `new` in the same place
    /// (its tree leaf, or its float slot keeping spec and z). A tiled replacement
    /// increments the window revision; a float one does not. Returns the old record.
    pub fn replace_pane(&mut self, old: PaneId, new: Pane) -> Option<Pane> {
        let removed = self.panes.remove(&old)?;
        let new_id = new.id;
        if let Some(w) = self.windows.get_mut(&removed.window) {
            match &removed.layer {
                Layer::Tiled => {
                    if let Some(tree) = w.tree.as_mut() {
                        tree.replace_leaf(old, new_id);
                    }
                    w.revision += 1;
                }
                Layer::Float { .. } => {
                    for f in &mut w.floats {
                        if *f == old {
                            *f = new_id;
                        }
                    }
                }
            }
        }
        self.panes.insert(new_id, new);
        Some(removed)
    }

    pub fn next_z(&mut self) -> u64 {
        self.z_counter += 1;
        self.z_counter
    }

    pub fn windows_of(&self, session: SessionId) -> impl Iterator<Item = &Window> {
        self.windows.values().filter(move |w| w.session == session)
    }

    pub fn panes_of(&self, window: WindowId) -> impl Iterator<Item = &Pane> {
        self.panes.values().filter(move |p| p.window == window)
    }

    /// Containers of a resource, innermost first; empty when it does not exist.
    pub fn ancestry(&self, resource: Resource) -> Vec<Resource> {
        match resource {
            Resource::Server => Vec::new(),
            Resource::Session(_) => Vec::new(),
            Resource::Window(w) => self
                .windows
                .get(&w)
                .map(|w| vec![Resource::Session(w.session)])
                .unwrap_or_default(),
            Resource::Pane(p) => self
                .panes
                .get(&p)
                .map(|p| vec![Resource::Window(p.window), Resource::Session(p.session)])
                .unwrap_or_default(),
        }
    }

    /// Lays the window's tiled panes out again; returns the panes whose size changed.
    pub fn relayout(&mut self, window: WindowId) -> Resized {
        let Some(w) = self.windows.get(&window) else {
            return Vec::new();
        };
        let mut sizes = Vec::new();
        if let Some(tree) = &w.tree {
            tree.layout(w.cols, w.rows, &mut sizes);
        }
        let mut changed = Vec::new();
        for (id, cols, rows) in sizes {
            if let Some(p) = self.panes.get_mut(&id) {
                if (p.cols, p.rows) != (cols, rows) {
                    p.cols = cols;
                    p.rows = rows;
                    changed.push((id, cols, rows));
                }
            }
        }
        changed
    }

    /// Inserts a new pane record as the root of an empty window's tree.
    pub fn insert_root(&mut self, mut pane: Pane) -> Resized {
        let window = pane.window;
        pane.layer = Layer::Tiled;
        let id = pane.id;
        self.panes.insert(id, pane);
        if let Some(w) = self.windows.get_mut(&window) {
            w.tree = Some(Tree::leaf(id));
            w.revision += 1;
        }
        self.relayout(window)
    }

    /// Inserts a new tiled pane by splitting `target`.
    pub fn insert_split(
        &mut self,
        target: PaneId,
        pane: Pane,
        axis: Axis,
        ratio: Option<u16>,
        before: bool,
    ) -> Resized {
        let window = pane.window;
        let id = pane.id;
        self.panes.insert(id, pane);
        if let Some(w) = self.windows.get_mut(&window) {
            if let Some(tree) = w.tree.as_mut() {
                tree.split_leaf(target, id, axis, ratio, before);
            }
            w.revision += 1;
        }
        self.relayout(window)
    }

    pub fn insert_float(&mut self, pane: Pane) {
        let window = pane.window;
        let id = pane.id;
        self.panes.insert(id, pane);
        if let Some(w) = self.windows.get_mut(&window) {
            w.floats.push(id);
        }
    }

    /// Takes a pane out of its window (tree or float layer) without dropping its record.
    fn detach(&mut self, pane: PaneId) -> Resized {
        let Some(p) = self.panes.get(&pane) else {
            return Vec::new();
        };
        let window = p.window;
        let tiled = p.layer == Layer::Tiled;
        let Some(w) = self.windows.get_mut(&window) else {
            return Vec::new();
        };
        if tiled {
            w.tree = w.tree.take().and_then(|t| t.remove_leaf(pane));
            w.revision += 1;
            self.relayout(window)
        } else {
            w.floats.retain(|f| *f != pane);
            Vec::new()
        }
    }

    /// Removes a pane; returns its record and the panes resized by the relayout.
    pub fn remove_pane(&mut self, pane: PaneId) -> Option<(Pane, Resized)> {
        let resized = self.detach(pane);
        self.panes.remove(&pane).map(|p| (p, resized))
    }

    /// Removes a window and its panes; returns the removed pane IDs.
    pub fn remove_window(&mut self, window: WindowId) -> Vec<PaneId> {
        let panes: Vec<PaneId> = self.panes_of(window).map(|p| p.id).collect();
        for p in &panes {
            self.panes.remove(p);
        }
        self.windows.remove(&window);
        panes
    }

    pub fn remove_session(&mut self, session: SessionId) -> Vec<PaneId> {
        let windows: Vec<WindowId> = self.windows_of(session).map(|w| w.id).collect();
        let mut panes = Vec::new();
        for w in windows {
            panes.extend(self.remove_window(w));
        }
        self.sessions.remove(&session);
        panes
    }

    /// Moves tiled `pane` to split `target` (or into empty `window` when target is None).
    pub fn place(
        &mut self,
        pane: PaneId,
        target: Option<PaneId>,
        window: WindowId,
        axis: Axis,
        ratio: Option<u16>,
        before: bool,
    ) -> Resized {
        let mut resized = self.detach(pane);
        let session = self.windows.get(&window).map(|w| w.session);
        if let (Some(p), Some(session)) = (self.panes.get_mut(&pane), session) {
            p.window = window;
            p.session = session;
        }
        if let Some(w) = self.windows.get_mut(&window) {
            match (target, w.tree.as_mut()) {
                (Some(t), Some(tree)) => {
                    tree.split_leaf(t, pane, axis, ratio, before);
                }
                _ => w.tree = Some(Tree::leaf(pane)),
            }
            w.revision += 1;
        }
        resized.extend(self.relayout(window));
        resized
    }
}
