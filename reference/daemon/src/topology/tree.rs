//! A window's split tree: leaves are tiled panes, splits divide an area along `cols`
//! (side by side) or `rows` (stacked). On the wire it is a preorder node array
//! (RFC §4): `{"kind":"split","axis","first","second","ratio"?}` /
//! `{"kind":"pane","pane"}`, where a split at index i has `first == i + 1`.
//!
//! Layout: a split of `n` cells gives its first child `floor(n * ratio / 10000)` cells
//! (ratio 5000 when absent), one separator cell, and the rest to the second child;
//! each side keeps at least one cell.
//!
//! The live tree is that preorder array too ([`Tree`]): the RFC bounds a tree by its
//! node count alone (100 000 topology items), so a chain of splits may be tens of
//! thousands deep. Every operation here is a loop over the array (or an explicit
//! stack), never recursion, and dropping a tree frees one `Vec`: whatever the daemon
//! can build or a valid checkpoint holds, it can lay out, capture and restore.

use crate::ids::PaneId;
use serde_json::Value;

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

/// One node of the preorder array. A split's first child is the next entry; its second
/// child starts at `second`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Pane(PaneId),
    Split {
        axis: Axis,
        /// 1-9999; `None` is an equal split.
        ratio: Option<u16>,
        second: usize,
    },
}

/// A non-empty split tree as its preorder node array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    nodes: Vec<Entry>,
}

/// A tree's preorder node array (RFC §4) as its wire shape (keys in sorted order, as
/// a `Value` prints them); no tree is an empty array.
pub struct Nodes<'a>(pub Option<&'a Tree>);

impl serde::Serialize for Nodes<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let entries = self.0.map_or(&[][..], Tree::entries);
        use serde::ser::SerializeSeq as _;
        let mut seq = s.serialize_seq(Some(entries.len()))?;
        for (i, e) in entries.iter().enumerate() {
            seq.serialize_element(&Node(i, e))?;
        }
        seq.end()
    }
}

struct Node<'a>(usize, &'a Entry);

impl serde::Serialize for Node<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut m = s.serialize_map(None)?;
        match *self.1 {
            Entry::Pane(p) => {
                m.serialize_entry("kind", "pane")?;
                m.serialize_entry("pane", &format_args!("{p}"))?;
            }
            Entry::Split {
                axis,
                ratio,
                second,
            } => {
                m.serialize_entry("axis", axis.as_str())?;
                m.serialize_entry("first", &(self.0 + 1))?;
                m.serialize_entry("kind", "split")?;
                if let Some(r) = ratio {
                    m.serialize_entry("ratio", &r)?;
                }
                m.serialize_entry("second", &second)?;
            }
        }
        m.end()
    }
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

impl Tree {
    /// A tree of one pane.
    pub fn leaf(pane: PaneId) -> Tree {
        Tree {
            nodes: vec![Entry::Pane(pane)],
        }
    }

    /// A tree from a preorder array, when it is one: every split's children are the
    /// next entry and `second`, and the root's subtree spans every entry.
    pub fn from_entries(nodes: Vec<Entry>) -> Option<Tree> {
        let mut tree = Tree { nodes };
        let given: Vec<usize> = tree.split_seconds().collect();
        (tree.renumber() && tree.split_seconds().eq(given)).then_some(tree)
    }

    pub fn entries(&self) -> &[Entry] {
        &self.nodes
    }

    fn split_seconds(&self) -> impl Iterator<Item = usize> + '_ {
        self.nodes.iter().filter_map(|e| match e {
            Entry::Split { second, .. } => Some(*second),
            Entry::Pane(_) => None,
        })
    }

    /// Subtree sizes, from the shape alone (a split is itself plus the subtree after
    /// it plus the one after that); false when the array is not one whole tree.
    fn sizes(&self) -> Option<Vec<usize>> {
        let n = self.nodes.len();
        let mut size = vec![0usize; n];
        for i in (0..n).rev() {
            size[i] = match self.nodes[i] {
                Entry::Pane(_) => 1,
                Entry::Split { .. } => {
                    let first = *size.get(i + 1)?;
                    let second = *size.get(i + 1 + first)?;
                    1 + first + second
                }
            };
        }
        (n > 0 && size[0] == n).then_some(size)
    }

    /// Recomputes every split's `second` from the shape after an edit.
    fn renumber(&mut self) -> bool {
        let Some(size) = self.sizes() else {
            return false;
        };
        for (i, e) in self.nodes.iter_mut().enumerate() {
            if let Entry::Split { second, .. } = e {
                *second = i + 1 + size[i + 1];
            }
        }
        true
    }

    fn index_of(&self, pane: PaneId) -> Option<usize> {
        self.nodes
            .iter()
            .position(|e| matches!(e, Entry::Pane(p) if *p == pane))
    }

    /// Each entry's parent split (`None` for the root).
    fn parents(&self) -> Vec<Option<usize>> {
        let mut parent = vec![None; self.nodes.len()];
        for (i, e) in self.nodes.iter().enumerate() {
            if let Entry::Split { second, .. } = *e {
                parent[i + 1] = Some(i);
                parent[second] = Some(i);
            }
        }
        parent
    }

    /// One past the last entry of the subtree at `index`.
    fn subtree_end(&self, index: usize) -> usize {
        let mut i = index;
        while let Entry::Split { second, .. } = self.nodes[i] {
            i = second;
        }
        i + 1
    }

    pub fn contains(&self, pane: PaneId) -> bool {
        self.index_of(pane).is_some()
    }

    /// The panes, first side before second side.
    pub fn panes(&self) -> impl Iterator<Item = PaneId> + '_ {
        self.nodes.iter().filter_map(|e| match e {
            Entry::Pane(p) => Some(*p),
            Entry::Split { .. } => None,
        })
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
        let Some(i) = self.index_of(target) else {
            return false;
        };
        let (a, b) = if new_first {
            (new, target)
        } else {
            (target, new)
        };
        let split = Entry::Split {
            axis,
            ratio,
            second: 0,
        };
        self.nodes
            .splice(i..=i, [split, Entry::Pane(a), Entry::Pane(b)]);
        self.renumber()
    }

    /// Renames the leaf `old` to `new`; true when found.
    pub fn replace_leaf(&mut self, old: PaneId, new: PaneId) -> bool {
        match self.index_of(old) {
            Some(i) => {
                self.nodes[i] = Entry::Pane(new);
                true
            }
            None => false,
        }
    }

    /// Depth of the tree (a leaf is 1).
    pub fn depth(&self) -> usize {
        let mut depth = vec![1usize; self.nodes.len()];
        for (i, e) in self.nodes.iter().enumerate() {
            if let Entry::Split { second, .. } = *e {
                depth[i + 1] = depth[i] + 1;
                depth[second] = depth[i] + 1;
            }
        }
        depth.into_iter().max().unwrap_or(0)
    }

    /// Removes the leaf `pane`; its parent split is replaced by the sibling (whose
    /// own ratio, if any, is kept; the removed split's ratio goes with it).
    /// Returns `None` when the tree becomes empty.
    pub fn remove_leaf(mut self, pane: PaneId) -> Option<Tree> {
        let Some(i) = self.index_of(pane) else {
            return Some(self);
        };
        let parent = self.parents()[i]?;
        let Entry::Split { second, .. } = self.nodes[parent] else {
            return Some(self);
        };
        let end = self.subtree_end(parent);
        let sibling = if i == parent + 1 {
            second..end
        } else {
            parent + 1..second
        };
        let kept: Vec<Entry> = self.nodes[sibling].to_vec();
        self.nodes.splice(parent..end, kept);
        self.renumber();
        Some(self)
    }

    /// Preorder node array (RFC §4).
    pub fn to_nodes(&self) -> Vec<Value> {
        match serde_json::to_value(Nodes(Some(self))) {
            Ok(Value::Array(nodes)) => nodes,
            _ => Vec::new(),
        }
    }

    /// The ratio of the split at preorder `index`, or None when that is no split.
    pub fn ratio_mut(&mut self, index: usize) -> Option<&mut Option<u16>> {
        match self.nodes.get_mut(index)? {
            Entry::Split { ratio, .. } => Some(ratio),
            Entry::Pane(_) => None,
        }
    }

    /// Each entry's area for a tree area of `cols` x `rows`, parents before children.
    fn areas(&self, cols: u16, rows: u16) -> Vec<(u16, u16)> {
        let mut area = vec![(cols, rows); self.nodes.len()];
        for (i, e) in self.nodes.iter().enumerate() {
            if let Entry::Split {
                axis,
                ratio,
                second,
            } = *e
            {
                let (c, r) = area[i];
                let (first_area, second_area) = match axis {
                    Axis::Cols => {
                        let (a, b) = split_sizes(c, ratio);
                        ((a, r), (b, r))
                    }
                    Axis::Rows => {
                        let (a, b) = split_sizes(r, ratio);
                        ((c, a), (c, b))
                    }
                };
                area[i + 1] = first_area;
                area[second] = second_area;
            }
        }
        area
    }

    /// Pane sizes for an area of `cols` x `rows`, in [`Tree::panes`] order.
    pub fn layout(&self, cols: u16, rows: u16, out: &mut Vec<(PaneId, u16, u16)>) {
        let area = self.areas(cols, rows);
        for (e, (c, r)) in self.nodes.iter().zip(area) {
            if let Entry::Pane(p) = e {
                out.push((*p, c, r));
            }
        }
    }

    /// The smallest tiled area that holds `size(pane)` for every pane (a split adds
    /// one separator cell along its axis); restore sizes a window with it.
    pub fn area_holding(&self, size: impl Fn(PaneId) -> (u32, u32)) -> (u32, u32) {
        let mut area = vec![(0u32, 0u32); self.nodes.len()];
        for i in (0..self.nodes.len()).rev() {
            area[i] = match self.nodes[i] {
                Entry::Pane(p) => size(p),
                Entry::Split { axis, second, .. } => {
                    let (a, b) = (area[i + 1], area[second]);
                    match axis {
                        Axis::Cols => (a.0.saturating_add(1).saturating_add(b.0), a.1.max(b.1)),
                        Axis::Rows => (a.0.max(b.0), a.1.saturating_add(1).saturating_add(b.1)),
                    }
                }
            };
        }
        area.first().copied().unwrap_or((1, 1))
    }

    /// Changes the nearest split along `axis` above `pane` so that the side holding
    /// the pane grows by `delta` cells, for a tree area of `cols` x `rows`. Returns
    /// false when no such split exists.
    pub fn grow(&mut self, pane: PaneId, axis: Axis, delta: i32, cols: u16, rows: u16) -> bool {
        let Some(leaf) = self.index_of(pane) else {
            return false;
        };
        let parents = self.parents();
        let area = self.areas(cols, rows);
        let (mut child, mut at) = (leaf, parents[leaf]);
        while let Some(split) = at {
            if let Entry::Split { axis: a, ratio, .. } = &mut self.nodes[split] {
                if *a == axis {
                    let total = match axis {
                        Axis::Cols => area[split].0,
                        Axis::Rows => area[split].1,
                    };
                    let first = i32::from(split_sizes(total, *ratio).0);
                    let wanted = if child == split + 1 {
                        first + delta
                    } else {
                        first - delta
                    };
                    let wanted = wanted.clamp(1, i32::from(total.saturating_sub(2).max(1)));
                    *ratio = Some(ratio_for(wanted as u16, total));
                    return true;
                }
            }
            (child, at) = (split, parents[split]);
        }
        false
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
        let mut tree = Tree::leaf(p(0));
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
        let mut tree = Tree::leaf(p(0));
        tree.split_leaf(p(0), p(1), Axis::Cols, None, false);
        tree.split_leaf(p(1), p(2), Axis::Rows, Some(3000), false);
        let tree = tree.remove_leaf(p(0)).unwrap();
        assert_eq!(tree.to_nodes()[0]["ratio"], 3000);
        let tree = tree.remove_leaf(p(2)).unwrap();
        assert_eq!(tree, Tree::leaf(p(1)));
        assert_eq!(tree.remove_leaf(p(1)), None);
    }

    #[test]
    fn grow_adjusts_the_nearest_split() {
        let mut tree = Tree::leaf(p(0));
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
    fn ratio_mut_follows_preorder() {
        let mut tree = Tree::leaf(p(0));
        tree.split_leaf(p(0), p(1), Axis::Cols, None, false);
        tree.split_leaf(p(0), p(2), Axis::Rows, None, false);
        assert!(matches!(
            tree.entries()[1],
            Entry::Split {
                axis: Axis::Rows,
                ..
            }
        ));
        *tree.ratio_mut(1).unwrap() = Some(2000);
        assert_eq!(tree.to_nodes()[1]["ratio"], 2000);
        assert_eq!(tree.ratio_mut(4), None, "a pane");
        assert_eq!(tree.ratio_mut(5), None, "past the end");
        assert_eq!(tree.entries()[4], Entry::Pane(p(1)));
    }

    /// A chain of splits as deep as the RFC's count bound allows (each split adds a
    /// split and a pane node): every operation is a loop, so none of them overflows
    /// the stack, and removing the panes again walks the chain back up.
    #[test]
    fn a_chain_as_deep_as_the_count_bound_allows_works_without_recursion() {
        let splits = 49_999u64;
        let mut tree = Tree::leaf(p(0));
        // Splitting the newest pane each time: a chain, every split the parent of
        // the next. Built as entries (split_leaf alone would be quadratic here).
        let mut nodes = Vec::new();
        for n in 0..splits {
            nodes.push(Entry::Split {
                axis: if n % 2 == 0 { Axis::Cols } else { Axis::Rows },
                ratio: None,
                second: 0,
            });
            nodes.push(Entry::Pane(p(n)));
        }
        nodes.push(Entry::Pane(p(splits)));
        // `second` of split 2k is 2k + 2 (after its pane leaf).
        for (i, e) in nodes.iter_mut().enumerate() {
            if let Entry::Split { second, .. } = e {
                *second = i + 2;
            }
        }
        tree = Tree::from_entries(nodes).unwrap_or(tree);
        assert_eq!(tree.entries().len() as u64, 2 * splits + 1);
        assert_eq!(tree.depth() as u64, splits + 1);
        let mut sizes = Vec::new();
        tree.layout(65535, 65535, &mut sizes);
        assert_eq!(sizes.len() as u64, splits + 1);
        assert!(tree.grow(p(splits), Axis::Cols, 1, 65535, 65535));
        let area = tree.area_holding(|_| (1, 1));
        assert!(area.0 > 1 && area.1 > 1);
        assert_eq!(tree.to_nodes().len() as u64, 2 * splits + 1);
        let tree = tree.remove_leaf(p(splits)).unwrap();
        assert_eq!(tree.depth() as u64, splits);
        assert!(tree.clone().remove_leaf(p(0)).is_some());
        drop(tree);
    }

    #[test]
    fn from_entries_refuses_what_is_not_one_preorder_tree() {
        let split = |second| Entry::Split {
            axis: Axis::Cols,
            ratio: None,
            second,
        };
        assert!(Tree::from_entries(vec![split(2), Entry::Pane(p(0)), Entry::Pane(p(1))]).is_some());
        assert!(Tree::from_entries(vec![split(1), Entry::Pane(p(0)), Entry::Pane(p(1))]).is_none());
        assert!(Tree::from_entries(vec![split(2), Entry::Pane(p(0))]).is_none());
        assert!(Tree::from_entries(vec![Entry::Pane(p(0)), Entry::Pane(p(1))]).is_none());
        assert!(Tree::from_entries(vec![]).is_none());
    }
}
