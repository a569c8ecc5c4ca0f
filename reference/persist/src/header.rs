//! The header member: strict JSON, exactly `{"backend","session_id"}`, and the
//! syntax of the ids it carries.

use vx_format::json::{check_document, Cursor, Kind};
use vx_format::Doc;

use crate::limits::{MAX_BACKEND_BYTES, MAX_HEADER_BYTES, MAX_SESSION_ID_BYTES};

/// Which session a blob holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionHeader {
    pub backend: String,
    pub session_id: String,
}

/// A session id is used inside file names, so it is a plain token:
/// 1–128 bytes of `[A-Za-z0-9._-]`, not starting with `.`.
pub fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_SESSION_ID_BYTES
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A backend name as layouts spell them: `[a-z][a-z0-9_]{0,31}`.
pub fn valid_backend_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= MAX_BACKEND_BYTES
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

impl SessionHeader {
    /// The canonical body: no whitespace, `backend` first. Both fields are plain
    /// tokens, so nothing needs escaping.
    pub fn encode(&self) -> Vec<u8> {
        format!(
            "{{\"backend\":\"{}\",\"session_id\":\"{}\"}}",
            self.backend, self.session_id
        )
        .into_bytes()
    }

    /// Parses a header body. `None` for anything but strict JSON holding exactly the
    /// two string members with valid syntax.
    pub fn parse(body: &[u8]) -> Option<SessionHeader> {
        if body.len() as u64 > MAX_HEADER_BYTES {
            return None;
        }
        let checked = check_document(body, Doc::File).ok()?;
        let mut cursor = Cursor::new(checked);
        if cursor.kind() != Kind::Object {
            return None;
        }
        cursor.enter();
        let (mut backend, mut session_id) = (None, None);
        while let Some(key) = cursor.next_key() {
            let slot = match key.as_ref() {
                "backend" => &mut backend,
                "session_id" => &mut session_id,
                _ => return None,
            };
            if cursor.kind() != Kind::String {
                return None;
            }
            *slot = Some(cursor.string().into_owned());
        }
        let header = SessionHeader {
            backend: backend?,
            session_id: session_id?,
        };
        (valid_backend_name(&header.backend) && valid_session_id(&header.session_id))
            .then_some(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exactly_the_two_members() {
        let h = SessionHeader::parse(br#"{"backend":"codex","session_id":"a-1"}"#).unwrap();
        assert_eq!(h.encode(), br#"{"backend":"codex","session_id":"a-1"}"#);
        for bad in [
            &br#"{"backend":"codex"}"#[..],
            br#"{"backend":"codex","session_id":"a","x":1}"#,
            br#"{"backend":"codex","session_id":"a","session_id":"a"}"#,
            br#"{"backend":"codex","session_id":1}"#,
            br#"{"backend":"codex","session_id":"../a"}"#,
            br#"{"backend":"Codex","session_id":"a"}"#,
            br#"["codex","a"]"#,
            b"\xef\xbb\xbf{}",
        ] {
            assert_eq!(SessionHeader::parse(bad), None);
        }
    }

    #[test]
    fn session_ids_are_plain_tokens() {
        assert!(valid_session_id("0193a7e2-4b1c-7d3e-9f00-1234567890ab"));
        for bad in ["", ".x", "a/b", "a\\b", "a b", &"x".repeat(129)] {
            assert!(!valid_session_id(bad));
        }
    }
}
