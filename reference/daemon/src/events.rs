//! The event log and its subscribers (`events.subscribe`, docs/spec/events.md).
//!
//! The reactor owns one [`EventLog`]: it numbers events, keeps the newest
//! [`RING_CAPACITY`] for cursor resumption, and decides per subscriber in the emitting
//! turn whether the subscriber may read the event (grants and ancestry are reactor
//! state). Accepted events go to the subscriber's bounded [`Queue`]; the connection's
//! [`EventStream`] task only writes what is queued, so a slow client never blocks the
//! reactor and never makes it hold more than [`QUEUE_LIMIT`] lines for it.

use crate::auth::Resource;
use crate::stream::{ConnectionStream, Reader, StreamFuture, Writer};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, Weak};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::Notify;

/// Events kept for replay after a cursor.
pub const RING_CAPACITY: usize = 4096;
/// Undelivered events a subscriber may have queued; one more closes it as `lagging`.
pub const QUEUE_LIMIT: usize = 4096;

/// Why the daemon ends a stream (the `closed` line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseReason {
    Lagging,
    Shutdown,
    Revoked,
}

impl CloseReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::Lagging => "lagging",
            CloseReason::Shutdown => "shutdown",
            CloseReason::Revoked => "revoked",
        }
    }
}

/// An event ready to be numbered: its ancestry is the one the resource had when the
/// event happened, so removals still reach readers of the containers.
pub struct Pending {
    pub kind: &'static str,
    pub resource: Resource,
    pub ancestry: Vec<Resource>,
    pub data: Value,
}

/// A numbered event as kept in the ring: the encoded line plus what filtering needs.
struct Logged {
    sequence: u64,
    resource: Resource,
    ancestry: Vec<Resource>,
    line: Arc<[u8]>,
}

#[derive(Default)]
struct QueueState {
    lines: VecDeque<Arc<[u8]>>,
    closed: Option<CloseReason>,
}

/// One subscriber's undelivered lines, shared between the reactor (producer) and the
/// connection's stream task (consumer).
#[derive(Default)]
pub struct Queue {
    state: Mutex<QueueState>,
    wake: Notify,
}

impl Queue {
    /// Queues a line; false (and the queue is closed as lagging) when it is full.
    fn push(&self, line: Arc<[u8]>) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        if s.closed.is_some() {
            return false;
        }
        if s.lines.len() >= QUEUE_LIMIT {
            s.closed = Some(CloseReason::Lagging);
            drop(s);
            self.wake.notify_one();
            return false;
        }
        s.lines.push_back(line);
        drop(s);
        self.wake.notify_one();
        true
    }

    /// Ends the stream after what is already queued; the first reason wins.
    pub fn close(&self, reason: CloseReason) {
        if let Ok(mut s) = self.state.lock() {
            s.closed.get_or_insert(reason);
        }
        self.wake.notify_one();
    }

    fn take(&self) -> (Vec<Arc<[u8]>>, Option<CloseReason>) {
        match self.state.lock() {
            Ok(mut s) => (s.lines.drain(..).collect(), s.closed),
            Err(_) => (Vec::new(), Some(CloseReason::Shutdown)),
        }
    }
}

struct Subscriber {
    principal: String,
    /// Weak: a stream task that ended (client EOF) drops the queue, and the next
    /// publication forgets the subscriber.
    queue: Weak<Queue>,
}

/// What a delivery check answers for one subscriber and one event.
pub enum Access {
    Allowed,
    Denied,
    /// The subscriber's principal no longer exists.
    Revoked,
}

pub struct EventLog {
    source: String,
    head: u64,
    ring: VecDeque<Logged>,
    subscribers: Vec<Subscriber>,
}

/// How a cursor relates to this log.
#[derive(Debug, PartialEq, Eq)]
pub enum CursorFit {
    /// Every event after the cursor is retained (or there is none).
    Resumable,
    SourceChanged,
    Expired,
    /// Beyond the head of this source.
    Future,
}

impl EventLog {
    pub fn new(source: String) -> Self {
        EventLog {
            source,
            head: 0,
            ring: VecDeque::with_capacity(RING_CAPACITY),
            subscribers: Vec::new(),
        }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Sequence of the newest event (0 before the first).
    pub fn head(&self) -> u64 {
        self.head
    }

    pub fn fit(&self, source: &str, sequence: u64) -> CursorFit {
        if source != self.source {
            CursorFit::SourceChanged
        } else if sequence > self.head {
            CursorFit::Future
        } else if sequence == self.head
            || self
                .ring
                .front()
                .is_some_and(|e| e.sequence <= sequence + 1)
        {
            CursorFit::Resumable
        } else {
            CursorFit::Expired
        }
    }

    /// Numbers `event`, keeps it for replay and queues it for every subscriber that
    /// `access` allows. Subscribers whose principal is gone are closed as revoked;
    /// full ones as lagging.
    pub fn publish(
        &mut self,
        event: Pending,
        access: impl Fn(&str, Resource, &[Resource]) -> Access,
    ) {
        self.head += 1;
        let line = encode_event(&self.source, self.head, &event);
        self.subscribers.retain(|sub| {
            let Some(queue) = sub.queue.upgrade() else {
                return false;
            };
            match access(&sub.principal, event.resource, &event.ancestry) {
                Access::Allowed => queue.push(line.clone()),
                Access::Denied => true,
                Access::Revoked => {
                    queue.close(CloseReason::Revoked);
                    false
                }
            }
        });
        if self.ring.len() == RING_CAPACITY {
            self.ring.pop_front();
        }
        self.ring.push_back(Logged {
            sequence: self.head,
            resource: event.resource,
            ancestry: event.ancestry,
            line,
        });
    }

    /// Whether any subscriber's stream is still open (one that could read an event
    /// published now).
    pub fn has_readers(&self) -> bool {
        self.subscribers.iter().any(|s| s.queue.strong_count() > 0)
    }

    /// Numbers `n` events that nobody can ever read: no stream is open and later
    /// events of the same batch evict them from the ring before anyone could
    /// subscribe. The ring is emptied, so no retained event is older than a passed
    /// one and a cursor before them is expired, as if they had been published and
    /// evicted (restore's ~100 000 events would otherwise each be rendered, encoded
    /// and dropped).
    pub fn pass_unread(&mut self, n: u64) {
        if n > 0 {
            debug_assert!(!self.has_readers());
            self.head += n;
            self.ring.clear();
        }
    }

    /// Registers a subscriber, first queueing the retained events after `after`
    /// (when resuming) that `allowed` lets it read.
    pub fn subscribe(
        &mut self,
        principal: &str,
        after: Option<u64>,
        allowed: impl Fn(Resource, &[Resource]) -> bool,
    ) -> Arc<Queue> {
        let queue = Arc::new(Queue::default());
        if let Some(n) = after {
            for e in self.ring.iter().filter(|e| e.sequence > n) {
                if allowed(e.resource, &e.ancestry) {
                    queue.push(e.line.clone());
                }
            }
        }
        self.subscribers.retain(|s| s.queue.strong_count() > 0);
        self.subscribers.push(Subscriber {
            principal: principal.to_string(),
            queue: Arc::downgrade(&queue),
        });
        queue
    }

    /// Closes every stream (daemon stopping); later subscriptions close at once too.
    pub fn close_all(&mut self, reason: CloseReason) {
        for sub in self.subscribers.drain(..) {
            if let Some(q) = sub.queue.upgrade() {
                q.close(reason);
            }
        }
    }
}

fn encode_event(source: &str, sequence: u64, e: &Pending) -> Arc<[u8]> {
    /// The wire line's shape, fields in the sorted order a `Value` map prints them
    /// (so the bytes are what `json!` gave), borrowing the event instead of copying
    /// its data into a new tree.
    #[derive(serde::Serialize)]
    struct Frame<'a> {
        event: Event<'a>,
    }
    #[derive(serde::Serialize)]
    struct Event<'a> {
        data: &'a Value,
        resource: String,
        sequence: u64,
        source: &'a str,
        #[serde(rename = "type")]
        kind: &'a str,
    }
    let frame = Frame {
        event: Event {
            data: &e.data,
            resource: e.resource.to_string(),
            sequence,
            source,
            kind: e.kind,
        },
    };
    let mut bytes = serde_json::to_vec(&frame).unwrap_or_default();
    bytes.push(b'\n');
    bytes.into()
}

/// The connection side of a subscription: writes queued lines, then the `closed`
/// line when the daemon ends the stream. What the client sends is read and dropped so
/// that its EOF is noticed; EOF ends the stream.
pub struct EventStream {
    pub queue: Arc<Queue>,
}

impl ConnectionStream for EventStream {
    fn run(self: Box<Self>, reader: Reader, writer: Writer) -> StreamFuture {
        Box::pin(serve(self.queue, reader, writer))
    }
}

async fn serve(queue: Arc<Queue>, mut reader: Reader, mut writer: Writer) {
    let mut sink = [0u8; 4096];
    loop {
        let (lines, closed) = queue.take();
        if !lines.is_empty() {
            let batch: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied()).collect();
            if writer.write_all(&batch).await.is_err() {
                return;
            }
        }
        if let Some(reason) = closed {
            let mut line = json!({"closed": {"reason": reason.as_str()}}).to_string();
            line.push('\n');
            let _ = writer.write_all(line.as_bytes()).await;
            let _ = writer.shutdown().await;
            return;
        }
        tokio::select! {
            _ = queue.wake.notified() => {}
            read = reader.read(&mut sink) => match read {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::SessionId;

    fn pending(n: u64) -> Pending {
        Pending {
            kind: "session.created",
            resource: Resource::Session(SessionId(n)),
            ancestry: Vec::new(),
            data: json!({}),
        }
    }

    #[test]
    fn cursor_fit_follows_the_ring() {
        let mut log = EventLog::new("venomx/a".into());
        assert_eq!(log.fit("venomx/a", 0), CursorFit::Resumable);
        assert_eq!(log.fit("venomx/a", 1), CursorFit::Future);
        assert_eq!(log.fit("venomx/b", 0), CursorFit::SourceChanged);
        for n in 0..RING_CAPACITY as u64 + 2 {
            log.publish(pending(n), |_, _, _| Access::Allowed);
        }
        // Events 1 and 2 fell out: cursor 1 misses event 2, cursor 2 misses nothing.
        assert_eq!(log.fit("venomx/a", 0), CursorFit::Expired);
        assert_eq!(log.fit("venomx/a", 1), CursorFit::Expired);
        assert_eq!(log.fit("venomx/a", 2), CursorFit::Resumable);
        assert_eq!(log.fit("venomx/a", log.head()), CursorFit::Resumable);
    }

    #[test]
    fn a_full_queue_closes_as_lagging_and_the_log_forgets_it() {
        let mut log = EventLog::new("venomx/a".into());
        let q = log.subscribe("owner", None, |_, _| true);
        for n in 0..=QUEUE_LIMIT as u64 {
            log.publish(pending(n), |_, _, _| Access::Allowed);
        }
        let (lines, closed) = q.take();
        assert_eq!(lines.len(), QUEUE_LIMIT);
        assert_eq!(closed, Some(CloseReason::Lagging));
        assert!(log.subscribers.is_empty());
    }

    #[test]
    fn an_event_line_is_what_a_value_tree_prints() {
        let data = json!({"pane": "p7", "window": "w2", "name": "a \"b\"\n", "exit_code": 3,
            "layer": {"kind": "float", "z": 1}});
        let e = Pending {
            kind: "pane.created",
            resource: Resource::Pane(crate::ids::PaneId(7)),
            ancestry: Vec::new(),
            data: data.clone(),
        };
        let tree = json!({"event": {
            "source": "venomx/a",
            "sequence": 42,
            "type": "pane.created",
            "resource": "pane:p7",
            "data": data,
        }});
        let mut want = serde_json::to_vec(&tree).unwrap();
        want.push(b'\n');
        assert_eq!(&*encode_event("venomx/a", 42, &e), &want[..]);
    }

    #[test]
    fn passed_events_are_numbered_and_expire_every_older_cursor() {
        let mut log = EventLog::new("venomx/a".into());
        for n in 0..3 {
            log.publish(pending(n), |_, _, _| Access::Allowed);
        }
        assert!(!log.has_readers());
        log.pass_unread(5);
        assert_eq!(log.head(), 8);
        assert_eq!(log.fit("venomx/a", 2), CursorFit::Expired);
        assert_eq!(log.fit("venomx/a", 8), CursorFit::Resumable);
        log.publish(pending(9), |_, _, _| Access::Allowed);
        assert_eq!(log.fit("venomx/a", 7), CursorFit::Expired);
        assert_eq!(log.fit("venomx/a", 8), CursorFit::Resumable);
        let q = log.subscribe("owner", Some(8), |_, _| true);
        assert!(log.has_readers());
        let (lines, _) = q.take();
        assert_eq!(lines.len(), 1);
        assert!(std::str::from_utf8(&lines[0])
            .unwrap()
            .contains("\"sequence\":9"));
    }
}
