//! The blob reader's framing (`vx_persist::blob::frame::walk`, rule `blob.framing`)
//! against the `tar` crate's ordinary reader (`Archive::entries`, PAX applied). The
//! kit's walk uses the `tar` crate only for header blocks and checksums; paths, PAX
//! records, sizes, modes and the end of the archive are its own, so the two can
//! disagree. Rules (fuzz/README.md, "Differential targets"):
//!
//! - a blob the kit frames (and whose members are not GNU long-name, sparse or PAX
//!   global entries, which the `tar` crate folds into other members and the kit
//!   refuses by `blob.type`) reads through the `tar` crate as the same members: path
//!   (PAX path applied), type, mode, size and body bytes;
//!   A NUL type flag is compared as `'0'` (POSIX: both are a regular file; the
//!   `tar` crate reports `'0'` for either);
//! - a member whose size runs past the end: the `tar` crate must not read it whole;
//! - a blob the `tar` crate reads but the kit does not frame: the kit's reason must be
//!   one of its documented strictnesses ([`STRICTER`]); the end-of-archive and magic
//!   reasons are checked here without the kit's code.

use std::io::Read;

use vx_persist::blob::frame::{walk, RawMember};

/// Framing refusals that are the kit being stricter than the `tar` crate, by
/// docs/spec/persist-blob.md: ustar magic only, strictly octal numeric fields, a PAX
/// subset (path, size, mtime; one record per member, path only when it does not fit),
/// and exactly two zero blocks at the end.
pub const STRICTER: &[&str] = &[
    "header magic is not POSIX ustar",
    "size field is not octal",
    "mode field is not octal",
    "uid, gid or mtime field is not octal",
    "PAX record runs past the end of the blob",
    "two PAX records for one member",
    "PAX record is longer than 8 KiB",
    "PAX record without a path",
    "PAX path record for a path that fits the ustar name",
    "PAX size disagrees with the header size",
    "PAX record not followed by a member",
    "archive does not end with exactly two zero blocks",
    "PAX record has no length",
    "PAX record length is not a plain decimal",
    "PAX record length disagrees with its text",
    "PAX record has no key",
    "PAX size is not a decimal",
    "PAX mtime is not a decimal time",
    "PAX key appears twice",
    "PAX key other than path, size, mtime",
    "PAX path holds a newline byte",
];

/// One member as the `tar` crate reads it.
#[derive(Debug, PartialEq, Eq)]
pub struct TarMember {
    pub path: Vec<u8>,
    pub entry_type: u8,
    pub mode: u32,
    pub size: u64,
    pub body: Vec<u8>,
}

/// The `tar` crate's reading, with the end of the last member (block-rounded).
pub fn tar_read(data: &[u8]) -> Result<(Vec<TarMember>, usize), String> {
    let mut archive = tar::Archive::new(data);
    let mut members = Vec::new();
    let mut end = 0usize;
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let size = entry.size();
        let header = entry.header();
        let mode = header.mode().map_err(|e| e.to_string())?;
        let entry_type = header.entry_type().as_byte();
        let path = entry.path_bytes().into_owned();
        let start = entry.raw_file_position();
        let mut body = Vec::new();
        entry.read_to_end(&mut body).map_err(|e| e.to_string())?;
        if body.len() as u64 != size {
            return Err("body shorter than its size".into());
        }
        end = usize::try_from(start + size)
            .map_err(|e| e.to_string())?
            .div_ceil(512)
            * 512;
        members.push(TarMember {
            path,
            entry_type,
            mode,
            size,
            body,
        });
    }
    Ok((members, end))
}

/// Some header block, extension headers included, has no ustar magic.
fn some_header_not_ustar(data: &[u8]) -> bool {
    let mut archive = tar::Archive::new(data);
    let Ok(entries) = archive.entries().map(|e| e.raw(true)) else {
        return false;
    };
    entries
        .map_while(Result::ok)
        .any(|e| e.header().as_ustar().is_none())
}

fn folded(m: &RawMember) -> bool {
    matches!(m.entry_type, b'L' | b'K' | b'S' | b'g')
}

/// Compares the two readings; `Err` describes an unexplained disagreement.
pub fn compare(data: &[u8]) -> Result<(), String> {
    let kit = walk(data);
    let tar = tar_read(data);
    match (kit, tar) {
        (Ok(frames), _) if frames.members.iter().any(folded) => Ok(()),
        (Ok(frames), tar) if frames.past_end => match tar {
            Err(_) => Ok(()),
            Ok(_) => {
                Err("the kit finds a member past the end; the tar crate reads it whole".into())
            }
        },
        (Ok(frames), Ok((members, _))) => {
            let kit: Vec<TarMember> = frames
                .members
                .iter()
                .map(|m| TarMember {
                    path: m.path.clone(),
                    // POSIX: a NUL type flag is a regular file, as '0' is; the kit keeps
                    // the byte, the tar crate reads it as `Regular` and says '0'.
                    entry_type: if m.entry_type == 0 {
                        b'0'
                    } else {
                        m.entry_type
                    },
                    mode: m.mode,
                    size: m.size,
                    body: data[m.body.clone()].to_vec(),
                })
                .collect();
            match kit == members {
                true => Ok(()),
                false => Err(format!("members differ: kit {kit:?}, tar {members:?}")),
            }
        }
        (Ok(_), Err(e)) => Err(format!("the kit frames it; the tar crate refuses: {e}")),
        (Err(e), Ok((_, end))) => {
            let stricter = STRICTER.contains(&e.reason)
                && match e.reason {
                    "archive does not end with exactly two zero blocks" => {
                        let tail = &data[end.min(data.len())..];
                        tail.len() != 1024 || tail.iter().any(|b| *b != 0)
                    }
                    "header magic is not POSIX ustar" => some_header_not_ustar(data),
                    _ => true,
                };
            match stricter {
                true => Ok(()),
                false => Err(format!(
                    "the tar crate reads it; the kit refuses: {}",
                    e.reason
                )),
            }
        }
        (Err(_), Err(_)) => Ok(()),
    }
}
