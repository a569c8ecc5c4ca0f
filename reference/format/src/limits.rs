//! The recovery RFC's numeric limits, in one place. Every crate of the kit reads
//! them from here; nothing else spells these numbers.

/// Largest integer JSON can carry exactly (2^53 - 1); the "safe integer" bound.
pub const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// Hard ceiling on a checkpoint file, whatever the configuration says (RFC §4).
pub const HARD_MAX_CHECKPOINT_BYTES: u64 = 64 * 1024 * 1024;
/// Default `max_checkpoint_bytes` (RFC §2).
pub const DEFAULT_MAX_CHECKPOINT_BYTES: u64 = 16_777_216;
/// Configurable range of `max_checkpoint_bytes` (RFC §2).
pub const MIN_CONFIG_CHECKPOINT_BYTES: u64 = 65_536;
pub const MAX_CONFIG_CHECKPOINT_BYTES: u64 = 67_108_864;

/// Nesting depth of one JSON document (envelope and payload measured separately).
pub const MAX_JSON_DEPTH: usize = 32;
/// sessions + windows + panes + nodes of all windows together.
pub const MAX_TOPOLOGY_ITEMS: usize = 100_000;
/// Tags on one pane (format 2+).
pub const MAX_TAGS: usize = 16;
pub const MAX_TAG_KEY_BYTES: usize = 64;
pub const MAX_TAG_VALUE_BYTES: usize = 256;

pub const MAX_NAME_BYTES: usize = 255;
pub const MAX_SOCKET_BYTES: usize = 4096;
pub const MAX_TITLE_BYTES: usize = 128;
pub const MAX_PRESET_PART_BYTES: usize = 64;

/// Pane dimensions, float cell sizes and minimums.
pub const MIN_CELLS: u64 = 1;
pub const MAX_CELLS: u64 = 65_535;
/// Float `x`/`y` offsets.
pub const MAX_FLOAT_OFFSET: i64 = 4096;
/// Split ratio, the first child's share in 1/10000 (format 3).
pub const MIN_RATIO: u64 = 1;
pub const MAX_RATIO: u64 = 9_999;
/// Exit codes a pane record may carry.
pub const MAX_EXIT_CODE: u64 = 255;

/// Text lifetime ceiling: `expires_at <= saved_at + 2592000 s`.
pub const MAX_TEXT_AGE_MS: i64 = 2_592_000 * 1000;

/// Configuration defaults and ranges of RFC §2's `.recovery` section.
pub mod config {
    pub const DEFAULT_INTERVAL_MS: u64 = 30_000;
    pub const INTERVAL_MS: (u64, u64) = (1_000, 3_600_000);
    pub const DEFAULT_MAX_CHECKPOINTS: u64 = 3;
    pub const MAX_CHECKPOINTS: (u64, u64) = (1, 100);
    pub const MAX_CHECKPOINT_BYTES: (u64, u64) = (
        super::MIN_CONFIG_CHECKPOINT_BYTES,
        super::MAX_CONFIG_CHECKPOINT_BYTES,
    );
    pub const DEFAULT_MAX_AGE_SECONDS: u64 = 604_800;
    pub const MAX_AGE_SECONDS: (u64, u64) = (1, 2_592_000);
    pub const DEFAULT_TEXT_MAX_ROWS: u64 = 10_000;
    pub const TEXT_MAX_ROWS: (u64, u64) = (0, 100_000);
    pub const DEFAULT_TEXT_MAX_BYTES: u64 = 1_048_576;
    pub const TEXT_MAX_BYTES: (u64, u64) = (0, 16_777_216);
    pub const DEFAULT_TEXT_MAX_AGE_SECONDS: u64 = 86_400;
    pub const TEXT_MAX_AGE_SECONDS: (u64, u64) = (1, 2_592_000);
}

/// The byte limit a reader applies: `min(configured, 64 MiB)`.
pub fn effective_max_bytes(configured: u64) -> u64 {
    configured.min(HARD_MAX_CHECKPOINT_BYTES)
}
