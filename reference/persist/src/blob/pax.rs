//! Strict reading of one PAX `x` record set. Only `path`, `size` and `mtime` may
//! appear, each once, as `<len> <key>=<value>\n` with `<len>` the record's exact
//! decimal length (no leading zero).

pub(crate) struct Pax<'a> {
    pub path: Option<&'a [u8]>,
    pub size: Option<u64>,
}

pub(crate) fn parse_pax(mut body: &[u8]) -> Result<Pax<'_>, &'static str> {
    let mut pax = Pax {
        path: None,
        size: None,
    };
    let mut mtime_seen = false;
    while !body.is_empty() {
        let space = body
            .iter()
            .position(|b| *b == b' ')
            .ok_or("PAX record has no length")?;
        let digits = &body[..space];
        if digits.is_empty()
            || digits.len() > 5
            || digits[0] == b'0'
            || !digits.iter().all(u8::is_ascii_digit)
        {
            return Err("PAX record length is not a plain decimal");
        }
        let len: usize = std::str::from_utf8(digits)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("PAX record length is not a plain decimal")?;
        if len > body.len() || len < space + 3 || body[len - 1] != b'\n' {
            return Err("PAX record length disagrees with its text");
        }
        let record = &body[space + 1..len - 1];
        let eq = record
            .iter()
            .position(|b| *b == b'=')
            .ok_or("PAX record has no key")?;
        let (key, value) = (&record[..eq], &record[eq + 1..]);
        match key {
            // Readers that split the records by line (the `tar` crate) drop such a
            // record and name the member by its ustar header: two readers, two names.
            // (A NUL is left to the path rules, blob.path.)
            b"path" if value.contains(&b'\n') => return Err("PAX path holds a newline byte"),
            b"path" if pax.path.is_none() => pax.path = Some(value),
            b"size" if pax.size.is_none() => {
                pax.size = Some(decimal(value).ok_or("PAX size is not a decimal")?)
            }
            b"mtime" if !mtime_seen => {
                mtime_seen = true;
                if !valid_mtime(value) {
                    return Err("PAX mtime is not a decimal time");
                }
            }
            b"path" | b"size" | b"mtime" => return Err("PAX key appears twice"),
            _ => return Err("PAX key other than path, size, mtime"),
        }
        body = &body[len..];
    }
    Ok(pax)
}

fn decimal(value: &[u8]) -> Option<u64> {
    if value.is_empty()
        || value.len() > 19
        || !value.iter().all(u8::is_ascii_digit)
        || (value.len() > 1 && value[0] == b'0')
    {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

fn valid_mtime(value: &[u8]) -> bool {
    let (int, frac) = match value.iter().position(|b| *b == b'.') {
        Some(dot) => (&value[..dot], Some(&value[dot + 1..])),
        None => (value, None),
    };
    let int = int.strip_prefix(b"-").unwrap_or(int);
    decimal(int).is_some()
        && frac.is_none_or(|f| !f.is_empty() && f.len() <= 9 && f.iter().all(u8::is_ascii_digit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_the_three_keys_strictly() {
        let p = parse_pax(b"12 path=abc\n11 size=42\n").unwrap();
        assert_eq!((p.path, p.size), (Some(&b"abc"[..]), Some(42)));
        assert!(parse_pax(b"16 mtime=1.5000\n").is_ok());
        for bad in [
            &b"13 path=abc\n"[..],
            b"012 path=abc\n",
            b"12 path=abc\n12 path=abd\n",
            b"11 uid=1000\n",
            b"11 size=042\n",
            b"12 path=abc",
            b"13 path=a\nbc\n",
            b"path=abc\n",
        ] {
            assert!(parse_pax(bad).is_err(), "{bad:?}");
        }
    }
}
