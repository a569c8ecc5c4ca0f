//! Atomic publish (RFC §3): a fresh id and the next generation, an exclusive 0600
//! `.tmp-<uuid>`, a complete checked write, fsync, close, a no-replace rename to the
//! unused final name, a directory fsync, and only then success.
//!
//! Any failure leaves every earlier file untouched (nothing but the new temporary
//! file is ever written), removes that temporary file when it can, and returns an
//! error. A failure of the final directory fsync leaves the renamed file in place (it
//! may or may not survive power loss) and is still a failure.

use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use vx_format::limits::MAX_SAFE_INTEGER;
use vx_format::{Checkpoint, Format, Timestamp};

use crate::error::{ErrorCode, Result, StoreError};
use crate::io::{retry_eintr, Io, Step};
use crate::names::{final_name, new_checkpoint_id, new_temp_name};
use crate::safe_fs::FILE_MODE;
use crate::store::Store;
use crate::verdicts::Summary;

/// What the store allocates for a new checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// `c` + fresh random UUID v4, unused in the store.
    pub checkpoint: String,
    /// One more than the largest generation retained.
    pub generation: u64,
}

/// A durable checkpoint: renamed into place and the directory synced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Published {
    pub checkpoint: String,
    pub generation: u64,
    pub bytes: u64,
    /// Time spent in the caller's encoding (monotonic clock; for doctor and benches).
    pub encode_time: Duration,
    /// Time from allocation to the directory fsync, encoding excluded.
    pub store_time: Duration,
}

/// Temporary-name collisions are astronomically unlikely; a few retries bound the loop.
const TEMP_NAME_ATTEMPTS: usize = 4;

impl Store {
    /// Publishes `state` in the current format. The store owns four fields and
    /// overwrites them: `checkpoint` and `generation` (allocated here), `socket` and
    /// `uid` (the store's identity). `now` is recorded as the attempt time for doctor.
    ///
    /// `state` is borrowed, not consumed: the caller keeps it (with the four fields
    /// now set to what was written) and frees it outside the publish latency.
    pub fn publish(&mut self, now: Timestamp, state: &mut Checkpoint) -> Result<Published> {
        self.publish_encoded(now, state, |state| {
            Ok(vx_format::write(state, Format::CURRENT)?)
        })
    }

    /// [`Store::publish`] with the caller's encoding of `state` (the daemon's omits
    /// text until the file fits, RFC §4), called once the four store-owned fields
    /// are set. What `state` holds after `encode` is what the store remembers of
    /// the new file, so the next scan (the prune that follows a publish) need not
    /// read back and decode what was just written.
    pub fn publish_encoded(
        &mut self,
        now: Timestamp,
        state: &mut Checkpoint,
        encode: impl FnOnce(&mut Checkpoint) -> Result<Vec<u8>>,
    ) -> Result<Published> {
        let Some(socket) = self.socket.clone() else {
            return Err(StoreError::io(
                "store opened without a socket identity cannot publish",
            ));
        };
        let uid = self.uid;
        let mut summary = None;
        let result = self.publish_with(now, |alloc| {
            state.checkpoint = alloc.checkpoint.clone();
            state.generation = alloc.generation;
            state.socket = socket;
            state.uid = uid;
            let bytes = encode(state)?;
            summary = Some(Summary {
                generation: alloc.generation,
                captured_at: state.captured_at,
                has_text: state.panes.iter().any(|p| p.text.is_plain()),
            });
            Ok(bytes)
        });
        if let (Ok(published), Some(summary)) = (&result, summary) {
            self.remember_published(&published.checkpoint, summary);
        }
        result
    }

    /// Publishes the bytes `encode` returns for the allocated id and generation: the
    /// primitive under [`Store::publish`], for callers with their own encoding.
    pub fn publish_with(
        &mut self,
        now: Timestamp,
        encode: impl FnOnce(&Allocation) -> Result<Vec<u8>>,
    ) -> Result<Published> {
        self.record_attempt(now);
        let result = self.publish_inner(encode);
        self.record_publish(now, &result);
        result
    }

    fn publish_inner(
        &mut self,
        encode: impl FnOnce(&Allocation) -> Result<Vec<u8>>,
    ) -> Result<Published> {
        let started = Instant::now();
        let alloc = self.allocate()?;
        let encode_started = Instant::now();
        let bytes = encode(&alloc)?;
        let encode_time = encode_started.elapsed();
        // Size overflow fails before anything is written.
        if bytes.len() as u64 > self.config.max_bytes() {
            return Err(StoreError::new(
                ErrorCode::CheckpointSize,
                "encoded checkpoint exceeds max_checkpoint_bytes",
            ));
        }
        let final_name = final_name(&alloc.checkpoint);
        if write_in_place_defect() {
            return self.publish_in_place(alloc, &final_name, &bytes, started, encode_time);
        }
        let (temp_name, file) = self.create_temp()?;
        if let Err(err) = self.write_sync_close(file, &bytes) {
            self.discard_temp(&temp_name);
            return Err(err);
        }
        let dir = self.dir.fd();
        if let Err(errno) = retry_eintr(|| self.io.rename_noreplace(dir, &temp_name, &final_name)) {
            self.discard_temp(&temp_name);
            return Err(StoreError::os(Step::Rename.describe(), errno));
        }
        if let Err(err) = self.sync_dir() {
            self.unconfirmed.insert(alloc.checkpoint.clone());
            return Err(err);
        }
        Ok(published(alloc, &bytes, started, encode_time))
    }

    /// The negative control's wrong publisher: the final name written in place (an
    /// interrupted write leaves a partial file under it), then fsynced.
    fn publish_in_place(
        &mut self,
        alloc: Allocation,
        final_name: &str,
        bytes: &[u8],
        started: Instant,
        encode_time: std::time::Duration,
    ) -> Result<Published> {
        let dir = self.dir.fd();
        let file = retry_eintr(|| self.io.create_exclusive(dir, final_name, FILE_MODE))
            .map_err(|e| StoreError::os(Step::CreateTemp.describe(), e))?;
        self.write_sync_close(file, bytes)?;
        self.sync_dir()?;
        Ok(published(alloc, bytes, started, encode_time))
    }

    /// The next generation and a fresh unused id. Refuses, without writing, when the
    /// generation would leave the safe integer range.
    pub fn allocate(&mut self) -> Result<Allocation> {
        let scan = self.scan()?;
        let largest = scan.max_generation();
        if largest >= MAX_SAFE_INTEGER {
            return Err(StoreError::io("generation range exhausted"));
        }
        let taken = |id: &str| scan.finals.iter().any(|e| e.id == id);
        let mut checkpoint = new_checkpoint_id()?;
        while taken(&checkpoint) {
            checkpoint = new_checkpoint_id()?;
        }
        Ok(Allocation {
            checkpoint,
            generation: largest + 1,
        })
    }

    fn create_temp(&mut self) -> Result<(String, OwnedFd)> {
        let mut last = Errno::EEXIST;
        for _ in 0..TEMP_NAME_ATTEMPTS {
            let name = new_temp_name()?;
            let dir = self.dir.fd();
            match retry_eintr(|| self.io.create_exclusive(dir, &name, FILE_MODE)) {
                Ok(fd) => return Ok((name, fd)),
                Err(Errno::EEXIST) => last = Errno::EEXIST,
                Err(e) => return Err(StoreError::os(Step::CreateTemp.describe(), e)),
            }
        }
        Err(StoreError::os(Step::CreateTemp.describe(), last))
    }

    fn write_sync_close(&mut self, file: OwnedFd, bytes: &[u8]) -> Result<()> {
        let written = write_all(self.io.as_mut(), &file, bytes).and_then(|()| {
            retry_eintr(|| self.io.fsync_file(file.as_fd()))
                .map_err(|e| StoreError::os(Step::FsyncFile.describe(), e))
        });
        // Close even after a failure, and report its error: some filesystems (NFS)
        // only report a failed write at close.
        let closed = self
            .io
            .close(file)
            .map_err(|e| StoreError::os(Step::Close.describe(), e));
        written.and(closed)
    }

    /// Removes this publish's own temporary file after a failure. Best effort: if it
    /// stays, it is never a candidate, and startup cleanup removes it.
    fn discard_temp(&mut self, temp_name: &str) {
        let dir = self.dir.fd();
        let _ = retry_eintr(|| self.io.unlink(dir, temp_name));
    }
}

/// Writes all of `bytes`, continuing short writes and retrying EINTR. A write that
/// makes no progress is an error, never a silent truncation.
fn write_all(io: &mut dyn Io, file: &OwnedFd, bytes: &[u8]) -> Result<()> {
    let mut offset = 0;
    while offset < bytes.len() {
        match io.write(file.as_fd(), &bytes[offset..]) {
            Ok(0) => return Err(StoreError::os(Step::Write.describe(), Errno::EIO)),
            Ok(n) => offset += n,
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(StoreError::os(Step::Write.describe(), e)),
        }
    }
    Ok(())
}

fn published(
    alloc: Allocation,
    bytes: &[u8],
    started: Instant,
    encode_time: std::time::Duration,
) -> Published {
    Published {
        checkpoint: alloc.checkpoint,
        generation: alloc.generation,
        bytes: bytes.len() as u64,
        encode_time,
        store_time: started.elapsed().saturating_sub(encode_time),
    }
}

/// Whether this process runs the reference's deliberately wrong publisher, for the
/// kit's crash-exploration negative control (`VXSTORE_NEGATIVE_CONTROL=write-in-place`;
/// no shipped profile sets it).
fn write_in_place_defect() -> bool {
    static CHOSEN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *CHOSEN.get_or_init(|| {
        std::env::var("VXSTORE_NEGATIVE_CONTROL").is_ok_and(|v| v == "write-in-place")
    })
}
