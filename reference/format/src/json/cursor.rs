//! The typed walk over a checked document: a `Cursor` reads the values pass one
//! has already validated, without re-checking what `Checked` guarantees.

use super::*;

/// The JSON type of the next value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Object,
    Array,
    String,
    Number,
    Bool,
    Null,
}

/// Pass two: a forward reader over a text that [`check_document`] accepted.
///
/// It never panics on any input, but its answers are only meaningful for checked text.
pub struct Cursor<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
}

/// A number token, split so integer fields can be told from fractions.
#[derive(Clone, Copy, Debug)]
pub struct NumberToken<'a> {
    pub text: &'a [u8],
}

impl NumberToken<'_> {
    /// The value when the token is an integer (`-?(0|[1-9][0-9]*)`); checked text
    /// guarantees it is safe.
    pub fn integer(&self) -> Option<i64> {
        let (neg, digits) = match self.text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, self.text),
        };
        if digits.iter().any(|d| !d.is_ascii_digit()) {
            return None;
        }
        let magnitude = integer_magnitude(digits)? as i64;
        Some(if neg { -magnitude } else { magnitude })
    }
}

impl<'a> Cursor<'a> {
    pub fn new(checked: Checked<'a>) -> Self {
        Cursor {
            text: checked.0,
            b: checked.0.as_bytes(),
            pos: 0,
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.b.len() && is_ws(self.b[self.pos]) {
            self.pos += 1;
        }
    }

    pub fn kind(&mut self) -> Kind {
        self.skip_ws();
        match self.b.get(self.pos) {
            Some(b'{') => Kind::Object,
            Some(b'[') => Kind::Array,
            Some(b'"') => Kind::String,
            Some(b't' | b'f') => Kind::Bool,
            Some(b'n') => Kind::Null,
            _ => Kind::Number,
        }
    }

    /// Consumes `{` or `[` (the caller checked [`Cursor::kind`]).
    pub fn enter(&mut self) {
        self.skip_ws();
        self.pos += 1;
    }

    /// The next member's key in an entered object, or `None` after consuming `}`.
    pub fn next_key(&mut self) -> Option<Cow<'a, str>> {
        self.skip_ws();
        match self.b.get(self.pos) {
            Some(b',') => {
                self.pos += 1;
                self.skip_ws();
            }
            Some(b'}') | None => {
                self.pos += 1;
                return None;
            }
            _ => {}
        }
        let key = self.raw_string();
        self.skip_ws();
        self.pos += 1; // ':'
        Some(self.decode(key))
    }

    /// Decodes a raw string slice of this text. Slices end at ASCII quotes of valid
    /// UTF-8, so borrowing needs no second UTF-8 validation.
    fn decode(&self, raw: &'a [u8]) -> Cow<'a, str> {
        if raw.contains(&b'\\') {
            return unescape(raw);
        }
        let start = raw.as_ptr() as usize - self.b.as_ptr() as usize;
        Cow::Borrowed(self.text.get(start..start + raw.len()).unwrap_or_default())
    }

    /// True when an entered array has another element; consumes `]` otherwise.
    pub fn next_element(&mut self) -> bool {
        self.skip_ws();
        match self.b.get(self.pos) {
            Some(b',') => {
                self.pos += 1;
                true
            }
            Some(b']') | None => {
                self.pos += 1;
                false
            }
            _ => true,
        }
    }

    fn raw_string(&mut self) -> &'a [u8] {
        self.skip_ws();
        let start = self.pos + 1;
        let mut i = start;
        loop {
            i = string_stop(self.b, i);
            match self.b.get(i) {
                Some(b'\\') => i += 2,
                // Control bytes cannot occur in checked text; step over them anyway.
                Some(c) if *c != b'"' => i += 1,
                _ => break,
            }
        }
        let end = i.min(self.b.len());
        self.pos = end + 1;
        &self.b[start.min(end)..end]
    }

    /// Reads a string value (the caller checked the kind).
    pub fn string(&mut self) -> Cow<'a, str> {
        let raw = self.raw_string();
        self.decode(raw)
    }

    /// Reads `true` or `false` (the caller checked the kind).
    pub fn boolean(&mut self) -> bool {
        self.skip_ws();
        let value = self.b.get(self.pos) == Some(&b't');
        self.skip();
        value
    }

    /// Reads a number token (the caller checked the kind).
    pub fn number(&mut self) -> NumberToken<'a> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.b.len()
            && matches!(
                self.b[self.pos],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
            )
        {
            self.pos += 1;
        }
        NumberToken {
            text: &self.b[start..self.pos],
        }
    }

    /// Skips one value of any kind.
    pub fn skip(&mut self) {
        match self.kind() {
            Kind::String => {
                self.raw_string();
            }
            Kind::Object | Kind::Array => {
                let mut depth = 0usize;
                while self.pos < self.b.len() {
                    match self.b[self.pos] {
                        b'"' => {
                            self.raw_string();
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.saturating_sub(1);
                            if depth == 0 {
                                self.pos += 1;
                                return;
                            }
                        }
                        _ => {}
                    }
                    self.pos += 1;
                }
            }
            Kind::Number => {
                self.number();
            }
            Kind::Bool | Kind::Null => {
                while self.pos < self.b.len() && self.b[self.pos].is_ascii_alphabetic() {
                    self.pos += 1;
                }
            }
        }
    }
}
