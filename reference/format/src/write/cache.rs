//! The record cache: a daemon writes nearly the same topology on every checkpoint,
//! so the bytes of each session, window and pane (up to its text) are kept between
//! writes and reused where the record is the same.
//!
//! Invariant: an entry's bytes are exactly what the writer writes for its record
//! (they are made by the same code, into a [`Split`]), and an entry is reused only
//! for a record equal to it in every field the bytes depend on (a pane's text is
//! written apart, after its head). Lists are strictly ascending by id (the writer
//! validates first), so one merge walk over the previous write's entries finds them.

use super::{PayloadWriter, Sink, Split};
use crate::model::{Format, Pane, Session, Text, Window};

/// The encoded records of the previous [`super::write_cached`] (per format).
#[derive(Default)]
pub struct RecordCache {
    format: Option<Format>,
    records: Records,
}

#[derive(Default)]
pub(super) struct Records {
    pub sessions: List<Session>,
    pub windows: List<Window>,
    /// Each pane without its text, and the bytes of its record up to `"text":`.
    pub panes: List<Pane>,
}

impl RecordCache {
    pub fn new() -> RecordCache {
        RecordCache::default()
    }

    /// The records kept for `format` (a write in another format starts afresh).
    pub(super) fn for_format(&mut self, format: Format) -> &mut Records {
        if self.format != Some(format) {
            self.records = Records::default();
            self.format = Some(format);
        }
        &mut self.records
    }

    /// How many records are kept (sessions, windows, panes).
    pub fn len(&self) -> usize {
        let r = &self.records;
        r.sessions.0.len() + r.windows.0.len() + r.panes.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A record the cache keeps: its id (the lists' order), whether another is the
/// same for the writer, and the copy kept of it.
pub(super) trait Record: Sized {
    fn id(&self) -> u64;
    fn same(&self, kept: &Self) -> bool;
    fn keep(&self) -> Self;
}

/// Records whose every field is in their bytes: compared and kept whole.
macro_rules! whole_record {
    ($($ty:ty),*) => {$(
        impl Record for $ty {
            fn id(&self) -> u64 {
                self.id
            }
            fn same(&self, kept: &Self) -> bool {
                self == kept
            }
            fn keep(&self) -> Self {
                self.clone()
            }
        }
    )*};
}

whole_record!(Session, Window);

impl Record for Pane {
    fn id(&self) -> u64 {
        self.id
    }
    /// Every field but `text` (written apart). Destructured so that a new field
    /// does not compile until it is compared here.
    fn same(&self, kept: &Self) -> bool {
        let Pane {
            id,
            window,
            session,
            cols,
            rows,
            state,
            previous_state,
            float,
            tags,
            text: _,
        } = self;
        *id == kept.id
            && *window == kept.window
            && *session == kept.session
            && *cols == kept.cols
            && *rows == kept.rows
            && *state == kept.state
            && *previous_state == kept.previous_state
            && *float == kept.float
            && *tags == kept.tags
    }
    /// Everything but the text; the fields not named are `Copy`.
    fn keep(&self) -> Self {
        Pane {
            state: self.state.clone(),
            float: self.float.clone(),
            tags: self.tags.clone(),
            text: Text::Omitted,
            ..*self
        }
    }
}

struct Entry<R> {
    record: Box<R>,
    /// The record's payload bytes, then the same bytes as the envelope holds them.
    bytes: Box<[u8]>,
    payload_len: usize,
}

/// One list's entries, ascending by id.
pub(super) struct List<R>(Vec<Entry<R>>);

impl<R> Default for List<R> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<R: Record> List<R> {
    /// Starts a write of a list of `len` records.
    pub fn walk(&mut self, len: usize) -> Walk<R> {
        Walk {
            old: std::mem::take(&mut self.0).into_iter().peekable(),
            new: Vec::with_capacity(len),
        }
    }
}

/// One write's pass over a list: the previous entries not passed yet, and this
/// write's entries so far.
pub(super) struct Walk<R> {
    old: std::iter::Peekable<std::vec::IntoIter<Entry<R>>>,
    new: Vec<Entry<R>>,
}

impl<R: Record> Walk<R> {
    /// Writes `record` (the next in ascending id order) to `w`: the previous
    /// entry's bytes if it is the same record, else `encode`'s, kept for next time.
    pub fn write<S: Sink>(
        &mut self,
        w: &mut PayloadWriter<S>,
        record: &R,
        encode: fn(&mut PayloadWriter<Split>, &R),
    ) {
        let id = record.id();
        while self.old.next_if(|e| e.record.id() < id).is_some() {}
        let entry = match self.old.next_if(|e| e.record.id() == id) {
            Some(e) if record.same(&e.record) => e,
            _ => {
                let mut enc = PayloadWriter {
                    out: Split::default(),
                };
                encode(&mut enc, record);
                let Split {
                    payload: mut bytes,
                    envelope,
                } = enc.out;
                let payload_len = bytes.len();
                bytes.extend_from_slice(&envelope);
                Entry {
                    record: Box::new(record.keep()),
                    bytes: bytes.into_boxed_slice(),
                    payload_len,
                }
            }
        };
        let (payload, envelope) = entry.bytes.split_at(entry.payload_len);
        w.out.record(payload, envelope);
        self.new.push(entry);
    }

    pub fn finish(self) -> List<R> {
        List(self.new)
    }
}
