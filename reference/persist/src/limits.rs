//! The session-persist contract's limits (ADR-089 and issue 17), in one place.
//! Nothing else in the crate spells these numbers.

/// A blob longer than this is refused before parsing (`blob.size`): the body cap plus
/// room for the framing of 65 members.
pub const MAX_BLOB_BYTES: u64 = MAX_TOTAL_BODY_BYTES + 64 * 1024;
/// Session members after the header member.
pub const MAX_MEMBERS: usize = 64;
/// One member's body.
pub const MAX_MEMBER_BYTES: u64 = 16 * 1024 * 1024;
/// All bodies together, the header member's included.
pub const MAX_TOTAL_BODY_BYTES: u64 = 32 * 1024 * 1024;
/// The header member's body.
pub const MAX_HEADER_BYTES: u64 = 4 * 1024;
/// A member path, in bytes and in components.
pub const MAX_PATH_BYTES: usize = 4096;
pub const MAX_PATH_DEPTH: usize = 16;
/// One path component: Linux's NAME_MAX, so every accepted member can be unpacked.
pub const MAX_COMPONENT_BYTES: usize = 255;
/// The ustar `name` field; longer paths get a PAX `path` record.
pub const USTAR_NAME_BYTES: usize = 100;
/// A PAX `x` record set: one path of at most 4096 bytes and two numbers fit easily.
pub const MAX_PAX_BYTES: u64 = 8 * 1024;
/// A session id: `[A-Za-z0-9._-]`, not starting with `.`.
pub const MAX_SESSION_ID_BYTES: usize = 128;
/// A backend name: `[a-z][a-z0-9_]{0,31}`.
pub const MAX_BACKEND_BYTES: usize = 32;
/// The `{ts}` placeholder of a layout (Codex's rollout timestamp).
pub const MAX_TS_BYTES: usize = 64;
/// A store ref's node part: `[A-Za-z0-9_-]`.
pub const MAX_NODE_BYTES: usize = 128;
/// A header-member name a profile may choose (one path component).
pub const MAX_HEADER_MEMBER_BYTES: usize = USTAR_NAME_BYTES;
/// Mode bits of every file and directory the kit writes.
pub const FILE_MODE: u32 = 0o600;
pub const DIR_MODE: u32 = 0o700;
/// The tar block.
pub const BLOCK: usize = 512;
/// The default header member (a profile may rename it; the peer's is
/// `.iterion-session.json`).
pub const DEFAULT_HEADER_MEMBER: &str = ".session-header.json";

/// S3 (docs/spec/persist-store.md). An error or other non-blob reply body is read at
/// most this far (S3 error documents are well under 1 KiB).
pub const MAX_S3_ERROR_BODY_BYTES: u64 = 64 * 1024;
/// One ListObjectsV2 page (1000 keys of at most ~300 bytes of XML each).
pub const MAX_S3_LIST_BODY_BYTES: u64 = 4 * 1024 * 1024;
/// Keys asked for per ListObjectsV2 page.
pub const S3_LIST_PAGE_KEYS: usize = 1000;
/// DeleteRun lists and deletes at most this many pages before giving up
/// (`unavailable.store`): a store that keeps listing deleted keys never loops forever.
pub const MAX_S3_SWEEP_PAGES: usize = 1000;
/// A bucket name (S3's rule: 3-63 bytes of `[a-z0-9.-]`).
pub const MAX_S3_BUCKET_BYTES: usize = 63;
/// Connecting, and one whole request (a 32 MiB blob on a slow link included).
pub const S3_CONNECT_TIMEOUT_SECS: u64 = 5;
pub const S3_REQUEST_TIMEOUT_SECS: u64 = 120;
/// Lifetime of one presigned request URL.
pub const S3_SIGNATURE_EXPIRY_SECS: u64 = 300;

/// checkpoint.json (docs/spec/persist-drive.md): the whole document, the nodes in
/// each of its maps, any string inside an output.
pub const MAX_CHECKPOINT_BYTES: u64 = 4 * 1024 * 1024;
pub const MAX_CHECKPOINT_NODES: usize = 64;
pub const MAX_CHECKPOINT_STRING_BYTES: usize = 64 * 1024;
/// Node ids, run ids, pod names.
pub const MAX_GRAPH_ID_BYTES: usize = 64;
/// Questions, answers, fingerprints, conversation refs.
pub const MAX_TEXT_BYTES: usize = 4 * 1024;
/// The drive protocol (docs/spec/persist-drive.md).
pub const MAX_DRIVE_LINE_BYTES: usize = 1024 * 1024;
pub const MAX_GRAPH_NODES: usize = 64;
pub const MAX_GRAPH_EDGES: usize = 256;
pub const MAX_EDGE_KEYS: usize = 32;
