//! What a connection does after a request ([`Outcome`]), and streaming verbs
//! (`events.subscribe`, `pane.attach`): the reactor answers the request in one turn as
//! usual, and the `ok` reply's [`Outcome`] also carries a [`ConnectionStream`] that takes
//! the connection over once that reply is written. The connection carries no further
//! requests; it closes when the stream ends. Whoever answers a request (the reactor, or
//! the recovery worker for a deferred verb) sends an [`Outcome`] on the request's
//! [`Reply`].

use std::future::Future;
use std::pin::Pin;
use tokio::io::BufReader;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::oneshot;

/// Where a request's answer goes.
pub type Reply = oneshot::Sender<Outcome>;

/// A success reply's body.
pub enum Answer {
    Value(serde_json::Value),
    /// Already encoded by the handler: the listings, whose size grows with the
    /// number of resources, serialize their records straight into these bytes
    /// instead of building a `Value` tree first (`topology/json.rs`).
    Encoded(Encoded),
}

/// One JSON value as `serde_json` writes it compactly (the bytes a `Value` of the
/// same content would print).
pub struct Encoded(Vec<u8>);

impl Encoded {
    /// Encodes `value`; `capacity` is a guess of the size, to grow the buffer less.
    pub fn of<T: serde::Serialize>(value: &T, capacity: usize) -> Self {
        let mut out = Vec::with_capacity(capacity);
        match serde_json::to_writer(&mut out, value) {
            Ok(()) => Encoded(out),
            Err(_) => Encoded(b"{}".to_vec()),
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

/// The result of one request, plus what the connection must do next.
pub struct Outcome {
    pub result: crate::errors::ApiResult<Answer>,
    /// `auth.login` rebinds the connection to this principal.
    pub principal: Option<String>,
    /// Close the connection after replying (invalid token).
    pub close: bool,
    /// A streaming verb takes the connection over after its `ok` reply.
    pub stream: Option<Box<dyn ConnectionStream>>,
}

impl Outcome {
    /// A reply with nothing else for the connection to do.
    pub fn reply(result: crate::errors::ApiResult<serde_json::Value>) -> Self {
        Outcome::answer(result.map(Answer::Value))
    }

    /// [`Outcome::reply`] with a body that may be already encoded.
    pub fn answer(result: crate::errors::ApiResult<Answer>) -> Self {
        Outcome {
            result,
            principal: None,
            close: false,
            stream: None,
        }
    }
}

/// The connection's read side, with whatever the client sent after the request
/// already buffered.
pub type Reader = BufReader<OwnedReadHalf>;
pub type Writer = OwnedWriteHalf;

pub type StreamFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

pub trait ConnectionStream: Send {
    /// Serves the stream until it ends; the connection is closed afterwards.
    fn run(self: Box<Self>, reader: Reader, writer: Writer) -> StreamFuture;
}
