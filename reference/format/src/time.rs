//! Durable timestamps: UTC `YYYY-MM-DDTHH:MM:SS.mmmZ`, a real calendar date and time
//! (no leap second), as milliseconds since the Unix epoch.

use crate::model::Timestamp;

const MS_PER_DAY: i64 = 86_400_000;

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(year) => 29,
        _ => 28,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn digits(bytes: &[u8]) -> Option<i64> {
    bytes.iter().try_fold(0i64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + i64::from(b - b'0'))
    })
}

/// Parses exactly `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn parse_timestamp(text: &str) -> Option<Timestamp> {
    let b = text.as_bytes();
    if b.len() != 24
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[23] != b'Z'
    {
        return None;
    }
    let year = digits(&b[0..4])?;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    let hour = digits(&b[11..13])?;
    let minute = digits(&b[14..16])?;
    let second = digits(&b[17..19])?;
    let milli = digits(&b[20..23])?;
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(Timestamp(
        days * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + milli,
    ))
}

/// The earliest and latest instants the durable syntax can spell.
pub const MIN_TIMESTAMP: Timestamp = Timestamp(-62_167_219_200_000);
pub const MAX_TIMESTAMP: Timestamp = Timestamp(253_402_300_799_999);

/// Formats a timestamp in the durable syntax; `None` outside years 0000–9999.
pub fn format_timestamp(ts: Timestamp) -> Option<String> {
    stamp(ts).map(|s| s.as_str().to_string())
}

/// [`format_timestamp`] without allocating: the text on the stack.
pub fn stamp(ts: Timestamp) -> Option<Stamp> {
    if ts < MIN_TIMESTAMP || ts > MAX_TIMESTAMP {
        return None;
    }
    let days = ts.0.div_euclid(MS_PER_DAY);
    let ms_of_day = ts.0.rem_euclid(MS_PER_DAY);
    let (y, mo, d) = civil_from_days(days);
    let (h, mi, s, ms) = (
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000,
    );
    let mut text = [0u8; TIMESTAMP_LEN];
    // Fixed-width digits: `YYYY-MM-DDTHH:MM:SS.mmmZ` (years 0000-9999 in range).
    for (at, width, value) in [
        (0, 4, y),
        (5, 2, mo),
        (8, 2, d),
        (11, 2, h),
        (14, 2, mi),
        (17, 2, s),
        (20, 3, ms),
    ] {
        let mut v = value;
        for i in (at..at + width).rev() {
            text[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    }
    for (at, b) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (23, b'Z'),
    ] {
        text[at] = b;
    }
    Some(Stamp(text))
}

/// The length of every durable timestamp's text.
const TIMESTAMP_LEN: usize = 24;

/// A formatted timestamp, on the stack.
#[derive(Clone, Copy)]
pub struct Stamp([u8; TIMESTAMP_LEN]);

impl Stamp {
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("ASCII digits and separators")
    }
}

impl std::fmt::Display for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<&str> for Stamp {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_spell_what_the_formatting_macro_spells() {
        // The fixed-width digit writer against `format!`, over the whole range.
        let reference = |ts: Timestamp| {
            let days = ts.0.div_euclid(MS_PER_DAY);
            let ms_of_day = ts.0.rem_euclid(MS_PER_DAY);
            let (y, mo, d) = civil_from_days(days);
            format!(
                "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
                ms_of_day / 3_600_000,
                ms_of_day / 60_000 % 60,
                ms_of_day / 1000 % 60,
                ms_of_day % 1000
            )
        };
        let mut ts = MIN_TIMESTAMP.0;
        let step = (MAX_TIMESTAMP.0 - MIN_TIMESTAMP.0) / 100_003;
        while ts <= MAX_TIMESTAMP.0 {
            let t = Timestamp(ts);
            assert_eq!(stamp(t).unwrap(), reference(t).as_str());
            assert_eq!(parse_timestamp(stamp(t).unwrap().as_str()), Some(t));
            ts += step;
        }
        for t in [MIN_TIMESTAMP, MAX_TIMESTAMP, Timestamp(0), Timestamp(-1)] {
            assert_eq!(format_timestamp(t).unwrap(), reference(t));
        }
        assert!(stamp(Timestamp(MAX_TIMESTAMP.0 + 1)).is_none());
    }

    #[test]
    fn known_instants() {
        assert_eq!(
            parse_timestamp("1970-01-01T00:00:00.000Z"),
            Some(Timestamp(0))
        );
        assert_eq!(
            parse_timestamp("2026-11-06T22:00:00.000Z"),
            Some(Timestamp(1_794_002_400_000))
        );
        assert_eq!(
            parse_timestamp("0000-01-01T00:00:00.000Z"),
            Some(MIN_TIMESTAMP)
        );
        assert_eq!(
            parse_timestamp("9999-12-31T23:59:59.999Z"),
            Some(MAX_TIMESTAMP)
        );
        assert!(parse_timestamp("2024-02-29T12:00:00.000Z").is_some());
    }

    #[test]
    fn rejects_non_calendar_and_other_syntax() {
        for bad in [
            "2026-02-29T00:00:00.000Z",
            "1900-02-29T00:00:00.000Z",
            "2026-13-01T00:00:00.000Z",
            "2026-00-01T00:00:00.000Z",
            "2026-04-31T00:00:00.000Z",
            "2026-01-01T24:00:00.000Z",
            "2026-01-01T23:60:00.000Z",
            "2026-12-31T23:59:60.000Z",
            "2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00.000+00:00",
            "2026-01-01t00:00:00.000Z",
            "2026-01-01T00:00:00.0000Z",
            "+026-01-01T00:00:00.000Z",
            "2026-01-01T00:00:00.00aZ",
        ] {
            assert_eq!(parse_timestamp(bad), None, "{bad}");
        }
    }

    #[test]
    fn round_trips_every_day_boundary() {
        for day in (-800_000i64..3_000_000).step_by(997) {
            let ts = Timestamp(day * MS_PER_DAY + 12_345_678);
            if let Some(text) = format_timestamp(ts) {
                assert_eq!(parse_timestamp(&text), Some(ts), "{text}");
            }
        }
        assert_eq!(format_timestamp(Timestamp(MAX_TIMESTAMP.0 + 1)), None);
    }
}
