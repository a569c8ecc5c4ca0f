//! Framing (`blob.framing`): header blocks, checksums and ustar magic through the
//! `tar` crate's raw entry iterator (never `unpack`), our own strict reading of the
//! numeric fields and PAX records, and the end of the archive: exactly two zero
//! blocks, nothing after. Bodies are never copied: members are ranges of the blob.

use std::io::Cursor;
use std::ops::Range;

use crate::error::{BlobError, BlobRule};
use crate::limits::{BLOCK, MAX_PAX_BYTES, USTAR_NAME_BYTES};

use super::pax::parse_pax;

/// One member as framed: nothing here has been judged by the later rules.
pub struct RawMember {
    pub path: Vec<u8>,
    pub entry_type: u8,
    pub mode: u32,
    pub size: u64,
    /// The body's bytes in the blob; empty when the size runs past the end.
    pub body: Range<usize>,
}

pub struct Frames {
    pub members: Vec<RawMember>,
    /// The last member's size runs past the end of the blob (a `blob.caps` finding;
    /// the walk stopped there).
    pub past_end: bool,
}

fn framing(reason: &'static str) -> BlobError {
    BlobError::new(BlobRule::Framing, reason)
}

/// A numeric field: octal digits, optionally led by spaces and ended by NUL or
/// spaces. `allow_empty` for the fields that are never applied (uid, gid, mtime).
fn octal(field: &[u8], allow_empty: bool) -> Option<u64> {
    let start = field.iter().position(|b| *b != b' ').unwrap_or(field.len());
    let digits_end = field[start..]
        .iter()
        .position(|b| !(b'0'..=b'7').contains(b))
        .map_or(field.len(), |p| start + p);
    if !field[digits_end..].iter().all(|b| *b == 0 || *b == b' ') {
        return None;
    }
    let digits = &field[start..digits_end];
    if digits.is_empty() {
        return allow_empty.then_some(0);
    }
    if digits.len() > 21 {
        return None;
    }
    digits.iter().try_fold(0u64, |acc, d| {
        acc.checked_mul(8)?.checked_add(u64::from(d - b'0'))
    })
}

pub fn walk(blob: &[u8]) -> Result<Frames, BlobError> {
    let mut archive = tar::Archive::new(Cursor::new(blob));
    let entries = archive
        .entries_with_seek()
        .map_err(|_| framing("archive cannot be read"))?
        .raw(true);
    let mut members = Vec::new();
    // A PAX record applies to the next member only: its path, and its size if any,
    // which must equal that member's header size (no two readings of one blob).
    let mut pax: Option<(Vec<u8>, Option<u64>)> = None;
    let mut end = 0usize;
    for entry in entries {
        let entry = entry.map_err(|_| framing("header block is short or its checksum is wrong"))?;
        let header = entry.header();
        let Some(ustar) = header.as_ustar() else {
            return Err(framing("header magic is not POSIX ustar"));
        };
        let old = header.as_old();
        let size = octal(&old.size, false).ok_or(framing("size field is not octal"))?;
        let mode = octal(&old.mode, false).ok_or(framing("mode field is not octal"))?;
        for field in [&old.uid[..], &old.gid[..], &old.mtime[..]] {
            octal(field, true).ok_or(framing("uid, gid or mtime field is not octal"))?;
        }
        let start = usize::try_from(entry.raw_file_position())
            .map_err(|_| framing("member offset overflows"))?;
        let entry_type = old.linkflag[0];
        let body_end = usize::try_from(size)
            .ok()
            .and_then(|s| start.checked_add(s))
            .filter(|e| *e <= blob.len());
        let Some(body_end) = body_end else {
            if entry_type == b'x' {
                return Err(framing("PAX record runs past the end of the blob"));
            }
            let path = pax
                .take()
                .map_or_else(|| ustar.path_bytes().into_owned(), |(p, _)| p);
            members.push(RawMember {
                path,
                entry_type,
                mode: mode as u32,
                size,
                body: 0..0,
            });
            return Ok(Frames {
                members,
                past_end: true,
            });
        };
        end = body_end.div_ceil(BLOCK) * BLOCK;
        if entry_type == b'x' {
            if pax.is_some() {
                return Err(framing("two PAX records for one member"));
            }
            if size > MAX_PAX_BYTES {
                return Err(framing("PAX record is longer than 8 KiB"));
            }
            let record = parse_pax(&blob[start..body_end]).map_err(framing)?;
            let path = record.path.ok_or(framing("PAX record without a path"))?;
            if path.len() <= USTAR_NAME_BYTES {
                return Err(framing(
                    "PAX path record for a path that fits the ustar name",
                ));
            }
            pax = Some((path.to_vec(), record.size));
            continue;
        }
        let path = match pax.take() {
            Some((path, pax_size)) => {
                if pax_size.is_some_and(|s| s != size) {
                    return Err(framing("PAX size disagrees with the header size"));
                }
                path
            }
            None => ustar.path_bytes().into_owned(),
        };
        members.push(RawMember {
            path,
            entry_type,
            mode: mode as u32,
            size,
            body: start..body_end,
        });
    }
    if pax.is_some() {
        return Err(framing("PAX record not followed by a member"));
    }
    let tail = &blob[end.min(blob.len())..];
    if tail.len() != 2 * BLOCK || tail.iter().any(|b| *b != 0) {
        return Err(framing("archive does not end with exactly two zero blocks"));
    }
    Ok(Frames {
        members,
        past_end: false,
    })
}
