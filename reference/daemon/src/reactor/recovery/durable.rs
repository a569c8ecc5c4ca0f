//! The durable model (vx-format) and the live one, both directions side by side:
//! capture encodes with the `to_*` half, restore decodes with the `from_*` half, and
//! each pair is tested to round-trip. Only what the model has a field for crosses.

use crate::ids::PaneId;
use crate::topology::float::{FloatSpec, Length};
use crate::topology::tree::{Axis, Entry, Tree};
use crate::topology::PaneState;
use std::collections::BTreeMap;
use vx_format as fmt;

fn to_axis(axis: Axis) -> fmt::Axis {
    match axis {
        Axis::Cols => fmt::Axis::Cols,
        Axis::Rows => fmt::Axis::Rows,
    }
}

fn from_axis(axis: fmt::Axis) -> Axis {
    match axis {
        fmt::Axis::Cols => Axis::Cols,
        fmt::Axis::Rows => Axis::Rows,
    }
}

pub(super) fn to_format_spec(spec: &FloatSpec, z: u64) -> fmt::FloatSpec {
    let extent = |l: Length| match l {
        Length::Cells(n) => fmt::Extent::Cells(n),
        Length::Percent(p) => fmt::Extent::Percent(p),
    };
    fmt::FloatSpec {
        preset: spec.preset.clone(),
        width: spec.width.map(extent),
        height: spec.height.map(extent),
        anchor: spec.anchor.as_deref().and_then(fmt::Anchor::parse),
        x: spec.x.and_then(|x| i16::try_from(x).ok()),
        y: spec.y.and_then(|y| i16::try_from(y).ok()),
        min_cols: spec.min_cols,
        min_rows: spec.min_rows,
        border: spec.border.as_deref().and_then(fmt::Border::parse),
        title: spec.title.clone(),
        z,
    }
}

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

/// Preorder nodes of a live tree, as the durable model holds them.
#[cfg(test)]
pub(super) fn tree_nodes(tree: &Tree) -> Vec<fmt::Node> {
    let mut nodes = Vec::new();
    tree_nodes_into(tree, &mut nodes);
    nodes
}

/// [`tree_nodes`] into `nodes` (cleared first; its allocation is reused).
pub(super) fn tree_nodes_into(tree: &Tree, nodes: &mut Vec<fmt::Node>) {
    nodes.clear();
    nodes.extend(tree.entries().iter().enumerate().map(|(i, e)| match *e {
        Entry::Pane(p) => fmt::Node::Pane { pane: p.0 },
        Entry::Split {
            axis,
            ratio,
            second,
        } => fmt::Node::Split {
            axis: to_axis(axis),
            first: i + 1,
            second,
            ratio,
        },
    }));
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
                axis: from_axis(axis),
                ratio,
                second,
            }),
        })
        .collect::<Option<Vec<_>>>()?;
    Tree::from_entries(entries)
}

/// A live pane's lifecycle as the model holds it: an exit code the model cannot hold
/// (outside 0–255) falls back to the signal, else to an unknown exit.
pub(super) fn to_pane_state(state: &PaneState) -> fmt::PaneState {
    match state {
        PaneState::Running => fmt::PaneState::Running,
        PaneState::Exited { exit_code, signal } => fmt::PaneState::Exited {
            exit: exit_code
                .and_then(|c| u8::try_from(c).ok())
                .map(fmt::Exit::Code)
                .or_else(|| signal.clone().map(fmt::Exit::Signal)),
        },
    }
}

/// A restored pane's lifecycle: it is always exited (no process is started); `known`
/// says whether the file recorded an exit (else it was running: interrupted).
pub(super) fn from_pane_state(state: &fmt::PaneState) -> (PaneState, bool) {
    let (exit_code, signal, known) = match state {
        fmt::PaneState::Running => (None, None, false),
        fmt::PaneState::Exited { exit } => match exit {
            Some(fmt::Exit::Code(c)) => (Some(i32::from(*c)), None, true),
            Some(fmt::Exit::Signal(s)) => (None, Some(s.clone()), true),
            None => (None, None, true),
        },
    };
    (PaneState::Exited { exit_code, signal }, known)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn tree_nodes_round_trip_through_build_tree() {
        let mut tree = Tree::leaf(PaneId(0));
        tree.split_leaf(PaneId(0), PaneId(1), Axis::Cols, Some(6250), false);
        tree.split_leaf(PaneId(1), PaneId(2), Axis::Rows, None, false);
        let nodes = tree_nodes(&tree);
        assert_eq!(
            nodes[0],
            fmt::Node::Split {
                axis: fmt::Axis::Cols,
                first: 1,
                second: 2,
                ratio: Some(6250)
            }
        );
        assert_eq!(tree.depth(), 3);
        let ids: BTreeMap<u64, PaneId> = (0..3).map(|n| (n, PaneId(n + 10))).collect();
        let mut rebuilt = build_tree(&nodes, &ids).unwrap();
        for n in 0..3 {
            rebuilt.replace_leaf(PaneId(n + 10), PaneId(n));
        }
        assert_eq!(rebuilt, tree);
        let sizes: HashMap<PaneId, (u16, u16)> = [
            (PaneId(0), (50, 24)),
            (PaneId(1), (29, 12)),
            (PaneId(2), (29, 11)),
        ]
        .into();
        let size = |p| {
            sizes
                .get(&p)
                .map_or((1, 1), |(c, r)| (u32::from(*c), u32::from(*r)))
        };
        assert_eq!(tree.area_holding(size), (80, 24));
    }

    #[test]
    fn float_specs_convert_both_ways() {
        let spec = FloatSpec {
            preset: Some("venom.settings".into()),
            width: Some(Length::Percent(60)),
            height: Some(Length::Cells(12)),
            anchor: Some("bottom_right".into()),
            x: Some(-1),
            y: Some(4096),
            min_cols: Some(3),
            min_rows: None,
            border: Some("single".into()),
            title: Some("build log".into()),
        };
        let f = to_format_spec(&spec, 7);
        assert_eq!(f.z, 7);
        assert_eq!(from_format_spec(&f), spec);
    }

    #[test]
    fn pane_states_convert_both_ways() {
        for exit in [
            Some(fmt::Exit::Code(3)),
            Some(fmt::Exit::Signal("SIGKILL".into())),
            None,
        ] {
            let saved = fmt::PaneState::Exited { exit };
            let (live, known) = from_pane_state(&saved);
            assert!(known);
            assert_eq!(to_pane_state(&live), saved);
        }
        let (live, known) = from_pane_state(&fmt::PaneState::Running);
        assert!(!known, "a running pane restores as interrupted");
        assert_eq!(to_pane_state(&live), fmt::PaneState::Exited { exit: None });
    }
}
