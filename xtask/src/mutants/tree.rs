//! The scratch tree: one copy of the workspace's tracked files under the target
//! directory, kept between runs so each mutant rebuilds only what it changed.
//!
//! A copy, not a `git worktree`: it adds nothing to the repository's metadata, and it
//! holds the working tree's current text, so the battery tests what the clean
//! `vxcert` was built from.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The tracked files the last sync copied, one per line, in the scratch tree's root.
const MANIFEST: &str = ".scratch-tree-files";

pub struct ScratchTree {
    root: PathBuf,
}

impl ScratchTree {
    /// Brings `dest` up to date with the tracked files of `source`. Files whose bytes
    /// are unchanged are not rewritten (their mtimes, hence cargo's fingerprints, stay).
    /// A file the previous sync copied that is no longer tracked (renamed, deleted)
    /// is removed: a stale `write.rs` beside a new `write/mod.rs` breaks the build.
    pub fn sync(source: &Path, dest: &Path) -> Result<ScratchTree, String> {
        let out = Command::new("git")
            .args(["ls-files", "-z", "--cached"])
            .current_dir(source)
            .output()
            .map_err(|e| format!("git ls-files: {e}"))?;
        if !out.status.success() {
            return Err(format!("git ls-files failed ({})", out.status));
        }
        let manifest = dest.join(MANIFEST);
        let previous = std::fs::read_to_string(&manifest).unwrap_or_default();
        let mut names = Vec::new();
        for name in out.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
            let name = std::str::from_utf8(name).map_err(|_| "non-UTF-8 tracked file name")?;
            names.push(name);
            let from = source.join(name);
            // A tracked file deleted in the working tree is absent from the copy too.
            let Ok(bytes) = std::fs::read(&from) else {
                let _ = std::fs::remove_file(dest.join(name));
                continue;
            };
            write_if_changed(&dest.join(name), &bytes)?;
        }
        let tracked: std::collections::HashSet<&str> = names.iter().copied().collect();
        for stale in previous.lines().filter(|n| !tracked.contains(n)) {
            let _ = std::fs::remove_file(dest.join(stale));
        }
        write_if_changed(&manifest, names.join("\n").as_bytes())?;
        Ok(ScratchTree {
            root: dest.to_path_buf(),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Writes `text` as `file` (relative to the tree) when it differs.
    pub fn put(&self, file: &str, text: &str) -> Result<(), String> {
        write_if_changed(&self.root.join(file), text.as_bytes())
    }
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn a_file_no_longer_tracked_leaves_the_scratch_tree() {
        let source = tempfile::tempdir().unwrap();
        let dest = tempfile::tempdir().unwrap();
        let src = source.path();
        git(src, &["init", "-q"]);
        std::fs::create_dir_all(src.join("src")).unwrap();
        std::fs::write(src.join("src/write.rs"), "old").unwrap();
        std::fs::write(src.join("src/lib.rs"), "lib").unwrap();
        git(src, &["add", "."]);
        ScratchTree::sync(src, dest.path()).unwrap();
        assert!(dest.path().join("src/write.rs").exists());
        std::fs::create_dir_all(src.join("src/write")).unwrap();
        git(src, &["mv", "src/write.rs", "src/write/mod.rs"]);
        ScratchTree::sync(src, dest.path()).unwrap();
        assert!(
            !dest.path().join("src/write.rs").exists(),
            "stale copy kept"
        );
        assert_eq!(
            std::fs::read_to_string(dest.path().join("src/write/mod.rs")).unwrap(),
            "old"
        );
        assert_eq!(
            std::fs::read_to_string(dest.path().join("src/lib.rs")).unwrap(),
            "lib"
        );
    }
}
