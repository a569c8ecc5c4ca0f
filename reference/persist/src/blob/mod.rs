//! The packed session blob (docs/spec/persist-blob.md): a strict reader and a
//! canonical writer. Pure: bytes in, verdicts and bytes out.
//!
//! The reader applies its rules in a fixed order over the whole blob, so the first
//! rule any member breaks is the verdict, whatever member order broke it:
//! `blob.size`, `blob.framing`, `blob.type`, `blob.path`, `blob.not_session_file`,
//! `blob.header`, `blob.caps`, `blob.mode`.

/// The framing rule alone (`blob.framing`), public for the differential fuzz target
/// against the `tar` crate's reader (`fuzz/src/tar_diff.rs`).
pub mod frame;
mod path;
mod pax;
mod write;

use std::collections::HashSet;

pub use path::check_path;
pub use write::{write, SessionFile};

use crate::error::{BlobError, BlobRule};
use crate::header::SessionHeader;
use crate::layout::{FileKind, Layouts};
use crate::limits::{
    DEFAULT_HEADER_MEMBER, MAX_BLOB_BYTES, MAX_HEADER_BYTES, MAX_HEADER_MEMBER_BYTES,
};

/// What the reader checks against.
#[derive(Clone, Copy, Debug)]
pub struct ReadOptions<'a> {
    pub layouts: &'a Layouts,
    /// The header member's name (a profile may rename it).
    pub header_member: &'a str,
    /// The backend and session the caller asked for; `None` checks the blob alone.
    pub expect: Option<(&'a str, &'a str)>,
}

impl<'a> ReadOptions<'a> {
    pub fn new(layouts: &'a Layouts) -> Self {
        ReadOptions {
            layouts,
            header_member: DEFAULT_HEADER_MEMBER,
            expect: None,
        }
    }

    pub fn expecting(mut self, backend: &'a str, session_id: &'a str) -> Self {
        self.expect = Some((backend, session_id));
        self
    }

    pub fn header_member(mut self, name: &'a str) -> Self {
        self.header_member = name;
        self
    }
}

/// A header-member name a profile may choose: one path component through the path
/// rule, at most 100 bytes (it always fits the ustar name).
pub fn valid_header_member(name: &str) -> bool {
    name.len() <= MAX_HEADER_MEMBER_BYTES
        && !name.contains('/')
        && check_path(name.as_bytes()).is_ok()
}

/// An accepted blob: the header and the session members in blob order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blob<'a> {
    pub header: SessionHeader,
    pub members: Vec<Member<'a>>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member<'a> {
    pub path: String,
    pub body: &'a [u8],
    pub kind: FileKind,
}

impl Blob<'_> {
    /// The members as owned files, for the writer.
    pub fn files(&self) -> Vec<SessionFile> {
        self.members
            .iter()
            .map(|m| SessionFile {
                path: m.path.clone(),
                body: m.body.to_vec(),
            })
            .collect()
    }
}

/// The length rule alone, for callers that know a length before reading (fstat).
pub fn check_length(len: u64) -> Result<(), BlobError> {
    if len > MAX_BLOB_BYTES {
        return Err(BlobError::new(
            BlobRule::Size,
            "blob is longer than 32 MiB + 64 KiB",
        ));
    }
    Ok(())
}

fn type_reason(entry_type: u8) -> Option<&'static str> {
    Some(match entry_type {
        b'0' | 0 => return None,
        b'1' => "member is a hard link",
        b'2' => "member is a symbolic link",
        b'3' | b'4' => "member is a device node",
        b'5' => "member is a directory",
        b'6' => "member is a FIFO",
        b'g' => "member is a PAX global header",
        b'L' | b'K' => "member is a GNU long name or long link record",
        b'S' => "member is a GNU sparse file",
        _ => "member type is not regular",
    })
}

/// Reads a blob strictly; the first rule broken (in rule order) is the error.
pub fn read<'b>(blob: &'b [u8], opts: &ReadOptions<'_>) -> Result<Blob<'b>, BlobError> {
    check_length(blob.len() as u64)?;
    let frames = frame::walk(blob)?;
    let members = &frames.members;

    for m in members {
        if let Some(reason) = type_reason(m.entry_type) {
            return Err(BlobError::new(BlobRule::Type, reason));
        }
    }
    let mut paths = Vec::with_capacity(members.len());
    for m in members {
        paths.push(check_path(&m.path).map_err(|r| BlobError::new(BlobRule::Path, r))?);
    }

    // The whitelist is the header's own backend and id; which header is judged
    // by the header rule after this one.
    let is_header = |p: &str| p == opts.header_member;
    let identity = members
        .iter()
        .zip(&paths)
        .find(|(_, p)| is_header(p))
        .and_then(|(m, _)| SessionHeader::parse(&blob[m.body.clone()]));
    let layout = identity
        .as_ref()
        .and_then(|h| opts.layouts.lookup(&h.backend))
        .filter(|l| l.capability);
    let not_session = |r| BlobError::new(BlobRule::NotSessionFile, r);
    let mut kinds = Vec::with_capacity(members.len());
    for p in &paths {
        if is_header(p) {
            kinds.push(None);
            continue;
        }
        if opts.layouts.has_auth_component(p) {
            return Err(not_session("member is an auth or account file"));
        }
        match (layout, &identity) {
            (Some(layout), Some(h)) => {
                let kind = layout.classify(p, &h.session_id).ok_or(not_session(
                    "member is not a session file of the header's session",
                ))?;
                kinds.push(Some(kind));
            }
            // No usable header: nothing can be whitelisted, and the header rule
            // refuses the blob next.
            _ => kinds.push(None),
        }
    }

    let header_err = |r| BlobError::new(BlobRule::Header, r);
    if paths.first().is_none_or(|p| !is_header(p)) {
        return Err(header_err("header is not the first member"));
    }
    if paths.iter().filter(|p| is_header(p)).count() > 1 {
        return Err(header_err("header member appears twice"));
    }
    if members[0].size > MAX_HEADER_BYTES {
        return Err(header_err("header member is longer than 4 KiB"));
    }
    let header = identity.ok_or(header_err("header is not exactly {backend, session_id}"))?;
    if layout.is_none() {
        return Err(header_err("header backend has no persist capability"));
    }
    if let Some((backend, id)) = opts.expect {
        let unchecked = |d| crate::negative::active(d);
        let other_backend = header.backend != backend
            && !unchecked(crate::negative::Defect::HeaderBackendUnchecked);
        let other_id =
            header.session_id != id && !unchecked(crate::negative::Defect::HeaderIdUnchecked);
        if other_backend || other_id {
            return Err(header_err("header names another backend or session"));
        }
    }
    let mut seen = HashSet::with_capacity(paths.len());
    for p in &paths {
        if !seen.insert(*p) {
            return Err(header_err("member path appears twice"));
        }
    }
    for p in &paths {
        let mut prefix = *p;
        while let Some(slash) = prefix.rfind('/') {
            prefix = &prefix[..slash];
            if seen.contains(prefix) {
                return Err(header_err("member path is both a file and a directory"));
            }
        }
    }
    if !frames.past_end && kinds.iter().filter(|k| **k == Some(FileKind::Key)).count() != 1 {
        return Err(header_err("blob does not carry exactly one key file"));
    }

    let caps = |r| BlobError::new(BlobRule::Caps, r);
    if frames.past_end {
        return Err(caps("member size runs past the end of the blob"));
    }
    let cap = crate::limits::caps();
    if members.len() - 1 > cap.members {
        return Err(caps("more than 64 session members"));
    }
    if members.iter().any(|m| m.size > cap.member_bytes) {
        return Err(caps("member is longer than 16 MiB"));
    }
    let total_cap = !crate::negative::active(crate::negative::Defect::NoTotalCapOnRead);
    if total_cap && members.iter().map(|m| m.size).sum::<u64>() > cap.total_body_bytes {
        return Err(caps("members total more than 32 MiB"));
    }

    if members.iter().any(|m| m.mode & 0o6000 != 0) {
        return Err(BlobError::new(
            BlobRule::Mode,
            "member has the setuid or setgid bit",
        ));
    }

    let members = members
        .iter()
        .zip(paths)
        .zip(kinds)
        .skip(1)
        .map(|((m, p), k)| Member {
            path: p.to_owned(),
            body: &blob[m.body.clone()],
            kind: k.unwrap_or(FileKind::Session),
        })
        .collect();
    Ok(Blob { header, members })
}
