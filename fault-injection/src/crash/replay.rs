//! Replaying a crash state: the snapshot loaded in memory, the state's ops applied
//! (with its drop or tear), then written out as a fresh directory tree. Names map
//! to file identities so a rename moves a file's data and a link shares it.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::log::{moved_name, FsOp, Ino, Recording};
use super::model::{CrashState, Tear};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Entry {
    Dir,
    File(Ino),
    Symlink(PathBuf),
    /// A fifo (`p`), socket (`s`), block (`b`) or character (`c`) device: a fifo is
    /// made again when a state is written out, the others are only named.
    Special(char),
}

/// A directory tree in memory.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    names: BTreeMap<PathBuf, Entry>,
    files: HashMap<Ino, Vec<u8>>,
    modes: HashMap<Ino, u32>,
    /// Directory modes (a store directory must stay private), the root's under "";
    /// also the modes of special nodes.
    dir_modes: HashMap<PathBuf, u32>,
    /// Modification times a timestamp call set explicitly (a write since clears
    /// one: the file's time is then the present's, as any written-out state's).
    mtimes: HashMap<Ino, (i64, u32)>,
    /// Names that were given an explicit modification time while they were not
    /// regular files (a directory, a node): not modelled, so `verify` refuses them.
    pub times_unmodelled: Vec<PathBuf>,
}

impl Tree {
    /// Loads a snapshot; regular files get identities 1..=N in `snapshot_files` order.
    pub fn load(root: &Path) -> io::Result<Tree> {
        let mut t = Tree::default();
        let files = super::log::snapshot_files(root)?;
        for (i, (p, _)) in files.iter().enumerate() {
            let ino = i as Ino + 1;
            let full = root.join(p);
            t.files.insert(ino, fs::read(&full)?);
            t.modes
                .insert(ino, fs::metadata(&full)?.permissions().mode() & 0o7777);
            t.names.insert(p.clone(), Entry::File(ino));
        }
        let mode = |p: &Path| fs::metadata(p).map(|m| m.permissions().mode() & 0o7777);
        t.dir_modes.insert(PathBuf::new(), mode(root)?);
        let mut stack = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            for e in fs::read_dir(root.join(&rel))? {
                let e = e?;
                let p = rel.join(e.file_name());
                let ty = e.file_type()?;
                if ty.is_dir() {
                    t.dir_modes.insert(p.clone(), mode(&e.path())?);
                    t.names.insert(p.clone(), Entry::Dir);
                    stack.push(p);
                } else if ty.is_symlink() {
                    t.names.insert(p, Entry::Symlink(fs::read_link(e.path())?));
                } else if !ty.is_file() {
                    use std::os::unix::fs::FileTypeExt;
                    let k = match () {
                        _ if ty.is_fifo() => 'p',
                        _ if ty.is_socket() => 's',
                        _ if ty.is_block_device() => 'b',
                        _ => 'c',
                    };
                    t.dir_modes.insert(p.clone(), mode(&e.path())?);
                    t.names.insert(p, Entry::Special(k));
                }
            }
        }
        Ok(t)
    }

    fn parent_exists(&self, p: &Path) -> bool {
        match p.parent() {
            None => true,
            Some(d) if d.as_os_str().is_empty() => true,
            Some(d) => self.names.get(d) == Some(&Entry::Dir),
        }
    }

    fn data(&mut self, ino: Ino) -> Option<&mut Vec<u8>> {
        // Changing the bytes makes the modification time the present.
        self.mtimes.remove(&ino);
        self.files.get_mut(&ino)
    }

    /// The entry an attribute call reaches: the file it named by identity while that
    /// file still exists, else whatever is at `path`.
    fn attr_entry(&self, ino: Option<Ino>, path: &Path) -> Option<Entry> {
        match ino {
            Some(i) if self.files.contains_key(&i) => Some(Entry::File(i)),
            _ => self.names.get(path).cloned(),
        }
    }

    /// [`Tree::load`] with the modification time of every regular file, to compare a
    /// run's root with a replay that set some explicitly.
    pub fn load_with_times(root: &Path) -> io::Result<Tree> {
        let mut t = Tree::load(root)?;
        for (p, e) in &t.names {
            if let Entry::File(ino) = e {
                let m = fs::symlink_metadata(root.join(p))?;
                use std::os::unix::fs::MetadataExt;
                t.mtimes.insert(*ino, (m.mtime(), m.mtime_nsec() as u32));
            }
        }
        Ok(t)
    }

    /// Forgets the modification time of every file but those `other` set.
    pub fn keep_times_of(&mut self, other: &Tree) {
        let explicit: std::collections::HashSet<PathBuf> = other
            .names
            .iter()
            .filter(|(_, e)| matches!(e, Entry::File(i) if other.mtimes.contains_key(i)))
            .map(|(p, _)| p.clone())
            .collect();
        let keep: std::collections::HashSet<Ino> = self
            .names
            .iter()
            .filter_map(|(p, e)| match e {
                Entry::File(i) if explicit.contains(p) => Some(*i),
                _ => None,
            })
            .collect();
        self.mtimes.retain(|i, _| keep.contains(i));
    }

    /// Applies one op (as the file system would; an op that could not apply in this
    /// state, such as a rename of a name that is not there, does nothing).
    fn apply(&mut self, rec: &Recording, op: &FsOp, tear: Option<Tear>) {
        match op {
            FsOp::Create { path, ino, mode } => {
                if self.parent_exists(path) && !self.names.contains_key(path) {
                    self.names.insert(path.clone(), Entry::File(*ino));
                    self.files.entry(*ino).or_default();
                    self.modes.insert(*ino, *mode);
                }
            }
            FsOp::Truncate { ino, len } => {
                if let Some(d) = self.data(*ino) {
                    d.resize(*len as usize, 0);
                }
            }
            FsOp::Write {
                ino,
                off,
                len,
                data,
                ..
            } => {
                let bytes = rec.bytes(*data, *len).to_vec();
                let Some(d) = self.data(*ino) else { return };
                let (off, end) = (*off as usize, (*off + *len) as usize);
                let (from, to) = match tear {
                    None => (off, end),
                    Some(Tear::Head(c)) => (off, c as usize),
                    Some(Tear::Tail(c)) => (c as usize, end),
                    Some(Tear::Zero) => (end, end),
                };
                let new_len = match tear {
                    Some(Tear::Head(_)) => to,
                    _ => end,
                };
                if d.len() < new_len {
                    d.resize(new_len, 0);
                }
                for (i, b) in (from..to).zip(&bytes[from - off..]) {
                    d[i] = *b;
                }
            }
            FsOp::Falloc {
                ino,
                off,
                len,
                keep_size,
            } => {
                if let Some(d) = self.data(*ino) {
                    let end = (off + len) as usize;
                    if !keep_size && d.len() < end {
                        d.resize(end, 0);
                    }
                }
            }
            FsOp::Rename { from, to, .. } => {
                if !self.names.contains_key(from) || !self.parent_exists(to) {
                    return;
                }
                let moved: Vec<(PathBuf, Entry)> = self
                    .names
                    .range(from.clone()..)
                    .take_while(|(p, _)| p.starts_with(from))
                    .map(|(p, e)| (p.clone(), e.clone()))
                    .collect();
                let gone: Vec<PathBuf> = self
                    .names
                    .range(to.clone()..)
                    .take_while(|(p, _)| p.starts_with(to))
                    .map(|(p, _)| p.clone())
                    .collect();
                for p in gone {
                    self.names.remove(&p);
                }
                for (p, e) in moved {
                    self.names.remove(&p);
                    let new = moved_name(&p, from, to);
                    if let Some(m) = self.dir_modes.remove(&p) {
                        self.dir_modes.insert(new.clone(), m);
                    }
                    self.names.insert(new, e);
                }
            }
            FsOp::Link { from, to } => {
                if let Some(e @ Entry::File(_)) = self.names.get(from).cloned() {
                    if self.parent_exists(to) && !self.names.contains_key(to) {
                        self.names.insert(to.clone(), e);
                    }
                }
            }
            FsOp::Symlink { target, path } => {
                if self.parent_exists(path) && !self.names.contains_key(path) {
                    self.names
                        .insert(path.clone(), Entry::Symlink(target.clone()));
                }
            }
            FsOp::Unlink { path } => {
                if !matches!(self.names.get(path), Some(Entry::Dir) | None) {
                    self.names.remove(path);
                }
            }
            FsOp::Mkdir { path, mode } => {
                if self.parent_exists(path) && !self.names.contains_key(path) {
                    self.names.insert(path.clone(), Entry::Dir);
                    self.dir_modes.insert(path.clone(), *mode);
                }
            }
            FsOp::Rmdir { path } => {
                let empty = !self.names.keys().any(|p| p != path && p.starts_with(path));
                if self.names.get(path) == Some(&Entry::Dir) && empty {
                    self.names.remove(path);
                }
            }
            FsOp::Mknod { path, kind, mode } => {
                if self.parent_exists(path) && !self.names.contains_key(path) {
                    self.names.insert(path.clone(), Entry::Special(*kind));
                    self.dir_modes.insert(path.clone(), *mode);
                }
            }
            FsOp::Chmod { path, ino, mode } => match self.attr_entry(*ino, path) {
                Some(Entry::File(i)) => {
                    self.modes.insert(i, *mode);
                }
                Some(Entry::Dir | Entry::Special(_)) => {
                    self.dir_modes.insert(path.clone(), *mode);
                }
                Some(Entry::Symlink(_)) | None => {}
            },
            FsOp::Utimes { path, ino, mtime } => match (self.attr_entry(*ino, path), mtime) {
                (Some(Entry::File(i)), Some(m)) => {
                    self.mtimes.insert(i, *m);
                }
                (Some(Entry::File(i)), None) => {
                    self.mtimes.remove(&i);
                }
                (Some(_), Some(_)) => self.times_unmodelled.push(path.clone()),
                _ => {}
            },
            FsOp::Fsync { .. } | FsOp::Output => {}
        }
    }

    /// What a program sees at each name: type, mode, size and contents' digest, or
    /// a symlink's target.
    pub fn view(&self) -> BTreeMap<PathBuf, Seen> {
        let dir_mode = |p: &Path| self.dir_modes.get(p).copied().unwrap_or(0o700);
        self.names
            .iter()
            .map(|(p, e)| {
                let seen = match e {
                    Entry::Dir => Seen::Dir(dir_mode(p)),
                    Entry::Symlink(t) => Seen::Symlink(t.clone()),
                    Entry::Special(k) => Seen::Special(*k, dir_mode(p)),
                    Entry::File(ino) => {
                        let d = self.files.get(ino).map(Vec::as_slice).unwrap_or(&[]);
                        let mode = self.modes.get(ino).copied().unwrap_or(0o644);
                        Seen::File {
                            mode,
                            len: d.len() as u64,
                            sha: Sha256::digest(d).into(),
                            mtime: self.mtimes.get(ino).copied(),
                        }
                    }
                };
                (p.clone(), seen)
            })
            .collect()
    }

    /// A digest of what a program would see: names, types, modes and contents.
    pub fn digest(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        for (p, seen) in self.view() {
            h.update(p.as_os_str().as_encoded_bytes());
            h.update([0]);
            match seen {
                Seen::Dir(m) => {
                    h.update(b"d");
                    h.update(m.to_le_bytes());
                }
                Seen::Special(k, m) => {
                    h.update([k as u8]);
                    h.update(m.to_le_bytes());
                }
                Seen::Symlink(t) => {
                    h.update(b"l");
                    h.update(t.as_os_str().as_encoded_bytes());
                }
                Seen::File {
                    mode,
                    len,
                    sha,
                    mtime,
                } => {
                    h.update(b"f");
                    h.update(mode.to_le_bytes());
                    h.update(len.to_le_bytes());
                    h.update(sha);
                    if let Some((sec, ns)) = mtime {
                        h.update(b"t");
                        h.update(sec.to_le_bytes());
                        h.update(ns.to_le_bytes());
                    }
                }
            }
            h.update([0]);
        }
        h.finalize().into()
    }

    /// Writes the tree under `dir` (which exists and is empty), with the snapshot's
    /// modes (0700 for directories made by the run).
    pub fn write_to(&self, dir: &Path) -> io::Result<()> {
        let dir_mode = |p: &Path| self.dir_modes.get(p).copied().unwrap_or(0o700);
        fs::set_permissions(dir, fs::Permissions::from_mode(dir_mode(Path::new(""))))?;
        for (p, e) in &self.names {
            let full = dir.join(p);
            match e {
                Entry::Dir => {
                    fs::create_dir_all(&full)?;
                    fs::set_permissions(&full, fs::Permissions::from_mode(dir_mode(p)))?;
                }
                Entry::Symlink(t) => std::os::unix::fs::symlink(t, &full)?,
                Entry::Special('p') => {
                    rustix::fs::mknodat(
                        rustix::fs::CWD,
                        &full,
                        rustix::fs::FileType::Fifo,
                        rustix::fs::Mode::from_raw_mode(dir_mode(p)),
                        0,
                    )?;
                    fs::set_permissions(&full, fs::Permissions::from_mode(dir_mode(p)))?;
                }
                // Sockets and devices cannot be made again by an unprivileged checker.
                Entry::Special(_) => {}
                Entry::File(ino) => {
                    let d = self.files.get(ino).map(Vec::as_slice).unwrap_or(&[]);
                    fs::write(&full, d)?;
                    let mode = self.modes.get(ino).copied().unwrap_or(0o644);
                    fs::set_permissions(&full, fs::Permissions::from_mode(mode))?;
                    if let Some(&(sec, ns)) = self.mtimes.get(ino) {
                        set_mtime(&full, sec, ns)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Sets the modification time of the file at `path` (its access time is left).
fn set_mtime(path: &Path, sec: i64, ns: u32) -> io::Result<()> {
    use rustix::fs::{Timespec, Timestamps, UTIME_OMIT};
    let times = Timestamps {
        last_access: Timespec {
            tv_sec: 0,
            tv_nsec: UTIME_OMIT,
        },
        last_modification: Timespec {
            tv_sec: sec,
            tv_nsec: ns.into(),
        },
    };
    rustix::fs::utimensat(rustix::fs::CWD, path, &times, rustix::fs::AtFlags::empty())?;
    Ok(())
}

/// What a name shows a program: a file's modification time only when a timestamp
/// call set it explicitly (other times are not part of a state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Dir(u32),
    File {
        mode: u32,
        len: u64,
        sha: [u8; 32],
        mtime: Option<(i64, u32)>,
    },
    Symlink(PathBuf),
    Special(char, u32),
}

/// The tree of crash state `s`, built from the loaded snapshot `base`.
pub fn state_tree(rec: &Recording, base: &Tree, s: &CrashState) -> Tree {
    let mut t = base.clone();
    for (i, op) in rec.ops[..s.crash].iter().enumerate() {
        let mut tear = s.torn.filter(|(w, _)| *w == i).map(|(_, t)| t);
        if s.dropped.contains(&i) {
            // A lost append whose size landed: zeros up to its end.
            let grows = matches!(op, FsOp::Write { extends: true, .. });
            if !(s.zeroed && grows) {
                continue;
            }
            tear = Some(Tear::Zero);
        }
        t.apply(rec, op, tear);
    }
    t
}

/// How many outputs (acknowledgements) the program had made before the crash.
pub fn outputs_before(rec: &Recording, s: &CrashState) -> usize {
    rec.ops[..s.crash]
        .iter()
        .filter(|o| matches!(o, FsOp::Output))
        .count()
}
