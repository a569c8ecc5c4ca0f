//! JSON string bytes, shared by the reader (`json/`) and the writer (`write/`) so
//! that neither imports the other: where a run of plain string bytes stops (`"`, `\`
//! or a control character, found eight bytes at a time), and the canonical escaping
//! of a string into any [`JsonText`] sink.

/// Where escaped text goes: the writer's sinks implement it (`write/sink.rs`), a
/// `String` takes it as is.
pub(crate) trait JsonText {
    /// Text without `"`, `\` or control characters: the same in every encoding.
    fn text(&mut self, text: &str);
    /// A `"` of the string's delimiters.
    fn quote(&mut self);
    /// One escape sequence (`\"`, `\n`, `\u001f`, …).
    fn escape(&mut self, seq: &str);
}

impl JsonText for String {
    fn text(&mut self, text: &str) {
        self.push_str(text);
    }
    fn quote(&mut self) {
        self.push('"');
    }
    fn escape(&mut self, seq: &str) {
        self.push_str(seq);
    }
}

/// Byte classes inside a string: 0 plain, 1 ends the fast run (`"`, `\`, control).
static STRING_STOP: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = 1;
        i += 1;
    }
    t[b'"' as usize] = 1;
    t[b'\\' as usize] = 1;
    t
};

pub(crate) const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Nonzero when some byte of `x` is zero (the classic SWAR test).
#[inline]
pub(crate) fn zero_byte(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// Index of the first byte at or after `i` that is `"`, `\` or a control character,
/// eight bytes at a time.
#[inline]
pub(crate) fn string_stop(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let hits = zero_byte(x ^ (ONES * u64::from(b'"')))
            | zero_byte(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGHS);
        if hits != 0 {
            break;
        }
        i += 8;
    }
    while i < b.len() && STRING_STOP[b[i] as usize] == 0 {
        i += 1;
    }
    i
}

/// Python's `json.dumps(s, ensure_ascii=False)` string encoding.
pub(crate) fn push_json_string(out: &mut String, text: &str) {
    escape_into(out, text);
}

/// The same encoding into any [`JsonText`]: the payload writer's sinks.
pub(crate) fn escape_into<S: JsonText + ?Sized>(out: &mut S, text: &str) {
    out.quote();
    let bytes = text.as_bytes();
    let mut run_start = 0;
    loop {
        // Runs without `"`, `\` or control bytes are copied whole.
        let i = string_stop(bytes, run_start);
        if i > run_start {
            out.text(&text[run_start..i]);
        }
        let Some(&b) = bytes.get(i) else { break };
        match b {
            b'"' => out.escape("\\\""),
            b'\\' => out.escape("\\\\"),
            b'\n' => out.escape("\\n"),
            b'\r' => out.escape("\\r"),
            b'\t' => out.escape("\\t"),
            0x08 => out.escape("\\b"),
            0x0c => out.escape("\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let seq = [
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 15)],
                ];
                out.escape(std::str::from_utf8(&seq).expect("ASCII"));
            }
        }
        run_start = i + 1;
    }
    out.quote();
}
