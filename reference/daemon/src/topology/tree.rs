//! A window's split tree: leaves are tiled panes, splits divide an area along `cols`
//! (side by side) or `rows` (stacked). On the wire it is a preorder node array
//! (RFC §4): `{"kind":"split","axis","first","second","ratio"?}` /
//! `{"kind":"pane","pane"}`, where a split at index i has `first == i + 1`.
//!
//! Layout: a split of `n` cells gives its first child `floor(n * ratio / 10000)` cells
//! (ratio 5000 when absent), one separator cell, and the rest to the second child;
//! each side keeps at least one cell.

use crate::ids::PaneId;
use serde_json::{json, Value};

/// Ratio value meaning an equal split.
pub const EQUAL_RATIO: u16 = 5000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    Cols,
    Rows,
}

impl Axis {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "cols" => Some(Axis::Cols),
            "rows" => Some(Axis::Rows),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Axis::Cols => "cols",
            Axis::Rows => "rows",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Pane(PaneId),
    Split {
        axis: Axis,
        /// 1-9999; `None` is an equal split.
        ratio: Option<u16>,
        first: Box<Node>,
        second: Box<Node>,
    },
}

/// Sizes of the two sides of a split of `total` cells.
pub fn split_sizes(total: u16, ratio: Option<u16>) -> (u16, u16) {
    let ratio = u32::from(ratio.unwrap_or(EQUAL_RATIO));
    let total32 = u32::from(total);
    let first = (total32 * ratio / 10000).clamp(1, total32.saturating_sub(2).max(1));
    let second = total32.saturating_sub(first + 1).max(1);
    (first as u16, second as u16)
}

/// The smallest ratio that gives the first side exactly `first` of `total` cells.
pub fn ratio_for(first: u16, total: u16) -> u16 {
    if total == 0 {
        return EQUAL_RATIO;
    }
    let r = (u32::from(first) * 10000).div_ceil(u32::from(total));
    r.clamp(1, 9999) as u16
}

impl Node {
    pub fn contains(&self, pane: PaneId) -> bool {
        match self {
            Node::Pane(p) => *p == pane,
            Node::Split { first, second, .. } => first.contains(pane) || second.contains(pane),
        }
    }

    pub fn panes(&self, out: &mut Vec<PaneId>) {
        match self {
            Node::Pane(p) => out.push(*p),
            Node::Split { first, second, .. } => {
                first.panes(out);
                second.panes(out);
            }
        }
    }

    fn size(&self) -> usize {
        match self {
            Node::Pane(_) => 1,
            Node::Split { first, second, .. } => 1 + first.size() + second.size(),
        }
    }

    /// Replaces the leaf `target` with a split of it and `new`.
    pub fn split_leaf(
        &mut self,
        target: PaneId,
        new: PaneId,
        axis: Axis,
        ratio: Option<u16>,
        new_first: bool,
    ) -> bool {
        match self {
            Node::Pane(p) if *p == target => {
                let (a, b) = if new_first {
                    (new, target)
                } else {
                    (target, new)
                };
                *self = Node::Split {
                    axis,
                    ratio,
                    first: Box::new(Node::Pane(a)),
                    second: Box::new(Node::Pane(b)),
                };
                true
            }
            Node::Pane(_) => false,
            Node::Split { first, second, .. } => {
                first.split_leaf(target, new, axis, ratio, new_first)
                    || second.split_leaf(target, new, axis, ratio, new_first)
            }
        }
    }

    /// Renames the leaf `old` to `new`; true when found.
    pub fn replace_leaf(&mut self, old: PaneId, new: PaneId) -> bool {
        match self {
            Node::Pane(p) if *p == old => {
                *p = new;
                true
            }
            Node::Pane(_) => false,
            Node::Split { first, second, .. } => {
                first.replace_leaf(old, new) || second.replace_leaf(old, new)
            }
        }
    }

    /// Depth of the tree (a leaf is 1).
    pub fn depth(&self) -> usize {
        match self {
            Node::Pane(_) => 1,
            Node::Split { first, second, .. } => 1 + first.depth().max(second.depth()),
        }
    }

    /// Removes the leaf `pane`; its parent split is replaced by the sibling (whose
    /// own ratio, if any, is kept; the removed split's ratio goes with it).
    /// Returns `None` when the tree becomes empty.
    pub fn remove_leaf(self, pane: PaneId) -> Option<Node> {
        match self {
            Node::Pane(p) if p == pane => None,
            Node::Pane(p) => Some(Node::Pane(p)),
            Node::Split {
                axis,
                ratio,
                first,
                second,
            } => {
                if first.contains(pane) {
                    match first.remove_leaf(pane) {
                        None => Some(*second),
                        Some(f) => Some(Node::Split {
                            axis,
                            ratio,
                            first: Box::new(f),
                            second,
                        }),
                    }
                } else if second.contains(pane) {
                    match second.remove_leaf(pane) {
                        None => Some(*first),
                        Some(s) => Some(Node::Split {
                            axis,
                            ratio,
                            first,
                            second: Box::new(s),
                        }),
                    }
                } else {
                    Some(Node::Split {
                        axis,
                        ratio,
                        first,
                        second,
                    })
                }
            }
        }
    }

    /// Preorder node array (RFC §4).
    pub fn to_nodes(&self) -> Vec<Value> {
        let mut out = Vec::with_capacity(self.size());
        self.push_nodes(&mut out);
        out
    }

    fn push_nodes(&self, out: &mut Vec<Value>) {
        match self {
            Node::Pane(p) => out.push(json!({"kind": "pane", "pane": p.to_string()})),
            Node::Split {
                axis,
                ratio,
                first,
                second,
            } => {
                let index = out.len();
                let mut node = json!({
                    "kind": "split",
                    "axis": axis.as_str(),
                    "first": index + 1,
                    "second": index + 1 + first.size(),
                });
                if let Some(r) = ratio {
                    node["ratio"] = json!(r);
                }
                out.push(node);
                first.push_nodes(out);
                second.push_nodes(out);
            }
        }
    }

    /// The node at preorder `index`.
    pub fn node_mut(&mut self, index: usize) -> Option<&mut Node> {
        if index == 0 {
            return Some(self);
        }
        match self {
            Node::Pane(_) => None,
            Node::Split { first, second, .. } => {
                let first_size = first.size();
                if index <= first_size {
                    first.node_mut(index - 1)
                } else {
                    second.node_mut(index - 1 - first_size)
                }
            }
        }
    }

    /// Pane sizes for an area of `cols` x `rows`.
    pub fn layout(&self, cols: u16, rows: u16, out: &mut Vec<(PaneId, u16, u16)>) {
        match self {
            Node::Pane(p) => out.push((*p, cols, rows)),
            Node::Split {
                axis,
                ratio,
                first,
                second,
            } => match axis {
                Axis::Cols => {
                    let (a, b) = split_sizes(cols, *ratio);
                    first.layout(a, rows, out);
                    second.layout(b, rows, out);
                }
                Axis::Rows => {
                    let (a, b) = split_sizes(rows, *ratio);
                    first.layout(cols, a, out);
                    second.layout(cols, b, out);
                }
            },
        }
    }

    /// Changes the nearest split along `axis` above `pane` so that the side holding
    /// the pane grows by `delta` cells. `area` is this node's area along `axis`.
    /// Returns false when no such split exists.
    pub fn grow(&mut self, pane: PaneId, axis: Axis, delta: i32, cols: u16, rows: u16) -> bool {
        let Node::Split {
            axis: a,
            ratio,
            first,
            second,
        } = self
        else {
            return false;
        };
        let (total, (fa, fb)) = match a {
            Axis::Cols => (cols, (split_sizes(cols, *ratio))),
            Axis::Rows => (rows, (split_sizes(rows, *ratio))),
        };
        let in_first = first.contains(pane);
        if !in_first && !second.contains(pane) {
            return false;
        }
        let child_area = |side: u16| match a {
            Axis::Cols => (side, rows),
            Axis::Rows => (cols, side),
        };
        // Deeper splits along the same axis win: they are nearer to the pane.
        let (child, (cc, cr)) = if in_first {
            (first.as_mut(), child_area(fa))
        } else {
            (second.as_mut(), child_area(fb))
        };
        if child.grow(pane, axis, delta, cc, cr) {
            return true;
        }
        if *a != axis {
            return false;
        }
        let wanted_first = if in_first {
            i32::from(fa) + delta
        } else {
            i32::from(fa) - delta
        };
        let wanted_first = wanted_first.clamp(1, i32::from(total.saturating_sub(2).max(1)));
        *ratio = Some(ratio_for(wanted_first as u16, total));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(n: u64) -> PaneId {
        PaneId(n)
    }

    #[test]
    fn sizes_match_the_rfc_examples() {
        assert_eq!(split_sizes(80, None), (40, 39));
        assert_eq!(split_sizes(80, Some(6250)), (50, 29));
        assert_eq!(split_sizes(24, None), (12, 11));
        assert_eq!(split_sizes(3, Some(1)), (1, 1));
        assert_eq!(split_sizes(1, None), (1, 1));
    }

    #[test]
    fn ratio_for_is_exact() {
        for total in 3..200u16 {
            for first in 1..total - 1 {
                let r = ratio_for(first, total);
                assert_eq!(split_sizes(total, Some(r)).0, first, "{first}/{total}");
            }
        }
    }

    #[test]
    fn preorder_nodes_match_rfc_format3_example() {
        let mut tree = Node::Pane(p(0));
        tree.split_leaf(p(0), p(1), Axis::Cols, Some(6250), false);
        tree.split_leaf(p(1), p(2), Axis::Rows, None, false);
        let nodes = serde_json::to_string(&tree.to_nodes()).unwrap();
        assert_eq!(
            nodes,
            r#"[{"axis":"cols","first":1,"kind":"split","ratio":6250,"second":2},{"kind":"pane","pane":"p0"},{"axis":"rows","first":3,"kind":"split","second":4},{"kind":"pane","pane":"p1"},{"kind":"pane","pane":"p2"}]"#
        );
        let mut sizes = Vec::new();
        tree.layout(80, 24, &mut sizes);
        assert_eq!(sizes, vec![(p(0), 50, 24), (p(1), 29, 12), (p(2), 29, 11)]);
    }

    #[test]
    fn removing_a_leaf_promotes_its_sibling() {
        let mut tree = Node::Pane(p(0));
        tree.split_leaf(p(0), p(1), Axis::Cols, None, false);
        tree.split_leaf(p(1), p(2), Axis::Rows, Some(3000), false);
        let tree = tree.remove_leaf(p(0)).unwrap();
        assert_eq!(tree.to_nodes()[0]["ratio"], 3000);
        let tree = tree.remove_leaf(p(2)).unwrap();
        assert_eq!(tree, Node::Pane(p(1)));
        assert_eq!(tree.remove_leaf(p(1)), None);
    }

    #[test]
    fn grow_adjusts_the_nearest_split() {
        let mut tree = Node::Pane(p(0));
        tree.split_leaf(p(0), p(1), Axis::Cols, None, false);
        assert!(tree.grow(p(0), Axis::Cols, 10, 80, 24));
        let mut sizes = Vec::new();
        tree.layout(80, 24, &mut sizes);
        assert_eq!(sizes[0], (p(0), 50, 24));
        assert!(tree.grow(p(1), Axis::Cols, 5, 80, 24));
        sizes.clear();
        tree.layout(80, 24, &mut sizes);
        assert_eq!(sizes[1], (p(1), 34, 24));
        assert!(!tree.grow(p(1), Axis::Rows, 5, 80, 24));
    }

    #[test]
    fn node_mut_follows_preorder() {
        let mut tree = Node::Pane(p(0));
        tree.split_leaf(p(0), p(1), Axis::Cols, None, false);
        tree.split_leaf(p(0), p(2), Axis::Rows, None, false);
        assert!(matches!(
            tree.node_mut(1),
            Some(Node::Split {
                axis: Axis::Rows,
                ..
            })
        ));
        assert_eq!(tree.node_mut(4), Some(&mut Node::Pane(p(1))));
        assert_eq!(tree.node_mut(5), None);
    }
}
