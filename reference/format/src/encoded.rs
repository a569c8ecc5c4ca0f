//! Plain text rows checked and encoded once: the writer's fast form of a
//! [`PlainText`]'s rows ([`Text::Encoded`]).
//!
//! A daemon checkpoints the same idle screens again and again. Building owned rows
//! for every capture, checking each row for control characters on every write and
//! escaping every row twice (once into the payload, once into the envelope's JSON
//! string) cost most of a text checkpoint's CPU. An [`EncodedRows`] is built once per
//! screen change: it holds the rows' payload bytes (what the digest covers) and the
//! same bytes as the envelope holds them, and the writer copies both. The bytes on
//! disk are exactly those of the equivalent [`Text::Plain`] (tested).
//!
//! Invariant: an `EncodedRows` only exists for rows the reader accepts (no C0, DEL or
//! C1 control character in any row): [`EncodedRows::new`] refuses the rest with the
//! reader's own rule, so the writer never checks them again.

use crate::error::{Doc, FormatError, Result, Rule};
use crate::model::{PlainText, Text, Timestamp};
use crate::validate::has_control;

/// A pane's text rows, checked and encoded: `"screen":[…],"history":[…]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedRows {
    screen_rows: usize,
    /// The rows as the payload holds them (the bytes the digest covers).
    payload: Box<str>,
    /// The same bytes escaped as the envelope's JSON string holds them.
    envelope: Box<[u8]>,
}

/// [`Text::Plain`] whose rows are [`EncodedRows`], shared between captures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EncodedText {
    pub saved_at: Timestamp,
    pub expires_at: Timestamp,
    pub rows: std::sync::Arc<EncodedRows>,
}

impl EncodedRows {
    /// Checks and encodes `screen` (the primary screen's rows) and `history` (oldest
    /// first). A row holding a control character is refused with the reader's rule
    /// and position, as [`crate::validate`] refuses it in a [`PlainText`].
    pub fn new(screen: &[String], history: &[String]) -> Result<EncodedRows> {
        for (key, rows) in [("screen", screen), ("history", history)] {
            if let Some(i) = rows.iter().position(|r| has_control(r)) {
                return Err(FormatError::new(Rule::TextControl, Doc::Payload)
                    .in_index(i)
                    .in_key(key)
                    .in_key("text"));
            }
        }
        let size: usize = screen.iter().chain(history).map(|r| r.len() + 3).sum();
        let mut payload = String::with_capacity(size + 24);
        crate::write::push_rows(&mut payload, screen, history);
        Ok(EncodedRows {
            screen_rows: screen.len(),
            envelope: escape_for_envelope(&payload),
            payload: payload.into_boxed_str(),
        })
    }

    /// The number of screen rows (the pane's `rows`, for the writer's check).
    pub fn screen_rows(&self) -> usize {
        self.screen_rows
    }

    /// The payload bytes these rows take in a file.
    pub fn payload_len(&self) -> usize {
        self.payload.len()
    }

    pub(crate) fn payload(&self) -> &str {
        &self.payload
    }

    pub(crate) fn envelope(&self) -> &[u8] {
        &self.envelope
    }

    /// The rows back: `(screen, history)`.
    pub fn rows(&self) -> (Vec<String>, Vec<String>) {
        const BUILT: &str = "EncodedRows holds what push_rows wrote";
        let rest = self.payload.strip_prefix("\"screen\":[").expect(BUILT);
        let (screen, rest) = read_rows(rest);
        let rest = rest.strip_prefix(",\"history\":[").expect(BUILT);
        let (history, rest) = read_rows(rest);
        debug_assert!(rest.is_empty(), "{BUILT}");
        (screen, history)
    }
}

/// One list's rows up to and past its `]`. Each row is a JSON string whose only
/// escapes are `\"` and `\\` (rows hold no control character).
fn read_rows(mut text: &str) -> (Vec<String>, &str) {
    let mut rows = Vec::new();
    loop {
        if let Some(rest) = text.strip_prefix(']') {
            return (rows, rest);
        }
        if !rows.is_empty() {
            text = &text[1..]; // the `,` between rows
        }
        let bytes = text.as_bytes();
        let (mut i, mut from) = (1, 1); // past the opening `"`
        let mut row = String::new();
        while bytes[i] != b'"' {
            if bytes[i] == b'\\' {
                row.push_str(&text[from..i]);
                row.push(char::from(bytes[i + 1]));
                i += 2;
                from = i;
            } else {
                i += 1;
            }
        }
        row.push_str(&text[from..i]);
        rows.push(row);
        text = &text[i + 1..];
    }
}

impl EncodedText {
    /// The same text with owned rows.
    pub fn to_plain(&self) -> PlainText {
        let (screen, history) = self.rows.rows();
        PlainText {
            saved_at: self.saved_at,
            expires_at: self.expires_at,
            screen,
            history,
        }
    }
}

impl Text {
    /// Whether this pane's text is kept (`availability: "plain"` on disk), in either
    /// of its forms.
    pub fn is_plain(&self) -> bool {
        matches!(self, Text::Plain(_) | Text::Encoded(_))
    }

    /// The text with owned rows: [`Text::Encoded`] becomes [`Text::Plain`].
    pub fn to_plain(&self) -> Text {
        match self {
            Text::Encoded(e) => Text::Plain(e.to_plain()),
            other => other.clone(),
        }
    }
}

/// The envelope's JSON string of `payload` without its quotes. The payload holds no
/// control character (its rows have none, and the writer's own text has none), so
/// only `"` and `\` are escaped.
fn escape_for_envelope(payload: &str) -> Box<[u8]> {
    let bytes = payload.as_bytes();
    let extra = bytes.iter().filter(|&&b| b == b'"' || b == b'\\').count();
    let mut out = Vec::with_capacity(bytes.len() + extra);
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'"' || b == b'\\' {
            out.extend_from_slice(&bytes[from..i]);
            out.push(b'\\');
            from = i;
        }
    }
    out.extend_from_slice(&bytes[from..]);
    out.into_boxed_slice()
}
