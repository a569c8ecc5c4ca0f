//! A listing of a directory tree as the evidence compares it: what each entry is,
//! never its bytes (a sandbox may hold large or private files), so a failed row can
//! say which files the implementation created, changed or removed.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// One entry: its kind, and what tells a change (size, modification time, inode,
/// a link's target).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    kind: &'static str,
    len: u64,
    mtime_ns: i64,
    ino: u64,
    target: Option<PathBuf>,
}

/// Every entry under `root` (not following links) by `/`-separated relative path,
/// but for the names in the root that start with `skip` (the suite's own files).
pub fn listing(root: &Path, skip: &str) -> BTreeMap<String, Node> {
    let mut out = BTreeMap::new();
    walk(root, "", skip, &mut out);
    out
}

fn walk(dir: &Path, rel: &str, skip: &str, out: &mut BTreeMap<String, Node>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if rel.is_empty() && name.starts_with(skip) {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        let t = m.file_type();
        let kind = if t.is_dir() {
            "directory"
        } else if t.is_file() {
            "file"
        } else if t.is_symlink() {
            "symlink"
        } else if t.is_socket() {
            "socket"
        } else if t.is_fifo() {
            "fifo"
        } else {
            "device"
        };
        let path = format!("{rel}{name}");
        out.insert(
            path.clone(),
            Node {
                kind,
                len: if t.is_dir() { 0 } else { m.len() },
                mtime_ns: if t.is_dir() {
                    0
                } else {
                    m.mtime() * 1_000_000_000 + m.mtime_nsec()
                },
                ino: m.ino(),
                target: t
                    .is_symlink()
                    .then(|| std::fs::read_link(e.path()).ok())
                    .flatten(),
            },
        );
        if t.is_dir() {
            walk(&e.path(), &format!("{path}/"), skip, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A removed file, a replaced one (another inode) and a new one are told apart;
    /// the skipped names never appear.
    #[test]
    fn a_listing_tells_created_changed_and_removed() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::write(r.join("kept"), b"a").unwrap();
        std::fs::write(r.join("gone"), b"a").unwrap();
        std::fs::write(r.join("swapped"), b"a").unwrap();
        std::fs::write(r.join(".own-0.stderr"), b"x").unwrap();
        let before = listing(r, ".own-");
        assert!(!before.contains_key(".own-0.stderr"));
        std::fs::remove_file(r.join("gone")).unwrap();
        std::fs::write(r.join("swapped.new"), b"a").unwrap();
        std::fs::rename(r.join("swapped.new"), r.join("swapped")).unwrap();
        std::fs::create_dir(r.join("d")).unwrap();
        std::os::unix::net::UnixListener::bind(r.join("d/s.sock")).unwrap();
        let after = listing(r, ".own-");
        let changes: Vec<(String, &str)> = crate::evidence::diff(&before, &after)
            .into_iter()
            .map(|c| (c.path, c.change))
            .collect();
        assert_eq!(
            changes,
            [
                ("d".to_string(), "created"),
                ("d/s.sock".to_string(), "created"),
                ("swapped".to_string(), "changed"),
                ("gone".to_string(), "removed"),
            ]
        );
    }
}
