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
/// The three caps above as the packer and the reader apply them: the constants,
/// unless the process was started with `VXPERSIST_CAPS` (the kit's caps-pin test,
/// harness/tests/session_persist_caps_pin.rs, which no shipped profile sets), e.g.
/// `members=100,member_bytes=1048576,total_body_bytes=2097152` (any subset). The
/// seed leaves the caps' values to the implementer; the switch stands in for one
/// that chose others. The blob length rule (`MAX_BLOB_BYTES`) stays the kit's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    pub members: usize,
    pub member_bytes: u64,
    pub total_body_bytes: u64,
}

/// The caps this process enforces (see [`Caps`]).
pub fn caps() -> Caps {
    static CAPS: std::sync::OnceLock<Caps> = std::sync::OnceLock::new();
    *CAPS.get_or_init(|| {
        let kit = Caps {
            members: MAX_MEMBERS,
            member_bytes: MAX_MEMBER_BYTES,
            total_body_bytes: MAX_TOTAL_BODY_BYTES,
        };
        std::env::var("VXPERSIST_CAPS").map_or(kit, |v| {
            caps_from(&v, kit).unwrap_or_else(|e| panic!("{e}"))
        })
    })
}

/// Reads a `VXPERSIST_CAPS` value over `kit`; a malformed one is the test's own
/// mistake, named with the item.
fn caps_from(v: &str, mut caps: Caps) -> Result<Caps, String> {
    for item in v.split(',').filter(|i| !i.is_empty()) {
        let bad = || format!("VXPERSIST_CAPS: {item:?} is not key=positive integer");
        let (k, n) = item.split_once('=').ok_or_else(bad)?;
        let n: u64 = n.parse().ok().filter(|n| *n > 0).ok_or_else(bad)?;
        match k {
            "members" => caps.members = usize::try_from(n).map_err(|_| bad())?,
            "member_bytes" => caps.member_bytes = n,
            "total_body_bytes" => caps.total_body_bytes = n,
            _ => return Err(format!("VXPERSIST_CAPS: no cap named {k:?}")),
        }
    }
    Ok(caps)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The switch sets the caps it names and keeps the others; a malformed item is
    /// refused naming it.
    #[test]
    fn the_caps_switch_overrides_only_what_it_names() {
        let kit = Caps {
            members: MAX_MEMBERS,
            member_bytes: MAX_MEMBER_BYTES,
            total_body_bytes: MAX_TOTAL_BODY_BYTES,
        };
        let c = caps_from("members=100", kit).unwrap();
        assert_eq!((c.members, c.member_bytes), (100, MAX_MEMBER_BYTES));
        assert_eq!(caps_from("", kit).unwrap(), kit);
        for bad in ["members=0", "members", "files=3", "member_bytes=-1"] {
            let e = caps_from(bad, kit).unwrap_err();
            assert!(e.contains(bad.split('=').next().unwrap()), "{e}");
        }
    }
}
