//! The broker's durable files as the checker and the readers see them: which file a
//! path is, by its name, and its strict decode (the alias sidecar, an owner file).
//! Shared by `vxbroker sidecar check`; the byte-level reads and the publish are
//! `small_file`'s.

use std::path::Path;

use crate::alias::{self, AliasMap};
use crate::error::{BrokerError, Result, Rule};
use crate::key::SessionKey;
use crate::owner::{self, OwnerRecord};
pub use crate::small_file::{publish, read_capped, ALIAS_FILE_NAME, OWNER_SUFFIX};

/// Which durable file a path is, by its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileKind {
    Aliases,
    /// `<physical>.owner`, with the key it belongs to.
    Owner(SessionKey),
}

/// `aliases.json`, or `<physical>.owner` with a valid physical name; else refused.
pub fn kind_of(path: &Path) -> Result<FileKind> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or(BrokerError::new(Rule::FileKind))?;
    if name == ALIAS_FILE_NAME {
        return Ok(FileKind::Aliases);
    }
    name.strip_suffix(OWNER_SUFFIX)
        .and_then(SessionKey::from_physical)
        .map(FileKind::Owner)
        .ok_or(BrokerError::new(Rule::FileKind))
}

/// A decoded durable file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sidecar {
    Aliases(AliasMap),
    Owner(OwnerRecord),
}

/// The checker's verdict on one file: kind by name, bounded read, strict decode.
pub fn check_file(path: &Path) -> Result<Sidecar> {
    let kind = kind_of(path)?;
    let bytes = read_capped(path)?;
    decode(&kind, &bytes)
}

/// Decodes bytes of a known kind.
pub fn decode(kind: &FileKind, bytes: &[u8]) -> Result<Sidecar> {
    match kind {
        FileKind::Aliases => alias::decode(bytes).map(Sidecar::Aliases),
        FileKind::Owner(_) => owner::decode(bytes).map(Sidecar::Owner),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name() {
        assert_eq!(kind_of(Path::new("/x/aliases.json")), Ok(FileKind::Aliases));
        assert!(matches!(
            kind_of(Path::new("opencode@ses_a.owner")),
            Ok(FileKind::Owner(_))
        ));
        for bad in [
            "aliases.json.tmp",
            "opencode:ses_a.owner",
            ".owner",
            "x.json",
        ] {
            assert_eq!(
                kind_of(Path::new(bad)).unwrap_err().rule,
                Rule::FileKind,
                "{bad}"
            );
        }
    }
}
