//! RFC §4's text bounds: per pane (rows and bytes, screen whole or not at all) and
//! per file (text omitted in reverse pane order until the encoded file fits).

use crate::emulator::{Capture, Emulator, TextBounds};
use std::sync::{Arc, Mutex};
use vx_format::{
    Checkpoint, EncodedRows, EncodedText, Format, PlainText, RecordCache, Text, Timestamp,
};
use vx_store::{ErrorCode, StoreError};

/// A screen's text for a checkpoint under RFC §4's per-pane bounds, saved at
/// `saved_at` until `expires_at`. A screen that did not change since a checkpoint
/// encoded its rows under the same bounds shares them ([`Emulator::kept_text`]);
/// otherwise its bounded rows come as `Text::Plain` and `fresh` is the screen's
/// version, for the worker to encode them and keep the encoding ([`encode_fresh`]),
/// so that no reactor turn encodes.
pub fn screen_text(
    screen: &Emulator,
    bounds: TextBounds,
    saved_at: Timestamp,
    expires_at: Timestamp,
) -> (Text, Option<u64>) {
    if let Some(kept) = screen.kept_text(bounds) {
        let text = kept.map_or(Text::Omitted, |rows| {
            Text::Encoded(EncodedText {
                saved_at,
                expires_at,
                rows,
            })
        });
        return (text, None);
    }
    let version = screen.version();
    match bounded_rows(screen.capture(), bounds) {
        Some((screen, history)) => (
            Text::Plain(PlainText {
                saved_at,
                expires_at,
                screen,
                history,
            }),
            Some(version),
        ),
        None => {
            screen.keep_text(bounds, None);
            (Text::Omitted, None)
        }
    }
}

/// A pane whose screen text the capture read as plain rows (`pane`: its index in the
/// checkpoint), with the screen's version then.
pub struct FreshText {
    pub pane: usize,
    pub screen: Arc<Mutex<Emulator>>,
    pub version: u64,
    pub bounds: TextBounds,
}

/// On the worker: encodes the fresh panes' rows (same bytes on disk) and keeps each
/// encoding in its emulator unless the screen changed since the capture. Rows that
/// hold a control character (capture replaces them all, so never) stay plain, and
/// the writer refuses them with the reader's rule as it always did.
pub fn encode_fresh(cp: &mut Checkpoint, fresh: &[FreshText]) {
    for f in fresh {
        let Some(pane) = cp.panes.get_mut(f.pane) else {
            continue;
        };
        let Text::Plain(t) = &pane.text else {
            continue;
        };
        let Ok(rows) = EncodedRows::new(&t.screen, &t.history) else {
            continue;
        };
        let rows = Arc::new(rows);
        if let Ok(screen) = f.screen.lock() {
            screen.keep_text_at(f.version, f.bounds, Some(Arc::clone(&rows)));
        }
        pane.text = Text::Encoded(EncodedText {
            saved_at: t.saved_at,
            expires_at: t.expires_at,
            rows,
        });
    }
}

/// RFC §4's per-pane text bounds: the screen keeps exactly `rows` rows and is kept
/// whole or not at all; history is capped by the rows and bytes left (rows and bytes
/// count screen and history together; a row's bytes are its UTF-8 length), dropping
/// the oldest rows first. What [`screen_text`] gives for a screen read afresh.
#[cfg(test)]
fn bounded_text(
    capture: Capture,
    rows: u16,
    max_rows: u64,
    max_bytes: u64,
    saved_at: Timestamp,
    expires_at: Timestamp,
) -> Text {
    let bounds = TextBounds {
        rows,
        max_rows,
        max_bytes,
    };
    match bounded_rows(capture, bounds) {
        Some((screen, history)) => Text::Plain(PlainText {
            saved_at,
            expires_at,
            screen,
            history,
        }),
        None => Text::Omitted,
    }
}

/// [`bounded_text`]'s rows, `(screen, history)`; `None` when the screen alone is over
/// the bounds (the text is omitted).
fn bounded_rows(capture: Capture, bounds: TextBounds) -> Option<(Vec<String>, Vec<String>)> {
    let TextBounds {
        rows,
        max_rows,
        max_bytes,
    } = bounds;
    let (mut screen, mut history) = (capture.screen, capture.history);
    // Exactly `rows` rows; should the emulator still be taller, its top rows are
    // history, as in a terminal that shrinks.
    if screen.len() > usize::from(rows) {
        let extra = screen.len() - usize::from(rows);
        history.extend(screen.drain(..extra));
    }
    screen.resize(usize::from(rows), String::new());
    let screen_bytes: u64 = screen.iter().map(|r| r.len() as u64).sum();
    if screen.len() as u64 > max_rows || screen_bytes > max_bytes {
        return None;
    }
    let mut rows_left = max_rows - screen.len() as u64;
    let mut bytes_left = max_bytes - screen_bytes;
    let mut keep = 0;
    for row in history.iter().rev() {
        if rows_left == 0 || row.len() as u64 > bytes_left {
            break;
        }
        rows_left -= 1;
        bytes_left -= row.len() as u64;
        keep += 1;
    }
    history.drain(..history.len() - keep);
    Some((screen, history))
}

/// Encodes `cp` in the current format within `max_bytes`: when it does not fit, pane
/// text is omitted in reverse numeric pane order until it does (RFC §4); topology is
/// never dropped, so a checkpoint whose topology alone is too large fails. Records
/// unchanged since the previous write through `records` are not encoded again.
pub fn encode_fitting(
    cp: &mut Checkpoint,
    max_bytes: u64,
    records: &mut RecordCache,
) -> Result<Vec<u8>, StoreError> {
    let mut cursor = cp.panes.len();
    loop {
        let bytes = vx_format::write_cached(cp, Format::CURRENT, records)?;
        if bytes.len() as u64 <= max_bytes {
            return Ok(bytes);
        }
        let mut need = bytes.len() as u64 - max_bytes;
        let mut dropped = false;
        while need > 0 && cursor > 0 {
            cursor -= 1;
            let pane = &mut cp.panes[cursor];
            // At least this much leaves the file: each row's bytes plus its quotes
            // and separator (the encoded rows' own length), plus the text object's
            // fixed fields.
            let rows: u64 = match &pane.text {
                Text::Plain(t) => t
                    .screen
                    .iter()
                    .chain(&t.history)
                    .map(|r| r.len() as u64 + 3)
                    .sum(),
                Text::Encoded(t) => t.rows.payload_len() as u64,
                Text::Omitted | Text::Expired => continue,
            };
            pane.text = Text::Omitted;
            need = need.saturating_sub(rows + 64);
            dropped = true;
        }
        if !dropped {
            return Err(StoreError::new(
                ErrorCode::CheckpointSize,
                "topology alone exceeds max_checkpoint_bytes",
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vx_format::{Pane, PaneState, Session, Shutdown, Window};

    /// A checkpoint's text of `e` as the capture and then the worker make it.
    fn through_worker(e: &Arc<Mutex<Emulator>>, bounds: TextBounds) -> Text {
        let (text, read_at) = screen_text(&e.lock().unwrap(), bounds, Timestamp(1), Timestamp(2));
        let mut cp = checkpoint(1, "");
        cp.panes[0].text = text;
        if let Some(version) = read_at {
            let fresh = FreshText {
                pane: 0,
                screen: Arc::clone(e),
                version,
                bounds,
            };
            encode_fresh(&mut cp, &[fresh]);
        }
        cp.panes.pop().unwrap().text
    }

    fn encoded(e: &Arc<Mutex<Emulator>>, bounds: TextBounds) -> Option<Arc<EncodedRows>> {
        match through_worker(e, bounds) {
            Text::Encoded(t) => Some(t.rows),
            Text::Omitted => None,
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn a_screen_is_encoded_once_per_change_and_per_bounds() {
        let e = Arc::new(Mutex::new(Emulator::new(10, 2, 100)));
        e.lock().unwrap().feed(b"a\r\nb\r\nc");
        let bounds = TextBounds {
            rows: 2,
            max_rows: 10,
            max_bytes: 100,
        };
        let read = |e: &Arc<Mutex<Emulator>>| {
            screen_text(&e.lock().unwrap(), bounds, Timestamp(1), Timestamp(2))
        };
        let (text, read_at) = read(&e);
        assert!(
            matches!(text, Text::Plain(_)) && read_at.is_some(),
            "a screen never encoded comes plain, for the worker to encode"
        );
        let first = encoded(&e, bounds).unwrap();
        let (text, read_at) = read(&e);
        assert!(
            matches!(text, Text::Encoded(_)) && read_at.is_none(),
            "the worker kept its encoding"
        );
        let again = encoded(&e, bounds).unwrap();
        assert!(
            Arc::ptr_eq(&first, &again),
            "an unchanged screen shares its rows"
        );
        let rows = |s: &[&str]| s.iter().map(|r| r.to_string()).collect::<Vec<_>>();
        assert_eq!(first.rows(), (rows(&["b", "c"]), rows(&["a"])));
        let tight = TextBounds {
            max_rows: 2,
            ..bounds
        };
        assert_eq!(
            encoded(&e, tight).unwrap().rows(),
            (rows(&["b", "c"]), vec![])
        );
        let over = TextBounds {
            max_bytes: 1,
            ..bounds
        };
        assert_eq!(
            encoded(&e, over),
            None,
            "a screen over the bounds is omitted"
        );
        assert_eq!(encoded(&e, over), None);
        e.lock().unwrap().feed(b"\r\nd");
        let fed = encoded(&e, bounds).unwrap();
        assert_eq!(fed.rows(), (rows(&["c", "d"]), rows(&["a", "b"])));
        e.lock().unwrap().resize(10, 3);
        let taller = TextBounds { rows: 3, ..bounds };
        assert_eq!(
            encoded(&e, taller).unwrap().rows().0.len(),
            3,
            "a resize makes it again"
        );
        // A screen that changes between the capture and the worker keeps nothing.
        let (text, read_at) = read(&e);
        assert!(read_at.is_some() || matches!(text, Text::Encoded(_)));
        e.lock().unwrap().feed(b"x");
        let (_, read_at) = read(&e);
        let version = read_at.unwrap();
        e.lock().unwrap().feed(b"y");
        e.lock().unwrap().keep_text_at(version, bounds, None);
        assert!(e.lock().unwrap().kept_text(bounds).is_none());
    }

    #[test]
    fn kept_text_always_reads_as_a_fresh_capture() {
        // Feeds, resizes and bounds changes interleaved with captures: the text, kept
        // or made, is always the plain reading of the screen as it is.
        let e = Arc::new(Mutex::new(Emulator::new(12, 3, 20)));
        let mut seed = 11u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        let chunks: [&[u8]; 6] = [
            b"hello\r\n",
            b"\x1b[2J\x1b[H",
            b"wide \xe7\x95\x8c\r\n",
            b"tab\there\r\n",
            b"\x1b[?1049halt\x1b[?1049l",
            b"\"q\" back\\slash\r\n",
        ];
        let mut shared = 0;
        for _ in 0..400 {
            let (max_rows, max_bytes) = (
                [3, 5, 100][next() as usize % 3],
                [8, 40, 10_000][next() as usize % 3],
            );
            match next() % 5 {
                0 | 1 => e
                    .lock()
                    .unwrap()
                    .feed(chunks[next() as usize % chunks.len()]),
                2 => e
                    .lock()
                    .unwrap()
                    .resize(8 + (next() % 8) as u16, 2 + (next() % 3) as u16),
                _ => {}
            }
            let bounds = TextBounds {
                rows: e.lock().unwrap().capture().screen.len() as u16,
                max_rows,
                max_bytes,
            };
            let fast = through_worker(&e, bounds);
            shared += usize::from(matches!(
                screen_text(&e.lock().unwrap(), bounds, Timestamp(1), Timestamp(2)).0,
                Text::Encoded(_) | Text::Omitted
            ));
            let plain = bounded_text(
                e.lock().unwrap().capture(),
                bounds.rows,
                bounds.max_rows,
                bounds.max_bytes,
                Timestamp(1),
                Timestamp(2),
            );
            assert_eq!(fast.to_plain(), plain);
        }
        assert_eq!(shared, 400, "every text the worker made is kept");
    }

    fn text(screen: &[&str], history: &[&str]) -> Capture {
        Capture {
            screen: screen.iter().map(|s| s.to_string()).collect(),
            history: history.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn history_is_capped_by_rows_and_bytes_oldest_first() {
        let t = bounded_text(
            text(&["s1", "s2"], &["h1", "h2", "h3"]),
            2,
            4,
            100,
            Timestamp(1),
            Timestamp(2),
        );
        let Text::Plain(p) = t else { panic!() };
        assert_eq!(p.history, vec!["h2", "h3"]);
        let t = bounded_text(
            text(&["s1", "s2"], &["h1", "hh2", "h3"]),
            2,
            100,
            8,
            Timestamp(1),
            Timestamp(2),
        );
        let Text::Plain(p) = t else { panic!() };
        assert_eq!(p.history, vec!["h3"], "bytes: 4 screen + 2 + 3 > 8");
    }

    #[test]
    fn a_screen_over_budget_omits_the_whole_text() {
        let t = bounded_text(
            text(&["abc", "d"], &[]),
            2,
            1,
            100,
            Timestamp(1),
            Timestamp(2),
        );
        assert_eq!(t, Text::Omitted);
        let t = bounded_text(
            text(&["abc", "d"], &[]),
            2,
            10,
            3,
            Timestamp(1),
            Timestamp(2),
        );
        assert_eq!(t, Text::Omitted);
        let t = bounded_text(text(&["a"], &[]), 3, 10, 3, Timestamp(1), Timestamp(2));
        let Text::Plain(p) = t else { panic!() };
        assert_eq!(p.screen, vec!["a", "", ""], "exactly rows rows");
        let t = bounded_text(
            text(&["s1", "s2", "s3"], &["h"]),
            2,
            10,
            100,
            Timestamp(1),
            Timestamp(2),
        );
        let Text::Plain(p) = t else { panic!() };
        assert_eq!(
            (p.screen, p.history),
            (
                vec!["s2".to_string(), "s3".into()],
                vec!["h".to_string(), "s1".into()]
            )
        );
    }

    fn checkpoint(panes: usize, row: &str) -> Checkpoint {
        Checkpoint {
            checkpoint: "c01234567-89ab-4cde-8fab-0123456789ab".into(),
            generation: 1,
            socket: "/s".into(),
            uid: 0,
            captured_at: Timestamp(1_700_000_000_000),
            shutdown: Shutdown::Open,
            sessions: vec![Session {
                id: 0,
                name: "s".into(),
            }],
            windows: vec![Window {
                id: 0,
                session: 0,
                name: "w".into(),
                revision: 1,
                nodes: vec![],
            }],
            panes: (0..panes as u64)
                .map(|id| Pane {
                    id,
                    window: 0,
                    session: 0,
                    cols: 10,
                    rows: 1,
                    state: PaneState::Running,
                    previous_state: None,
                    float: Some(vx_format::FloatSpec {
                        z: id + 1,
                        ..Default::default()
                    }),
                    tags: vec![],
                    text: Text::Plain(PlainText {
                        saved_at: Timestamp(1_700_000_000_000),
                        expires_at: Timestamp(1_700_000_001_000),
                        screen: vec![row.to_string()],
                        history: vec![],
                    }),
                })
                .collect(),
        }
    }

    /// `cp`'s plain texts in the encoded form the capture makes.
    fn encode_texts(cp: Checkpoint) -> Checkpoint {
        vx_format::testing::with_encoded_text(&cp)
    }

    #[test]
    fn text_is_omitted_in_reverse_pane_order_until_the_file_fits() {
        let row = "x".repeat(1000);
        for form in [std::convert::identity, encode_texts] {
            let mut cp = form(checkpoint(4, &row));
            let full = vx_format::write(&cp, Format::CURRENT).unwrap().len() as u64;
            let bytes = encode_fitting(&mut cp, full - 500, &mut RecordCache::new()).unwrap();
            assert!(bytes.len() as u64 <= full - 500);
            let kept: Vec<bool> = cp.panes.iter().map(|p| p.text.is_plain()).collect();
            assert_eq!(kept, vec![true, true, true, false]);
            let mut cp = form(checkpoint(4, &row));
            let e = encode_fitting(&mut cp, 200, &mut RecordCache::new()).unwrap_err();
            assert_eq!(e.code, ErrorCode::CheckpointSize);
        }
    }
}
