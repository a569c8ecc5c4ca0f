//! Identifier grammars: resource IDs (`s<n>`, `w<n>`, `p<n>`) and checkpoint IDs
//! (`c` + lowercase UUID version 4).

use crate::limits::MAX_SAFE_INTEGER;

/// Parses the decimal part of a resource ID: no sign, no leading zero, at most the
/// safe integer. Returns `None` for anything else.
pub fn parse_decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 16 || (digits[0] == b'0' && digits.len() > 1) {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(d - b'0');
    }
    (n <= MAX_SAFE_INTEGER).then_some(n)
}

/// Parses `<prefix><n>`, e.g. `parse_resource_id("p17", b'p') == Some(17)`.
pub fn parse_resource_id(id: &str, prefix: u8) -> Option<u64> {
    match id.as_bytes().split_first() {
        Some((&p, rest)) if p == prefix => parse_decimal(rest),
        _ => None,
    }
}

pub fn session_id(n: u64) -> String {
    format!("s{n}")
}

pub fn window_id(n: u64) -> String {
    format!("w{n}")
}

pub fn pane_id(n: u64) -> String {
    format!("p{n}")
}

const UUID_DASHES: [usize; 4] = [8, 13, 18, 23];

/// `c` followed by a lowercase UUID v4 (`xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx`).
pub fn is_checkpoint_id(id: &str) -> bool {
    match id.as_bytes().split_first() {
        Some((b'c', uuid)) => is_uuid_v4(uuid),
        _ => false,
    }
}

/// A lowercase, hyphenated UUID version 4 with the RFC 4122 variant.
pub fn is_uuid_v4(uuid: &[u8]) -> bool {
    if uuid.len() != 36 {
        return false;
    }
    for (i, &b) in uuid.iter().enumerate() {
        let ok = if UUID_DASHES.contains(&i) {
            b == b'-'
        } else {
            b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
        };
        if !ok {
            return false;
        }
    }
    uuid[14] == b'4' && matches!(uuid[19], b'8' | b'9' | b'a' | b'b')
}

/// Formats 16 random bytes as a UUID v4 (version and variant bits forced).
/// The caller supplies the randomness; this crate does no I/O.
pub fn uuid_v4_from_bytes(mut bytes: [u8; 16]) -> String {
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A fresh checkpoint ID from 16 random bytes.
pub fn checkpoint_id_from_bytes(bytes: [u8; 16]) -> String {
    format!("c{}", uuid_v4_from_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_ids() {
        assert_eq!(parse_resource_id("s0", b's'), Some(0));
        assert_eq!(parse_resource_id("p17", b'p'), Some(17));
        assert_eq!(
            parse_resource_id("w9007199254740991", b'w'),
            Some(MAX_SAFE_INTEGER)
        );
        for bad in [
            "s01",
            "s",
            "s-1",
            "s9007199254740992",
            "p1",
            "s1 ",
            "s+1",
            "S1",
        ] {
            assert_eq!(parse_resource_id(bad, b's'), None, "{bad}");
        }
    }

    #[test]
    fn checkpoint_ids() {
        assert!(is_checkpoint_id("c01234567-89ab-4cde-8fab-0123456789ab"));
        for bad in [
            "01234567-89ab-4cde-8fab-0123456789ab",
            "c01234567-89ab-4cde-8fab-0123456789aB",
            "c01234567-89ab-3cde-8fab-0123456789ab",
            "c01234567-89ab-4cde-cfab-0123456789ab",
            "c01234567-89ab-4cde-8fab-0123456789a",
            "c01234567_89ab-4cde-8fab-0123456789ab",
            "c../../etc/passwd-aaaa-aaaaaaaaaaaaaa",
        ] {
            assert!(!is_checkpoint_id(bad), "{bad}");
        }
        let id = checkpoint_id_from_bytes([0xff; 16]);
        assert!(is_checkpoint_id(&id), "{id}");
        let id = checkpoint_id_from_bytes([0; 16]);
        assert!(is_checkpoint_id(&id), "{id}");
    }
}
