//! The unpack defects of [`crate::negative`], kept out of the reference's own path:
//! each function does nothing unless its defect was chosen for this process.

use std::os::fd::AsRawFd;

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::Mode;

use crate::blob::Member;
use crate::error::{PersistError, Result};
use crate::fs::{entry_type, owned, write_sync_close, Dir, EntryType};
use crate::limits::FILE_MODE;
use crate::negative::{active, Defect};

/// Whether one of the destination defects is active (the reference never is).
pub(crate) fn any() -> bool {
    [
        Defect::FollowDestinationSymlink,
        Defect::WriteThroughHardLink,
        Defect::BlockOnFifo,
    ]
    .into_iter()
    .any(active)
}

fn entry(parent: &Dir, name: &str) -> Result<Option<EntryType>> {
    Ok(parent.stat_entry(name)?.map(|st| entry_type(&st)))
}

/// Whether the stale key file is left where it is, for a defect to meet it later
/// (or, under keep-old-key-until-rename, for the last rename to replace).
pub(crate) fn keeps_stale_key(parent: &Dir, name: &str) -> Result<bool> {
    if active(Defect::KeepOldKeyUntilRename) {
        return Ok(true);
    }
    Ok(match entry(parent, name)? {
        Some(EntryType::Symlink) => active(Defect::FollowDestinationSymlink),
        Some(EntryType::Regular { links }) if links > 1 => active(Defect::WriteThroughHardLink),
        Some(EntryType::Special) => active(Defect::BlockOnFifo),
        _ => false,
    })
}

fn write_at(parent: &Dir, name: &str, body: &[u8], flags: OFlag) -> Result<()> {
    let fd = openat(
        Some(parent.fd().as_raw_fd()),
        name,
        flags | OFlag::O_WRONLY | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(FILE_MODE),
    )
    .map_err(|e| PersistError::os("open of a destination in place", e))?;
    write_sync_close(owned(fd), body)
}

/// Before a member is renamed to `parent/name`: `true` when a defect wrote it in
/// place instead (the staged copy is then the caller's to remove).
pub(crate) fn place_instead(parent: &Dir, name: &str, body: &[u8]) -> Result<bool> {
    match entry(parent, name)? {
        Some(EntryType::Symlink) if active(Defect::FollowDestinationSymlink) => {
            write_at(parent, name, body, OFlag::O_CREAT | OFlag::O_TRUNC)?;
            Ok(true)
        }
        Some(EntryType::Regular { links }) if links > 1 && active(Defect::WriteThroughHardLink) => {
            write_at(parent, name, body, OFlag::O_TRUNC | OFlag::O_NOFOLLOW)?;
            Ok(true)
        }
        Some(EntryType::Directory) | None => Ok(false),
        Some(_) if active(Defect::BlockOnFifo) => {
            // "Skip what is already there": read the old entry to compare, blocking.
            let fd = openat(
                Some(parent.fd().as_raw_fd()),
                name,
                OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::empty(),
            );
            if let Ok(fd) = fd {
                let mut buf = [0u8; 512];
                let _ = nix::unistd::read(owned(fd).as_raw_fd(), &mut buf);
            }
            Ok(false)
        }
        Some(_) => Ok(false),
    }
}

/// The merge-in-place defect: every member written at its destination, the key
/// file first, nothing staged and nothing taken back.
pub(crate) fn merge_in_place(root: &Dir, members: &[&Member<'_>]) -> Result<()> {
    for m in members.iter().rev() {
        let (dirs, name) = m.path.rsplit_once('/').unwrap_or(("", &m.path));
        let mut dir = root.open_or_make_child(".")?;
        for comp in dirs.split('/').filter(|c| !c.is_empty()) {
            dir = dir.open_or_make_child(comp)?;
        }
        write_at(
            &dir,
            name,
            m.body,
            OFlag::O_CREAT | OFlag::O_TRUNC | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK,
        )?;
    }
    Ok(())
}
