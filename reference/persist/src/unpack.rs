//! Unpack (ADR-089 "temp extract + atomic rename"): the whole blob is validated
//! first (its header must name the requested backend and session); each file is
//! written `O_EXCL|O_NOFOLLOW` 0600 and fsynced into `<root>/.vx-unpack-<nonce>/`,
//! then renamed into place through directories opened `O_NOFOLLOW|O_DIRECTORY`
//! (created 0700), each parent fsynced after the renames into it, the key file (and
//! its directory's fsync) last. An existing key file is
//! removed before anything else is written, so until the last rename HasSession is
//! false: a failure or crash at any point leaves no session or the whole session.

use crate::blob;
use crate::error::Result;
use crate::fs::{sync_close, write_start_writeback, Dir};
use crate::layout::FileKind;
use crate::packer::{check_id, SessionPacker};

/// Prefix of the staging directory; stale ones (a crashed unpack) are swept first.
pub const STAGING_PREFIX: &str = ".vx-unpack-";

/// A mutating step of an unpack, for the in-process failure seam.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnpackStep {
    Stage,
    RemoveStaleKey,
    Rename,
    Finish,
}

impl SessionPacker<'_> {
    /// Unpacks `blob` for session `id` into the root.
    pub fn unpack(&self, id: &str, blob: &[u8]) -> Result<()> {
        self.unpack_with(id, blob, &mut |_| Ok(()))
    }

    /// [`SessionPacker::unpack`] with `hook` called before every mutating step; an
    /// error from it fails the unpack there (tests use it to fail each step in turn).
    pub fn unpack_with(
        &self,
        id: &str,
        blob: &[u8],
        hook: &mut dyn FnMut(UnpackStep) -> Result<()>,
    ) -> Result<()> {
        check_id(id)?;
        let opts = self.read_options().expecting(&self.layout.name, id);
        let parsed = blob::read(blob, &opts)?;
        let root = Dir::open_root(&self.root, true)?.ok_or(crate::PersistError::new(
            crate::ErrorCode::PersistIo,
            "root could not be created",
        ))?;
        let mut order: Vec<&blob::Member<'_>> = parsed.members.iter().collect();
        order.sort_by_key(|m| m.kind == FileKind::Key);
        let key = order.last().expect("a valid blob has its key file");
        // Another key file of the id elsewhere under the root (another project's
        // copy) would make two: ambiguous, refused before anything is written (the
        // kit's pin sp-pin-ambiguous-key).
        if !crate::negative::active(crate::negative::Defect::GuessAmbiguous)
            && self
                .key_paths_lenient(&root, id)?
                .iter()
                .any(|p| *p != key.path)
        {
            return Err(crate::PersistError::new(
                crate::ErrorCode::SessionAmbiguous,
                "the root already holds a key file of the session elsewhere",
            ));
        }
        if crate::negative::active(crate::negative::Defect::MergeInPlace) {
            return crate::unpack_defects::merge_in_place(&root, &order);
        }
        // First of all, an existing transcript goes: from here until the last rename
        // HasSession is false, whatever fails.
        if let Some((parent, name)) = existing_parent(&root, &key.path)? {
            if !crate::unpack_defects::keeps_stale_key(&parent, name)? {
                hook(UnpackStep::RemoveStaleKey)?;
                parent.unlink(name, false)?;
                parent.fsync()?;
            }
        }
        sweep_staging(&root)?;
        let stage_name = format!(
            "{STAGING_PREFIX}{}",
            vx_store::names::new_uuid_v4().map_err(|_| crate::PersistError::new(
                crate::ErrorCode::PersistIo,
                "no random nonce"
            ))?
        );
        let stage = root.open_or_make_child(&stage_name)?;
        // The key file's directory once it is renamed into place: a failure reported
        // after that takes it away again, so an error always means no session.
        let mut placed_key: Option<Dir> = None;
        let result = (|| {
            // Every member written (its writeback started) before the first fsync,
            // so the disk works while the rest are written; all are fsynced before any
            // rename, as before.
            let mut staged = Vec::with_capacity(order.len());
            for (i, m) in order.iter().enumerate() {
                hook(UnpackStep::Stage)?;
                let fd = stage.create_exclusive(&format!("m{i}"))?;
                write_start_writeback(&fd, m.body)?;
                staged.push(fd);
            }
            for fd in staged {
                sync_close(fd)?;
            }
            stage.fsync()?;
            // Every other member first, each distinct directory fsynced once after all
            // its renames (not once per rename: ~60 fewer journal commits for a
            // Claude session), then the key file and its directory.
            let (last, others) = order.split_last().expect("a valid blob has its key file");
            let mut parents: Vec<(&str, Dir)> = Vec::new();
            for (i, m) in others.iter().enumerate() {
                let dirs = m.path.rsplit_once('/').map_or("", |(d, _)| d);
                let at = match parents.iter().position(|(d, _)| *d == dirs) {
                    Some(at) => at,
                    None => {
                        parents.push((dirs, parent_of(&root, &m.path)?.0));
                        parents.len() - 1
                    }
                };
                let name = m.path.rsplit('/').next().unwrap_or(&m.path);
                hook(UnpackStep::Rename)?;
                place(&stage, i, &parents[at].1, name, m.body)?;
            }
            for (_, parent) in &parents {
                parent.fsync()?;
            }
            let (parent, name) = parent_of(&root, &last.path)?;
            hook(UnpackStep::Rename)?;
            place(&stage, others.len(), &parent, name, last.body)?;
            placed_key.insert(parent).fsync()?;
            hook(UnpackStep::Finish)?;
            root.unlink(&stage_name, true)?;
            root.fsync()
        })();
        if result.is_err() {
            if let Some(parent) = placed_key {
                let key_name = key.path.rsplit('/').next().unwrap_or(&key.path);
                let _ = parent.unlink(key_name, false).and_then(|()| parent.fsync());
            }
            let _ = clear_staging(&root, &stage_name);
        }
        result
    }
}

/// Renames the staged member `m{i}` to `parent/name` (a negative control's defect
/// may write it in place instead).
fn place(stage: &Dir, i: usize, parent: &Dir, name: &str, body: &[u8]) -> Result<()> {
    let staged = format!("m{i}");
    if crate::unpack_defects::any() && crate::unpack_defects::place_instead(parent, name, body)? {
        return stage.unlink(&staged, false);
    }
    stage.rename_to(&staged, parent, name)
}

/// Opens (creating 0700) every directory of `path` below the root, never following.
fn parent_of<'p>(root: &Dir, path: &'p str) -> Result<(Dir, &'p str)> {
    let (dirs, name) = path.rsplit_once('/').unwrap_or(("", path));
    let mut dir = root.open_or_make_child(".")?;
    for comp in dirs.split('/').filter(|c| !c.is_empty()) {
        dir = dir.open_or_make_child(comp)?;
    }
    Ok((dir, name))
}

/// The directory holding `path` when every directory on the way exists.
fn existing_parent<'p>(root: &Dir, path: &'p str) -> Result<Option<(Dir, &'p str)>> {
    let (dirs, name) = path.rsplit_once('/').unwrap_or(("", path));
    let Some(mut dir) = root.open_child(".")? else {
        return Ok(None);
    };
    for comp in dirs.split('/').filter(|c| !c.is_empty()) {
        let Some(next) = dir.open_child(comp)? else {
            return Ok(None);
        };
        dir = next;
    }
    Ok(Some((dir, name)))
}

fn clear_staging(root: &Dir, name: &str) -> Result<()> {
    if let Some(stage) = root.open_child(name)? {
        for entry in stage.names()? {
            stage.unlink(&entry, false)?;
        }
    }
    root.unlink(name, true)
}

/// Removes staging directories a crashed unpack left behind.
fn sweep_staging(root: &Dir) -> Result<()> {
    for name in root.names()? {
        if name.starts_with(STAGING_PREFIX) {
            clear_staging(root, &name)?;
        }
    }
    Ok(())
}
