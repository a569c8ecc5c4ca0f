//! Feeding a pane's emulator from its output ring, off the PTY reader.
//!
//! The emulator is the most expensive per-byte step (avt handles every character
//! through its generic operation pipeline), so the PTY reader only appends to the
//! ring and wakes viewers; a blocking-pool job feeds the emulator from the ring in
//! chunks, on another core when there is one. The reader stops reading while the
//! emulator is more than [`HIGH_WATER`] behind, so un-fed output never leaves the ring
//! and the emulator never misses a byte. The emulator counts what it has consumed
//! ([`Emulator::fed`]), so an attach takes its snapshot and that offset as one pair.

use super::ring::{PaneOutput, Read};
use crate::emulator::Emulator;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// The reader pauses when this much output waits for the emulator. With a burst of
/// at most 256 KiB read after the check, un-fed output stays well inside the 1 MiB
/// ring.
pub const HIGH_WATER: u64 = 512 * 1024;
/// Output fed to the emulator per lock hold, so readers of the screen (capture,
/// attach, checkpoints) wait at most one chunk.
const CHUNK: usize = 64 * 1024;

/// Shared between a pane's reader and its feeder job.
pub struct Feeder {
    emulator: Arc<Mutex<Emulator>>,
    output: Arc<PaneOutput>,
    running: AtomicBool,
    /// Mirrors the emulator's `fed` without its lock, for the reader's back-pressure.
    fed: AtomicU64,
    progressed: Notify,
}

impl Feeder {
    pub fn new(emulator: Arc<Mutex<Emulator>>, output: Arc<PaneOutput>) -> Arc<Self> {
        Arc::new(Feeder {
            emulator,
            output,
            running: AtomicBool::new(false),
            fed: AtomicU64::new(0),
            progressed: Notify::new(),
        })
    }

    /// Output appended but not yet fed.
    pub fn backlog(&self) -> u64 {
        let (_, end) = self.output.bounds();
        end.saturating_sub(self.fed.load(Ordering::Acquire))
    }

    /// Starts a feeder job unless one is running. Called after every append.
    pub fn kick(self: &Arc<Self>) {
        if !self.running.swap(true, Ordering::AcqRel) {
            let me = self.clone();
            tokio::task::spawn_blocking(move || me.drain());
        }
    }

    /// Resolves after the feeder made progress (or immediately if it did since the
    /// last wait); callers re-check [`Self::backlog`].
    pub async fn progressed(&self) {
        self.progressed.notified().await;
    }

    /// Waits until every appended byte has been fed (before an exit is reported, so
    /// a capture after the exit sees all output).
    pub async fn flush(self: &Arc<Self>) {
        while self.backlog() > 0 {
            self.kick();
            self.progressed().await;
        }
    }

    fn drain(&self) {
        let mut buf = Vec::with_capacity(CHUNK);
        loop {
            let fed = self.fed.load(Ordering::Acquire);
            buf.clear();
            match self.output.read(fed, CHUNK, &mut buf) {
                Read::Bytes(n) => {
                    if let Ok(mut e) = self.emulator.lock() {
                        e.feed(&buf[..n]);
                    }
                    self.fed.store(fed + n as u64, Ordering::Release);
                    self.progressed.notify_one();
                }
                // Cannot happen while the reader honours HIGH_WATER; if it ever does,
                // carry on from what the ring still holds rather than stall.
                Read::Lagging => {
                    let (start, _) = self.output.bounds();
                    if let Ok(mut e) = self.emulator.lock() {
                        e.skip_to(start);
                    }
                    self.fed.store(start, Ordering::Release);
                }
                // A removed pane's screen is never read again.
                Read::Closed(_) => {
                    let (_, end) = self.output.bounds();
                    self.fed.store(end, Ordering::Release);
                    self.running.store(false, Ordering::Release);
                    self.progressed.notify_one();
                    return;
                }
                Read::Idle | Read::Exited(_) => {
                    self.running.store(false, Ordering::Release);
                    self.progressed.notify_one();
                    // Output appended after our read but before `running` was cleared
                    // found us running and did not start a job: take it.
                    if self.backlog() == 0 || self.running.swap(true, Ordering::AcqRel) {
                        return;
                    }
                }
            }
        }
    }
}
