//! Between the daemon's split tree (a window's preorder `nodes`: `cols`/`rows` axes,
//! integer ratios 1–9999 in 1/10000 of the first child, absent = equal) and the
//! archive's layout (`horizontal`/`vertical`, a decimal ratio strictly inside (0, 1),
//! leaves indexing the window's archived `panes`).
//!
//! `horizontal` is read as children side by side (left | right, the daemon's `cols`
//! axis) and `vertical` as stacked (`rows`): the archive names the children `left`
//! and `right`, and the seed gives no other reading.

use serde_json::Value;
use vx_agentsession::archive::{Layout, SplitDir};
use vx_agentsession::limits::MAX_ARCHIVE_DEPTH;

/// The daemon's ratio scale and bounds (`pane.split` and `window.ratio`).
const RATIO_SCALE: f64 = 10_000.0;
const MIN_RATIO: u16 = 1;
const MAX_RATIO: u16 = 9_999;
const EQUAL_RATIO: u16 = 5_000;
/// The deepest layout node an archive can hold: the document, `sessions`, a session,
/// `windows` and a window are the five levels above the layout's root
/// (docs/spec/workspace-archive.md: a chain of 122 splits is the deepest).
pub const MAX_LAYOUT_DEPTH: usize = MAX_ARCHIVE_DEPTH - 5;

/// The archive's share for a daemon ratio (absent: an equal split).
pub fn archive_ratio(daemon: Option<u16>) -> f64 {
    f64::from(daemon.unwrap_or(EQUAL_RATIO)) / RATIO_SCALE
}

/// The daemon ratio nearest an archived share, within what `pane.split` takes.
pub fn daemon_ratio(share: f64) -> u16 {
    let scaled = (share * RATIO_SCALE).round();
    if scaled.is_nan() || scaled < f64::from(MIN_RATIO) {
        MIN_RATIO
    } else if scaled > f64::from(MAX_RATIO) {
        MAX_RATIO
    } else {
        scaled as u16
    }
}

pub fn axis_of(dir: SplitDir) -> &'static str {
    match dir {
        SplitDir::Horizontal => "cols",
        SplitDir::Vertical => "rows",
    }
}

fn dir_of(axis: &str) -> Option<SplitDir> {
    match axis {
        "cols" => Some(SplitDir::Horizontal),
        "rows" => Some(SplitDir::Vertical),
        _ => None,
    }
}

/// The archive layout of a window's `nodes`, its leaves mapped by `index_of` (a pane
/// id to its archived index). `None` when the tree is empty, names a pane
/// `index_of` does not know, is malformed, or is deeper than an archive holds.
pub fn from_nodes(nodes: &[Value], index_of: &dyn Fn(&str) -> Option<usize>) -> Option<Layout> {
    if nodes.is_empty() {
        return None;
    }
    node(nodes, 0, 1, index_of)
}

fn node(
    nodes: &[Value],
    at: usize,
    depth: usize,
    index_of: &dyn Fn(&str) -> Option<usize>,
) -> Option<Layout> {
    if depth > MAX_LAYOUT_DEPTH {
        return None;
    }
    let n = nodes.get(at)?;
    match n["kind"].as_str()? {
        "pane" => index_of(n["pane"].as_str()?).map(Layout::Pane),
        "split" => {
            let first = usize::try_from(n["first"].as_u64()?).ok()?;
            let second = usize::try_from(n["second"].as_u64()?).ok()?;
            // Preorder: children come after their parent, so the walk ends.
            if first <= at || second <= at {
                return None;
            }
            let ratio = match n.get("ratio") {
                None => None,
                Some(r) => Some(u16::try_from(r.as_u64()?).ok()?),
            };
            Some(Layout::Split {
                dir: dir_of(n["axis"].as_str()?)?,
                ratio: archive_ratio(ratio),
                left: Box::new(node(nodes, first, depth + 1, index_of)?),
                right: Box::new(node(nodes, second, depth + 1, index_of)?),
            })
        }
        _ => None,
    }
}

/// The window size a layout of panes of these sizes fills (one separator cell per
/// split, as the daemon lays out); `None` when a pane's size is unknown or zero.
pub fn window_size(
    layout: &Layout,
    size_of: &dyn Fn(usize) -> Option<(u16, u16)>,
) -> Option<(u16, u16)> {
    match layout {
        Layout::Pane(i) => size_of(*i).filter(|(c, r)| *c > 0 && *r > 0),
        Layout::Split {
            dir, left, right, ..
        } => {
            let (lc, lr) = window_size(left, size_of)?;
            let (rc, rr) = window_size(right, size_of)?;
            match dir {
                SplitDir::Horizontal => Some((lc.checked_add(rc)?.checked_add(1)?, lr.max(rr))),
                SplitDir::Vertical => Some((lc.max(rc), lr.checked_add(rr)?.checked_add(1)?)),
            }
        }
    }
}

/// Whether `leaf` is in `layout`.
pub fn holds(layout: &Layout, leaf: usize) -> bool {
    layout.leaves().contains(&leaf)
}

/// The first leaf of a layout, left to right.
pub fn first_leaf(layout: &Layout) -> usize {
    let mut at = layout;
    loop {
        match at {
            Layout::Pane(i) => return *i,
            Layout::Split { left, .. } => at = left,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_daemon_ratio_survives_the_archive() {
        for k in MIN_RATIO..=MAX_RATIO {
            assert_eq!(daemon_ratio(archive_ratio(Some(k))), k);
        }
        assert_eq!(daemon_ratio(archive_ratio(None)), EQUAL_RATIO);
        assert_eq!(daemon_ratio(0.000_01), MIN_RATIO);
        assert_eq!(daemon_ratio(0.999_99), MAX_RATIO);
        assert_eq!(daemon_ratio(0.333_333_34), 3333);
    }

    #[test]
    fn nodes_become_a_layout_with_archive_indexes() {
        let nodes = json!([
            {"kind":"split","axis":"cols","first":1,"second":2,"ratio":3000},
            {"kind":"pane","pane":"p7"},
            {"kind":"split","axis":"rows","first":3,"second":4},
            {"kind":"pane","pane":"p2"},
            {"kind":"pane","pane":"p5"},
        ]);
        let order = ["p2", "p5", "p7"];
        let index_of = |id: &str| order.iter().position(|p| *p == id);
        let got = from_nodes(nodes.as_array().unwrap(), &index_of).unwrap();
        let want = Layout::Split {
            dir: SplitDir::Horizontal,
            ratio: 0.3,
            left: Box::new(Layout::Pane(2)),
            right: Box::new(Layout::Split {
                dir: SplitDir::Vertical,
                ratio: 0.5,
                left: Box::new(Layout::Pane(0)),
                right: Box::new(Layout::Pane(1)),
            }),
        };
        assert_eq!(got, want);
        let sizes = |i: usize| Some([(40, 11), (40, 12), (39, 24)][i]);
        assert_eq!(window_size(&got, &sizes), Some((80, 24)));
        assert_eq!(first_leaf(&got), 2);
        assert!(holds(&got, 1) && !holds(&got, 3));
        // A pane the listing does not know, a backward child, no tree: no layout.
        assert_eq!(from_nodes(nodes.as_array().unwrap(), &|_| None), None);
        let backward = json!([{"kind":"split","axis":"cols","first":0,"second":1}]);
        assert_eq!(from_nodes(backward.as_array().unwrap(), &index_of), None);
        assert_eq!(from_nodes(&[], &index_of), None);
    }

    #[test]
    fn a_tree_deeper_than_an_archive_holds_has_no_layout() {
        let chain = |splits: usize| {
            let mut nodes = Vec::new();
            for i in 0..splits {
                let at = 2 * i;
                nodes.push(json!({"kind":"split","axis":"cols","first":at + 1,"second":at + 2}));
                nodes.push(json!({"kind":"pane","pane":format!("p{i}")}));
            }
            nodes.push(json!({"kind":"pane","pane":"last"}));
            nodes
        };
        let any = |_: &str| Some(0);
        assert!(from_nodes(&chain(MAX_LAYOUT_DEPTH - 1), &any).is_some());
        assert!(from_nodes(&chain(MAX_LAYOUT_DEPTH), &any).is_none());
    }
}
