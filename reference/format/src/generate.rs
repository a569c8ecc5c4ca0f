//! Valid checkpoint states built from unstructured bytes: one generator for
//! proptest (bytes strategy → state) and for the fuzzers (`Arbitrary` input).
//! Every state it returns passes [`crate::validate`] for the format it was asked for.

use arbitrary::{Result, Unstructured};

use crate::ids::checkpoint_id_from_bytes;
use crate::limits::{MAX_SAFE_INTEGER, MAX_TAGS, MAX_TEXT_AGE_MS};
use crate::model::*;
use crate::time::{MAX_TIMESTAMP, MIN_TIMESTAMP};

/// Characters names and text rows are drawn from: ASCII, JSON-escaped characters,
/// multi-byte UTF-8 and astral code points (no control characters).
const PALETTE: &[char] = &[
    'a', 'b', 'z', 'A', 'Z', '0', '9', ' ', '"', '\\', '/', '\'', '{', '}', '[', ']', ':', ',',
    '%', '.', '-', '_', 'é', 'ß', 'ω', '—', '✓', '漢', '字', '🙂', '\u{a0}', '\u{200b}',
    '\u{fffd}',
];

fn text(u: &mut Unstructured, min: usize, max_chars: usize, max_bytes: usize) -> Result<String> {
    let len = u.int_in_range(min..=max_chars)?;
    let mut out = String::new();
    for _ in 0..len {
        let c = *u.choose(PALETTE)?;
        if out.len() + c.len_utf8() > max_bytes {
            break;
        }
        out.push(c);
    }
    while out.len() < min {
        out.push('x');
    }
    Ok(out)
}

fn ascending_ids(u: &mut Unstructured, count: usize) -> Result<Vec<u64>> {
    let mut ids = Vec::with_capacity(count);
    let mut next: u64 = if u.ratio(1, 8)? {
        u.int_in_range(0..=MAX_SAFE_INTEGER - 64)?
    } else {
        0
    };
    for _ in 0..count {
        ids.push(next);
        let step = if u.ratio(1, 4)? {
            u.int_in_range(1..=1000)?
        } else {
            1
        };
        next = (next + step).min(MAX_SAFE_INTEGER);
        if ids.last() == Some(&next) {
            break;
        }
    }
    Ok(ids)
}

fn timestamp(u: &mut Unstructured) -> Result<Timestamp> {
    if u.ratio(1, 16)? {
        return Ok(*u.choose(&[MIN_TIMESTAMP, MAX_TIMESTAMP, Timestamp(0)])?);
    }
    // Mostly recent instants, where real checkpoints live.
    Ok(Timestamp(
        u.int_in_range(1_700_000_000_000i64..=1_900_000_000_000)?,
    ))
}

/// A state valid under `format`, using only what that format can hold.
pub fn checkpoint(u: &mut Unstructured, format: Format) -> Result<Checkpoint> {
    let shutdown = if u.ratio(1, 4)? {
        Shutdown::Clean
    } else {
        Shutdown::Open
    };
    let session_ids = {
        let n = u.int_in_range(0..=4)?;
        ascending_ids(u, n)?
    };
    let sessions = session_ids
        .iter()
        .map(|&id| {
            Ok(Session {
                id,
                name: text(u, 1, 12, 255)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let window_ids = if sessions.is_empty() {
        Vec::new()
    } else {
        let n = u.int_in_range(0..=4)?;
        ascending_ids(u, n)?
    };
    let mut windows = Vec::new();
    for id in window_ids {
        let session = u.choose(&sessions)?.id;
        let revision = if u.ratio(1, 8)? {
            MAX_SAFE_INTEGER
        } else {
            u.int_in_range(1..=100)?
        };
        windows.push(Window {
            id,
            session,
            name: text(u, 1, 12, 255)?,
            revision,
            nodes: Vec::new(),
        });
    }
    let pane_ids = if windows.is_empty() {
        Vec::new()
    } else {
        let n = u.int_in_range(0..=8)?;
        ascending_ids(u, n)?
    };
    let mut panes = Vec::new();
    for id in pane_ids {
        let w = u.choose_index(windows.len())?;
        panes.push(pane(u, id, &windows[w], format, shutdown)?);
    }
    for window in &mut windows {
        let mut leaves: Vec<u64> = panes
            .iter()
            .filter(|p| p.window == window.id && p.float.is_none())
            .map(|p| p.id)
            .collect();
        // Any order of leaves is a valid tree; shuffle so trees don't mirror ID order.
        for i in (1..leaves.len()).rev() {
            let j = u.int_in_range(0..=i)?;
            leaves.swap(i, j);
        }
        tree(u, &leaves, format, &mut window.nodes)?;
    }
    let mut id = [0u8; 16];
    u.fill_buffer(&mut id)?;
    Ok(Checkpoint {
        checkpoint: checkpoint_id_from_bytes(id),
        generation: if u.ratio(1, 8)? {
            MAX_SAFE_INTEGER
        } else {
            u.int_in_range(1..=1000)?
        },
        socket: format!("/{}", text(u, 0, 16, 4000)?.replace('\0', "")),
        uid: if u.ratio(1, 8)? {
            MAX_SAFE_INTEGER
        } else {
            u.int_in_range(0..=70000)?
        },
        captured_at: timestamp(u)?,
        shutdown,
        sessions,
        windows,
        panes,
    })
}

/// Appends the preorder nodes of a random binary tree over `leaves`.
fn tree(u: &mut Unstructured, leaves: &[u64], format: Format, nodes: &mut Vec<Node>) -> Result<()> {
    match leaves {
        [] => Ok(()),
        [pane] => {
            nodes.push(Node::Pane { pane: *pane });
            Ok(())
        }
        _ => {
            let at = u.int_in_range(1..=leaves.len() - 1)?;
            let me = nodes.len();
            let axis = if u.arbitrary()? {
                Axis::Cols
            } else {
                Axis::Rows
            };
            let ratio = if format.has_ratios() && u.arbitrary()? {
                Some(u.int_in_range(1..=9999)?)
            } else {
                None
            };
            nodes.push(Node::Split {
                axis,
                first: me + 1,
                second: 0,
                ratio,
            });
            tree(u, &leaves[..at], format, nodes)?;
            let second = nodes.len();
            if let Node::Split { second: s, .. } = &mut nodes[me] {
                *s = second;
            }
            tree(u, &leaves[at..], format, nodes)
        }
    }
}

fn pane(
    u: &mut Unstructured,
    id: u64,
    window: &Window,
    format: Format,
    shutdown: Shutdown,
) -> Result<Pane> {
    let running = shutdown == Shutdown::Open && u.arbitrary()?;
    let state = if running {
        PaneState::Running
    } else {
        let exit = match u.int_in_range(0..=2)? {
            0 => None,
            1 => Some(Exit::Code(u.arbitrary()?)),
            _ => Some(Exit::Signal(
                u.choose(&["SIGTERM", "SIGKILL", "SIGHUP", "SIGRTMIN1", "SIGX"])?
                    .to_string(),
            )),
        };
        PaneState::Exited { exit }
    };
    let previous_state = match (running, u.int_in_range(0..=2)?) {
        (false, 1) => Some(PreviousState::Exited),
        (false, 2) => Some(PreviousState::Interrupted),
        _ => None,
    };
    let text_kind = u.int_in_range(0..=2)?;
    let rows: u16 = if text_kind == 2 {
        u.int_in_range(1..=6)?
    } else {
        u.int_in_range(1..=65535)?
    };
    let text = match text_kind {
        0 => Text::Omitted,
        1 => Text::Expired,
        _ => {
            let saved_at = timestamp(u)?;
            let room = (MAX_TIMESTAMP.0 - saved_at.0).min(MAX_TEXT_AGE_MS);
            let expires_at = Timestamp(saved_at.0 + u.int_in_range(0..=room)?);
            let screen = (0..rows)
                .map(|_| text(u, 0, 20, 4096))
                .collect::<Result<_>>()?;
            let history_len = u.int_in_range(0..=4)?;
            let history = (0..history_len)
                .map(|_| text(u, 0, 20, 4096))
                .collect::<Result<_>>()?;
            Text::Plain(PlainText {
                saved_at,
                expires_at,
                screen,
                history,
            })
        }
    };
    let (float, tags) = if format.has_floats_and_tags() {
        let float = if u.ratio(1, 3)? {
            Some(float_spec(u)?)
        } else {
            None
        };
        (float, tags(u)?)
    } else {
        (None, Vec::new())
    };
    Ok(Pane {
        id,
        window: window.id,
        session: window.session,
        cols: u.int_in_range(1..=65535)?,
        rows,
        state,
        previous_state,
        float,
        tags,
        text,
    })
}

fn tags(u: &mut Unstructured) -> Result<Vec<Tag>> {
    const KEYS: &[&str] = &[
        "group", "owner", "role", "a", "a.b", "k-1", "z_9", "thread.7", "x",
    ];
    let mut tags: Vec<Tag> = Vec::new();
    let n = u.int_in_range(0..=MAX_TAGS)?;
    for _ in 0..n {
        let key = if u.ratio(1, 4)? {
            format!("k{}", u.int_in_range(0..=99999u32)?)
        } else {
            u.choose(KEYS)?.to_string()
        };
        if tags.iter().all(|t| t.key != key) {
            tags.push(Tag {
                key,
                value: text(u, 1, 10, 256)?,
            });
        }
    }
    tags.sort_by(|a, b| a.key.as_bytes().cmp(b.key.as_bytes()));
    Ok(tags)
}

fn float_spec(u: &mut Unstructured) -> Result<FloatSpec> {
    let extent = |u: &mut Unstructured| -> Result<Option<Extent>> {
        Ok(match u.int_in_range(0..=2)? {
            0 => None,
            1 => Some(Extent::Cells(u.int_in_range(1..=65535)?)),
            _ => Some(Extent::Percent(u.int_in_range(1..=100)?)),
        })
    };
    let offset = |u: &mut Unstructured| -> Result<Option<i16>> {
        Ok(if u.arbitrary()? {
            Some(u.int_in_range(-4096..=4096)?)
        } else {
            None
        })
    };
    let cells = |u: &mut Unstructured| -> Result<Option<u16>> {
        Ok(if u.arbitrary()? {
            Some(u.int_in_range(1..=65535)?)
        } else {
            None
        })
    };
    Ok(FloatSpec {
        preset: if u.arbitrary()? {
            Some(
                u.choose(&["venom.settings", "a.b", "x-1.y_2", "floats.default"])?
                    .to_string(),
            )
        } else {
            None
        },
        width: extent(u)?,
        height: extent(u)?,
        anchor: if u.arbitrary()? {
            Some(*u.choose(Anchor::ALL)?)
        } else {
            None
        },
        x: offset(u)?,
        y: offset(u)?,
        min_cols: cells(u)?,
        min_rows: cells(u)?,
        border: if u.arbitrary()? {
            Some(*u.choose(Border::ALL)?)
        } else {
            None
        },
        title: if u.arbitrary()? {
            Some(text(u, 1, 16, 128)?)
        } else {
            None
        },
        z: if u.ratio(1, 8)? {
            MAX_SAFE_INTEGER
        } else {
            u.int_in_range(1..=1000)?
        },
    })
}

/// A format and a state valid under it.
pub fn any(u: &mut Unstructured) -> Result<(Format, Checkpoint)> {
    let format = *u.choose(&Format::ALL)?;
    Ok((format, checkpoint(u, format)?))
}
