//! The broker's small durable files at the byte level: a read bounded before it
//! starts, an atomic publish (temp file, fsync, rename, directory fsync), and strict
//! JSON entered as an object. The alias sidecar's and the owner file's codecs build on
//! it; `files` classifies and decodes whole files with them.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{open, OFlag};
use nix::sys::stat::{fstat, Mode};
use vx_format::json::{check_document, Cursor, Kind};
use vx_format::Doc;

use crate::error::{json_rule, BrokerError, Result, Rule};
use crate::limits::MAX_SIDECAR_BYTES;

/// The alias sidecar's file name inside the runtime directory.
pub const ALIAS_FILE_NAME: &str = "aliases.json";
/// The owner file's suffix after the physical name, beside the socket.
pub const OWNER_SUFFIX: &str = ".owner";

/// Reads a whole file of at most [`MAX_SIDECAR_BYTES`]: a symlink in the last
/// component, a non-regular file and a longer file are refused before any byte is read.
pub fn read_capped(path: &Path) -> Result<Vec<u8>> {
    let flags = OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK;
    let fd = match open(path, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ELOOP) => return Err(Rule::FileNotRegular.into()),
        Err(_) => return Err(Rule::FileIo.into()),
    };
    // SAFETY: `open` just returned this descriptor and nothing else owns it.
    let fd = unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let st =
        fstat(std::os::fd::AsRawFd::as_raw_fd(&fd)).map_err(|_| BrokerError::new(Rule::FileIo))?;
    if st.st_mode & nix::libc::S_IFMT != nix::libc::S_IFREG {
        return Err(Rule::FileNotRegular.into());
    }
    if st.st_size < 0 || st.st_size as u64 > MAX_SIDECAR_BYTES {
        return Err(Rule::FileTooLarge.into());
    }
    let mut bytes = Vec::with_capacity(st.st_size as usize);
    // One byte over the cap tells a file that grew after fstat from one that did not.
    File::from(fd)
        .take(MAX_SIDECAR_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| BrokerError::new(Rule::FileIo))?;
    if bytes.len() as u64 > MAX_SIDECAR_BYTES {
        return Err(Rule::FileTooLarge.into());
    }
    Ok(bytes)
}

/// Replaces `dir/name` with `bytes` atomically: a fresh 0600 temporary file in the
/// same directory, written and fsynced, renamed over the name, then the directory
/// fsynced. A crash at any step leaves the old file or the new one, never a mix;
/// a leftover temporary is never read (readers open only the final name).
pub fn publish(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    use nix::fcntl::{openat, renameat};
    use vx_store::safe_fs::fsync_retrying;
    let failed = |_| BrokerError::new(Rule::FilePublish);
    let dir_flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
    let dir_fd = owned(open(dir, dir_flags, Mode::empty()).map_err(failed)?);
    let tmp = format!(".{name}.tmp-{}", std::process::id());
    let flags =
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
    let _ = nix::unistd::unlinkat(
        Some(dir_fd.as_raw_fd()),
        tmp.as_str(),
        nix::unistd::UnlinkatFlags::NoRemoveDir,
    );
    let fd = owned(
        openat(
            Some(dir_fd.as_raw_fd()),
            tmp.as_str(),
            flags,
            Mode::from_bits_truncate(0o600),
        )
        .map_err(failed)?,
    );
    let written = (|| {
        let mut file = File::from(fd);
        std::io::Write::write_all(&mut file, bytes)
            .map_err(|_| BrokerError::new(Rule::FilePublish))?;
        fsync_retrying(file.as_fd()).map_err(failed)?;
        drop(file);
        renameat(
            Some(dir_fd.as_raw_fd()),
            tmp.as_str(),
            Some(dir_fd.as_raw_fd()),
            name,
        )
        .map_err(failed)
    })();
    if written.is_err() {
        let _ = nix::unistd::unlinkat(
            Some(dir_fd.as_raw_fd()),
            tmp.as_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
        return written;
    }
    fsync_retrying(dir_fd.as_fd()).map_err(failed)
}

fn owned(fd: i32) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful open and is owned by nobody else.
    unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) }
}

/// Strict JSON (pins.md) whose top-level value is an object, entered.
pub(crate) fn object_cursor(bytes: &[u8]) -> Result<Cursor<'_>> {
    if bytes.len() as u64 > MAX_SIDECAR_BYTES {
        return Err(Rule::FileTooLarge.into());
    }
    let checked =
        check_document(bytes, Doc::File).map_err(|e| BrokerError::new(json_rule(e.rule)))?;
    let mut cursor = Cursor::new(checked);
    if cursor.kind() != Kind::Object {
        return Err(Rule::NotObject.into());
    }
    cursor.enter();
    Ok(cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_reads() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("aliases.json");
        std::fs::write(&big, vec![b' '; MAX_SIDECAR_BYTES as usize + 1]).unwrap();
        assert_eq!(read_capped(&big).unwrap_err().rule, Rule::FileTooLarge);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&big, &link).unwrap();
        assert_eq!(read_capped(&link).unwrap_err().rule, Rule::FileNotRegular);
        assert_eq!(
            read_capped(dir.path()).unwrap_err().rule,
            Rule::FileNotRegular
        );
        assert_eq!(
            read_capped(&dir.path().join("absent")).unwrap_err().rule,
            Rule::FileIo
        );
    }
}
