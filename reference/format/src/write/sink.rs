//! Where the payload writer puts its text: the payload itself ([`String`]), the
//! payload beside the envelope's JSON string of it ([`Split`], one record's bytes
//! for the [`super::RecordCache`]), or the envelope being written plus the
//! payload's digest ([`EnvelopeSink`]).

use sha2::{Digest, Sha256};

use crate::escape::JsonText;
use crate::EncodedRows;

/// Payload bytes hashed at a time: small enough to still be in cache when hashed.
const HASH_CHUNK: usize = 16 * 1024;

/// Text, quotes and escapes come through [`JsonText`] (`escape.rs`), which the
/// string escaping writes to.
pub(super) trait Sink: JsonText {
    /// The writer's own punctuation: may hold `"`, never `\` or a control.
    fn lit(&mut self, text: &'static str);
    /// `"key":` for one of the RFC's field names (nothing to escape).
    fn key(&mut self, key: &str) {
        self.quote();
        self.text(key);
        self.quote();
        self.text(":");
    }
    /// A point between two values where the digest may catch up.
    fn boundary(&mut self) {}
    /// Rows encoded ahead of time: `payload` in the payload, `envelope` (the same
    /// bytes escaped as the envelope's string) in the envelope.
    fn encoded(&mut self, rows: &EncodedRows);
    /// A record written before ([`Split`]'s two halves, from the record cache).
    fn record(&mut self, payload: &[u8], envelope: &[u8]);
}

impl Sink for String {
    fn lit(&mut self, text: &'static str) {
        self.push_str(text);
    }
    fn encoded(&mut self, rows: &EncodedRows) {
        self.push_str(rows.payload());
    }
    fn record(&mut self, payload: &[u8], _envelope: &[u8]) {
        self.push_str(std::str::from_utf8(payload).expect("the writer writes UTF-8"));
    }
}

/// The payload's bytes and, beside them, the same bytes as the envelope's JSON
/// string holds them.
#[derive(Default)]
pub(super) struct Split {
    pub payload: Vec<u8>,
    pub envelope: Vec<u8>,
}

impl Sink for Split {
    fn lit(&mut self, text: &'static str) {
        let bytes = text.as_bytes();
        // Most literals are one byte (`,` `{` `}` `[` `]`): no copy call for them.
        if let [b] = *bytes {
            self.payload.push(b);
            if b == b'"' {
                self.envelope.push(b'\\');
            }
            self.envelope.push(b);
            return;
        }
        self.payload.extend_from_slice(bytes);
        let mut from = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if b == b'"' {
                self.envelope.extend_from_slice(&bytes[from..i]);
                self.envelope.extend_from_slice(b"\\\"");
                from = i + 1;
            }
        }
        self.envelope.extend_from_slice(&bytes[from..]);
    }
    fn key(&mut self, key: &str) {
        self.payload.push(b'"');
        self.payload.extend_from_slice(key.as_bytes());
        self.payload.extend_from_slice(b"\":");
        self.envelope.extend_from_slice(b"\\\"");
        self.envelope.extend_from_slice(key.as_bytes());
        self.envelope.extend_from_slice(b"\\\":");
    }
    fn encoded(&mut self, rows: &EncodedRows) {
        self.record(rows.payload().as_bytes(), rows.envelope());
    }
    fn record(&mut self, payload: &[u8], envelope: &[u8]) {
        self.payload.extend_from_slice(payload);
        self.envelope.extend_from_slice(envelope);
    }
}

impl JsonText for Split {
    fn text(&mut self, text: &str) {
        self.payload.extend_from_slice(text.as_bytes());
        self.envelope.extend_from_slice(text.as_bytes());
    }
    fn quote(&mut self) {
        self.payload.push(b'"');
        self.envelope.extend_from_slice(b"\\\"");
    }
    fn escape(&mut self, seq: &str) {
        // The payload holds no control character (its strings escape them), so the
        // envelope escapes only the sequence's `\` and `"`.
        self.payload.extend_from_slice(seq.as_bytes());
        for &b in seq.as_bytes() {
            match b {
                b'\\' => self.envelope.extend_from_slice(b"\\\\"),
                b'"' => self.envelope.extend_from_slice(b"\\\""),
                _ => self.envelope.push(b),
            }
        }
    }
}

/// The envelope being written (`split.envelope`, already past `"payload":"`) and
/// the digest of the payload's own bytes: `split.payload` holds those not hashed yet.
pub(super) struct EnvelopeSink {
    pub split: Split,
    pub hasher: Sha256,
}

impl EnvelopeSink {
    /// `out` is the envelope so far; the payload's bytes are hashed as they come.
    pub fn new(out: Vec<u8>) -> EnvelopeSink {
        EnvelopeSink {
            split: Split {
                payload: Vec::with_capacity(HASH_CHUNK + 256),
                envelope: out,
            },
            hasher: Sha256::new(),
        }
    }

    /// The envelope so far and the payload's digest.
    pub fn finish(mut self) -> (Vec<u8>, [u8; 32]) {
        self.hasher.update(&self.split.payload);
        (self.split.envelope, self.hasher.finalize().into())
    }
}

impl Sink for EnvelopeSink {
    fn lit(&mut self, text: &'static str) {
        self.split.lit(text);
    }
    fn key(&mut self, key: &str) {
        self.split.key(key);
    }
    fn boundary(&mut self) {
        if self.split.payload.len() >= HASH_CHUNK {
            self.hasher.update(&self.split.payload);
            self.split.payload.clear();
        }
    }
    fn encoded(&mut self, rows: &EncodedRows) {
        self.split.envelope.extend_from_slice(rows.envelope());
        // Hashed in place: the digest takes what is pending first, then these bytes
        // without copying them into the chunk.
        self.hasher.update(&self.split.payload);
        self.split.payload.clear();
        self.hasher.update(rows.payload().as_bytes());
    }
    fn record(&mut self, payload: &[u8], envelope: &[u8]) {
        self.split.record(payload, envelope);
    }
}

impl JsonText for EnvelopeSink {
    fn text(&mut self, text: &str) {
        self.split.text(text);
    }
    fn quote(&mut self) {
        self.split.quote();
    }
    fn escape(&mut self, seq: &str) {
        self.split.escape(seq);
    }
}
