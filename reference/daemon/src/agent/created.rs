//! The one-shot results of `session.create {request_token}` (ADR-0068 §6, seed point
//! 6): the daemon records `{session, name, request_token}` in the create's own turn,
//! bound to the connection and the principal that asked, and only that connection,
//! still that principal, reads it, once, as `meta.get` of
//! `session.created/v1/<token>`. Any other reader sees it absent (never an error that
//! would tell it exists); it is in no listing, event or subscription; it goes when
//! its connection closes. A create that loses its name records nothing, so a loser
//! never learns, or stamps anything onto, the winner's session.

use super::limits::MAX_CREATED_RESULTS_PER_CONNECTION;
use super::meta::RESERVED_PREFIX;
use crate::errors::{ApiError, ApiResult};
use std::collections::{BTreeMap, HashMap};

/// Bytes of a request token.
pub const TOKEN_BYTES: std::ops::RangeInclusive<usize> = 16..=64;

/// `[A-Za-z0-9_-]`, 16–64 bytes: a nonce, not a name (it becomes a key's last part).
pub fn valid_token(token: &str) -> bool {
    TOKEN_BYTES.contains(&token.len())
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
}

fn token_param(why: &'static str) -> ApiError {
    ApiError::param("request_token", why)
}

/// Checks a `request_token` before anything is created: its syntax, and that this
/// connection holds no unread result under it and has room for one more.
pub fn check_request(store: &CreatedResults, conn: Option<u64>, token: &str) -> ApiResult<()> {
    if !valid_token(token) {
        return Err(token_param("request token must be 16-64 of [A-Za-z0-9_-]"));
    }
    // The reactor's own work has no connection to read a result on.
    let Some(conn) = conn else {
        return Err(token_param("request token needs a connection"));
    };
    let pending = store.by_connection.get(&conn);
    if pending.is_some_and(|m| m.contains_key(token)) {
        return Err(token_param("request token already has an unread result"));
    }
    if pending.is_some_and(|m| m.len() >= MAX_CREATED_RESULTS_PER_CONNECTION) {
        return Err(token_param("too many unread results on this connection"));
    }
    Ok(())
}

/// The token of a reserved key, if it is one.
pub fn token_of(key: &str) -> Option<&str> {
    key.strip_prefix(RESERVED_PREFIX)
}

struct Unread {
    principal: String,
    value: String,
}

#[derive(Default)]
pub struct CreatedResults {
    by_connection: HashMap<u64, BTreeMap<String, Unread>>,
}

impl CreatedResults {
    /// Records a result after [`check_request`] passed in the same turn.
    pub fn record(&mut self, conn: u64, principal: &str, token: &str, value: String) {
        let unread = Unread {
            principal: principal.to_string(),
            value,
        };
        self.by_connection
            .entry(conn)
            .or_default()
            .insert(token.to_string(), unread);
    }

    /// The result under `token`, consumed, when `conn` recorded it for `principal`;
    /// `None` for every other reader, which leaves it in place for its own.
    pub fn take(&mut self, conn: Option<u64>, principal: &str, token: &str) -> Option<String> {
        let conn = conn?;
        if crate::negative::active(crate::negative::Defect::CreatedResultShared) {
            return self.take_any(token);
        }
        let pending = self.by_connection.get_mut(&conn)?;
        if pending.get(token)?.principal != principal {
            return None;
        }
        let unread = pending.remove(token)?;
        if pending.is_empty() {
            self.by_connection.remove(&conn);
        }
        Some(unread.value)
    }

    /// The negative control's defect: any connection reads it, and reading does not
    /// consume it.
    fn take_any(&self, token: &str) -> Option<String> {
        self.by_connection
            .values()
            .find_map(|m| m.get(token))
            .map(|u| u.value.clone())
    }

    pub fn drop_connection(&mut self, conn: u64) {
        self.by_connection.remove(&conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef-_XY";

    #[test]
    fn tokens_have_a_fixed_syntax() {
        assert!(valid_token(TOKEN));
        assert!(valid_token(&"a".repeat(16)) && valid_token(&"a".repeat(64)));
        for bad in [
            "short",
            &"a".repeat(15),
            &"a".repeat(65),
            "0123456789abcdef/x",
            "0123456789abcdef.x",
            "0123456789 abcdefx",
        ] {
            assert!(!valid_token(bad), "{bad}");
        }
    }

    #[test]
    fn only_the_recording_connection_and_principal_read_it_and_only_once() {
        let mut store = CreatedResults::default();
        check_request(&store, Some(1), TOKEN).unwrap();
        store.record(1, "owner", TOKEN, "v".into());
        assert_eq!(store.take(Some(2), "owner", TOKEN), None);
        assert_eq!(store.take(Some(1), "t1", TOKEN), None);
        assert_eq!(store.take(None, "owner", TOKEN), None);
        assert_eq!(store.take(Some(1), "owner", TOKEN).as_deref(), Some("v"));
        assert_eq!(store.take(Some(1), "owner", TOKEN), None);
    }

    #[test]
    fn a_pending_token_is_refused_and_a_closed_connection_drops_its_results() {
        let mut store = CreatedResults::default();
        store.record(1, "owner", TOKEN, "v".into());
        let e = check_request(&store, Some(1), TOKEN).unwrap_err();
        assert_eq!(e.code, crate::errors::ErrorCode::Param("request_token"));
        // Another connection's namespace is its own.
        check_request(&store, Some(2), TOKEN).unwrap();
        assert!(check_request(&store, None, TOKEN).is_err());
        store.drop_connection(1);
        assert_eq!(store.take(Some(1), "owner", TOKEN), None);
    }

    #[test]
    fn a_connection_holds_a_bounded_number_of_unread_results() {
        let mut store = CreatedResults::default();
        for i in 0..MAX_CREATED_RESULTS_PER_CONNECTION {
            let token = format!("{TOKEN}{i:04}");
            check_request(&store, Some(1), &token).unwrap();
            store.record(1, "owner", &token, "v".into());
        }
        assert!(check_request(&store, Some(1), &format!("{TOKEN}next")).is_err());
        check_request(&store, Some(2), &format!("{TOKEN}next")).unwrap();
    }
}
