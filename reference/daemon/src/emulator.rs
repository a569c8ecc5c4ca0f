//! Each pane's terminal emulator (the `avt` crate) and `pane.capture`'s text rules.
//!
//! Capture reads the *primary* screen and its history even while the alternate screen
//! is active (RFC §4, COM-261): avt keeps both buffers and `primary_screen()` reads the
//! inactive one without changing the live terminal. Rows follow RFC §4's text rules:
//! tabs are already expanded into cells by the emulator, width-0 continuation cells
//! (the right half of wide characters) are omitted, any control character is replaced
//! by a space, and trailing spaces are trimmed. `screen` has exactly `rows` entries;
//! `history` is oldest first.

use crate::topology::validate::is_control;

pub struct Emulator {
    screen: Screen,
    /// Output bytes fed so far: the absolute stream offset this screen reflects
    /// (attach snapshots start their stream here).
    fed: u64,
    /// The last capture of a live screen, kept until the screen changes.
    last_capture: LastCapture,
}

/// A checkpoint captures every pane in one reactor turn, and most panes print
/// nothing between two checkpoints: their rows are cloned from here instead of
/// being derived again from avt's cells (~16 bytes each: 1000 panes of 40 rows are
/// ~50 MB of cells per capture). `version` counts the changes to the screen (feed,
/// resize); the kept capture is valid only for the version it was taken at.
#[derive(Default)]
struct LastCapture {
    version: u64,
    kept: std::cell::RefCell<Option<(u64, Capture)>>,
}

impl LastCapture {
    fn changed(&mut self) {
        self.version += 1;
        *self.kept.get_mut() = None;
    }
}

enum Screen {
    /// A live pane: avt, fed with the program's output.
    Live(Box<Live>),
    /// A restored archive's literal rows (RFC §5 hydration). avt 0.19 has no
    /// literal-cell interface, only `feed` through its escape parser, so an archive's
    /// text never goes to avt: it is kept here as cell rows and read back by
    /// [`Emulator::capture`]. An archive has no PTY, so nothing is ever fed to it.
    Literal(Literal),
}

struct Live {
    terminal: Terminal,
    /// Bytes of an incomplete UTF-8 sequence at the end of the last chunk.
    pending: Vec<u8>,
}

/// avt allocates both 80x24 buffers of 16-byte cells when it is created (~60 KiB),
/// which was three quarters of an idle pane's memory. A pane that has printed nothing
/// keeps only its size; the terminal is made when the first byte arrives. Until then
/// every read gives what a fresh avt terminal of the current size gives (a resize of
/// a fresh avt terminal leaves exactly a fresh terminal of the new size:
/// `tests::an_unfed_pane_reads_like_a_fresh_terminal` checks both paths).
enum Terminal {
    Unfed {
        cols: usize,
        rows: usize,
        history_rows: usize,
    },
    /// Boxed so that an idle pane's `Live` stays small (the terminal is ~1.2 KiB).
    Fed(Box<avt::Terminal>),
}

impl Terminal {
    fn fed(&self) -> Option<&avt::Terminal> {
        match self {
            Terminal::Fed(t) => Some(t.as_ref()),
            Terminal::Unfed { .. } => None,
        }
    }

    /// The avt terminal, made now if nothing was fed yet.
    fn materialize(&mut self) -> &mut avt::Terminal {
        if let Terminal::Unfed {
            cols,
            rows,
            history_rows,
        } = *self
        {
            *self = Terminal::Fed(Box::new(fresh_terminal(cols, rows, history_rows)));
        }
        match self {
            Terminal::Fed(t) => t,
            Terminal::Unfed { .. } => unreachable!("materialized above"),
        }
    }

    fn resize(&mut self, new_cols: usize, new_rows: usize) {
        match self {
            // avt 0.19 widens its tab stops from the first multiple of 8 *after* the
            // old width, so a terminal widened from a multiple of 8 (80 columns) has no
            // stop at the old width, unlike a fresh terminal of the new width. That
            // terminal is made for real, to keep avt's behaviour exactly.
            Terminal::Unfed { cols, .. } if new_cols > *cols && *cols % 8 == 0 => {
                self.materialize().resize(new_cols, new_rows);
            }
            Terminal::Unfed { cols, rows, .. } => (*cols, *rows) = (new_cols, new_rows),
            Terminal::Fed(t) => t.resize(new_cols, new_rows),
        }
    }
}

/// A reset avt terminal; sizes are clamped to at least 1x1 by the callers.
fn fresh_terminal(cols: usize, rows: usize, history_rows: usize) -> avt::Terminal {
    avt::Terminal::with_scrollback(cols.max(1), rows.max(1), Some(history_rows))
        .unwrap_or_else(|_| unreachable_size())
}

/// Literal rows of an archive: `screen` holds the top rows, at most `rows` (rows
/// below them are blank and not stored, so an archive without text
/// allocates no rows: 33 330 of them held ~20 MiB of empty strings), history is
/// oldest first. Every row is plain cell text (no control characters) at most
/// `cols` cells wide.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Literal {
    cols: u16,
    rows: u16,
    history_rows: usize,
    screen: Vec<String>,
    history: Vec<String>,
}

/// Plain text of a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub screen: Vec<String>,
    pub history: Vec<String>,
}

impl Emulator {
    /// `history_rows` bounds the primary screen's scrollback.
    pub fn new(cols: u16, rows: u16, history_rows: usize) -> Self {
        Emulator {
            screen: Screen::Live(Box::new(Live {
                terminal: Terminal::Unfed {
                    cols: usize::from(cols.max(1)),
                    rows: usize::from(rows.max(1)),
                    history_rows,
                },
                pending: Vec::new(),
            })),
            fed: 0,
            last_capture: LastCapture::default(),
        }
    }

    /// A reset archive screen of `cols` x `rows` hydrated with literal rows, never
    /// through an escape parser: default style, cursor home, primary screen. A row
    /// wider than `cols` cells is cut at the last column and counted (RFC §5
    /// `cut_rows`); control characters cannot occur (the durable reader rejects them)
    /// and would be replaced by spaces if they did. Returns the emulator and the count
    /// of cut rows.
    pub fn literal(
        cols: u16,
        rows: u16,
        history_rows: usize,
        screen: &[String],
        history: &[String],
    ) -> (Self, u64) {
        let cols = cols.max(1);
        let rows = rows.max(1);
        let mut cut = 0u64;
        let mut clip = |row: &String| {
            let (text, was_cut) = clip_row(row, usize::from(cols));
            cut += u64::from(was_cut);
            text
        };
        let mut screen: Vec<String> = screen.iter().map(&mut clip).collect();
        let skip = history.len().saturating_sub(history_rows);
        let mut history: Vec<String> = history[skip..].iter().map(&mut clip).collect();
        // Exactly `rows` screen rows: extra top rows scroll into history, missing
        // rows are blank at the bottom.
        if screen.len() > usize::from(rows) {
            let extra = screen.len() - usize::from(rows);
            history.extend(screen.drain(..extra));
        }
        trim_blank_bottom(&mut screen);
        let over = history.len().saturating_sub(history_rows);
        history.drain(..over);
        let e = Emulator {
            screen: Screen::Literal(Literal {
                cols,
                rows,
                history_rows,
                screen,
                history,
            }),
            fed: 0,
            last_capture: LastCapture::default(),
        };
        (e, cut)
    }

    /// Whether this is an archive's literal screen.
    pub fn is_literal(&self) -> bool {
        matches!(self.screen, Screen::Literal(_))
    }

    /// Feeds program output. Invalid UTF-8 becomes U+FFFD; a sequence split across
    /// chunks is completed by the next chunk. An archive ignores it.
    pub fn feed(&mut self, bytes: &[u8]) {
        if let Screen::Live(live) = &mut self.screen {
            if bytes.is_empty() {
                return;
            }
            live.feed(bytes);
            self.fed += bytes.len() as u64;
            self.last_capture.changed();
        }
    }

    /// How many output bytes this screen reflects.
    pub fn fed(&self) -> u64 {
        self.fed
    }

    /// Output up to `offset` was lost before it reached the screen: count it as
    /// consumed so the offset stays the stream's.
    pub fn skip_to(&mut self, offset: u64) {
        self.fed = self.fed.max(offset);
    }

    pub fn resize(&mut self, cols: u16, rows: u16) {
        let (cols, rows) = (cols.max(1), rows.max(1));
        self.last_capture.changed();
        match &mut self.screen {
            Screen::Live(live) => live.terminal.resize(usize::from(cols), usize::from(rows)),
            Screen::Literal(l) => {
                // Rows are kept as saved (a narrower screen cuts them when read); the
                // screen keeps its bottom rows, like a terminal that shrinks.
                if rows < l.rows {
                    let extra = usize::from(l.rows - rows);
                    let stored = extra.min(l.screen.len());
                    l.history.extend(l.screen.drain(..stored));
                    l.history
                        .resize(l.history.len() + (extra - stored), String::new());
                    let over = l.history.len().saturating_sub(l.history_rows);
                    l.history.drain(..over);
                }
                l.cols = cols;
                l.rows = rows;
            }
        }
    }

    pub fn alternate_active(&self) -> bool {
        match &self.screen {
            Screen::Live(live) => live
                .terminal
                .fed()
                .is_some_and(|t| t.active_screen_kind() == avt::ScreenKind::Alternate),
            Screen::Literal(_) => false,
        }
    }

    /// VT bytes that redraw the current screen on a reset terminal of the same size
    /// (`pane.attach`'s snapshot). A live pane uses avt's own dump, plus the bytes of
    /// an unfinished UTF-8 sequence so the snapshot covers every byte fed; an archive
    /// writes its literal rows and homes the cursor, as hydration left it.
    pub fn snapshot(&self) -> Vec<u8> {
        match &self.screen {
            Screen::Live(live) => {
                let mut out = match &live.terminal {
                    Terminal::Fed(t) => t.dump(),
                    // Attach is rare; a throwaway terminal gives avt's own bytes.
                    &Terminal::Unfed {
                        cols,
                        rows,
                        history_rows,
                    } => fresh_terminal(cols, rows, history_rows).dump(),
                }
                .into_bytes();
                out.extend_from_slice(&live.pending);
                out
            }
            Screen::Literal(_) => {
                let rows = self.capture().screen;
                let mut out = rows.join("\r\n").into_bytes();
                out.extend_from_slice(b"\x1b[H");
                out
            }
        }
    }

    /// The primary screen and its history as plain rows.
    pub fn capture(&self) -> Capture {
        match &self.screen {
            Screen::Literal(l) => {
                let cols = usize::from(l.cols);
                // Stored rows are already control-free (hydration cleaned them) and a
                // row of at most `cols` bytes is at most `cols` cells wide (no
                // character is wider than its UTF-8 length), so most rows are copied.
                let row = |r: &String| {
                    if r.len() <= cols {
                        r.clone()
                    } else {
                        clip_row(r, cols).0
                    }
                };
                let mut screen: Vec<String> = l.screen.iter().map(row).collect();
                screen.resize(usize::from(l.rows), String::new());
                Capture {
                    screen,
                    history: l.history.iter().map(row).collect(),
                }
            }
            Screen::Live(live) => {
                let Some(terminal) = live.terminal.fed() else {
                    // A fresh terminal's primary screen: blank rows, no history.
                    return Capture {
                        screen: vec![String::new(); live.rows()],
                        history: Vec::new(),
                    };
                };
                let cache = &self.last_capture;
                let version = cache.version;
                if let Some((at, kept)) = &*cache.kept.borrow() {
                    if *at == version {
                        return kept.clone();
                    }
                }
                let capture = Live::capture(terminal);
                *cache.kept.borrow_mut() = Some((version, capture.clone()));
                capture
            }
        }
    }
}

/// Drops blank rows at the bottom: a literal screen stores none.
fn trim_blank_bottom(screen: &mut Vec<String>) {
    while screen.last().is_some_and(String::is_empty) {
        screen.pop();
    }
}

impl Live {
    fn rows(&self) -> usize {
        match &self.terminal {
            Terminal::Fed(t) => t.size().1,
            Terminal::Unfed { rows, .. } => *rows,
        }
    }

    /// The primary screen's rows from avt's cells.
    fn capture(terminal: &avt::Terminal) -> Capture {
        let primary = terminal.primary_screen();
        let visible = primary.visible_lines().len();
        let mut history: Vec<String> = primary.all_lines().map(plain_row).collect();
        let split = history.len().saturating_sub(visible);
        let screen = history.split_off(split);
        Capture { screen, history }
    }

    fn feed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.pending.is_empty() {
            self.feed_bytes(bytes);
        } else {
            let mut joined = std::mem::take(&mut self.pending);
            joined.extend_from_slice(bytes);
            self.feed_bytes(&joined);
        }
    }

    fn feed_bytes(&mut self, mut input: &[u8]) {
        let terminal = self.terminal.materialize();
        loop {
            match std::str::from_utf8(input) {
                Ok(text) => {
                    terminal.feed(text);
                    return;
                }
                Err(e) => {
                    let (valid, rest) = input.split_at(e.valid_up_to());
                    if let Ok(text) = std::str::from_utf8(valid) {
                        terminal.feed(text);
                    }
                    match e.error_len() {
                        Some(n) => {
                            terminal.feed('\u{fffd}');
                            input = &rest[n..];
                        }
                        None => {
                            self.pending = rest.to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }
}

fn unreachable_size() -> avt::Terminal {
    // Sizes are clamped to at least 1x1 above, which avt always accepts.
    avt::Terminal::new(1, 1).expect("1x1 terminal")
}

/// A row cut to at most `cols` display cells, control characters replaced by
/// spaces; true when something was cut.
fn clip_row(row: &str, cols: usize) -> (String, bool) {
    use unicode_width::UnicodeWidthChar as _;
    let mut width = 0;
    let mut out = String::with_capacity(row.len());
    for c in row.chars() {
        let c = if is_control(c) { ' ' } else { c };
        let w = c.width().unwrap_or(0);
        if width + w > cols {
            return (out, true);
        }
        width += w;
        out.push(c);
    }
    (out, false)
}

/// One row under RFC §4's text rules. This runs for every row of every pane in
/// the capture's reactor turn, so it finds the last cell that shows anything first
/// (trailing blanks, continuation cells and control characters, which become
/// trimmed spaces, are never copied) and copies only up to it into a string sized
/// for it; the result is the rules' literal reading (`tests::plain_row_by_the_rules`).
pub fn plain_row(line: &avt::Line) -> String {
    let cells = line.cells();
    let shows = |cell: &avt::Cell| {
        let c = cell.char();
        cell.width() != 0 && c != ' ' && !is_control(c)
    };
    let Some(last) = cells.iter().rposition(shows) else {
        return String::new();
    };
    let mut text = String::with_capacity(last + 1);
    for cell in &cells[..=last] {
        if cell.width() == 0 {
            continue;
        }
        let c = cell.char();
        text.push(if is_control(c) { ' ' } else { c });
    }
    text
}

#[cfg(test)]
mod tests {
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
}
