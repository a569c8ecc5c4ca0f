//! The wall clock, read only at the edges (daemon, CLI) and passed into the store as
//! "now", and RFC 3339 parsing for tools' `--now`.

use std::time::{SystemTime, UNIX_EPOCH};

use vx_format::time::parse_timestamp;
use vx_format::Timestamp;

/// The current time in milliseconds since the epoch (before 1970 counts negative).
pub fn now() -> Timestamp {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => Timestamp(i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        Err(e) => Timestamp(-i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX)),
    }
}

/// Parses an RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS`, optional fraction (kept to
/// the millisecond, truncated), and `Z` or a `±HH:MM` offset. `T`/`Z` may be lower
/// case. A leap second (`:60`) is refused, as in durable timestamps.
pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
    let b = text.as_bytes();
    if !text.is_ascii() || b.len() < 20 || !matches!(b[10], b'T' | b't') {
        return None;
    }
    let (base, mut rest) = (&text[..19], &text[19..]);
    let mut millis = String::from("000");
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept: String = frac[..digits]
            .chars()
            .chain("000".chars())
            .take(3)
            .collect();
        millis = kept;
        rest = &frac[digits..];
    }
    let offset_ms: i64 = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let digit = |c: &u8| c.is_ascii_digit().then(|| i64::from(c - b'0'));
            let hours = digit(h1)? * 10 + digit(h2)?;
            let minutes = digit(m1)? * 10 + digit(m2)?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let sign = if *sign == b'+' { 1 } else { -1 };
            sign * (hours * 60 + minutes) * 60_000
        }
        _ => return None,
    };
    let mut canonical = String::with_capacity(24);
    canonical.push_str(&base[..10]);
    canonical.push('T');
    canonical.push_str(&base[11..19]);
    canonical.push('.');
    canonical.push_str(&millis);
    canonical.push('Z');
    let local = parse_timestamp(&canonical)?;
    Some(Timestamp(local.0 - offset_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_forms() {
        let base = parse_rfc3339("2026-11-06T22:00:00.000Z").unwrap();
        assert_eq!(parse_rfc3339("2026-11-06T22:00:00Z"), Some(base));
        assert_eq!(parse_rfc3339("2026-11-06t22:00:00z"), Some(base));
        assert_eq!(parse_rfc3339("2026-11-06T23:30:00+01:30"), Some(base));
        assert_eq!(parse_rfc3339("2026-11-06T21:00:00-01:00"), Some(base));
        assert_eq!(
            parse_rfc3339("2026-11-06T22:00:00.5Z"),
            Some(Timestamp(base.0 + 500))
        );
        assert_eq!(
            parse_rfc3339("2026-11-06T22:00:00.123456Z"),
            Some(Timestamp(base.0 + 123))
        );
        for bad in [
            "2026-11-06",
            "2026-11-06T22:00:00",
            "2026-02-30T00:00:00Z",
            "2026-11-06T22:00:60Z",
            "2026-11-06T22:00:00.Z",
            "2026-11-06T22:00:00+0100",
            "now",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn clock_is_after_2020() {
        assert!(now().0 > 1_577_836_800_000);
    }
}
