//! `BackendSessionStore` (ADR-089) and its filesystem twin `FsStore`.
//!
//! Blobs live at `<root>/runs/<run>/<node>/<ulid>` and pause blobs at
//! `<root>/runs/<run>/<node>/pause/<ulid>`. A put is create-only and published like
//! vx-store's checkpoints: an exclusive 0600 `.tmp-<uuid>` beside the final name, a
//! complete write, fsync, close, a no-replace rename, a directory fsync; directories
//! are made 0700. Refs are checked before they touch a path, so `../x` never does.

use std::path::Path;

use vx_store::io::{Io, SysIo};

use crate::error::{BlobRule, ErrorCode, PersistError, Result};
use crate::fs::{entry_type, retry, write_sync_close, Dir, EntryType};
use crate::limits::{MAX_BLOB_BYTES, MAX_NODE_BYTES};

/// A ref: `<node>/<ulid>` (a completed visit) or `<node>/pause/<ulid>` (an ask_user).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StateRef {
    node: String,
    pause: bool,
    ulid: String,
}

fn token(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A ULID as text: 26 Crockford base-32 characters, uppercase, the first at most `7`.
pub fn valid_ulid(s: &str) -> bool {
    s.len() == 26
        && s.as_bytes()[0] <= b'7'
        && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'A'..=b'H' | b'J' | b'K' | b'M' | b'N' | b'P'..=b'T' | b'V'..=b'Z'))
}

impl StateRef {
    /// Parses a ref; anything else (`../x`, `a/b/c`, lowercase ulids) is
    /// `invalid_params.ref`.
    pub fn parse(text: &str) -> Result<StateRef> {
        let invalid = || {
            PersistError::new(
                ErrorCode::InvalidRef,
                "ref is not <node>/<ulid> or <node>/pause/<ulid>",
            )
        };
        let parts: Vec<&str> = text.split('/').collect();
        let (node, pause, ulid) = match parts[..] {
            [node, ulid] => (node, false, ulid),
            [node, "pause", ulid] => (node, true, ulid),
            _ => return Err(invalid()),
        };
        if !token(node, MAX_NODE_BYTES) || !valid_ulid(ulid) {
            return Err(invalid());
        }
        Ok(StateRef {
            node: node.to_owned(),
            pause,
            ulid: ulid.to_owned(),
        })
    }

    pub fn is_pause(&self) -> bool {
        self.pause
    }

    fn dirs(&self) -> Vec<&str> {
        let mut dirs = vec![self.node.as_str()];
        if self.pause {
            dirs.push("pause");
        }
        dirs
    }
}

impl std::fmt::Display for StateRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pause {
            true => write!(f, "{}/pause/{}", self.node, self.ulid),
            false => write!(f, "{}/{}", self.node, self.ulid),
        }
    }
}

/// A run id: 1–128 bytes of `[A-Za-z0-9_-]`.
pub fn check_run(run: &str) -> Result<()> {
    if token(run, MAX_NODE_BYTES) {
        Ok(())
    } else {
        Err(PersistError::new(
            ErrorCode::InvalidRun,
            "run id is not 1-128 bytes of [A-Za-z0-9_-]",
        ))
    }
}

/// The store every backend (fs, S3) implements and one suite checks.
pub trait BackendSessionStore {
    /// Create-only: a ref that exists is `conflict.exists` and keeps its bytes.
    fn put(&self, run: &str, r: &StateRef, blob: &[u8]) -> Result<()>;
    /// `not_found.blob` when the ref names nothing.
    fn get(&self, run: &str, r: &StateRef) -> Result<Vec<u8>>;
    /// Idempotent: deleting a missing ref succeeds.
    fn delete(&self, run: &str, r: &StateRef) -> Result<()>;
    /// Removes every blob of the run, pause blobs and leftovers of failed puts too.
    fn delete_run(&self, run: &str) -> Result<()>;
}

/// The filesystem store under one private root.
#[derive(Debug)]
pub struct FsStore {
    root: Dir,
}

fn blob_too_long() -> PersistError {
    PersistError::rule(
        ErrorCode::BlobSize,
        BlobRule::Size.id(),
        "blob is longer than 32 MiB + 64 KiB",
    )
}

fn not_found() -> PersistError {
    PersistError::new(ErrorCode::BlobNotFound, "no blob under the ref")
}

impl FsStore {
    /// Opens (creating 0700 when missing) the store root, never through a final
    /// symlink; a root others can read or write, or owned by another user, is unsafe.
    pub fn open(root: &Path) -> Result<FsStore> {
        let dir = Dir::open_root(root, true)?.ok_or(PersistError::new(
            ErrorCode::PersistIo,
            "store root could not be created",
        ))?;
        let st = dir.stat()?;
        if u64::from(st.st_uid) != u64::from(nix::unistd::geteuid().as_raw())
            || st.st_mode & 0o077 != 0
        {
            return Err(PersistError::new(
                ErrorCode::PersistIo,
                "store root is not private to this user",
            ));
        }
        Ok(FsStore { root: dir })
    }

    /// The directory of `run` (and of the ref inside it), created when `create`.
    fn dir(&self, run: &str, r: Option<&StateRef>, create: bool) -> Result<Option<Dir>> {
        check_run(run)?;
        let mut names = vec!["runs", run];
        if let Some(r) = r {
            names.extend(r.dirs());
        }
        let mut dir = self.root.open_or_make_child(".")?;
        let store_err = |e: PersistError| match e.code {
            ErrorCode::SessionUnsafe => unsafe_store(),
            _ => e,
        };
        for name in names {
            dir = if create {
                dir.open_or_make_child(name).map_err(store_err)?
            } else {
                match dir.open_child(name).map_err(store_err)? {
                    Some(d) => d,
                    None => return Ok(None),
                }
            };
        }
        Ok(Some(dir))
    }
}

fn unsafe_store() -> PersistError {
    PersistError::new(
        ErrorCode::PersistIo,
        "a store directory is a symbolic link or not a directory",
    )
}

impl BackendSessionStore for FsStore {
    fn put(&self, run: &str, r: &StateRef, blob: &[u8]) -> Result<()> {
        if blob.len() as u64 > MAX_BLOB_BYTES {
            return Err(blob_too_long());
        }
        let dir = self.dir(run, Some(r), true)?.expect("created");
        if dir.stat_entry(&r.ulid)?.is_some() {
            return Err(PersistError::new(
                ErrorCode::Exists,
                "a blob already exists under the ref",
            ));
        }
        let tmp = format!(
            ".tmp-{}",
            vx_store::names::new_uuid_v4()
                .map_err(|_| PersistError::new(ErrorCode::PersistIo, "no random temporary name"))?
        );
        let written = dir
            .create_exclusive(&tmp)
            .and_then(|fd| write_sync_close(fd, blob));
        if let Err(e) = written {
            let _ = dir.unlink(&tmp, false);
            return Err(e);
        }
        match retry(|| SysIo.rename_noreplace(dir.fd(), &tmp, &r.ulid)) {
            Ok(()) => {}
            Err(errno) => {
                let _ = dir.unlink(&tmp, false);
                return Err(match errno {
                    nix::errno::Errno::EEXIST => {
                        PersistError::new(ErrorCode::Exists, "a blob already exists under the ref")
                    }
                    e => PersistError::os("rename of the blob into place", e),
                });
            }
        }
        dir.fsync()
    }

    fn get(&self, run: &str, r: &StateRef) -> Result<Vec<u8>> {
        let Some(dir) = self.dir(run, Some(r), false)? else {
            return Err(not_found());
        };
        match dir.stat_entry(&r.ulid)? {
            None => return Err(not_found()),
            Some(st) if entry_type(&st) != (EntryType::Regular { links: 1 }) => {
                return Err(PersistError::new(
                    ErrorCode::PersistIo,
                    "the blob under the ref is not a regular file with one link",
                ))
            }
            Some(_) => {}
        }
        dir.read_file(&r.ulid, MAX_BLOB_BYTES, blob_too_long)
            .map_err(|e| match e.code {
                ErrorCode::SessionUnsafe => PersistError::new(
                    ErrorCode::PersistIo,
                    "the blob under the ref is not a regular file with one link",
                ),
                _ => e,
            })
    }

    fn delete(&self, run: &str, r: &StateRef) -> Result<()> {
        let Some(dir) = self.dir(run, Some(r), false)? else {
            return Ok(());
        };
        dir.unlink(&r.ulid, false)?;
        dir.fsync()
    }

    fn delete_run(&self, run: &str) -> Result<()> {
        check_run(run)?;
        let Some(runs) = self.root.open_child("runs").map_err(|_| unsafe_store())? else {
            return Ok(());
        };
        if runs.stat_entry(run)?.is_none() {
            return Ok(());
        }
        remove_tree(&runs, run)?;
        runs.fsync()
    }
}

/// Removes `name` under `parent` and everything below it, never following a link
/// (a symlink is removed itself).
fn remove_tree(parent: &Dir, name: &str) -> Result<()> {
    let Some(st) = parent.stat_entry(name)? else {
        return Ok(());
    };
    if entry_type(&st) == EntryType::Directory {
        let dir = parent
            .open_child(name)
            .map_err(|_| unsafe_store())?
            .ok_or_else(not_found)?;
        for child in dir.names()? {
            remove_tree(&dir, &child)?;
        }
        parent.unlink(name, true)
    } else {
        parent.unlink(name, false)
    }
}
