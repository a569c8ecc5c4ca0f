//! Invariants the fuzz targets check (`fuzz/fuzz_targets/wire_frame.rs`,
//! `zon_config.rs`). Each function takes arbitrary bytes and panics only when an
//! invariant breaks; the corpus test runs the seeds through them on stable.

use crate::config::{schema::Config, zon};
use crate::wire;

/// The wire decoder: never panics; refusals are `invalid_request.*` with no input
/// echoed; an accepted request re-encodes to a frame that decodes to the same request.
pub fn wire_frame(data: &[u8]) {
    match wire::decode_request(data) {
        Ok(request) => {
            let frame = wire::encode_request_frame(&request);
            assert_eq!(frame.last(), Some(&b'\n'));
            let again = wire::decode_request(&frame[..frame.len() - 1])
                .expect("re-encoded request decodes");
            assert_eq!(again, request);
            assert_eq!(
                wire::encode_request_frame(&again),
                frame,
                "encoding is a fixed point"
            );
        }
        Err(refusal) => {
            assert!(refusal.error.code.class() == crate::errors::Class::InvalidRequest);
            assert!(refusal.error.data.keys().all(|k| k == "limit"));
            // A reply with no id and no data is a function of (code, message) alone:
            // encoded and checked once per pair, not once per input (the fuzzer's time
            // goes to the decoder, the code under test).
            type Seen = std::collections::HashSet<(crate::errors::ErrorCode, &'static str)>;
            thread_local!(static CHECKED: std::cell::RefCell<Seen> = Default::default());
            let key = (refusal.error.code, refusal.error.message);
            let constant = refusal.id.is_null() && refusal.error.data.is_empty();
            if constant && CHECKED.with(|c| c.borrow().contains(&key)) {
                return;
            }
            let reply = wire::encode_error(&refusal.id, &refusal.error);
            // The reply is itself a strict-JSON frame.
            crate::strict_json::parse_strict(&reply).expect("error reply is strict JSON");
            if constant {
                CHECKED.with(|c| c.borrow_mut().insert(key));
            }
        }
    }
}

/// The ZON reader: never panics; the writer's output reads back to the same value;
/// a document the schema accepts round-trips through the schema unchanged.
pub fn zon_config(data: &[u8]) {
    let Ok(value) = zon::parse(data) else {
        return;
    };
    let text = zon::write(&value);
    let again = zon::parse(text.as_bytes());
    assert_eq!(again.as_ref(), Ok(&value), "writer output reads back");
    if let Ok(again) = &again {
        assert_eq!(
            zon::write(again),
            text,
            "writer -> reader -> writer changed the text"
        );
    }
    if let Ok(config) = Config::from_zon(&value) {
        let rewritten = config.to_zon();
        assert_eq!(
            Config::from_zon(&rewritten).as_ref(),
            Ok(&config),
            "schema round trip"
        );
    }
}

/// The attach client-frame reader: a byte stream split into frames and decoded as
/// the daemon does, for a viewer with and without `write`. Never panics; a frame
/// re-encodes to the same bytes; input and resize are refused as `denied` without
/// write; a resize is exactly 4 bytes of nonzero sizes; nothing over the payload
/// limit is accepted.
pub fn attach_frames(data: &[u8]) {
    use crate::attach::frame::{self, ClientFrame};
    use crate::attach::ring::CloseReason;
    let mut rest = data;
    while let Some((kind, payload, tail)) = frame::split(rest) {
        let whole = &rest[..rest.len() - tail.len()];
        assert_eq!(frame::encode(kind, payload), whole, "frame re-encodes");
        let writer = frame::decode_client(kind, payload, true);
        let reader = frame::decode_client(kind, payload, false);
        match &writer {
            ClientFrame::Input(bytes) => {
                assert_eq!(*bytes, payload);
                assert!(payload.len() <= frame::MAX_PAYLOAD);
                assert_eq!(reader, ClientFrame::Refused(CloseReason::Denied));
            }
            ClientFrame::Resize { cols, rows } => {
                assert!(*cols > 0 && *rows > 0 && payload.len() == 4);
                assert_eq!(frame::resize_payload(*cols, *rows), payload);
                assert_eq!(reader, ClientFrame::Refused(CloseReason::Denied));
            }
            ClientFrame::Detach => {
                assert!(payload.is_empty());
                assert_eq!(reader, ClientFrame::Detach);
            }
            ClientFrame::Refused(reason) => {
                assert_eq!(*reason, CloseReason::Protocol);
                break;
            }
        }
        rest = tail;
    }
}
