//! Rules across fields: syntax of free strings, ordering, membership, the split
//! tree, lifecycle, text, tags and float specs. The reader runs them on what it
//! decoded; the writer runs them before it emits, so it never writes a file the
//! reader would refuse.

use crate::context::ReadContext;
use crate::error::{Doc, FormatError, Result, Rule};
use crate::ids::is_checkpoint_id;
use crate::limits::*;
use crate::model::is_signal_name;
use crate::model::*;
use crate::time::{MAX_TIMESTAMP, MIN_TIMESTAMP};

fn err(rule: Rule) -> FormatError {
    FormatError::new(rule, Doc::Payload)
}

fn at(rule: Rule, outer: &'static str, index: usize, key: &'static str) -> FormatError {
    err(rule).in_key(key).in_index(index).in_key(outer)
}

/// C0, DEL and C1 control characters are never allowed in durable strings.
/// Works on bytes: C1 characters are exactly the two-byte sequences `C2 80`–`C2 9F`.
pub(crate) fn has_control(text: &str) -> bool {
    let b = text.as_bytes();
    // A branch-free pass the compiler vectorizes; the exact check runs only on a hit.
    if !b.iter().fold(false, |hit, &c| {
        hit | (c < 0x20) | (c == 0x7f) | (c == 0xc2)
    }) {
        return false;
    }
    b.iter().enumerate().any(|(i, &c)| {
        c < 0x20 || c == 0x7f || (c == 0xc2 && matches!(b.get(i + 1), Some(0x80..=0x9f)))
    })
}

fn is_name(text: &str) -> bool {
    (1..=MAX_NAME_BYTES).contains(&text.len()) && !has_control(text)
}

fn is_tag_key(key: &str) -> bool {
    let b = key.as_bytes();
    (1..=MAX_TAG_KEY_BYTES).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"_.-".contains(&c))
}

fn is_preset_part(part: &str) -> bool {
    let b = part.as_bytes();
    (1..=MAX_PRESET_PART_BYTES).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b[1..]
            .iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_' || c == b'-')
}

fn is_preset(preset: &str) -> bool {
    matches!(preset.split_once('.'), Some((ns, name)) if is_preset_part(ns) && is_preset_part(name))
}

fn is_socket(socket: &str) -> bool {
    socket.starts_with('/') && socket.len() <= MAX_SOCKET_BYTES && !socket.contains('\0')
}

fn is_timestamp(ts: Timestamp) -> bool {
    (MIN_TIMESTAMP..=MAX_TIMESTAMP).contains(&ts)
}

fn strictly_ascending(ids: impl Iterator<Item = u64>) -> Option<usize> {
    let mut prev: Option<u64> = None;
    for (i, id) in ids.enumerate() {
        if prev.is_some_and(|p| p >= id) {
            return Some(i);
        }
        prev = Some(id);
    }
    None
}

/// Every rule of the payload that is not about JSON itself or the caller's context.
pub fn validate(cp: &Checkpoint, format: Format) -> Result<()> {
    if !is_checkpoint_id(&cp.checkpoint) {
        return Err(err(Rule::CheckpointId).in_key("checkpoint"));
    }
    if !(1..=MAX_SAFE_INTEGER).contains(&cp.generation) {
        return Err(err(Rule::Range).in_key("generation"));
    }
    if !is_socket(&cp.socket) {
        return Err(err(Rule::SocketSyntax).in_key("socket"));
    }
    if cp.uid > MAX_SAFE_INTEGER {
        return Err(err(Rule::Range).in_key("uid"));
    }
    if !is_timestamp(cp.captured_at) {
        return Err(err(Rule::Timestamp).in_key("captured_at"));
    }
    let node_count: usize = cp.windows.iter().map(|w| w.nodes.len()).sum();
    if cp.sessions.len() + cp.windows.len() + cp.panes.len() + node_count > MAX_TOPOLOGY_ITEMS {
        return Err(err(Rule::TopologyCount));
    }
    check_sessions(cp)?;
    check_windows(cp)?;
    check_panes(cp, format)?;
    check_trees(cp, format)
}

/// The caller's context: file name, store socket and uid.
pub(crate) fn validate_context(cp: &Checkpoint, ctx: &ReadContext) -> Result<()> {
    if let Some(name) = ctx.file_name {
        if name.strip_suffix(".json") != Some(cp.checkpoint.as_str()) {
            return Err(err(Rule::FileName).in_key("checkpoint"));
        }
    }
    if ctx.socket.is_some_and(|s| s != cp.socket) {
        return Err(err(Rule::SocketMismatch).in_key("socket"));
    }
    if ctx.uid.is_some_and(|u| u != cp.uid) {
        return Err(err(Rule::UidMismatch).in_key("uid"));
    }
    Ok(())
}

fn check_id(id: u64, outer: &'static str, index: usize, key: &'static str) -> Result<()> {
    if id > MAX_SAFE_INTEGER {
        return Err(at(Rule::IdSyntax, outer, index, key));
    }
    Ok(())
}

fn check_sessions(cp: &Checkpoint) -> Result<()> {
    for (i, s) in cp.sessions.iter().enumerate() {
        check_id(s.id, "sessions", i, "session")?;
        if !is_name(&s.name) {
            return Err(at(Rule::NameSyntax, "sessions", i, "name"));
        }
    }
    if let Some(i) = strictly_ascending(cp.sessions.iter().map(|s| s.id)) {
        return Err(at(Rule::Unsorted, "sessions", i, "session"));
    }
    Ok(())
}

fn check_windows(cp: &Checkpoint) -> Result<()> {
    for (i, w) in cp.windows.iter().enumerate() {
        check_id(w.id, "windows", i, "window")?;
        check_id(w.session, "windows", i, "session")?;
        if !is_name(&w.name) {
            return Err(at(Rule::NameSyntax, "windows", i, "name"));
        }
        if !(1..=MAX_SAFE_INTEGER).contains(&w.revision) {
            return Err(at(Rule::Range, "windows", i, "revision"));
        }
    }
    if let Some(i) = strictly_ascending(cp.windows.iter().map(|w| w.id)) {
        return Err(at(Rule::Unsorted, "windows", i, "window"));
    }
    for (i, w) in cp.windows.iter().enumerate() {
        if cp
            .sessions
            .binary_search_by_key(&w.session, |s| s.id)
            .is_err()
        {
            return Err(at(Rule::SessionMissing, "windows", i, "session"));
        }
    }
    Ok(())
}

fn check_panes(cp: &Checkpoint, format: Format) -> Result<()> {
    for (i, p) in cp.panes.iter().enumerate() {
        check_pane(cp, p, format).map_err(|e| e.in_index(i).in_key("panes"))?;
    }
    if let Some(i) = strictly_ascending(cp.panes.iter().map(|p| p.id)) {
        return Err(at(Rule::Unsorted, "panes", i, "pane"));
    }
    for (i, p) in cp.panes.iter().enumerate() {
        match cp.windows.binary_search_by_key(&p.window, |w| w.id) {
            Err(_) => return Err(at(Rule::WindowMissing, "panes", i, "window")),
            Ok(w) if cp.windows[w].session != p.session => {
                return Err(at(Rule::SessionMismatch, "panes", i, "session"))
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

fn check_pane(cp: &Checkpoint, p: &Pane, format: Format) -> Result<()> {
    if p.id > MAX_SAFE_INTEGER {
        return Err(err(Rule::IdSyntax).in_key("pane"));
    }
    if p.window > MAX_SAFE_INTEGER {
        return Err(err(Rule::IdSyntax).in_key("window"));
    }
    if p.session > MAX_SAFE_INTEGER {
        return Err(err(Rule::IdSyntax).in_key("session"));
    }
    if p.cols == 0 {
        return Err(err(Rule::Range).in_key("cols"));
    }
    if p.rows == 0 {
        return Err(err(Rule::Range).in_key("rows"));
    }
    match &p.state {
        PaneState::Running => {
            if p.previous_state.is_some() {
                return Err(err(Rule::PreviousStateNotExited).in_key("previous_state"));
            }
            if cp.shutdown == Shutdown::Clean {
                return Err(err(Rule::CleanWithRunning).in_key("state"));
            }
        }
        PaneState::Exited {
            exit: Some(Exit::Signal(name)),
        } if !is_signal_name(name) => {
            return Err(err(Rule::SignalSyntax).in_key("signal"));
        }
        PaneState::Exited { .. } => {}
    }
    if !format.has_floats_and_tags() {
        if p.float.is_some() {
            return Err(err(Rule::UnknownField).in_key("float"));
        }
        if !p.tags.is_empty() {
            return Err(err(Rule::UnknownField).in_key("tags"));
        }
    }
    if let Some(spec) = &p.float {
        check_float(spec).map_err(|e| e.in_key("float"))?;
    }
    check_tags(&p.tags).map_err(|e| e.in_key("tags"))?;
    check_text(&p.text, p.rows).map_err(|e| e.in_key("text"))
}

fn check_float(spec: &FloatSpec) -> Result<()> {
    if spec.preset.as_deref().is_some_and(|p| !is_preset(p)) {
        return Err(err(Rule::FloatPreset).in_key("preset"));
    }
    let extent_ok = |e: &Option<Extent>| match e {
        Some(Extent::Cells(n)) => *n >= 1,
        Some(Extent::Percent(n)) => (1..=100).contains(n),
        None => true,
    };
    if !extent_ok(&spec.width) {
        return Err(err(Rule::FloatSize).in_key("width"));
    }
    if !extent_ok(&spec.height) {
        return Err(err(Rule::FloatSize).in_key("height"));
    }
    let offset_ok = |v: Option<i16>| v.is_none_or(|v| i64::from(v).abs() <= MAX_FLOAT_OFFSET);
    if !offset_ok(spec.x) {
        return Err(err(Rule::FloatOffset).in_key("x"));
    }
    if !offset_ok(spec.y) {
        return Err(err(Rule::FloatOffset).in_key("y"));
    }
    if spec.min_cols == Some(0) {
        return Err(err(Rule::FloatMin).in_key("min_cols"));
    }
    if spec.min_rows == Some(0) {
        return Err(err(Rule::FloatMin).in_key("min_rows"));
    }
    if spec
        .title
        .as_deref()
        .is_some_and(|t| !(1..=MAX_TITLE_BYTES).contains(&t.len()) || has_control(t))
    {
        return Err(err(Rule::FloatTitle).in_key("title"));
    }
    if !(1..=MAX_SAFE_INTEGER).contains(&spec.z) {
        return Err(err(Rule::FloatZ).in_key("z"));
    }
    Ok(())
}

fn check_tags(tags: &[Tag]) -> Result<()> {
    if tags.len() > MAX_TAGS {
        return Err(err(Rule::TagsCount));
    }
    for (i, tag) in tags.iter().enumerate() {
        if !is_tag_key(&tag.key) {
            return Err(err(Rule::TagKey).in_key("key").in_index(i));
        }
        if !(1..=MAX_TAG_VALUE_BYTES).contains(&tag.value.len()) || has_control(&tag.value) {
            return Err(err(Rule::TagValue).in_key("value").in_index(i));
        }
        if i > 0 && tags[i - 1].key.as_bytes() >= tag.key.as_bytes() {
            return Err(err(Rule::TagsUnsorted).in_key("key").in_index(i));
        }
    }
    Ok(())
}

fn check_text(text: &Text, rows: u16) -> Result<()> {
    let (saved_at, expires_at, screen_rows) = match text {
        Text::Omitted | Text::Expired => return Ok(()),
        Text::Plain(plain) => (plain.saved_at, plain.expires_at, plain.screen.len()),
        // Its rows were checked when it was built (`EncodedRows::new`).
        Text::Encoded(e) => (e.saved_at, e.expires_at, e.rows.screen_rows()),
    };
    if !is_timestamp(saved_at) {
        return Err(err(Rule::Timestamp).in_key("saved_at"));
    }
    if !is_timestamp(expires_at) {
        return Err(err(Rule::Timestamp).in_key("expires_at"));
    }
    if expires_at < saved_at || expires_at.0 - saved_at.0 > MAX_TEXT_AGE_MS {
        return Err(err(Rule::TextTimes).in_key("expires_at"));
    }
    if screen_rows != usize::from(rows) {
        return Err(err(Rule::TextRows).in_key("screen"));
    }
    if let Text::Plain(plain) = text {
        for (key, lines) in [("screen", &plain.screen), ("history", &plain.history)] {
            if let Some(i) = lines.iter().position(|l| has_control(l)) {
                return Err(err(Rule::TextControl).in_index(i).in_key(key));
            }
        }
    }
    Ok(())
}

fn check_trees(cp: &Checkpoint, format: Format) -> Result<()> {
    let mut placed = vec![false; cp.panes.len()];
    for (wi, w) in cp.windows.iter().enumerate() {
        let in_window = |e: FormatError| e.in_key("nodes").in_index(wi).in_key("windows");
        check_tree(&w.nodes, format).map_err(in_window)?;
        for (ni, node) in w.nodes.iter().enumerate() {
            let Node::Pane { pane } = node else { continue };
            let leaf = |rule| in_window(err(rule).in_key("pane").in_index(ni));
            let Ok(pi) = cp.panes.binary_search_by_key(pane, |p| p.id) else {
                return Err(leaf(Rule::LeafUnknownPane));
            };
            let p = &cp.panes[pi];
            if p.window != w.id {
                return Err(leaf(Rule::LeafOtherWindow));
            }
            if p.float.is_some() {
                return Err(leaf(Rule::LeafFloat));
            }
            if std::mem::replace(&mut placed[pi], true) {
                return Err(leaf(Rule::LeafDuplicate));
            }
        }
    }
    if let Some(pi) = cp
        .panes
        .iter()
        .zip(&placed)
        .position(|(p, &seen)| p.float.is_none() && !seen)
    {
        return Err(at(Rule::PaneNotInTree, "panes", pi, "pane"));
    }
    Ok(())
}

/// Preorder: a split at `i` has `first == i + 1` and `second` right after its first
/// subtree; the root's subtree spans every node. Iterative, so depth costs no stack.
fn check_tree(nodes: &[Node], format: Format) -> Result<()> {
    if nodes.is_empty() {
        return Ok(());
    }
    // Splits on the path from the root, and whether each is walking its second child.
    let mut path: Vec<(usize, bool)> = Vec::new();
    let mut i = 0usize;
    loop {
        let end = match nodes[i] {
            Node::Split { first, ratio, .. } => {
                if let Some(r) = ratio {
                    if !format.has_ratios() {
                        return Err(err(Rule::UnknownField).in_key("ratio").in_index(i));
                    }
                    if !(MIN_RATIO..=MAX_RATIO).contains(&u64::from(r)) {
                        return Err(err(Rule::Ratio).in_key("ratio").in_index(i));
                    }
                }
                if first >= nodes.len() {
                    return Err(err(Rule::TreeIndex).in_key("first").in_index(i));
                }
                if first != i + 1 {
                    return Err(err(Rule::TreePreorder).in_key("first").in_index(i));
                }
                path.push((i, false));
                i = first;
                continue;
            }
            Node::Pane { .. } => i + 1,
        };
        // A subtree just ended at `end`: start the second child of the nearest split
        // still in its first child, closing every split whose second child ended.
        loop {
            match path.last_mut() {
                None if end == nodes.len() => return Ok(()),
                None => return Err(err(Rule::TreeLeftover).in_index(end)),
                Some((_, true)) => {
                    path.pop();
                }
                Some((split, in_second)) => {
                    let Node::Split { second, .. } = nodes[*split] else {
                        unreachable!("only splits are on the path")
                    };
                    if second >= nodes.len() {
                        return Err(err(Rule::TreeIndex).in_key("second").in_index(*split));
                    }
                    if second != end {
                        return Err(err(Rule::TreePreorder).in_key("second").in_index(*split));
                    }
                    *in_second = true;
                    i = second;
                    break;
                }
            }
        }
    }
}
