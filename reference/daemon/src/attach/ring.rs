//! A pane's shared output stream: the most recent PTY output in a bounded ring, with
//! absolute byte offsets, plus the exit status and the reason the stream closed.
//!
//! The PTY supervisor appends and never waits: the ring drops its oldest bytes instead.
//! Viewers share the one ring, each reading at its own offset, and wake on a `watch`
//! whose value changes with every append, exit or close.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

/// The one place the ring's capacity is set. It bounds both the memory of a busy
/// pane and how far behind a viewer may fall before it must reattach.
pub const RING_CAPACITY: usize = 1 << 20;

/// Why a stream closed (`CLOSE.reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    PaneRemoved,
    Lagging,
    Shutdown,
    Detached,
    Denied,
    Protocol,
}

impl CloseReason {
    pub const ALL: [CloseReason; 6] = [
        CloseReason::PaneRemoved,
        CloseReason::Lagging,
        CloseReason::Shutdown,
        CloseReason::Detached,
        CloseReason::Denied,
        CloseReason::Protocol,
    ];

    /// The reason a `CLOSE` payload names, if this daemon defines it.
    pub fn parse(reason: &str) -> Option<CloseReason> {
        Self::ALL.into_iter().find(|r| r.as_str() == reason)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::PaneRemoved => "pane_removed",
            CloseReason::Lagging => "lagging",
            CloseReason::Shutdown => "shutdown",
            CloseReason::Detached => "detached",
            CloseReason::Denied => "denied",
            CloseReason::Protocol => "protocol",
        }
    }
}

/// How the pane's process ended (`EXIT` payload).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExitStatus {
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
}

impl ExitStatus {
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({});
        if let Some(c) = self.exit_code {
            v["exit_code"] = c.into();
        }
        if let Some(s) = &self.signal {
            v["signal"] = s.clone().into();
        }
        v
    }
}

struct Inner {
    /// Grows on demand up to [`RING_CAPACITY`], so an idle pane costs little.
    buf: VecDeque<u8>,
    /// Absolute offset of `buf[0]`.
    start: u64,
    exit: Option<ExitStatus>,
    closed: Option<CloseReason>,
}

pub struct PaneOutput {
    inner: Mutex<Inner>,
    changed: watch::Sender<u64>,
}

/// What a viewer finds at its offset.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// `n` bytes starting at the offset were appended to the caller's buffer.
    Bytes(usize),
    /// Nothing new yet.
    Idle,
    /// Everything was read and the process has ended.
    Exited(ExitStatus),
    /// The offset fell out of the ring.
    Lagging,
    Closed(CloseReason),
}

impl PaneOutput {
    pub fn new() -> Arc<Self> {
        Arc::new(PaneOutput {
            inner: Mutex::new(Inner {
                buf: VecDeque::new(),
                start: 0,
                exit: None,
                closed: None,
            }),
            changed: watch::channel(0).0,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere cannot leave the ring inconsistent: every update is a
        // plain copy, so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// Appends and wakes the viewers.
    pub fn append(&self, bytes: &[u8]) {
        self.append_quiet(bytes);
        self.announce();
    }

    /// Wakes the viewers after [`Self::append_quiet`].
    pub fn announce(&self) {
        self.bump();
    }

    /// Appends without waking anyone: a producer reading a burst wakes viewers once
    /// per burst, not once per PTY read.
    pub fn append_quiet(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        {
            let mut g = self.lock();
            let bytes = if bytes.len() > RING_CAPACITY {
                let skip = bytes.len() - RING_CAPACITY;
                let dropped = g.buf.len() + skip;
                g.buf.clear();
                g.start += dropped as u64;
                &bytes[skip..]
            } else {
                bytes
            };
            let over = (g.buf.len() + bytes.len()).saturating_sub(RING_CAPACITY);
            if over > 0 {
                g.buf.drain(..over);
                g.start += over as u64;
            }
            g.buf.extend(bytes);
        }
    }

    /// `(start, end)`: the absolute offsets the ring holds.
    pub fn bounds(&self) -> (u64, u64) {
        let g = self.lock();
        (g.start, g.start + g.buf.len() as u64)
    }

    /// Records the exit once; later reports (an archive's state) change nothing.
    pub fn set_exit(&self, status: ExitStatus) {
        let mut g = self.lock();
        if g.exit.is_none() {
            g.exit = Some(status);
            drop(g);
            self.bump();
        }
    }

    /// Closes every stream of this output; the first reason wins.
    pub fn close(&self, reason: CloseReason) {
        let mut g = self.lock();
        if g.closed.is_none() {
            g.closed = Some(reason);
            drop(g);
            self.bump();
        }
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Copies at most `max` bytes from `offset` onto `out`.
    pub fn read(&self, offset: u64, max: usize, out: &mut Vec<u8>) -> Read {
        let g = self.lock();
        if let Some(r) = g.closed {
            return Read::Closed(r);
        }
        if offset < g.start {
            return Read::Lagging;
        }
        let from = (offset - g.start) as usize;
        if from < g.buf.len() {
            let n = (g.buf.len() - from).min(max);
            let (a, b) = g.buf.as_slices();
            if from < a.len() {
                let a_end = (from + n).min(a.len());
                out.extend_from_slice(&a[from..a_end]);
                out.extend_from_slice(&b[..n - (a_end - from)]);
            } else {
                let f = from - a.len();
                out.extend_from_slice(&b[f..f + n]);
            }
            return Read::Bytes(n);
        }
        match &g.exit {
            Some(st) => Read::Exited(st.clone()),
            None => Read::Idle,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_survive_wrapping_and_old_offsets_lag() {
        let o = PaneOutput::new();
        let chunk: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
        for _ in 0..5 {
            o.append(&chunk);
        }
        let (start, end) = o.bounds();
        assert_eq!(end, 1_500_000);
        assert_eq!(end - start, RING_CAPACITY as u64);
        assert_eq!(o.read(start - 1, 10, &mut Vec::new()), Read::Lagging);
        let mut out = Vec::new();
        assert_eq!(
            o.read(end - 300_000, 400_000, &mut out),
            Read::Bytes(300_000)
        );
        assert_eq!(out, chunk);
        assert_eq!(o.read(end, 10, &mut Vec::new()), Read::Idle);
        o.set_exit(ExitStatus {
            exit_code: Some(3),
            signal: None,
        });
        assert!(matches!(o.read(end, 10, &mut Vec::new()), Read::Exited(_)));
        o.close(CloseReason::PaneRemoved);
        assert_eq!(
            o.read(end - 5, 10, &mut Vec::new()),
            Read::Closed(CloseReason::PaneRemoved)
        );
    }

    #[test]
    fn a_chunk_larger_than_the_ring_keeps_its_tail() {
        let o = PaneOutput::new();
        o.append(b"abc");
        let big: Vec<u8> = (0..RING_CAPACITY + 10).map(|i| (i % 251) as u8).collect();
        o.append(&big);
        let (start, end) = o.bounds();
        assert_eq!(end, 3 + big.len() as u64);
        assert_eq!(start, end - RING_CAPACITY as u64);
        let mut out = Vec::new();
        o.read(start, RING_CAPACITY, &mut out);
        assert_eq!(out, big[10..]);
    }
}
