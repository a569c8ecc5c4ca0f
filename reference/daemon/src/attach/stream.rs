//! The daemon side of an attached connection, after the `ok` reply: `S` (when not
//! resumed), `R`, then `O` frames from the shared ring at this viewer's offset, `X`
//! once the process ended and all output was sent, and `C` when the stream ends.
//! Client frames are read by a separate task so a viewer's input never waits for its
//! output (or the reverse); that task reports only how the stream should end.

use super::frame::{self, ClientFrame, HEADER, MAX_PAYLOAD, OUTPUT_CHUNK};
use super::ring::{CloseReason, PaneOutput, Read};
use crate::ids::PaneId;
use crate::stream::{ConnectionStream, Reader, StreamFuture, Writer};
use std::sync::Arc;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::{mpsc, oneshot};

pub struct AttachStream {
    pub pane: PaneId,
    pub principal: String,
    pub output: Arc<PaneOutput>,
    pub offset: u64,
    pub snapshot: Option<Vec<u8>>,
    /// Whether this viewer may send input and resize frames.
    pub write: bool,
    /// The pane's input queue, while the pane runs and the viewer may write. Weak, so
    /// a viewer that stays after EXIT does not keep the pane's writer alive.
    pub input: Option<mpsc::WeakSender<Vec<u8>>>,
    /// Weak, so open streams never keep the reactor alive.
    pub reactor: mpsc::WeakSender<Resize>,
}

impl ConnectionStream for AttachStream {
    fn run(self: Box<Self>, reader: Reader, writer: Writer) -> StreamFuture {
        Box::pin(self.serve(reader, writer))
    }
}

/// How the stream ended: with a `CLOSE` reason, or silently (the client went away).
type End = Option<CloseReason>;

impl AttachStream {
    async fn serve(mut self, reader: Reader, mut writer: Writer) {
        let mut head = Vec::new();
        if let Some(s) = self.snapshot.take() {
            head.extend(frame::encode(frame::SNAPSHOT, &s));
        }
        head.extend(frame::encode(frame::READY, &[]));
        if writer.write_all(&head).await.is_err() {
            return;
        }
        let (end_tx, end_rx) = oneshot::channel();
        let client = tokio::spawn(client_frames(
            reader,
            ClientSide {
                pane: self.pane,
                principal: std::mem::take(&mut self.principal),
                write: self.write,
                input: self.input.take(),
                reactor: self.reactor.clone(),
            },
            end_tx,
        ));
        let end = self.pump(&mut writer, end_rx).await;
        client.abort();
        if let Ok(Some(reason)) = end {
            let body = serde_json::json!({"reason": reason.as_str()}).to_string();
            let _ = writer
                .write_all(&frame::encode(frame::CLOSE, body.as_bytes()))
                .await;
        }
        let _ = writer.shutdown().await;
    }

    /// Sends output from the ring until the stream ends; `Err` is a write failure.
    async fn pump(
        &self,
        writer: &mut Writer,
        mut client_end: oneshot::Receiver<End>,
    ) -> Result<End, ()> {
        let mut changed = self.output.subscribe();
        let mut offset = self.offset;
        let mut exit_sent = false;
        let mut buf = Vec::with_capacity(HEADER + 8 + OUTPUT_CHUNK);
        loop {
            // Marked seen before reading, so an append after the read still wakes us.
            changed.borrow_and_update();
            buf.clear();
            buf.extend_from_slice(&[0; HEADER]);
            buf.extend_from_slice(&offset.to_be_bytes());
            match self.output.read(offset, OUTPUT_CHUNK, &mut buf) {
                Read::Bytes(n) => {
                    let h = frame::header(frame::OUTPUT, 8 + n);
                    buf[..HEADER].copy_from_slice(&h);
                    writer.write_all(&buf).await.map_err(|_| ())?;
                    offset += n as u64;
                    continue;
                }
                Read::Lagging => return Ok(Some(CloseReason::Lagging)),
                Read::Closed(r) => return Ok(Some(r)),
                Read::Exited(st) if !exit_sent => {
                    exit_sent = true;
                    let body = st.to_json().to_string();
                    let f = frame::encode(frame::EXIT, body.as_bytes());
                    writer.write_all(&f).await.map_err(|_| ())?;
                    continue;
                }
                Read::Exited(_) | Read::Idle => {}
            }
            tokio::select! {
                r = changed.changed() => if r.is_err() {
                    return Ok(Some(CloseReason::Shutdown));
                },
                end = &mut client_end => return Ok(end.unwrap_or(None)),
            }
        }
    }
}

/// A viewer's resize frame, for the reactor to apply in a turn of its own.
pub struct Resize {
    pub pane: PaneId,
    pub principal: String,
    pub cols: u16,
    pub rows: u16,
}

struct ClientSide {
    pane: PaneId,
    principal: String,
    write: bool,
    input: Option<mpsc::WeakSender<Vec<u8>>>,
    reactor: mpsc::WeakSender<Resize>,
}

async fn client_frames(mut reader: Reader, side: ClientSide, end: oneshot::Sender<End>) {
    let _ = end.send(read_client(&mut reader, side).await);
}

async fn read_client(reader: &mut Reader, mut side: ClientSide) -> End {
    loop {
        let mut h = [0u8; HEADER];
        reader.read_exact(&mut h).await.ok()?;
        let (kind, len) = frame::parse_header(h);
        if len > MAX_PAYLOAD {
            return Some(CloseReason::Protocol);
        }
        let mut payload = vec![0u8; len];
        reader.read_exact(&mut payload).await.ok()?;
        let resize = match frame::decode_client(kind, &payload, side.write) {
            ClientFrame::Refused(reason) => return Some(reason),
            ClientFrame::Detach => return Some(CloseReason::Detached),
            ClientFrame::Input(_) => None,
            ClientFrame::Resize { cols, rows } => Some((cols, rows)),
        };
        match resize {
            None => {
                // Awaiting here only holds back this viewer's own frames: the pane's
                // queue is bounded and the daemon never waits on it.
                let queue = side.input.as_ref().and_then(mpsc::WeakSender::upgrade);
                if let Some(q) = queue {
                    if !payload.is_empty() && q.send(payload).await.is_err() {
                        side.input = None;
                    }
                }
            }
            Some((cols, rows)) => {
                let Some(tx) = side.reactor.upgrade() else {
                    return Some(CloseReason::Shutdown);
                };
                let msg = Resize {
                    pane: side.pane,
                    principal: side.principal.clone(),
                    cols,
                    rows,
                };
                if tx.send(msg).await.is_err() {
                    return Some(CloseReason::Shutdown);
                }
            }
        }
    }
}
