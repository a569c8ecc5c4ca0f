//! The canonical writer: the header member first, then the session files sorted by
//! path bytes; every member regular, mode 0600, uid/gid/mtime 0, no owner names; a
//! PAX `x` record (key `path` only) exactly when a path is over 100 bytes; two zero
//! blocks and nothing after. The same files always give the same bytes.

use crate::error::{BlobError, BlobRule};
use crate::header::SessionHeader;
use crate::limits::{BLOCK, FILE_MODE, MAX_HEADER_BYTES, USTAR_NAME_BYTES};

use super::{read, ReadOptions};

/// One session file: its path under the backend's root and its bytes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SessionFile {
    pub path: String,
    pub body: Vec<u8>,
}

/// The name of every PAX record member (fixed, so the bytes are too).
const PAX_MEMBER_NAME: &[u8] = b"././@PaxHeader";

fn member_header(name: &[u8], size: u64, entry_type: tar::EntryType) -> tar::Header {
    let mut h = tar::Header::new_ustar();
    let field = &mut h.as_old_mut().name;
    let n = name.len().min(field.len());
    field[..n].copy_from_slice(&name[..n]);
    h.set_size(size);
    h.set_mode(FILE_MODE);
    h.set_uid(0);
    h.set_gid(0);
    h.set_mtime(0);
    h.set_entry_type(entry_type);
    h.set_cksum();
    h
}

fn push_member(out: &mut Vec<u8>, name: &[u8], body: &[u8], entry_type: tar::EntryType) {
    out.extend_from_slice(member_header(name, body.len() as u64, entry_type).as_bytes());
    out.extend_from_slice(body);
    out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
}

/// `<len> path=<path>\n`, where `<len>` counts its own digits.
fn pax_path_record(path: &[u8]) -> Vec<u8> {
    let rest = " path=".len() + path.len() + 1;
    let mut len = rest + 1;
    while len.to_string().len() + rest != len {
        len = len.to_string().len() + rest;
    }
    let mut record = format!("{len} path=").into_bytes();
    record.extend_from_slice(path);
    record.push(b'\n');
    record
}

/// Packs `files` for `header` in canonical form. Refuses (never truncates) what the
/// reader would refuse: the result always reads back to the same header and files.
pub fn write(
    header: &SessionHeader,
    files: &[SessionFile],
    opts: &ReadOptions<'_>,
) -> Result<Vec<u8>, BlobError> {
    let caps = |r| Err(BlobError::new(BlobRule::Caps, r));
    let cap = crate::limits::caps();
    if files.len() > cap.members {
        return caps("more than 64 session members");
    }
    if files.iter().any(|f| f.body.len() as u64 > cap.member_bytes) {
        return caps("member is longer than 16 MiB");
    }
    if files.iter().map(|f| f.body.len() as u64).sum::<u64>()
        > cap.total_body_bytes.saturating_sub(MAX_HEADER_BYTES)
    {
        return caps("members total more than 32 MiB");
    }
    let mut sorted: Vec<&SessionFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    let header_body = header.encode();
    let mut out = Vec::with_capacity(
        files
            .iter()
            .map(|f| f.body.len() + 2 * BLOCK)
            .sum::<usize>()
            + 4 * BLOCK,
    );
    push_member(
        &mut out,
        opts.header_member.as_bytes(),
        &header_body,
        tar::EntryType::Regular,
    );
    for f in sorted {
        let path = f.path.as_bytes();
        if path.len() > USTAR_NAME_BYTES {
            push_member(
                &mut out,
                PAX_MEMBER_NAME,
                &pax_path_record(path),
                tar::EntryType::XHeader,
            );
        }
        push_member(&mut out, path, &f.body, tar::EntryType::Regular);
        if out.len() as u64 > crate::limits::MAX_BLOB_BYTES {
            return Err(BlobError::new(
                BlobRule::Size,
                "blob would be longer than 32 MiB + 64 KiB",
            ));
        }
    }
    out.extend_from_slice(&[0u8; 2 * BLOCK]);
    // The writer's guarantee is the reader's verdict on its output.
    let opts = ReadOptions {
        expect: Some((&header.backend, &header.session_id)),
        ..*opts
    };
    read(&out, &opts)?;
    Ok(out)
}
