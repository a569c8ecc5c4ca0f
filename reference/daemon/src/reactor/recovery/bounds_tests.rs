//! Whatever the RFC's bounds allow round-trips: the deepest split tree (a chain, each
//! split holding the previous one's newest pane) and the widest (balanced) tree at
//! the 100 000 topology-item bound are captured, written, read back, restored into an
//! empty daemon and captured again, unchanged.

use crate::ids::{PaneId, SessionId, WindowId};
use crate::reactor::{test_state, State};
use crate::topology::tree::{Axis, Entry, Tree};
use crate::topology::{Layer, Pane, PaneState, Session, Window};
use std::collections::BTreeMap;
use vx_format::limits::MAX_TOPOLOGY_ITEMS;
use vx_format::{Checkpoint, Format, ReadContext, Shutdown, Timestamp};

/// Panes whose tree, with one session and one window, fills the item bound exactly
/// or one short of it (n panes make 2n - 1 nodes: n + 2n - 1 + 2 items).
const PANES: usize = (MAX_TOPOLOGY_ITEMS - 1) / 3;

fn split(axis: Axis) -> Entry {
    Entry::Split {
        axis,
        ratio: None,
        second: 0,
    }
}

/// `split, pane 0, split, pane 1, …, pane n-1`: every split's second child is the
/// next split, so the depth is n.
fn chain(n: usize) -> Vec<Entry> {
    let mut nodes = Vec::with_capacity(2 * n);
    for i in 0..n - 1 {
        nodes.push(split(if i % 2 == 0 { Axis::Cols } else { Axis::Rows }));
        nodes.push(Entry::Pane(PaneId(i as u64)));
    }
    nodes.push(Entry::Pane(PaneId(n as u64 - 1)));
    nodes
}

/// A balanced tree of panes `first..first + n` in preorder (an explicit stack).
fn balanced(n: usize) -> Vec<Entry> {
    let mut nodes = Vec::with_capacity(2 * n);
    let mut next = 0u64;
    let mut todo = vec![(n, 0usize)];
    while let Some((count, depth)) = todo.pop() {
        if count == 1 {
            nodes.push(Entry::Pane(PaneId(next)));
            next += 1;
        } else {
            nodes.push(split(if depth % 2 == 0 {
                Axis::Cols
            } else {
                Axis::Rows
            }));
            // First child is processed first: push it last.
            todo.push((count - count / 2, depth + 1));
            todo.push((count / 2, depth + 1));
        }
    }
    nodes
}

/// Renumbers `second` from the shape.
fn tree(nodes: Vec<Entry>) -> Tree {
    let mut ends = vec![0usize; nodes.len()];
    for i in (0..nodes.len()).rev() {
        ends[i] = match nodes[i] {
            Entry::Pane(_) => i + 1,
            Entry::Split { .. } => ends[ends[i + 1]],
        };
    }
    let nodes = nodes
        .iter()
        .enumerate()
        .map(|(i, e)| match *e {
            Entry::Split { axis, ratio, .. } => Entry::Split {
                axis,
                ratio,
                second: ends[i + 1],
            },
            pane => pane,
        })
        .collect();
    Tree::from_entries(nodes).expect("a preorder tree")
}

/// A daemon state holding one session and one window with `tree`, whose panes are
/// exited 1x1 panes (no process: the tree is what is measured).
fn state_with(tree: Tree) -> State {
    let mut state = test_state();
    state.config.recovery.enabled = true;
    let session = SessionId(0);
    let window = WindowId(0);
    let panes: BTreeMap<PaneId, Pane> = tree
        .panes()
        .map(|id| {
            let pane = Pane {
                id,
                window,
                session,
                cols: 1,
                rows: 1,
                layer: Layer::Tiled,
                state: PaneState::Exited {
                    exit_code: Some(0),
                    signal: None,
                },
                argv0: None,
                tags: Default::default(),
                principal: None,
            };
            (id, pane)
        })
        .collect();
    let count = panes.len() as u64;
    for _ in 0..count {
        state.topology.allocate_pane();
    }
    state.topology.allocate_session();
    state.topology.allocate_window();
    state.topology.insert_restored(
        BTreeMap::from([(
            session,
            Session {
                id: session,
                name: "s".into(),
            },
        )]),
        BTreeMap::from([(
            window,
            Window {
                id: window,
                session,
                name: "w".into(),
                revision: 1,
                cols: 65535,
                rows: 65535,
                tree: Some(tree),
                floats: Vec::new(),
            },
        )]),
        panes,
    );
    state
}

fn published(mut cp: Checkpoint) -> Vec<u8> {
    cp.checkpoint = "c01234567-89ab-4cde-8fab-0123456789ab".into();
    cp.generation = 1;
    cp.socket = "/run/test.sock".into();
    vx_format::write(&cp, Format::CURRENT).expect("the writer accepts the capture")
}

fn round_trip(nodes: Vec<Entry>, depth: usize) {
    let tree = tree(nodes);
    assert_eq!(tree.depth(), depth);
    let live = state_with(tree);
    let at = Timestamp(1_800_000_000_000);
    let before = live.capture(at, Shutdown::Open);
    let items = before.sessions.len()
        + before.windows.len()
        + before.panes.len()
        + before.windows.iter().map(|w| w.nodes.len()).sum::<usize>();
    assert!(
        items <= MAX_TOPOLOGY_ITEMS && items + 3 > MAX_TOPOLOGY_ITEMS,
        "{items}"
    );
    let bytes = published(before.clone());
    let ctx = ReadContext {
        max_bytes: vx_format::limits::HARD_MAX_CHECKPOINT_BYTES,
        ..ReadContext::default()
    };
    let decoded = vx_format::read(&bytes, &ctx).expect("the reader accepts the file");
    let mut restored = test_state();
    restored.config.recovery.enabled = true;
    let loaded = vx_store::Loaded {
        format: decoded.format,
        checkpoint: decoded.checkpoint,
    };
    restored
        .restore_loaded(loaded, crate::auth::OWNER)
        .expect("restore accepts every valid file");
    let after = restored.capture(at, Shutdown::Open);
    assert_eq!(after.windows[0].nodes, before.windows[0].nodes);
    assert_eq!(after.panes.len(), before.panes.len());
    assert_eq!(
        restored.topology.windows[&WindowId(0)]
            .tree
            .as_ref()
            .map(Tree::depth),
        Some(depth)
    );
}

#[test]
fn the_deepest_tree_the_bounds_allow_checkpoints_and_restores() {
    round_trip(chain(PANES), PANES);
}

#[test]
fn the_largest_balanced_tree_the_bounds_allow_checkpoints_and_restores() {
    let depth = (PANES as f64).log2().ceil() as usize + 1;
    round_trip(balanced(PANES), depth);
}
