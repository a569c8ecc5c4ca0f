//! Small probes of what an implementation left behind: JSON paths in replies, file
//! modes, the files under a directory, byte needles.

use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// JSON value at a dotted path (`panes.0.argv0`).
pub fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    if path.is_empty() {
        return Some(cur);
    }
    for part in path.split('.') {
        cur = match cur {
            Value::Object(o) => o.get(part)?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

pub fn mode_of(m: &std::fs::Metadata) -> u32 {
    m.mode() & 0o7777
}

/// Every regular file under `dir`, recursively, without following symlinks.
pub fn walk_files(dir: &Path, out: &mut Vec<PathBuf>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => walk_files(&p, out),
                Ok(m) if m.is_file() => out.push(p),
                _ => {}
            }
        }
    }
}

/// Whether `needle` (non-empty) occurs in `hay`.
pub fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_finds_only_real_occurrences() {
        assert!(contains(b"abcCANARYdef", b"CANARY"));
        assert!(!contains(b"abcCANARdef", b"CANARY"));
        assert!(!contains(b"abc", b""));
    }

    #[test]
    fn paths_walk_objects_and_arrays() {
        let v = serde_json::json!({"panes":[{"argv0":"sh"}]});
        assert_eq!(at(&v, "panes.0.argv0"), Some(&Value::from("sh")));
        assert_eq!(at(&v, "panes.1"), None);
        assert_eq!(at(&v, ""), Some(&v));
    }
}
