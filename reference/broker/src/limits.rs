//! The single-writer contract's limits, in one place (docs/spec/single-writer.md
//! "Limits"). Nothing else in the crate spells these numbers.

/// A whole session key `{engine}:{native_id}`, in bytes.
pub const MAX_KEY_BYTES: usize = 96;
/// An engine name: `[a-z][a-z0-9_-]{0,31}`.
pub const MAX_ENGINE_BYTES: usize = 32;
/// The alphanumeric tail of an `ses_` id: `ses_[A-Za-z0-9]{1,64}`.
pub const MAX_SES_TAIL_BYTES: usize = 64;
/// A canonical UUID: 8-4-4-4-12 lower-case hex.
pub const UUID_BYTES: usize = 36;

/// The alias sidecar and the owner file, checked with fstat before reading.
pub const MAX_SIDECAR_BYTES: u64 = 64 * 1024;
/// The only alias sidecar version this kit reads and writes.
pub const SIDECAR_VERSION: i64 = 1;
/// An owner file's `label`, in bytes.
pub const MAX_LABEL_BYTES: usize = 128;

/// A client's WebSocket text message (a control frame), in bytes.
pub const MAX_CLIENT_TEXT_BYTES: usize = 64 * 1024;

/// The browser fingerprint `fp`: 128 bits as lower-case hex.
pub const FP_HEX_DIGITS: usize = 32;
/// The tab id `tab`: 64 bits as lower-case hex.
pub const TAB_HEX_DIGITS: usize = 16;
/// A claim whose last sighting is older than this is stale (the seed's 5-second lease).
pub const CLAIM_LEASE_MS: u64 = 5_000;

/// Byte offsets, generations and times: JSON safe integers (pins.md).
pub const MAX_SAFE_INTEGER: u64 = vx_format::limits::MAX_SAFE_INTEGER;

/// Retries of a `flock(LOCK_EX|LOCK_NB)` interrupted by a signal (EINTR).
pub const FLOCK_EINTR_RETRIES: u32 = 3;
/// Mode of the lock directory when the broker creates it.
pub const LOCK_DIR_MODE: u32 = 0o700;
/// Mode of every lock file.
pub const LOCK_FILE_MODE: u32 = 0o600;
