//! Shell-style globs over path bytes: `*` (also across `/`), `?`, `[…]`/`[!…]` classes
//! with ranges, `\\x` for a literal `x`. Checked when a plan is parsed, so a glob that
//! could never mean what it says is an error rather than a rule that never matches.

/// Refuses a glob that could never mean what it says: an unterminated `[` class
/// (`[abc`, `[!`, `[]`) or a reversed range (`[z-a]`).
pub fn validate_glob(pat: &[u8]) -> Result<(), &'static str> {
    let mut i = 0;
    while i < pat.len() {
        match pat[i] {
            b'\\' => i += 2,
            b'[' => i = class_end(pat, i)?,
            _ => i += 1,
        }
    }
    Ok(())
}

/// The index after the class that starts at `pat[start] == '['`, checking its ranges.
fn class_end(pat: &[u8], start: usize) -> Result<usize, &'static str> {
    const UNTERMINATED: &str = "unterminated '[' class in glob (write '\\[' for a literal '[')";
    let mut j = start + 1;
    if j < pat.len() && (pat[j] == b'!' || pat[j] == b'^') {
        j += 1;
    }
    let mut first = true;
    while j < pat.len() {
        if pat[j] == b']' && !first {
            return Ok(j + 1);
        }
        first = false;
        let (lo, next) = class_byte(pat, j).ok_or(UNTERMINATED)?;
        j = next;
        if j + 1 < pat.len() && pat[j] == b'-' && pat[j + 1] != b']' {
            let (hi, next) = class_byte(pat, j + 1).ok_or(UNTERMINATED)?;
            if hi < lo {
                return Err("reversed range in a '[' class of the glob (as in '[z-a]')");
            }
            j = next;
        }
    }
    Err(UNTERMINATED)
}

/// One (possibly `\`-escaped) byte of a class at `pat[j]`, and the index after it.
fn class_byte(pat: &[u8], j: usize) -> Option<(u8, usize)> {
    match pat.get(j)? {
        b'\\' => Some((*pat.get(j + 1)?, j + 2)),
        &c => Some((c, j + 1)),
    }
}

/// Shell-style glob: `*` any bytes (including `/`), `?` one byte, `[a-z]`/`[!a-z]`
/// classes, `\x` a literal `x`.
pub fn glob_match(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pat.len() {
            match pat[p] {
                b'*' => {
                    while p < pat.len() && pat[p] == b'*' {
                        p += 1;
                    }
                    if p == pat.len() {
                        return true;
                    }
                    star = Some((p, i));
                    continue;
                }
                b'?' => {
                    p += 1;
                    i += 1;
                    continue;
                }
                b'[' => {
                    if let Some((ok, next)) = class_match(pat, p, s[i]) {
                        if ok {
                            p = next;
                            i += 1;
                            continue;
                        }
                    } else if s[i] == b'[' {
                        // An unterminated '[' is a literal.
                        p += 1;
                        i += 1;
                        continue;
                    }
                }
                b'\\' if p + 1 < pat.len() => {
                    if pat[p + 1] == s[i] {
                        p += 2;
                        i += 1;
                        continue;
                    }
                }
                c => {
                    if c == s[i] {
                        p += 1;
                        i += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((sp, si)) => {
                p = sp;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            None => return false,
        }
    }
    while p < pat.len() && pat[p] == b'*' {
        p += 1;
    }
    p == pat.len()
}

/// Matches byte `c` against the class starting at `pat[start] == '['`. Returns whether
/// it matched and the index after the class, or `None` if the class is unterminated.
fn class_match(pat: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let mut j = start + 1;
    let negate = j < pat.len() && (pat[j] == b'!' || pat[j] == b'^');
    if negate {
        j += 1;
    }
    let mut matched = false;
    let mut first = true;
    while j < pat.len() {
        let mut lo = pat[j];
        if lo == b']' && !first {
            return Some((matched != negate, j + 1));
        }
        first = false;
        if lo == b'\\' && j + 1 < pat.len() {
            j += 1;
            lo = pat[j];
        }
        let mut hi = lo;
        if j + 2 < pat.len() && pat[j + 1] == b'-' && pat[j + 2] != b']' {
            hi = pat[j + 2];
            if hi == b'\\' && j + 3 < pat.len() {
                j += 1;
                hi = pat[j + 2];
            }
            j += 2;
        }
        if lo <= c && c <= hi {
            matched = true;
        }
        j += 1;
    }
    None
}

/// Escapes `path` so that it is a glob matching exactly that path and is safe inside
/// a rule (`*?[]\` and the plan's own separators `;#%=` get a backslash).
/// Returns the bytes written to `out`, or `None` if `out` is too small.
pub fn escape_glob(path: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut n = 0;
    for &c in path {
        if matches!(
            c,
            b'*' | b'?' | b'[' | b']' | b'\\' | b';' | b'#' | b'%' | b'='
        ) {
            *out.get_mut(n)? = b'\\';
            n += 1;
        }
        *out.get_mut(n)? = c;
        n += 1;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_like_a_shell_but_star_crosses_slashes() {
        let m = |p: &str, s: &str| glob_match(p.as_bytes(), s.as_bytes());
        assert!(m("*/recovery/*", "/var/x/recovery/a.json"));
        assert!(m("*.json", "/a/b.json") && !m("*.json", "/a/b.jso"));
        assert!(m("/a/?", "/a/b") && !m("/a/?", "/a/bc"));
        assert!(m("/[a-c]x", "/bx") && !m("/[!a-c]x", "/bx"));
        assert!(m("/[]]", "/]") && m("/\\*", "/*") && !m("/\\*", "/a"));
        assert!(m("***", "") && m("", "") && !m("", "/"));
        assert!(m("*a*a*a*", "/aaa") && !m("*a*a*a*b", "/aaaa"));
    }

    #[test]
    fn validation_and_escaping() {
        for bad in ["[abc", "[!", "[]", "[z-a]", "[^", "x[a-"] {
            assert!(validate_glob(bad.as_bytes()).is_err(), "{bad}");
        }
        for good in ["[abc]", "[]]", "[!]]", "\\[", "[a\\]]", "[a-a]", "*"] {
            assert!(validate_glob(good.as_bytes()).is_ok(), "{good}");
        }
        let path = b"/a*b?[c]\\d;e#f%g=h";
        let mut out = [0u8; 64];
        let n = escape_glob(path, &mut out).unwrap();
        assert!(validate_glob(&out[..n]).is_ok());
        assert!(glob_match(&out[..n], path));
        assert!(!glob_match(&out[..n], b"/aXb?[c]\\d;e#f%g=h"));
        assert_eq!(escape_glob(path, &mut [0u8; 4]), None);
    }
}
