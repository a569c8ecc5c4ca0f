//! RFC §4's text bounds: per pane (rows and bytes, screen whole or not at all) and
//! per file (text omitted in reverse pane order until the encoded file fits).

use crate::emulator::Capture;
use vx_format::{Checkpoint, Format, PlainText, Text, Timestamp};
use vx_store::{ErrorCode, StoreError};

/// RFC §4's per-pane text bounds: the screen keeps exactly `rows` rows and is kept
/// whole or not at all; history is capped by the rows and bytes left (rows and bytes
/// count screen and history together; a row's bytes are its UTF-8 length), dropping
/// the oldest rows first.
pub fn bounded_text(
    capture: Capture,
    rows: u16,
    max_rows: u64,
    max_bytes: u64,
    saved_at: Timestamp,
    expires_at: Timestamp,
) -> Text {
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
        return Text::Omitted;
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
    Text::Plain(PlainText {
        saved_at,
        expires_at,
        screen,
        history,
    })
}

/// Encodes `cp` in the current format within `max_bytes`: when it does not fit, pane
/// text is omitted in reverse numeric pane order until it does (RFC §4); topology is
/// never dropped, so a checkpoint whose topology alone is too large fails.
pub fn encode_fitting(cp: &mut Checkpoint, max_bytes: u64) -> Result<Vec<u8>, StoreError> {
    let mut cursor = cp.panes.len();
    loop {
        let bytes = vx_format::write(cp, Format::CURRENT)?;
        if bytes.len() as u64 <= max_bytes {
            return Ok(bytes);
        }
        let mut need = bytes.len() as u64 - max_bytes;
        let mut dropped = false;
        while need > 0 && cursor > 0 {
            cursor -= 1;
            let pane = &mut cp.panes[cursor];
            if let Text::Plain(t) = &pane.text {
                // At least this much leaves the file: each row's bytes plus its quotes
                // and separator, plus the text object's fixed fields.
                let estimate: u64 = t
                    .screen
                    .iter()
                    .chain(&t.history)
                    .map(|r| r.len() as u64 + 3)
                    .sum::<u64>()
                    + 64;
                pane.text = Text::Omitted;
                need = need.saturating_sub(estimate);
                dropped = true;
            }
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

    #[test]
    fn text_is_omitted_in_reverse_pane_order_until_the_file_fits() {
        let row = "x".repeat(1000);
        let mut cp = checkpoint(4, &row);
        let full = vx_format::write(&cp, Format::CURRENT).unwrap().len() as u64;
        let bytes = encode_fitting(&mut cp, full - 500).unwrap();
        assert!(bytes.len() as u64 <= full - 500);
        let kept: Vec<bool> = cp
            .panes
            .iter()
            .map(|p| matches!(p.text, Text::Plain(_)))
            .collect();
        assert_eq!(kept, vec![true, true, true, false]);
        let mut cp = checkpoint(4, &row);
        let e = encode_fitting(&mut cp, 200).unwrap_err();
        assert_eq!(e.code, ErrorCode::CheckpointSize);
    }
}
