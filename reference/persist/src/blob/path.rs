//! The member-path rule (`blob.path`): UTF-8, relative, no `\` or NUL, no empty,
//! `.` or `..` component, components of at most 255 bytes (NAME_MAX), at most 4096
//! bytes and 16 components.

use crate::limits::{MAX_COMPONENT_BYTES, MAX_PATH_BYTES, MAX_PATH_DEPTH};

/// The path as text when it passes the rule, else the reason it does not.
pub fn check_path(bytes: &[u8]) -> Result<&str, &'static str> {
    if bytes.is_empty() {
        return Err("member path is empty");
    }
    if bytes.len() > MAX_PATH_BYTES {
        return Err("member path is longer than 4096 bytes");
    }
    if bytes.contains(&0) {
        return Err("member path contains NUL");
    }
    let text = std::str::from_utf8(bytes).map_err(|_| "member path is not UTF-8")?;
    if text.starts_with('/') {
        return Err("member path is absolute");
    }
    if text.contains('\\') {
        return Err("member path contains a backslash");
    }
    if crate::negative::active(crate::negative::Defect::PathFirstComponentOnly) {
        return first_component_only(text);
    }
    let mut depth = 0;
    for component in text.split('/') {
        match component {
            "" => return Err("member path has an empty component"),
            "." | ".." => return Err("member path has a . or .. component"),
            c if c.len() > MAX_COMPONENT_BYTES => {
                return Err("member path has a component longer than 255 bytes")
            }
            _ => depth += 1,
        }
    }
    if depth > MAX_PATH_DEPTH {
        return Err("member path is deeper than 16 components");
    }
    Ok(text)
}

/// The path-first-component-only negative control: `.`, `..` and empty refused as
/// the first component only.
fn first_component_only(text: &str) -> Result<&str, &'static str> {
    match text.split('/').next() {
        Some("" | "." | "..") => Err("member path has a . or .. component"),
        _ if text.split('/').count() > MAX_PATH_DEPTH => {
            Err("member path is deeper than 16 components")
        }
        _ => Ok(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_every_unsafe_shape() {
        assert_eq!(check_path(b"projects/a/b.jsonl"), Ok("projects/a/b.jsonl"));
        for bad in [
            &b""[..],
            b"/etc/x",
            b"../x",
            b"a/../x",
            b"a//b",
            b"a/./b",
            b"a/",
            b"a\\b",
            b"a\0b",
            b"\xff",
            b"a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q",
        ] {
            assert!(check_path(bad).is_err(), "{bad:?}");
        }
        let long = |n: usize| vec!["a".repeat(255); 16].join("/")[..n].to_owned();
        assert!(check_path(&[b'a'; 4097]).is_err());
        assert!(
            check_path(long(4095).as_bytes()).is_ok(),
            "16 components of 255 bytes"
        );
        assert!(check_path(&[b'a'; 256]).is_err(), "NAME_MAX");
        assert!(check_path(&[b'a'; 255]).is_ok());
    }
}
