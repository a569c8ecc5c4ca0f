//! Syntax rules for user-supplied names, tags and argv (pins.md).

/// Whether `c` is C0 (U+0000-U+001F), DEL (U+007F) or C1 (U+0080-U+009F).
pub fn is_control(c: char) -> bool {
    (c as u32) < 0x20 || (0x7f..=0x9f).contains(&(c as u32))
}

/// Session and window names: 1-255 bytes, no control characters.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 255 && !name.chars().any(is_control)
}

/// Tag keys: `[a-z][a-z0-9_.-]{0,63}`.
pub fn valid_tag_key(key: &str) -> bool {
    let b = key.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b.iter().all(|c| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'.' | b'-')
        })
}

/// Tag values: 1-256 bytes, no control characters.
pub fn valid_tag_value(value: &str) -> bool {
    !value.is_empty() && value.len() <= 256 && !value.chars().any(is_control)
}

/// Float titles: 1-128 bytes, no control characters.
pub fn valid_title(title: &str) -> bool {
    !title.is_empty() && title.len() <= 128 && !title.chars().any(is_control)
}

/// Namespaces: `[a-z][a-z0-9_-]{0,63}`.
pub fn valid_namespace(ns: &str) -> bool {
    let b = ns.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-'))
}

/// RFC history note 2026-11-10: the basename of argv[0] (after its last `/`), at most
/// 255 bytes (cut at a character boundary). Nothing else of argv is ever kept.
pub fn argv0_of(program: &str) -> Option<String> {
    let base = program.rsplit('/').next().unwrap_or("");
    if base.is_empty() {
        return None;
    }
    let mut end = base.len().min(255);
    while !base.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &base[..end];
    (!cut.is_empty()).then(|| cut.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv0_is_the_bounded_basename() {
        assert_eq!(argv0_of("/bin/sh").as_deref(), Some("sh"));
        assert_eq!(argv0_of("cat").as_deref(), Some("cat"));
        assert_eq!(argv0_of("/secret-dir/"), None);
        let long = format!("/x/{}{}", "a".repeat(255), "CANARY");
        assert_eq!(argv0_of(&long).unwrap(), "a".repeat(255));
        let wide = format!("{}é", "a".repeat(254));
        assert_eq!(argv0_of(&wide).unwrap(), "a".repeat(254));
    }

    #[test]
    fn names_and_tags() {
        assert!(valid_name("work"));
        assert!(!valid_name(""));
        assert!(!valid_name("a\tb"));
        assert!(!valid_name("a\u{85}b"));
        assert!(!valid_name(&"x".repeat(256)));
        assert!(valid_tag_key("role"));
        assert!(valid_tag_key("a.b-c_d"));
        assert!(!valid_tag_key("Role"));
        assert!(!valid_tag_key("1x"));
        assert!(valid_tag_value("thread-7"));
        assert!(!valid_tag_value(""));
    }
}
