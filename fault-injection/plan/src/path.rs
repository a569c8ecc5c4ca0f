//! Lexical normalisation of absolute paths (what a rule's glob is matched against for
//! path calls: symlinks are not resolved).

/// Removes empty and `.` components and applies `..` lexically, in place.
pub fn normalize(buf: &mut [u8]) -> usize {
    let len = buf.len();
    if len == 0 || buf[0] != b'/' {
        return len;
    }
    let (mut r, mut w) = (0usize, 0usize);
    while r < len {
        while r < len && buf[r] == b'/' {
            r += 1;
        }
        if r >= len {
            break;
        }
        let start = r;
        while r < len && buf[r] != b'/' {
            r += 1;
        }
        let comp = &buf[start..r];
        if comp == b"." {
            continue;
        }
        if comp == b".." {
            while w > 0 && buf[w - 1] != b'/' {
                w -= 1;
            }
            w = w.saturating_sub(1);
            continue;
        }
        buf[w] = b'/';
        w += 1;
        buf.copy_within(start..r, w);
        w += r - start;
    }
    if w == 0 {
        buf[0] = b'/';
        w = 1;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::normalize;

    fn norm(s: &str) -> std::string::String {
        let mut b = std::vec::Vec::from(s.as_bytes());
        let n = normalize(&mut b);
        std::string::String::from_utf8(b[..n].to_vec()).unwrap()
    }

    #[test]
    fn removes_dots_and_empty_components() {
        assert_eq!(norm("/a//b/./c/"), "/a/b/c");
        assert_eq!(norm("/a/b/../c"), "/a/c");
        assert_eq!(norm("/../.."), "/");
        assert_eq!(norm("/a/.."), "/");
        assert_eq!(norm("rel/../x"), "rel/../x");
        assert_eq!(norm("/a/b/../../../c"), "/c");
    }
}
