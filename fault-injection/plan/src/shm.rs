//! The layout of the shared counter file (`VXFAULT_SHM`): a fixed array of native-endian
//! u64 words, mapped `MAP_SHARED` by every process of the tree and updated with atomic
//! operations. The runner creates it; the preload maps it.

/// `VXFAULT_SHM` file size in bytes.
pub const SHM_SIZE: usize = 4096;
/// Word index of the magic number.
pub const SHM_MAGIC: usize = 0;
/// Word index of the FNV-1a hash of the plan text.
pub const SHM_PLAN_HASH: usize = 1;
/// Word index of the tree-wide trace sequence counter.
pub const SHM_SEQ: usize = 2;
/// Word index of the number of processes that loaded the preload.
pub const SHM_LOADED: usize = 3;
/// Word index of the number of processes that found a different plan (and so did
/// not use these counters).
pub const SHM_PLAN_MISMATCH: usize = 4;
/// Word index of the number of processes whose `VXFAULT_PLAN` did not parse.
pub const SHM_PLAN_ERROR: usize = 5;
/// Word index of the number of trace lines that could not be written.
pub const SHM_TRACE_ERRORS: usize = 6;
/// Word index of the tree-wide count of random streams handed out (one per process).
pub const SHM_STREAMS: usize = 7;
/// Word index of the bytes reserved so far in the record's data file (`VXFAULT_DATA`):
/// a writer takes its range with one `fetch_add`, so processes never overlap.
pub const SHM_DATA_BYTES: usize = 8;
/// First word of the per-op "calls seen" counters (`NUM_OPS` words).
pub const SHM_SEEN: usize = 16;
/// First word of the per-rule "matching calls" counters (`MAX_RULES` words).
pub const SHM_MATCHED: usize = 32;
/// First word of the per-rule "fired" counters (`MAX_RULES` words).
pub const SHM_FIRED: usize = 64;
/// Number of u64 words used.
pub const SHM_WORDS: usize = 96;
/// The magic number ("vxfault1").
pub const SHM_MAGIC_VALUE: u64 = u64::from_le_bytes(*b"vxfault1");
