//! `SessionPacker` (ADR-089): pack a session from a backend's root, unpack a blob
//! into one, and HasSession on the same root. The walk follows the backend's layout
//! through held, no-follow directory handles; the runtime never reads a root itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::blob::{self, ReadOptions, SessionFile};
use crate::error::{ErrorCode, PersistError, Result};
use crate::fs::{check_session_file, entry_type, over_cap, unsafe_entry, Dir, EntryType};
use crate::header::{valid_session_id, SessionHeader};
use crate::layout::{template_literal, template_matches, BackendLayout, Comp, FileKind, Layouts};
use crate::limits::{DEFAULT_HEADER_MEMBER, MAX_HEADER_BYTES, MAX_PATH_DEPTH};

/// One backend's packer over one root (the root the next Execute uses).
#[derive(Clone, Debug)]
pub struct SessionPacker<'a> {
    pub(crate) layouts: &'a Layouts,
    pub(crate) layout: &'a BackendLayout,
    pub(crate) root: PathBuf,
    pub(crate) header_member: String,
}

/// Whether the walk reads bodies (pack) or only looks (HasSession).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Read,
    Probe,
}

struct Walk<'w> {
    layouts: &'w Layouts,
    id: &'w str,
    mode: Mode,
    files: BTreeMap<String, Vec<u8>>,
    total: u64,
}

pub(crate) fn check_id(id: &str) -> Result<()> {
    if valid_session_id(id) {
        Ok(())
    } else {
        Err(PersistError::new(
            ErrorCode::InvalidSessionId,
            "session id is not 1-128 bytes of [A-Za-z0-9._-] without a leading dot",
        ))
    }
}

impl<'a> SessionPacker<'a> {
    /// A packer for `backend` (which must have the persist capability) over `root`.
    pub fn new(layouts: &'a Layouts, backend: &str, root: &Path) -> Result<Self> {
        let layout = layouts.capable(backend)?;
        Ok(SessionPacker {
            layouts,
            layout,
            root: root.to_owned(),
            header_member: DEFAULT_HEADER_MEMBER.to_owned(),
        })
    }

    pub fn with_header_member(mut self, name: &str) -> Result<Self> {
        if !blob::valid_header_member(name) {
            return Err(PersistError::new(
                ErrorCode::InvalidHeaderMember,
                "header member is not one path component",
            ));
        }
        self.header_member = name.to_owned();
        Ok(self)
    }

    pub(crate) fn read_options(&self) -> ReadOptions<'_> {
        ReadOptions {
            layouts: self.layouts,
            header_member: &self.header_member,
            expect: None,
        }
    }

    /// Packs every whitelisted file of session `id`. A matching name that is not a
    /// plain regular file with one link is `pack.unsafe`; anything over a cap is
    /// `pack.caps`, never truncated; no key file is `not_found.session`.
    pub fn pack(&self, id: &str) -> Result<Vec<u8>> {
        check_id(id)?;
        let root = Dir::open_root(&self.walk_root(), false)?.ok_or(PersistError::new(
            ErrorCode::SessionNotFound,
            "root does not exist",
        ))?;
        let mut walk = Walk {
            layouts: self.layouts,
            id,
            mode: Mode::Read,
            files: BTreeMap::new(),
            total: 0,
        };
        for pattern in self.layout.file_patterns() {
            walk.pattern(&root, &pattern.comps, &mut Vec::new())?;
        }
        if crate::negative::active(crate::negative::Defect::CollectByFileName) {
            walk.by_name(&root, &mut Vec::new())?;
        }
        let keys = walk
            .files
            .keys()
            .filter(|p| self.layout.classify(p, id) == Some(FileKind::Key))
            .count();
        match keys {
            0 => {
                return Err(PersistError::new(
                    ErrorCode::SessionNotFound,
                    "no key file for the session under the root",
                ))
            }
            1 => {}
            _ => {
                return Err(PersistError::new(
                    ErrorCode::SessionAmbiguous,
                    "more than one key file for the session",
                ))
            }
        }
        let files: Vec<SessionFile> = walk
            .files
            .into_iter()
            .map(|(path, body)| SessionFile { path, body })
            .collect();
        let header = SessionHeader {
            backend: self.layout.name.clone(),
            session_id: id.to_owned(),
        };
        blob::write(&header, &files, &self.read_options()).map_err(|e| match e.rule {
            crate::BlobRule::Caps | crate::BlobRule::Size => over_cap(),
            _ => PersistError::from(e),
        })
    }

    /// True iff exactly one key file for `id` is present under the root, a regular
    /// file with one link. Anything unsafe or ambiguous on the way answers false.
    pub fn has_session(&self, id: &str) -> bool {
        if check_id(id).is_err() {
            return false;
        }
        let Ok(Some(root)) = Dir::open_root(&self.walk_root(), false) else {
            return false;
        };
        let mut walk = Walk {
            layouts: self.layouts,
            id,
            mode: Mode::Probe,
            files: BTreeMap::new(),
            total: 0,
        };
        let found = walk
            .pattern(&root, &self.layout.key_pattern().comps, &mut Vec::new())
            .is_ok();
        if crate::negative::active(crate::negative::Defect::GuessAmbiguous) {
            return found && !walk.files.is_empty();
        }
        found && walk.files.len() == 1
    }

    /// Every path under `root` that the key pattern names for `id`, whatever the
    /// entry is (a link, a FIFO), symlinked directories not entered: what an unpack
    /// looks at before it writes, so an unsafe entry is met later, where it is.
    pub(crate) fn key_paths_lenient(&self, root: &Dir, id: &str) -> Result<Vec<String>> {
        fn walk(
            dir: &Dir,
            comps: &[Comp],
            id: &str,
            rel: &mut Vec<String>,
            out: &mut Vec<String>,
        ) -> Result<()> {
            let Some(Comp::Template(parts)) = comps.first() else {
                return Ok(());
            };
            let names = match template_literal(parts, id) {
                Some(literal) => vec![literal],
                None => dir
                    .names()?
                    .into_iter()
                    .filter(|n| template_matches(parts, n, id))
                    .collect(),
            };
            for name in names {
                let Some(st) = dir.stat_entry(&name)? else {
                    continue;
                };
                rel.push(name.clone());
                if comps.len() == 1 {
                    out.push(rel.join("/"));
                } else if entry_type(&st) == EntryType::Directory {
                    if let Ok(Some(child)) = dir.open_child(&name) {
                        walk(&child, &comps[1..], id, rel, out)?;
                    }
                }
                rel.pop();
            }
            Ok(())
        }
        let mut out = Vec::new();
        walk(
            root,
            &self.layout.key_pattern().comps,
            id,
            &mut Vec::new(),
            &mut out,
        )?;
        Ok(out)
    }

    /// The root pack and HasSession open: the root itself, never through a final
    /// symlink (through one under the follow-session-symlinks negative control).
    fn walk_root(&self) -> PathBuf {
        if crate::negative::active(crate::negative::Defect::FollowSessionSymlinks) {
            self.root.join(".")
        } else {
            self.root.clone()
        }
    }

    /// The root this packer answers for.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn layout(&self) -> &BackendLayout {
        self.layout
    }
}

impl Walk<'_> {
    fn collect(&mut self, dir: &Dir, name: &str, rel: &[String]) -> Result<()> {
        let path = if rel.is_empty() {
            name.to_owned()
        } else {
            format!("{}/{name}", rel.join("/"))
        };
        if self.files.contains_key(&path) {
            return Ok(());
        }
        let cap = crate::limits::caps();
        if self.files.len() >= cap.members {
            return Err(over_cap());
        }
        let body = match self.mode {
            Mode::Probe => Vec::new(),
            Mode::Read => dir.read_file(name, cap.member_bytes, over_cap)?,
        };
        self.total += body.len() as u64;
        if self.total > cap.total_body_bytes.saturating_sub(MAX_HEADER_BYTES) {
            return Err(over_cap());
        }
        self.files.insert(path, body);
        Ok(())
    }

    fn pattern(&mut self, dir: &Dir, comps: &[Comp], rel: &mut Vec<String>) -> Result<()> {
        let Some(comp) = comps.first() else {
            return Ok(());
        };
        let parts = match comp {
            Comp::Tail => return self.tail(dir, rel),
            Comp::Template(parts) => parts,
        };
        let last = comps.len() == 1;
        let names = match template_literal(parts, self.id) {
            Some(literal) => vec![literal],
            None => dir
                .names()?
                .into_iter()
                .filter(|n| template_matches(parts, n, self.id))
                .collect(),
        };
        for name in names {
            if self.layouts.is_auth_name(&name) {
                continue;
            }
            let Some(st) = dir.stat_entry(&name)? else {
                continue;
            };
            if last {
                if self.skips(&st) {
                    continue;
                }
                check_session_file(&st)?;
                self.collect(dir, &name, rel)?;
                continue;
            }
            match entry_type(&st) {
                EntryType::Directory => {
                    let Some(child) = dir.open_child(&name)? else {
                        continue;
                    };
                    rel.push(name);
                    self.pattern(&child, &comps[1..], rel)?;
                    rel.pop();
                }
                EntryType::Symlink if follows_links() => {
                    if let Some(child) = through_link(dir, &name)? {
                        rel.push(name);
                        self.pattern(&child, &comps[1..], rel)?;
                        rel.pop();
                    }
                }
                // Fail closed: a symlink might lead to the session; it is never followed.
                EntryType::Symlink => {
                    return Err(unsafe_entry(
                        "a directory of the session is a symbolic link",
                    ))
                }
                // A file or special in a directory's place cannot hold the session.
                _ => {}
            }
        }
        Ok(())
    }

    /// `**`: everything below, regular files with one link only.
    fn tail(&mut self, dir: &Dir, rel: &mut Vec<String>) -> Result<()> {
        for name in dir.names()? {
            if self.layouts.is_auth_name(&name) {
                continue;
            }
            let Some(st) = dir.stat_entry(&name)? else {
                continue;
            };
            if rel.len() + 1 > MAX_PATH_DEPTH {
                return Err(over_cap());
            }
            match entry_type(&st) {
                EntryType::Directory => {
                    let Some(child) = dir.open_child(&name)? else {
                        continue;
                    };
                    rel.push(name);
                    self.tail(&child, rel)?;
                    rel.pop();
                }
                EntryType::Symlink if follows_links() => match through_link(dir, &name)? {
                    Some(child) => self.enter_linked(child, name, rel)?,
                    None => check_session_file(&st)?,
                },
                _ if self.skips(&st) => {}
                _ => {
                    check_session_file(&st)?;
                    self.collect(dir, &name, rel)?;
                }
            }
        }
        Ok(())
    }

    /// The follow-session-symlinks negative control: a linked directory walked as
    /// part of the `**` subtree.
    fn enter_linked(&mut self, child: Dir, name: String, rel: &mut Vec<String>) -> Result<()> {
        rel.push(name);
        let walked = self.tail(&child, rel);
        rel.pop();
        walked
    }

    /// The skip-hard-link negative control: a file with more links left out.
    fn skips(&self, st: &nix::sys::stat::FileStat) -> bool {
        self.mode == Mode::Read
            && matches!(entry_type(st), EntryType::Regular { links } if links > 1)
            && crate::negative::active(crate::negative::Defect::SkipHardLink)
    }

    /// The collect-by-file-name negative control: every regular file below `dir`
    /// whose name carries the session id.
    fn by_name(&mut self, dir: &Dir, rel: &mut Vec<String>) -> Result<()> {
        for name in dir.names()? {
            let Some(st) = dir.stat_entry(&name)? else {
                continue;
            };
            match entry_type(&st) {
                EntryType::Directory => {
                    if let Some(child) = dir.open_child(&name)? {
                        rel.push(name);
                        self.by_name(&child, rel)?;
                        rel.pop();
                    }
                }
                EntryType::Regular { links: 1 }
                    if name.contains(self.id) && !self.layouts.is_auth_name(&name) =>
                {
                    self.collect(dir, &name, rel)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Whether the follow-session-symlinks negative control is on (never in the reference).
fn follows_links() -> bool {
    crate::negative::active(crate::negative::Defect::FollowSessionSymlinks)
}

/// The directory a symbolic link `name` in `dir` leads to, for that control; `None`
/// when it leads to no directory.
fn through_link(dir: &Dir, name: &str) -> Result<Option<Dir>> {
    let fd = std::os::fd::AsRawFd::as_raw_fd(&dir.fd());
    let through = format!("/proc/self/fd/{fd}/{name}/.");
    Ok(Dir::open_root(Path::new(&through), false).ok().flatten())
}
