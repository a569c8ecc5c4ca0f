//! One JSON trace line, built in a fixed stack buffer (no allocation).

/// Capacity of one trace line. Paths are cut so that a line always fits.
pub const LINE_CAP: usize = 12288;
/// Most bytes of escaped output one string value may take.
const STR_BUDGET: usize = 4200;
/// Most raw bytes given in a `<key>_hex` value.
const HEX_BUDGET: usize = 800;

/// `v` in decimal, written at the end of `buf`.
pub fn decimal(mut v: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    &buf[i..]
}

pub struct Line {
    buf: [u8; LINE_CAP],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line::new()
    }
}

impl Line {
    pub const fn new() -> Line {
        Line {
            buf: [0; LINE_CAP],
            len: 0,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len.min(LINE_CAP)]
    }

    /// Appends raw bytes; silently stops at capacity (the caller keeps a margin).
    pub fn raw(&mut self, s: &[u8]) {
        let room = LINE_CAP.saturating_sub(self.len);
        let n = s.len().min(room);
        self.buf[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
    }

    fn key(&mut self, key: &str) {
        if self.len == 0 {
            self.raw(b"{\"");
        } else {
            self.raw(b",\"");
        }
        self.raw(key.as_bytes());
        self.raw(b"\":");
    }

    pub fn u64(&mut self, key: &str, v: u64) {
        self.key(key);
        self.num(v, false);
    }

    pub fn i64(&mut self, key: &str, v: i64) {
        self.key(key);
        self.num(v.unsigned_abs(), v < 0);
    }

    pub fn null(&mut self, key: &str) {
        self.key(key);
        self.raw(b"null");
    }

    pub fn bool(&mut self, key: &str, v: bool) {
        self.key(key);
        self.raw(if v { b"true" } else { b"false" });
    }

    fn num(&mut self, v: u64, neg: bool) {
        if neg {
            self.raw(b"-");
        }
        let mut digits = [0u8; 20];
        self.raw(decimal(v, &mut digits));
    }

    /// A string value. Valid UTF-8 is escaped per JSON; for other bytes the value is
    /// the lossy text (U+FFFD for each bad sequence) and `<key>_hex` carries the exact
    /// bytes. Values longer than the budget are cut and `<key>_truncated` is set.
    pub fn str(&mut self, key: &str, s: &[u8]) {
        self.key(key);
        self.raw(b"\"");
        let mut budget = STR_BUDGET;
        let mut truncated = false;
        let mut lossy = false;
        for chunk in s.utf8_chunks() {
            if !self.escape(chunk.valid(), &mut budget) {
                truncated = true;
                break;
            }
            if !chunk.invalid().is_empty() {
                lossy = true;
                if budget < 3 {
                    truncated = true;
                    break;
                }
                budget -= 3;
                self.raw("\u{fffd}".as_bytes());
            }
        }
        self.raw(b"\"");
        if lossy {
            self.key_suffix(key, "_hex");
            self.raw(b"\"");
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let max = HEX_BUDGET;
            for &b in s.iter().take(max) {
                self.raw(&[HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
            }
            truncated |= s.len() > max;
            self.raw(b"\"");
        }
        if truncated {
            self.key_suffix(key, "_truncated");
            self.raw(b"true");
        }
    }

    fn key_suffix(&mut self, key: &str, suffix: &str) {
        self.raw(b",\"");
        self.raw(key.as_bytes());
        self.raw(suffix.as_bytes());
        self.raw(b"\":");
    }

    /// Escapes valid UTF-8 text; returns false if the budget ran out.
    fn escape(&mut self, s: &str, budget: &mut usize) -> bool {
        for ch in s.chars() {
            let mut tmp = [0u8; 6];
            let out: &[u8] = match ch {
                '"' => b"\\\"",
                '\\' => b"\\\\",
                '\n' => b"\\n",
                '\r' => b"\\r",
                '\t' => b"\\t",
                c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    let v = c as u32;
                    tmp = [
                        b'\\',
                        b'u',
                        b'0',
                        b'0',
                        HEX[(v >> 4) as usize & 15],
                        HEX[v as usize & 15],
                    ];
                    &tmp
                }
                c => c.encode_utf8(&mut tmp).as_bytes(),
            };
            if out.len() > *budget {
                return false;
            }
            *budget -= out.len();
            self.raw(out);
        }
        true
    }

    /// Closes the object and appends the newline.
    pub fn finish(&mut self) {
        // Keep room for "}\n" even when full.
        if self.len > LINE_CAP - 2 {
            self.len = LINE_CAP - 2;
        }
        self.raw(b"}\n");
    }
}
