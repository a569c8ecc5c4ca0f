//! Reserved output and input keys (ADR-089 "Reserved keys"). The blob of a
//! successful Execute rides `_session_state_blob` (base64) and is taken off before
//! either success-path `rs.outputs` assignment; no ref ever rides an output.

use base64::Engine;
use serde_json::Value;

use crate::runstore::Output;

/// Input: a blob to unpack. Only the runtime sets it; an inbound one is stripped.
pub const SESSION_STATE_KEY: &str = "_session_state";
/// Output of a successful Execute: the packed session (stripped before rs.outputs).
pub const SESSION_STATE_BLOB_KEY: &str = "_session_state_blob";
/// Never a key anywhere (the seed: "No _session_state_ref key"); stripped if seen.
pub const SESSION_STATE_REF_KEY: &str = "_session_state_ref";
pub const SESSION_ID_KEY: &str = "_session_id";
pub const SESSION_FINGERPRINT_KEY: &str = "_session_fingerprint";
pub const BACKEND_KEY: &str = "_backend";

const RESERVED: [&str; 3] = [
    SESSION_STATE_KEY,
    SESSION_STATE_BLOB_KEY,
    SESSION_STATE_REF_KEY,
];

/// Takes the packed blob off a successful Execute's output. A value that is not
/// base64 text is dropped and answers `None` (the visit then commits as a pack
/// failure).
pub fn take_session_state_blob(output: &mut Output) -> Option<Vec<u8>> {
    match output.remove(SESSION_STATE_BLOB_KEY)? {
        Value::String(text) => base64::engine::general_purpose::STANDARD
            .decode(text.as_bytes())
            .ok(),
        _ => None,
    }
}

/// How an executor puts its blob on a success output.
pub fn put_session_state_blob(output: &mut Output, blob: &[u8]) {
    output.insert(
        SESSION_STATE_BLOB_KEY.to_owned(),
        Value::String(base64::engine::general_purpose::STANDARD.encode(blob)),
    );
}

/// Removes every reserved state key (blob, ref, unpack input) in place.
pub fn strip_reserved(map: &mut Output) {
    for key in RESERVED {
        map.remove(key);
    }
}

/// The copy of an output an event may carry.
pub fn sanitize_output_for_event(output: &Output) -> Output {
    let mut out = output.clone();
    strip_reserved(&mut out);
    out
}

/// Removes both session keys (the seed's "strip _session_id and _session_fingerprint").
pub fn strip_session_keys(input: &mut Output) {
    if crate::negative::active(crate::negative::Defect::FingerprintKeptOnFresh) {
        input.remove(SESSION_ID_KEY);
        return;
    }
    input.remove(SESSION_ID_KEY);
    input.remove(SESSION_FINGERPRINT_KEY);
}

pub fn string_field<'a>(map: &'a Output, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}
