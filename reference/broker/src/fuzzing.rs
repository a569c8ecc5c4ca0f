//! The invariants the fuzz targets check (fuzz/fuzz_targets/broker_*.rs), here so the
//! corpus test and the targets run the same code on stable.

use std::path::Path;

use crate::alias;
use crate::files::{self, FileKind, Sidecar};
use crate::frames;
use crate::key::{parse_key, EngineSpec, EngineTable, IdKind, Pin, SessionKey};
use crate::limits::MAX_KEY_BYTES;
use crate::owner;
use crate::resume::{plan, ring_index, Plan};

/// The seed's engines plus two whose names the peer's squashing would confuse; a
/// fixed table, built once (not once per fuzz input).
fn engines() -> &'static EngineTable {
    static TABLE: std::sync::OnceLock<EngineTable> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = EngineTable::seed();
        let ses = EngineSpec {
            id: IdKind::Ses,
            pin: Pin::None,
        };
        t.insert("a", ses);
        t.insert("a_b", ses);
        t
    })
}

/// An owner file's kind, built once (not once per fuzz input).
fn owner_kind() -> &'static FileKind {
    static KIND: std::sync::OnceLock<FileKind> = std::sync::OnceLock::new();
    KIND.get_or_init(|| {
        let key = SessionKey::from_physical("claude@00000000-0000-4000-8000-000000000000");
        FileKind::Owner(key.expect("a physical name"))
    })
}

/// Any text as a key, with and without `new=1`: an accepted key's physical name is
/// one path component, in bounds, and maps back to the same key; the checker knows
/// its owner file by that name.
pub fn broker_key(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let table = engines();
    for new in [false, true] {
        let Ok(key) = parse_key(text, table, new) else {
            continue;
        };
        let physical = key.physical();
        assert!(!physical.contains('/') && !physical.contains('\0'));
        assert!(physical != "." && physical != "..");
        assert!(physical.len() <= MAX_KEY_BYTES);
        let back = SessionKey::from_physical(&physical).expect("physical names parse");
        assert_eq!(back.as_str(), text);
        let owner_file = format!("{physical}{}", files::OWNER_SUFFIX);
        assert_eq!(
            files::kind_of(Path::new(&owner_file)),
            Ok(FileKind::Owner(back))
        );
        assert!(new || !key.is_placeholder());
    }
}

/// `have gen total ring_len master_gen` as decimal words (`-` = absent): a delta
/// covers only bytes still in the ring, ends at `total`, and never crosses
/// generations.
pub fn broker_resume_plan(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    let [have, gen, total, ring_len, master_gen] = words[..] else {
        return;
    };
    let opt = |w: &str| {
        if w == "-" {
            Ok(None)
        } else {
            w.parse::<u64>().map(Some)
        }
    };
    let (Ok(have), Ok(gen), Ok(Some(total)), Ok(Some(ring_len)), Ok(Some(master_gen))) = (
        opt(have),
        opt(gen),
        opt(total),
        opt(ring_len),
        opt(master_gen),
    ) else {
        return;
    };
    let p = plan(have, gen, total, ring_len, master_gen);
    match p {
        Plan::Delta { from } => {
            assert_eq!(Some(from), have);
            assert!(from > 0 && from <= total);
            assert!(gen.is_none_or(|g| g == master_gen));
            let index = ring_index(from, total, ring_len);
            assert!(index <= ring_len.min(total));
            assert_eq!(index + (total - from), ring_len.min(total));
        }
        Plan::Fresh => assert!(matches!(have, None | Some(0))),
        Plan::Full => assert!(gen.is_some_and(|g| g != master_gen) || have > Some(total)),
        Plan::FellBehind => assert!(have.is_some_and(|h| h < total - ring_len.min(total))),
    }
}

/// An accepted alias sidecar re-encodes to bytes that read back equal, and the
/// encoding is a fixed point.
pub fn broker_alias_sidecar(data: &[u8]) {
    // Through the checker's dispatch (`files::decode`), which must keep the kind.
    if let Ok(decoded) = files::decode(&FileKind::Aliases, data) {
        let Sidecar::Aliases(map) = decoded else {
            panic!("an alias sidecar decoded as another kind of file")
        };
        let bytes = alias::encode(&map);
        let again = alias::decode(&bytes).expect("the writer's output reads back");
        assert_eq!(again, map);
        assert_eq!(alias::encode(&again), bytes);
    }
}

/// An accepted owner file re-encodes to bytes that read back equal.
pub fn broker_owner_file(data: &[u8]) {
    // Through the checker's dispatch (`files::decode`), which must keep the kind.
    if let Ok(decoded) = files::decode(owner_kind(), data) {
        let Sidecar::Owner(rec) = decoded else {
            panic!("an owner file decoded as another kind of file")
        };
        let bytes = owner::encode(&rec).expect("an accepted record encodes");
        let again = owner::decode(&bytes).expect("the writer's output reads back");
        assert_eq!(again, rec);
        assert_eq!(owner::encode(&again).ok(), Some(bytes));
    }
}

/// Any text as a client control frame: an accepted frame re-encodes canonically and
/// reads back equal; a resize is always in 1..=65535.
pub fn broker_frames(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(frame) = frames::decode_client(text) {
        if let frames::ClientFrame::Resize { cols, rows } = frame {
            assert!(cols > 0 && rows > 0);
        }
        let canonical = frames::encode_client(&frame);
        let again = frames::decode_client(&canonical).expect("canonical frames read back");
        assert_eq!(again, frame);
        assert_eq!(
            frames::encode_client(&again),
            canonical,
            "encoding is a fixed point"
        );
    }
}
