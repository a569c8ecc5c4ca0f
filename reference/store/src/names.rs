//! Names in the store directory: final checkpoint files `c<uuid-v4>.json`, temporary
//! files `.tmp-<uuid-v4>`, and everything else. Fresh ids come from getrandom(3).

use nix::errno::Errno;
use nix::libc;
use vx_format::ids::{is_checkpoint_id, is_uuid_v4, uuid_v4_from_bytes};

use crate::error::{Result, StoreError};

pub const FINAL_SUFFIX: &str = ".json";
pub const TEMP_PREFIX: &str = ".tmp-";

/// What a directory entry's name says it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryName {
    /// A final checkpoint file; holds the checkpoint id (the name without `.json`).
    Final(String),
    /// A temporary file of an unfinished or failed write.
    Temp(String),
    /// Anything else: never a candidate, never touched.
    Other,
}

pub fn classify(name: &[u8]) -> EntryName {
    let Ok(name) = std::str::from_utf8(name) else {
        return EntryName::Other;
    };
    if let Some(id) = name.strip_suffix(FINAL_SUFFIX) {
        if is_checkpoint_id(id) {
            return EntryName::Final(id.to_owned());
        }
    }
    if let Some(uuid) = name.strip_prefix(TEMP_PREFIX) {
        if is_uuid_v4(uuid.as_bytes()) {
            return EntryName::Temp(name.to_owned());
        }
    }
    EntryName::Other
}

/// The file name of a checkpoint id. Callers check the id first: a malformed id never
/// becomes a path.
pub fn final_name(id: &str) -> String {
    debug_assert!(is_checkpoint_id(id));
    format!("{id}{FINAL_SUFFIX}")
}

/// A fresh random lowercase UUID version 4 (RFC 4122 variant).
pub fn new_uuid_v4() -> Result<String> {
    let mut bytes = [0u8; 16];
    fill_random(&mut bytes).map_err(|e| StoreError::os("getrandom for a new id", e))?;
    Ok(uuid_v4_from_bytes(bytes))
}

pub fn new_checkpoint_id() -> Result<String> {
    Ok(format!("c{}", new_uuid_v4()?))
}

pub fn new_temp_name() -> Result<String> {
    Ok(format!("{TEMP_PREFIX}{}", new_uuid_v4()?))
}

/// getrandom(3) from glibc, retrying interruptions and partial fills.
fn fill_random(buf: &mut [u8]) -> std::result::Result<(), Errno> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: the pointer and length describe a live, writable slice.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            match Errno::last() {
                Errno::EINTR => continue,
                e => return Err(e),
            }
        }
        filled += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_ids_are_checkpoint_ids_and_differ() {
        let a = new_checkpoint_id().unwrap();
        let b = new_checkpoint_id().unwrap();
        assert!(is_checkpoint_id(&a), "{a}");
        assert_ne!(a, b);
        assert_eq!(classify(final_name(&a).as_bytes()), EntryName::Final(a));
        let t = new_temp_name().unwrap();
        assert_eq!(classify(t.as_bytes()), EntryName::Temp(t.clone()));
    }

    #[test]
    fn other_names_are_never_candidates() {
        for name in [
            &b"c01234567-89ab-4cde-8fab-0123456789AB.json"[..],
            b"c01234567-89ab-4cde-8fab-0123456789ab.json.bak",
            b"C01234567-89ab-4cde-8fab-0123456789ab.json",
            b"c01234567-89ab-1cde-8fab-0123456789ab.json",
            b"c01234567-89ab-4cde-8fab-0123456789ab",
            b".tmp-x",
            b"..",
            b"\xff.json",
            b"latest",
        ] {
            assert_eq!(
                classify(name),
                EntryName::Other,
                "{}",
                String::from_utf8_lossy(name)
            );
        }
    }
}
