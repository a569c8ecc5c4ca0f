//! The strict JSON layer of pins.md, in two passes over the same bytes.
//!
//! [`check_document`] proves the whole text is strict JSON (UTF-8 without BOM, no
//! duplicate keys at any depth, no escaped lone surrogate, safe integers, depth at
//! most 32, nothing after the value) without building anything but the key sets it
//! needs for duplicate detection. Only then does a typed decoder walk the text again
//! with a [`Cursor`], which may assume well-formed input and allocates only what the
//! format's own types hold. Scanning first makes JSON-level verdicts independent of
//! schema errors that happen to come earlier in the text.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::error::{Doc, FormatError, Result, Rule};
use crate::escape::{string_stop, zero_byte, ONES};
use crate::limits::MAX_SAFE_INTEGER;
use crate::scan_policy::is_unit_fraction;
pub use crate::scan_policy::{NumberPolicy, NumberRefusal, ScanError, ScanOptions};

mod cursor;
pub use cursor::{Cursor, Kind, NumberToken};

/// Index of the first backslash at or after `i`, or `b.len()`.
#[inline]
fn backslash(b: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = b.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        if zero_byte(x ^ (ONES * u64::from(b'\\'))) != 0 {
            break;
        }
        i += 8;
    }
    while i < b.len() && b[i] != b'\\' {
        i += 1;
    }
    i
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Pass one: everything pins.md asks of a JSON text, for one document.
pub fn check_document(bytes: &[u8], doc: Doc) -> Result<Checked<'_>> {
    scan_document(bytes, doc, &ScanOptions::default()).map_err(ScanError::into_format_error)
}

/// [`check_document`] for text already known to be UTF-8.
pub fn check_text(text: &str, doc: Doc) -> Result<Checked<'_>> {
    scan_text(text, doc, &ScanOptions::default()).map_err(ScanError::into_format_error)
}

/// Pass one with explicit limits: [`check_document`] is this with the defaults.
pub fn scan_document<'a>(
    bytes: &'a [u8],
    doc: Doc,
    options: &ScanOptions,
) -> std::result::Result<Checked<'a>, ScanError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => scan_text(text, doc, options),
        Err(_) if bytes.starts_with(b"\xEF\xBB\xBF") => {
            Err(ScanError::Json(FormatError::at_offset(Rule::Bom, doc, 0)))
        }
        Err(e) => Err(ScanError::Json(FormatError::at_offset(
            Rule::Utf8,
            doc,
            e.valid_up_to(),
        ))),
    }
}

/// [`scan_document`] for text already known to be UTF-8.
pub fn scan_text<'a>(
    text: &'a str,
    doc: Doc,
    options: &ScanOptions,
) -> std::result::Result<Checked<'a>, ScanError> {
    if text.starts_with('\u{feff}') {
        return Err(ScanError::Json(FormatError::at_offset(Rule::Bom, doc, 0)));
    }
    let mut scanner = Scanner {
        b: text.as_bytes(),
        pos: 0,
        doc,
        max_depth: options.max_depth,
        numbers: options.numbers,
        key_is_scope: false,
        key_is_target: false,
        refusal: None,
    };
    match scanner.run() {
        Ok(()) => Ok(Checked(text)),
        Err(e) => Err(match scanner.refusal {
            Some(refusal) => ScanError::Number {
                refusal,
                offset: e.offset.unwrap_or(0),
            },
            None => ScanError::Json(e),
        }),
    }
}

/// Proof that a text passed [`check_document`]: the only way to build a [`Cursor`].
#[derive(Clone, Copy, Debug)]
pub struct Checked<'a>(&'a str);

struct Frame<'a> {
    object: bool,
    /// Inside the value of a member named the number policy's `scope`.
    in_scope: bool,
    keys_start: usize,
    /// Built once an object has many keys, so duplicate detection stays linear.
    set: Option<HashSet<Cow<'a, [u8]>>>,
}

const LINEAR_KEY_LIMIT: usize = 16;

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    doc: Doc,
    max_depth: usize,
    numbers: NumberPolicy,
    /// What the member key just read names, under a positional number policy.
    key_is_scope: bool,
    key_is_target: bool,
    /// Set when the number policy, not a JSON rule, ended the scan.
    refusal: Option<NumberRefusal>,
}

impl<'a> Scanner<'a> {
    fn err(&self, rule: Rule) -> FormatError {
        FormatError::at_offset(rule, self.doc, self.pos)
    }

    fn skip_ws(&mut self) {
        while self.pos < self.b.len() && is_ws(self.b[self.pos]) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn run(&mut self) -> Result<()> {
        let mut stack: Vec<Frame<'a>> = Vec::new();
        let mut keys: Vec<Cow<'a, [u8]>> = Vec::new();
        'value: loop {
            self.skip_ws();
            match self.peek() {
                Some(open @ (b'{' | b'[')) => {
                    if stack.len() + 1 > self.max_depth {
                        return Err(self.err(Rule::Depth));
                    }
                    self.pos += 1;
                    self.skip_ws();
                    let object = open == b'{';
                    let close = if object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                    } else {
                        let in_scope = stack
                            .last()
                            .is_some_and(|f| f.in_scope || (f.object && self.key_is_scope));
                        stack.push(Frame {
                            object,
                            in_scope,
                            keys_start: keys.len(),
                            set: None,
                        });
                        if object {
                            self.member_key(&mut stack, &mut keys)?;
                        }
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                Some(b'-' | b'0'..=b'9') => {
                    let fraction_allowed =
                        self.key_is_target && stack.last().is_some_and(|f| f.object && f.in_scope);
                    self.number(fraction_allowed)?
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                _ => return Err(self.err(Rule::Syntax)),
            }
            // A value ended: close containers or move to the next member.
            loop {
                self.skip_ws();
                let Some(frame) = stack.last() else {
                    if self.pos != self.b.len() {
                        return Err(self.err(Rule::TrailingData));
                    }
                    return Ok(());
                };
                let close = if frame.object { b'}' } else { b']' };
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if frame.object {
                            self.member_key(&mut stack, &mut keys)?;
                        }
                        continue 'value;
                    }
                    Some(c) if c == close => {
                        self.pos += 1;
                        let frame = stack.pop().expect("frame checked above");
                        keys.truncate(frame.keys_start);
                    }
                    _ => return Err(self.err(Rule::Syntax)),
                }
            }
        }
    }

    /// Reads `"key" :` of an object member and rejects a key already seen in it.
    fn member_key(&mut self, stack: &mut [Frame<'a>], keys: &mut Vec<Cow<'a, [u8]>>) -> Result<()> {
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.err(Rule::Syntax));
        }
        let key_pos = self.pos;
        let raw = self.string()?;
        let key = if raw.contains(&b'\\') {
            Cow::Owned(unescape_bytes(raw))
        } else {
            Cow::Borrowed(raw)
        };
        if let NumberPolicy::IntegersAndUnitFraction {
            scope, key: target, ..
        } = self.numbers
        {
            self.key_is_scope = *key == *scope.as_bytes();
            self.key_is_target = *key == *target.as_bytes();
        }
        let frame = stack.last_mut().expect("member of an open object");
        let duplicate = match &mut frame.set {
            Some(set) => !set.insert(key.clone()),
            None => keys[frame.keys_start..].contains(&key),
        };
        if duplicate {
            return Err(FormatError::at_offset(
                Rule::DuplicateKey,
                self.doc,
                key_pos,
            ));
        }
        if frame.set.is_none() {
            keys.push(key);
            if keys.len() - frame.keys_start > LINEAR_KEY_LIMIT {
                frame.set = Some(keys.drain(frame.keys_start..).collect());
            }
        }
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.err(Rule::Syntax));
        }
        self.pos += 1;
        Ok(())
    }

    /// Scans a string starting at its opening quote; returns the raw bytes inside.
    fn string(&mut self) -> Result<&'a [u8]> {
        let start = self.pos + 1;
        let mut i = start;
        let b = self.b;
        loop {
            i = string_stop(b, i);
            match b.get(i) {
                None => {
                    self.pos = i;
                    return Err(self.err(Rule::Syntax));
                }
                Some(b'"') => {
                    self.pos = i + 1;
                    return Ok(&b[start..i]);
                }
                Some(b'\\') => {
                    self.pos = i;
                    i = self.escape(i)?;
                }
                Some(_) => {
                    self.pos = i;
                    return Err(self.err(Rule::ControlInString));
                }
            }
        }
    }

    /// Checks one escape at `i` (the backslash); returns the index after it.
    fn escape(&self, i: usize) -> Result<usize> {
        let b = self.b;
        match b.get(i + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(i + 2),
            Some(b'u') => {
                let unit = hex4(b, i + 2).ok_or_else(|| self.err(Rule::Syntax))?;
                match unit {
                    0xD800..=0xDBFF => {
                        if b.get(i + 6) != Some(&b'\\') || b.get(i + 7) != Some(&b'u') {
                            return Err(self.err(Rule::LoneSurrogate));
                        }
                        // A `\u` that is no escape at all is a syntax error, as it is
                        // anywhere else (and as serde_json reads it: fuzz/README.md).
                        match hex4(b, i + 8) {
                            Some(0xDC00..=0xDFFF) => Ok(i + 12),
                            Some(_) => Err(self.err(Rule::LoneSurrogate)),
                            None => Err(self.err(Rule::Syntax)),
                        }
                    }
                    0xDC00..=0xDFFF => Err(self.err(Rule::LoneSurrogate)),
                    _ => Ok(i + 6),
                }
            }
            _ => Err(self.err(Rule::Syntax)),
        }
    }

    fn number(&mut self, fraction_allowed: bool) -> Result<()> {
        let b = self.b;
        let start = self.pos;
        let mut i = start;
        if b[i] == b'-' {
            i += 1;
        }
        let int_start = i;
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            _ => {
                self.pos = i;
                return Err(self.err(Rule::Syntax));
            }
        }
        let int_end = i;
        let mut integer = true;
        if b.get(i) == Some(&b'.') {
            integer = false;
            i += 1;
            let digits = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == digits {
                self.pos = i;
                return Err(self.err(Rule::Syntax));
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            integer = false;
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let digits = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == digits {
                self.pos = i;
                return Err(self.err(Rule::Syntax));
            }
        }
        if integer && integer_magnitude(&b[int_start..int_end]).is_none() {
            self.pos = start;
            return Err(self.err(Rule::UnsafeInteger));
        }
        if let NumberPolicy::IntegersAndUnitFraction { max_len, .. } = self.numbers {
            let refusal = match (integer, fraction_allowed) {
                (true, _) => None,
                (false, false) => Some(NumberRefusal::NotInteger),
                (false, true) => (!is_unit_fraction(&b[start..i], max_len))
                    .then_some(NumberRefusal::UnitFraction),
            };
            if let Some(refusal) = refusal {
                self.pos = start;
                self.refusal = Some(refusal);
                return Err(self.err(Rule::Syntax));
            }
        }
        self.pos = i;
        Ok(())
    }

    fn literal(&mut self, word: &[u8]) -> Result<()> {
        if self.b[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.err(Rule::Syntax))
        }
    }
}

/// The magnitude of an integer token's digits, if it is a safe integer.
fn integer_magnitude(digits: &[u8]) -> Option<u64> {
    if digits.len() > 16 {
        return None;
    }
    let n = digits
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
    (n <= MAX_SAFE_INTEGER).then_some(n)
}

fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = b.get(at..at + 4)?;
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = (d as char).to_digit(16)?;
        Some(acc * 16 + v)
    })
}

/// Decodes the escapes of a string that [`check_document`] accepted.
fn unescape_bytes(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let run_end = backslash(raw, i);
        out.extend_from_slice(&raw[i..run_end]);
        i = run_end;
        if i >= raw.len() {
            break;
        }
        let esc = raw.get(i + 1).copied().unwrap_or(b'\\');
        i += 2;
        let simple = match esc {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => 0,
            other => other,
        };
        if simple != 0 {
            out.push(simple);
            continue;
        }
        let unit = hex4(raw, i).unwrap_or(0xFFFD);
        i += 4;
        let ch = if (0xD800..0xDC00).contains(&unit) {
            let low = hex4(raw, i + 2).unwrap_or(0xDC00);
            i += 6;
            char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3ff))
                .unwrap_or('\u{FFFD}')
        } else {
            char::from_u32(unit).unwrap_or('\u{FFFD}')
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    }
    out
}

/// Decodes a checked string's raw bytes as text, borrowing when it has no escapes.
fn unescape(raw: &[u8]) -> Cow<'_, str> {
    // Escapes decode to whole characters, so valid input stays valid UTF-8.
    if raw.contains(&b'\\') {
        Cow::Owned(String::from_utf8(unescape_bytes(raw)).unwrap_or_default())
    } else {
        Cow::Borrowed(std::str::from_utf8(raw).unwrap_or_default())
    }
}

/// Appends `text` as a JSON string with minimal escapes (`"`, `\` and control
/// characters only; Python's `json.dumps(s, ensure_ascii=False)`), for the kit's
/// other canonical writers.
pub fn push_string(out: &mut String, text: &str) {
    crate::escape::push_json_string(out, text);
}
