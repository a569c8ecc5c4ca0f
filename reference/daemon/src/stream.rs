//! Streaming verbs (`events.subscribe`, `pane.attach`): the reactor answers the request
//! in one turn as usual, and the `ok` reply's [`Outcome`](crate::reactor::Outcome) also
//! carries a [`ConnectionStream`] that takes the connection over once that reply is
//! written. The connection carries no further requests; it closes when the stream ends.

use std::future::Future;
use std::pin::Pin;
use tokio::io::BufReader;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

/// The connection's read side, with whatever the client sent after the request
/// already buffered.
pub type Reader = BufReader<OwnedReadHalf>;
pub type Writer = OwnedWriteHalf;

pub type StreamFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

pub trait ConnectionStream: Send {
    /// Serves the stream until it ends; the connection is closed afterwards.
    fn run(self: Box<Self>, reader: Reader, writer: Writer) -> StreamFuture;
}
