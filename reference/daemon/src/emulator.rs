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
use std::sync::Arc;
use vx_format::EncodedRows;

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
///
/// `text` goes one step further for checkpoints: the rows bounded and encoded as the
/// file holds them ([`EncodedRows`]), shared with every checkpoint until the screen or
/// the bounds change, so an idle pane costs a checkpoint no copy, check or escaping.
#[derive(Default)]
struct LastCapture {
    version: u64,
    kept: std::cell::RefCell<Option<(u64, Capture)>>,
    text: std::cell::RefCell<Option<KeptText>>,
}

/// A checkpoint's text of this screen: made at `version` under `bounds`; `None` when
/// the bounds omit it.
struct KeptText {
    version: u64,
    bounds: TextBounds,
    rows: Option<Arc<EncodedRows>>,
}

/// RFC §4's per-pane text bounds a kept checkpoint text was made under (the recovery
/// module applies them): the pane's rows, and the configured row and byte caps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextBounds {
    pub rows: u16,
    pub max_rows: u64,
    pub max_bytes: u64,
}

impl LastCapture {
    fn changed(&mut self) {
        self.version += 1;
        *self.kept.get_mut() = None;
        *self.text.get_mut() = None;
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

impl Emulator {
    /// The checkpoint text kept for this screen under `bounds`: `Some(rows)` when it
    /// was made since the screen last changed, under the same bounds (`rows` is `None`
    /// when the bounds omit the text); `None` when it must be made again.
    pub fn kept_text(&self, bounds: TextBounds) -> Option<Option<Arc<EncodedRows>>> {
        let kept = self.last_capture.text.borrow();
        let kept = kept.as_ref()?;
        (kept.version == self.last_capture.version && kept.bounds == bounds)
            .then(|| kept.rows.clone())
    }

    /// Keeps `rows`, made from this screen as it is now under `bounds`.
    pub fn keep_text(&self, bounds: TextBounds, rows: Option<Arc<EncodedRows>>) {
        self.keep_text_at(self.last_capture.version, bounds, rows);
    }

    /// Counts the changes to the screen: what [`Emulator::keep_text_at`] is given.
    pub fn version(&self) -> u64 {
        self.last_capture.version
    }

    /// Keeps `rows`, made from this screen as it was at `version`, unless the screen
    /// changed since (the worker encodes what a capture read, later).
    pub fn keep_text_at(&self, version: u64, bounds: TextBounds, rows: Option<Arc<EncodedRows>>) {
        if version == self.last_capture.version {
            *self.last_capture.text.borrow_mut() = Some(KeptText {
                version,
                bounds,
                rows,
            });
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
mod tests;
