//! The offline checker behind `vxpersist blob check`: one verdict per file, the
//! length judged on fstat before a byte is read.

use std::os::fd::AsRawFd;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::open;
use nix::sys::stat::{fstat, Mode, SFlag};

use crate::blob::{check_length, read, ReadOptions};
use crate::error::{ErrorCode, PersistError};
use crate::fs::{owned, READ_FLAGS};
use crate::limits::MAX_BLOB_BYTES;

/// One file's verdict: `valid`, or an error code with its rule id and reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub result: &'static str,
    pub rule: Option<&'static str>,
    pub reason: Option<String>,
}

impl Verdict {
    pub fn is_valid(&self) -> bool {
        self.result == "valid"
    }

    fn of_error(e: &PersistError) -> Verdict {
        let reason = match e.errno {
            Some(errno) => format!("{} ({})", e.reason, errno.desc()),
            None => e.reason.to_owned(),
        };
        Verdict {
            result: e.code.as_str(),
            rule: e.rule,
            reason: Some(reason),
        }
    }
}

/// Reads a blob file: not following a final symlink, a regular file only, its
/// length judged (`blob.size`) before reading, at most the limit + 1 bytes read.
pub fn read_blob_file(path: &Path) -> Result<Vec<u8>, PersistError> {
    let fd = match open(path, READ_FLAGS, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::ELOOP) => {
            return Err(PersistError::new(
                ErrorCode::PersistIo,
                "blob file is a symbolic link",
            ))
        }
        Err(e) => return Err(PersistError::os("open of the blob file", e)),
    };
    let fd = owned(fd);
    let st = fstat(fd.as_raw_fd()).map_err(|e| PersistError::os("fstat of the blob file", e))?;
    if SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT != SFlag::S_IFREG {
        return Err(PersistError::new(
            ErrorCode::PersistIo,
            "blob file is not a regular file",
        ));
    }
    check_length(st.st_size.max(0) as u64)?;
    let buf = crate::fs::read_capped(fd, st, MAX_BLOB_BYTES)?;
    // A file that grew since fstat is judged on what was read: over the limit is size.
    check_length(buf.len() as u64)?;
    Ok(buf)
}

/// The verdict on one blob file.
pub fn check_file(path: &Path, opts: &ReadOptions<'_>) -> Verdict {
    let bytes = match read_blob_file(path) {
        Ok(b) => b,
        Err(e) => return Verdict::of_error(&e),
    };
    match read(&bytes, opts) {
        Ok(_) => Verdict {
            result: "valid",
            rule: None,
            reason: None,
        },
        Err(e) => Verdict::of_error(&e.into()),
    }
}
