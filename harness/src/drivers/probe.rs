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

/// Where `number` (decimal digits) occurs in `hay` as a number of its own: not a
/// part of a longer run of digits, letters or a decimal (`t800`, `1800`, `8.800`,
/// a hex id's `a800f` are other things that happen to hold the digits).
pub fn number_at(hay: &[u8], number: &[u8]) -> Option<usize> {
    if number.is_empty() {
        return None;
    }
    let joins = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.');
    hay.windows(number.len())
        .enumerate()
        .find(|(i, w)| {
            *w == number
                && !joins(i.checked_sub(1).and_then(|j| hay.get(j)))
                && !joins(hay.get(i + number.len()))
        })
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_is_found_only_on_its_own() {
        assert_eq!(number_at(br#"{"pid":800}"#, b"800"), Some(7));
        assert_eq!(number_at(b"800", b"800"), Some(0));
        assert_eq!(number_at(b"pid 800 left", b"800"), Some(4));
        for other in [
            &b"1733800123"[..],
            b"c8800f",
            b"t800",
            b"8.800",
            b"800.5",
            b"x8001",
        ] {
            assert_eq!(
                number_at(other, b"800"),
                None,
                "{:?}",
                String::from_utf8_lossy(other)
            );
        }
        assert_eq!(number_at(b"abc", b""), None);
    }

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
