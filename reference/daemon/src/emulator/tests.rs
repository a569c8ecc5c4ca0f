//! The emulator's text rules, the lazy terminal and the kept capture.

use super::*;

/// RFC §4's rules read literally: drop continuation cells, control characters
/// become spaces, trailing spaces are trimmed. The reference for [`plain_row`].
fn plain_row_by_the_rules(line: &avt::Line) -> String {
    let text: String = line
        .cells()
        .iter()
        .filter(|cell| cell.width() != 0)
        .map(|cell| {
            let c = cell.char();
            if is_control(c) {
                ' '
            } else {
                c
            }
        })
        .collect();
    text.trim_end_matches(' ').to_string()
}

/// Every row of both screens, history included, read both ways.
fn assert_rows_match_the_rules(e: &Emulator) {
    let Screen::Live(live) = &e.screen else {
        panic!("live screen expected")
    };
    let Some(t) = live.terminal.fed() else {
        return;
    };
    for line in t.primary_screen().all_lines().chain(t.screen().all_lines()) {
        assert_eq!(plain_row(line), plain_row_by_the_rules(line), "{line:?}");
    }
}

#[test]
fn fast_rows_equal_the_rules_on_tricky_screens() {
    let tricky: &[&[u8]] = &[
        b"a\tb\t\tc   \r\n",
        "\u{754c}\u{754c}x\u{754c}\r\n".as_bytes(),
        // A wide character that does not fit in the last column wraps.
        "0123456789012345678\u{754c}\r\n".as_bytes(),
        "e\u{301} combining, then NBSP\u{a0}\r\n".as_bytes(),
        b"\x1b[41m   \x1b[0m colored blanks \x1b[44m   \x1b[K\r\n",
        b"bell\x07 and \x1b]0;title\x07 osc, C1 \xc2\x9b and DEL \x7f end\r\n",
        b"\x1b[5;10Hmid-screen\x1b[1;30Hfar\x1b[24;1Hbottom",
        b"\x1b[?1049h\x1b[Halternate \t \xe7\x95\x8c \x1b[?1049l",
        b"\r\n   \r\n\t\r\n",
        b"\xff\xfe invalid utf-8\r\n",
    ];
    let mut e = Emulator::new(20, 6, 50);
    for chunk in tricky.iter().cycle().take(60) {
        e.feed(chunk);
        assert_rows_match_the_rules(&e);
    }
    // Arbitrary bytes (a fixed xorshift stream) biased to escapes, tabs and
    // controls, read after every chunk; the alternate screen active at the end.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut bytes = Vec::new();
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x as u8;
        bytes.push(match b % 8 {
            0 => 0x1b,
            1 => b'\t',
            2 => b % 32,
            _ => b,
        });
    }
    let mut e = Emulator::new(13, 4, 30);
    for chunk in bytes.chunks(97) {
        e.feed(chunk);
        assert_rows_match_the_rules(&e);
    }
    e.feed(b"\x1b[?1049hALT\tscreen");
    assert!(e.alternate_active());
    assert_rows_match_the_rules(&e);
}

#[test]
fn a_kept_capture_is_never_stale() {
    let fresh = |e: &Emulator| match &e.screen {
        Screen::Live(live) => live
            .terminal
            .fed()
            .map(Live::capture)
            .expect("fed before it is read"),
        Screen::Literal(_) => panic!("live screen expected"),
    };
    let mut e = Emulator::new(12, 3, 20);
    e.feed(b"one\r\ntwo\r\n");
    let first = e.capture();
    assert_eq!(first, fresh(&e));
    assert_eq!(e.capture(), first, "unchanged: the kept capture");
    e.feed(b"three");
    assert_eq!(e.capture().screen, vec!["one", "two", "three"]);
    e.feed(b"");
    assert_eq!(e.capture(), fresh(&e));
    e.resize(5, 2);
    assert_eq!(e.capture(), fresh(&e), "a resize drops the kept capture");
    e.feed(b"\x1b[?1049hALT");
    assert_eq!(e.capture(), fresh(&e));
    // Any interleaving of feeds, resizes and captures reads what avt holds.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in 0..400u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        match x % 5 {
            0 => e.resize(1 + (x >> 8) as u16 % 30, 1 + (x >> 16) as u16 % 6),
            1 | 2 => e.feed(format!("{i}:{x:x}\r\n\t\u{754c}").as_bytes()),
            _ => {}
        }
        assert_eq!(e.capture(), fresh(&e), "step {i}");
    }
}

#[test]
fn captures_rows_with_tabs_expanded_and_wide_chars_once() {
    let mut e = Emulator::new(20, 3, 100);
    e.feed(b"a\tb\r\n\xe7\x95\x8cx\r\n");
    let c = e.capture();
    assert_eq!(c.screen, vec!["a       b", "\u{754c}x", ""]);
    assert!(c.history.is_empty());
}

#[test]
fn utf8_split_across_chunks_is_joined() {
    let mut e = Emulator::new(10, 2, 10);
    e.feed(b"\xe2\x82");
    e.feed(b"\xac!");
    assert_eq!(e.capture().screen[0], "\u{20ac}!");
    e.feed(b"\r\n\xff?");
    assert_eq!(e.capture().screen[1], "\u{fffd}?");
}

#[test]
fn history_is_oldest_first_and_bounded() {
    let mut e = Emulator::new(10, 2, 3);
    for i in 0..8 {
        e.feed(format!("line{i}\r\n").as_bytes());
    }
    let c = e.capture();
    assert_eq!(c.screen, vec!["line7", ""]);
    assert_eq!(c.history, vec!["line4", "line5", "line6"]);
}

#[test]
fn primary_screen_survives_the_alternate_screen() {
    let mut e = Emulator::new(20, 3, 100);
    e.feed(b"before\r\n");
    e.feed(b"\x1b[?1049h\x1b[HALTERNATE");
    assert!(e.alternate_active());
    let c = e.capture();
    assert_eq!(c.screen[0], "before");
    assert!(!c.screen.iter().any(|r| r.contains("ALTERNATE")));
    // Reading did not leave the alternate screen.
    assert!(e.alternate_active());
    e.feed(b"\x1b[?1049l");
    assert_eq!(e.capture().screen[0], "before");
}

#[test]
fn literal_hydration_keeps_rows_and_counts_cuts() {
    let screen = vec!["$ echo hi".to_string(), "wide \u{754c}\u{754c}".into()];
    let history = vec!["old".to_string(), "0123456789abc".to_string()];
    let (e, cut) = Emulator::literal(10, 3, 100, &screen, &history);
    assert_eq!(cut, 1, "only the 13-cell history row is cut");
    let c = e.capture();
    assert_eq!(c.screen, vec!["$ echo hi", "wide \u{754c}\u{754c}", ""]);
    assert_eq!(c.history, vec!["old", "0123456789"]);
    assert!(e.is_literal());
}

#[test]
fn literal_screen_never_parses_escapes_and_ignores_output() {
    let screen = vec!["a\u{1b}[2Jb".to_string()];
    let (mut e, _) = Emulator::literal(20, 1, 10, &screen, &[]);
    e.feed(b"\x1b[2Jgone");
    assert_eq!(e.capture().screen, vec!["a [2Jb"]);
    e.resize(20, 2);
    assert_eq!(e.capture().screen, vec!["a [2Jb", ""]);
    e.resize(20, 1);
    assert_eq!(e.capture().screen, vec![""]);
    assert_eq!(e.capture().history, vec!["a [2Jb"]);
}

/// An emulator whose avt terminal exists from the start, as before lazy creation.
fn eager(cols: u16, rows: u16, history_rows: usize) -> Emulator {
    let mut e = Emulator::new(cols, rows, history_rows);
    if let Screen::Live(live) = &mut e.screen {
        live.terminal.materialize();
    }
    e
}

fn same_reads(lazy: &Emulator, eager: &Emulator, step: &str) {
    assert_eq!(lazy.capture(), eager.capture(), "capture after {step}");
    assert_eq!(lazy.snapshot(), eager.snapshot(), "snapshot after {step}");
    assert_eq!(lazy.alternate_active(), eager.alternate_active(), "{step}");
    assert_eq!(lazy.fed(), eager.fed(), "{step}");
}

fn unfed(e: &Emulator) -> bool {
    matches!(&e.screen, Screen::Live(l) if l.terminal.fed().is_none())
}

#[test]
fn an_idle_pane_makes_no_terminal_until_output() {
    let mut e = Emulator::new(80, 24, 10_000);
    e.resize(80, 50);
    e.resize(77, 10);
    e.resize(79, 12);
    let _ = (e.capture(), e.snapshot(), e.alternate_active());
    e.feed(b"");
    assert!(unfed(&e), "reads, row changes and narrowing keep it lazy");
    e.feed(b"x");
    assert!(!unfed(&e));
    assert_eq!(e.capture().screen[0], "x");
    // avt's tab-stop quirk: widening from a multiple of 8 makes the terminal.
    let mut e = Emulator::new(80, 24, 10);
    e.resize(100, 24);
    assert!(!unfed(&e));
}

#[test]
fn an_unfed_pane_reads_like_a_fresh_terminal() {
    // Output that depends on every piece of state a resize could leave behind:
    // tab stops, margins, wrapping, scrolling into history, the saved cursor, the
    // alternate screen, a split UTF-8 sequence.
    let probe: &[&[u8]] = &[
        b"a\tb\tc\t\td\r\n",
        b"\x1b7\x1b[5;3Hmid\x1b8top",
        &[b'x'; 300],
        b"\r\n1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n\x1b[r\x1b[2;3r\x1bM",
        b"\x1b[?1049h\x1b[Halt\x1b[?1049l\xe2\x82",
    ];
    let sizes: &[&[(u16, u16)]] = &[
        &[],
        &[(80, 24)],
        &[(20, 5)],
        &[(200, 60)],
        &[(20, 5), (80, 24)],
        &[(5, 40), (300, 2), (0, 0), (33, 7)],
        &[(1, 1)],
    ];
    for &(cols, rows, history) in &[(80u16, 24u16, 100usize), (10, 3, 0), (0, 0, 5)] {
        for chain in sizes {
            let mut lazy = Emulator::new(cols, rows, history);
            let mut eager = eager(cols, rows, history);
            same_reads(&lazy, &eager, "creation");
            assert!(unfed(&lazy));
            for &(c, r) in *chain {
                lazy.resize(c, r);
                eager.resize(c, r);
                same_reads(&lazy, &eager, &format!("resize to {c}x{r}"));
            }
            lazy.feed(b"");
            for bytes in probe {
                lazy.feed(bytes);
                eager.feed(bytes);
                same_reads(&lazy, &eager, &format!("{cols}x{rows} {chain:?} {bytes:?}"));
            }
            lazy.resize(17, 4);
            eager.resize(17, 4);
            same_reads(&lazy, &eager, "a resize after output");
        }
    }
}

#[test]
fn control_characters_never_reach_rows() {
    let mut e = Emulator::new(10, 1, 0);
    e.feed(b"a\x07b\x1b]0;title\x07c\x9b");
    let row = &e.capture().screen[0];
    assert!(!row.chars().any(is_control), "{row:?}");
    assert!(row.starts_with("abc"));
}
