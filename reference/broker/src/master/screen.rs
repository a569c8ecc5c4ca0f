//! Whether the agent's terminal is on the alternate screen, from its output alone:
//! a replay of primary-screen bytes into an alternate-screen app would garble it, so
//! a non-delta attach then gets a redraw nudge (SIGWINCH) instead of a replay.

/// Longest sequence looked for, `ESC [ ? 1 0 4 9 h`, minus one: bytes kept across
/// reads so a sequence split between two reads is still seen.
const TAIL: usize = 7;

#[derive(Debug, Default)]
pub struct AltScreen {
    active: bool,
    tail: Vec<u8>,
}

impl AltScreen {
    pub fn active(&self) -> bool {
        self.active
    }

    /// Feeds output; the last set/reset of modes 1049, 1047 or 47 wins.
    pub fn feed(&mut self, data: &[u8]) {
        let mut buf = std::mem::take(&mut self.tail);
        buf.extend_from_slice(data);
        let mut i = 0;
        while let Some(at) = buf[i..].windows(3).position(|w| w == b"\x1b[?") {
            let start = i + at + 3;
            let digits = buf[start..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            let mode = &buf[start..start + digits];
            match buf.get(start + digits) {
                Some(b'h') if matches!(mode, b"1049" | b"1047" | b"47") => self.active = true,
                Some(b'l') if matches!(mode, b"1049" | b"1047" | b"47") => self.active = false,
                _ => {}
            }
            i = start;
        }
        self.tail = buf[buf.len().saturating_sub(TAIL)..].to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_modes_across_split_reads() {
        let mut s = AltScreen::default();
        s.feed(b"hi \x1b[?10");
        assert!(!s.active());
        s.feed(b"49h app");
        assert!(s.active());
        s.feed(b"\x1b[?25l");
        assert!(s.active());
        s.feed(b"\x1b[?47l");
        assert!(!s.active());
        s.feed(b"\x1b[?1047h\x1b[?1049l");
        assert!(!s.active());
        s.feed(b"\x1b[?1049h");
        s.feed(b"plain text that is long enough");
        assert!(s.active());
    }
}
