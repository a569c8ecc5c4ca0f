//! The payload's SHA-256 while the writer encodes it: on the writer's thread for
//! small payloads, on a second thread for large ones.
//!
//! The digest is the largest single cost of writing a large checkpoint (~0.7 ns a
//! byte with SHA-NI: 2.4 ms of a 3.3 MB payload), and it only needs the payload's
//! bytes in order, which the writer produces as it goes. Above
//! [`PARALLEL_DIGEST_BYTES`] the writer hands each finished chunk (or a pane's
//! pre-encoded rows, by reference) to a scoped thread and keeps encoding; below it a
//! thread would cost more than it saves. The bytes hashed, and so the file, are the
//! same either way (tested).

use crate::EncodedRows;
use sha2::{Digest as _, Sha256};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

/// Payloads from this size on are hashed on a second thread (a thread's start and
/// the hand-offs cost tens of microseconds; hashing 1 MiB costs ~0.7 ms).
pub(crate) const PARALLEL_DIGEST_BYTES: usize = 1 << 20;

/// What the second thread hashes, in payload order.
pub(crate) enum Piece {
    /// A chunk of the payload's bytes; sent back for reuse once hashed.
    Chunk(Vec<u8>),
    /// A pane's pre-encoded rows: hashed in place, never copied.
    Rows(Arc<EncodedRows>),
}

/// Where the payload's bytes go to be hashed.
pub(crate) enum Digester {
    /// On this thread.
    Here(Sha256),
    /// On a second thread; `spare` returns hashed chunks for reuse.
    Aside {
        pieces: Sender<Piece>,
        spare: Receiver<Vec<u8>>,
    },
}

impl Digester {
    /// Hashes the chunk's bytes (leaving `chunk` empty, ready for more).
    pub(crate) fn chunk(&mut self, chunk: &mut Vec<u8>) {
        match self {
            Digester::Here(h) => {
                h.update(&chunk[..]);
                chunk.clear();
            }
            Digester::Aside { pieces, spare } => {
                if chunk.is_empty() {
                    return;
                }
                let next = match spare.try_recv() {
                    Ok(mut v) => {
                        v.clear();
                        v
                    }
                    Err(_) => Vec::with_capacity(chunk.capacity()),
                };
                let full = std::mem::replace(chunk, next);
                // The thread outlives every send: it ends when `pieces` is dropped.
                let _ = pieces.send(Piece::Chunk(full));
            }
        }
    }

    /// Hashes `rows`' payload bytes, after everything sent before.
    pub(crate) fn rows(&mut self, rows: &Arc<EncodedRows>) {
        match self {
            Digester::Here(h) => h.update(rows.payload().as_bytes()),
            Digester::Aside { pieces, .. } => {
                let _ = pieces.send(Piece::Rows(Arc::clone(rows)));
            }
        }
    }
}

/// Runs `encode` with a [`Digester`] and returns its output and the digest: on a
/// second (scoped) thread when `size` is large and a thread can be had, else here.
/// `encode` must hash its last chunk before returning.
pub(crate) fn with_digest<T>(
    size: usize,
    encode: impl FnOnce(&mut Digester) -> T,
) -> (T, [u8; 32]) {
    let mut encode = Some(encode);
    if size >= PARALLEL_DIGEST_BYTES {
        let done = std::thread::scope(|scope| {
            let (pieces, received) = channel::<Piece>();
            let (give_back, spare) = channel::<Vec<u8>>();
            let hasher = std::thread::Builder::new()
                .name("vx-format-digest".into())
                .spawn_scoped(scope, move || {
                    let mut h = Sha256::new();
                    for piece in received {
                        match piece {
                            Piece::Chunk(bytes) => {
                                h.update(&bytes);
                                let _ = give_back.send(bytes);
                            }
                            Piece::Rows(rows) => h.update(rows.payload().as_bytes()),
                        }
                    }
                    <[u8; 32]>::from(h.finalize())
                });
            let Ok(hasher) = hasher else {
                return None;
            };
            let encode = encode.take().expect("not run yet");
            let mut digester = Digester::Aside { pieces, spare };
            let out = encode(&mut digester);
            drop(digester);
            let digest = hasher
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            Some((out, digest))
        });
        if let Some(done) = done {
            return done;
        }
        // No thread could be had, and `encode` was not run: hash here instead.
    }
    let encode = encode.take().expect("run once");
    let mut digester = Digester::Here(Sha256::new());
    let out = encode(&mut digester);
    let Digester::Here(h) = digester else {
        unreachable!("made above as Here")
    };
    (out, h.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks and shared rows in any order hash as their bytes in that order, on
    /// either side of the threshold.
    #[test]
    fn both_digesters_hash_the_pieces_in_order() {
        let rows = Arc::new(EncodedRows::new(&["a\"b".into()], &["\\".into()]).unwrap());
        for size in [0, PARALLEL_DIGEST_BYTES] {
            let mut expected = Vec::new();
            let (aside, digest) = with_digest(size, |d| {
                let aside = matches!(d, Digester::Aside { .. });
                for i in 0..300u32 {
                    let mut chunk = vec![(i % 251) as u8; 1000 + i as usize];
                    expected.extend_from_slice(&chunk);
                    d.chunk(&mut chunk);
                    assert!(chunk.is_empty());
                    if i % 7 == 0 {
                        expected.extend_from_slice(rows.payload().as_bytes());
                        d.rows(&rows);
                    }
                }
                aside
            });
            assert_eq!(aside, size >= PARALLEL_DIGEST_BYTES);
            assert_eq!(digest, <[u8; 32]>::from(Sha256::digest(&expected)));
        }
    }
}
