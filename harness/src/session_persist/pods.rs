//! Pods: one backend root each (what a CLI's config dir is on one machine), the
//! session files the kit plants in them, and what the kit reads back (a tree
//! snapshot, the members of a blob). The kit plants and judges on its own: it
//! never asks the implementation which files a session has.

use crate::verdict::OrHarness;
use std::collections::BTreeMap;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// One session's files under a backend root, the key file (the transcript) first,
/// from the run's layouts (the profile's document, else the kit's).
pub fn session_files(backend: &str, id: &str) -> Vec<(String, Vec<u8>)> {
    super::layout::planted(backend, id)
}

/// Where the kit puts more files of a session (caps scenarios): beside the
/// transcript, inside what the backend's layout lists as the session's.
pub fn extra_file(backend: &str, id: &str, n: usize) -> String {
    super::layout::extra_file(backend, id, n)
}

/// The credential files a backend root may hold; never packed, never unpacked.
pub const AUTH_FILES: [&str; 3] = [".credentials.json", "auth.json", ".claude.json"];

/// Writes `bytes` at `root/rel`, making its directories 0700.
pub fn plant(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    if let Some(dir) = path.parent() {
        make_private_dirs(dir);
    }
    std::fs::write(&path, bytes).or_harness("planting a session file");
}

pub fn make_private_dirs(dir: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .or_harness("making a pod's directories");
}

/// Puts the tree at `root` back to `snap` (a [`snapshot`] of it): the caps probe
/// unpacks again into the pod an over-cap unpack was accepted into.
pub fn restore(root: &Path, snap: &BTreeMap<String, Entry>) {
    if root.exists() {
        std::fs::remove_dir_all(root).or_harness("clearing a pod to restore it");
    }
    make_private_dirs(root);
    // A snapshot is sorted by path, so a directory comes before what it holds.
    for (rel, entry) in snap {
        let path = root.join(rel);
        match entry {
            Entry::Dir => make_private_dirs(&path),
            Entry::File(bytes) => std::fs::write(&path, bytes).or_harness("restoring a pod's file"),
            Entry::Symlink(to) => {
                std::os::unix::fs::symlink(to, &path).or_harness("restoring a pod's symlink")
            }
            Entry::Other(kind) => crate::harness_error!("a pod holding a {kind} is not restored"),
        }
    }
}

/// One entry of a tree, as the kit compares trees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Dir,
    File(Vec<u8>),
    Symlink(PathBuf),
    Other(&'static str),
}

/// The paths whose entry differs between two snapshots (added, removed or changed),
/// each once, in order.
pub fn changed_paths(
    before: &BTreeMap<String, Entry>,
    now: &BTreeMap<String, Entry>,
) -> Vec<String> {
    let all: std::collections::BTreeSet<&String> = before.keys().chain(now.keys()).collect();
    all.into_iter()
        .filter(|k| before.get(*k) != now.get(*k))
        .cloned()
        .collect()
}

/// Every entry under `root` (not following symlinks), by `/`-separated relative path.
pub fn snapshot(root: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    if root.exists() {
        walk(root, "", &mut out);
    }
    out
}

fn walk(dir: &Path, prefix: &str, out: &mut BTreeMap<String, Entry>) {
    let entries = std::fs::read_dir(dir).or_harness("listing a pod");
    for e in entries {
        let e = e.or_harness("listing a pod");
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}{name}");
        let path = e.path();
        let meta = std::fs::symlink_metadata(&path).or_harness("stat in a pod");
        let t = meta.file_type();
        let entry = if t.is_dir() {
            walk(&path, &format!("{rel}/"), out);
            Entry::Dir
        } else if t.is_symlink() {
            Entry::Symlink(std::fs::read_link(&path).or_harness("readlink in a pod"))
        } else if t.is_file() {
            Entry::File(std::fs::read(&path).or_harness("reading a pod's file"))
        } else if t.is_fifo() {
            Entry::Other("fifo")
        } else if t.is_socket() {
            Entry::Other("socket")
        } else {
            Entry::Other("device")
        };
        out.insert(rel, entry);
    }
}

/// The regular files of a snapshot, with their bytes.
pub fn files(snap: &BTreeMap<String, Entry>) -> BTreeMap<String, Vec<u8>> {
    snap.iter()
        .filter_map(|(k, v)| match v {
            Entry::File(b) => Some((k.clone(), b.clone())),
            _ => None,
        })
        .collect()
}

/// One member of a blob as the kit reads it (with the `tar` crate, independently
/// of the implementation's reader).
#[derive(Debug)]
pub struct Member {
    pub path: String,
    pub bytes: Vec<u8>,
    /// A directory entry: where files go, not a session file.
    pub is_dir: bool,
}

/// The members of a ustar blob, in order; a blob the kit cannot read is a failure.
pub fn members(blob: &[u8]) -> Vec<Member> {
    use std::io::Read;
    let mut archive = tar::Archive::new(blob);
    let mut out = Vec::new();
    for entry in archive.entries().expect("the blob is not a tar stream") {
        let mut entry = entry.expect("a member of the blob cannot be read");
        let path = String::from_utf8(entry.path_bytes().into_owned())
            .expect("a member path of the blob is not UTF-8");
        let is_dir = entry.header().entry_type().is_dir();
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .expect("a member body of the blob cannot be read");
        out.push(Member {
            path,
            bytes,
            is_dir,
        });
    }
    out
}
