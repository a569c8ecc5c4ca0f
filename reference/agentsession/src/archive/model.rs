//! The workspace archive's data, schema 1 and 2 alike (the schema is the writer's
//! choice: 2 exactly when a pane carries a record).

use crate::record::Record;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Archive {
    pub sessions: Vec<Session>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Session {
    pub name: String,
    /// Absent reads as `false`; the writer omits `false`.
    pub active: bool,
    /// Archived for display only: restore never runs or enters it.
    pub cwd: Option<String>,
    /// Archived for display only: restore never runs it (ADR-0068 point 7).
    pub command: Option<Vec<String>>,
    pub windows: Vec<Window>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Window {
    pub name: String,
    pub active: bool,
    pub layout: Option<Layout>,
    pub panes: Vec<Pane>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pane {
    pub active: bool,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub command: Option<Vec<String>>,
    pub agent_session: Option<Record>,
    pub cols: Option<u16>,
    pub rows: Option<u16>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitDir {
    Horizontal,
    Vertical,
}

impl SplitDir {
    pub fn as_str(self) -> &'static str {
        match self {
            SplitDir::Horizontal => "horizontal",
            SplitDir::Vertical => "vertical",
        }
    }
}

/// A window's split tree; leaves index the window's `panes`, each exactly once.
#[derive(Clone, Debug, PartialEq)]
pub enum Layout {
    Pane(usize),
    Split {
        dir: SplitDir,
        /// Strictly between 0 and 1: the left child's share.
        ratio: f64,
        left: Box<Layout>,
        right: Box<Layout>,
    },
}

impl Layout {
    /// The leaves' pane indexes, left to right.
    pub fn leaves(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(node) = stack.pop() {
            match node {
                Layout::Pane(i) => out.push(*i),
                Layout::Split { left, right, .. } => {
                    stack.push(right);
                    stack.push(left);
                }
            }
        }
        out
    }
}

/// A read archive and the schema it declared.
#[derive(Clone, Debug, PartialEq)]
pub struct Decoded {
    pub schema_version: u64,
    pub archive: Archive,
}

impl Archive {
    /// Whether any pane carries a record (the writer then emits schema 2).
    pub fn has_records(&self) -> bool {
        self.sessions
            .iter()
            .flat_map(|s| &s.windows)
            .flat_map(|w| &w.panes)
            .any(|p| p.agent_session.is_some())
    }
}

impl Session {
    /// `(window, pane)` of the pane restore plans against: the active window's
    /// active pane, else its first pane, else any window's active pane, else the
    /// first pane of the session.
    pub fn preferred_pane(&self) -> Option<(usize, usize)> {
        let in_active_window = self
            .windows
            .iter()
            .enumerate()
            .find(|(_, w)| w.active)
            .and_then(|(wi, w)| {
                let pi = w.panes.iter().position(|p| p.active);
                pi.or((!w.panes.is_empty()).then_some(0)).map(|pi| (wi, pi))
            });
        in_active_window
            .or_else(|| {
                self.windows
                    .iter()
                    .enumerate()
                    .find_map(|(wi, w)| w.panes.iter().position(|p| p.active).map(|pi| (wi, pi)))
            })
            .or_else(|| {
                self.windows
                    .iter()
                    .enumerate()
                    .find_map(|(wi, w)| (!w.panes.is_empty()).then_some((wi, 0)))
            })
    }
}
