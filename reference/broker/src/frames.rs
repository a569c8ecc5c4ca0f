//! The seed's WebSocket control frames (docs/spec/single-writer.md "Frames"): strict
//! readers of what a viewer sends, canonical writers of what the broker sends.
//!
//! Client text messages: `{"t":"i","d":text}` input, `{"t":"r","cols":N,"rows":N}`
//! resize, `{"t":"ping"}`. Binary messages are raw input bytes. Broker text messages:
//! `{"t":"seq","n":N,"gen":G}`, `{"t":"role","role":"owner"|"secondary","holder"?}`,
//! `{"t":"id","sid":key}`, `{"t":"pong"}`. Every object is closed; `t` may stand
//! anywhere in it.

use std::borrow::Cow;

use vx_format::json::{check_document, Cursor, Kind};
use vx_format::Doc;

use crate::error::{json_rule, BrokerError, Code, Result, Rule};
use crate::limits::MAX_CLIENT_TEXT_BYTES;

/// One decoded client text message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientFrame<'a> {
    Input(Cow<'a, str>),
    Resize { cols: u16, rows: u16 },
    Ping,
}

/// A member's value as read, judged once `t` is known.
enum Member<'a> {
    Text(Cow<'a, str>),
    Int(Option<i64>),
    Other,
}

/// Reads one client text message. Checks, first failure wins: length
/// (`frame.too_large`), strict JSON (`json.*`), an object (`schema.not_object`), `t`
/// present and a string (`schema.missing_field`, `schema.type`), a known `t`
/// (`frame.unknown_type`), exactly that type's members (`schema.unknown_field`,
/// `schema.missing_field`, `schema.type`), `cols`/`rows` in 1..=65535
/// (`frame.size_range`).
pub fn decode_client(text: &str) -> Result<ClientFrame<'_>> {
    // A frame's rules keep their ids; its code is the wire's, not the files'.
    decode(text).map_err(|e| match e.rule {
        Rule::FrameTooLarge => e,
        rule => BrokerError {
            code: Code::MalformedFrame,
            rule,
        },
    })
}

fn decode(text: &str) -> Result<ClientFrame<'_>> {
    if text.len() > MAX_CLIENT_TEXT_BYTES {
        return Err(Rule::FrameTooLarge.into());
    }
    let checked = check_document(text.as_bytes(), Doc::Frame)
        .map_err(|e| BrokerError::new(json_rule(e.rule)))?;
    let mut c = Cursor::new(checked);
    if c.kind() != Kind::Object {
        return Err(Rule::NotObject.into());
    }
    c.enter();
    let mut members: Vec<(Cow<'_, str>, Member<'_>)> = Vec::new();
    while let Some(key) = c.next_key() {
        let value = match c.kind() {
            Kind::String => Member::Text(c.string()),
            Kind::Number => Member::Int(c.number().integer()),
            _ => {
                c.skip();
                Member::Other
            }
        };
        members.push((key, value));
    }
    let take = |name: &str| {
        members
            .iter()
            .find(|(k, _)| k.as_ref() == name)
            .map(|(_, v)| v)
    };
    let t = match take("t") {
        None => return Err(Rule::MissingField.into()),
        Some(Member::Text(t)) => t.as_ref(),
        Some(_) => return Err(Rule::FieldType.into()),
    };
    let allowed: &[&str] = match t {
        "i" => &["t", "d"],
        "r" => &["t", "cols", "rows"],
        "ping" => &["t"],
        _ => return Err(Rule::FrameUnknownType.into()),
    };
    if members.iter().any(|(k, _)| !allowed.contains(&k.as_ref())) {
        return Err(Rule::UnknownField.into());
    }
    match t {
        "i" => match take("d") {
            None => Err(Rule::MissingField.into()),
            Some(Member::Text(d)) => Ok(ClientFrame::Input(d.clone())),
            Some(_) => Err(Rule::FieldType.into()),
        },
        "r" => {
            let cells = |name: &str| match take(name) {
                None => Err(BrokerError::new(Rule::MissingField)),
                Some(Member::Int(Some(n))) if (1..=i64::from(u16::MAX)).contains(n) => {
                    Ok(*n as u16)
                }
                Some(Member::Int(_)) => Err(BrokerError::new(Rule::FrameSizeRange)),
                Some(_) => Err(BrokerError::new(Rule::FieldType)),
            };
            Ok(ClientFrame::Resize {
                cols: cells("cols")?,
                rows: cells("rows")?,
            })
        }
        _ => Ok(ClientFrame::Ping),
    }
}

/// The canonical encoding of a client frame (the suite's viewer and `vx_broker::client`
/// send exactly this).
pub fn encode_client(frame: &ClientFrame<'_>) -> String {
    match frame {
        ClientFrame::Input(d) => format!("{{\"t\":\"i\",\"d\":{}}}", json_string(d)),
        ClientFrame::Resize { cols, rows } => {
            format!("{{\"t\":\"r\",\"cols\":{cols},\"rows\":{rows}}}")
        }
        ClientFrame::Ping => "{\"t\":\"ping\"}".to_string(),
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string always serializes")
}

/// `{"t":"seq","n":total,"gen":G}`: the viewer's authoritative offset after a
/// replay, and the master generation it belongs to (the seed's clients read `n` and
/// ignore `gen`; `vx_broker::client` sends it back as `gen`).
pub fn seq(total: u64, gen: u64) -> String {
    format!("{{\"t\":\"seq\",\"n\":{total},\"gen\":{gen}}}")
}

/// `{"t":"id","sid":key}`: the placeholder's real key, once reconciled.
pub fn id(sid: &str) -> String {
    format!("{{\"t\":\"id\",\"sid\":{}}}", json_string(sid))
}

/// The holder a secondary is shown (`--takeover`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder<'a> {
    pub label: &'a str,
    pub since_ms: u64,
}

/// `{"t":"role","role":"owner"|"secondary","holder"?:{"label","since"}}`.
pub fn role(owner: bool, holder: Option<&Holder<'_>>) -> String {
    let role = if owner { "owner" } else { "secondary" };
    match holder {
        Some(h) => format!(
            "{{\"t\":\"role\",\"role\":\"{role}\",\"holder\":{{\"label\":{},\"since\":{}}}}}",
            json_string(h.label),
            h.since_ms
        ),
        None => format!("{{\"t\":\"role\",\"role\":\"{role}\"}}"),
    }
}

/// `{"t":"pong"}`, the answer to a ping.
pub fn pong() -> &'static str {
    "{\"t\":\"pong\"}"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> &'static str {
        decode_client(text).unwrap_err().rule.id()
    }

    #[test]
    fn reads_the_seeds_frames() {
        assert_eq!(
            decode_client("{\"t\":\"i\",\"d\":\"ls\\r\"}").unwrap(),
            ClientFrame::Input("ls\r".into())
        );
        assert_eq!(
            decode_client("{\"rows\":24,\"t\":\"r\",\"cols\":80}").unwrap(),
            ClientFrame::Resize { cols: 80, rows: 24 }
        );
        assert_eq!(
            decode_client(" {\"t\":\"ping\"} ").unwrap(),
            ClientFrame::Ping
        );
        for f in [
            ClientFrame::Input("a\"\u{7}é".into()),
            ClientFrame::Resize {
                cols: 1,
                rows: 65535,
            },
            ClientFrame::Ping,
        ] {
            assert_eq!(decode_client(&encode_client(&f)).unwrap(), f);
        }
    }

    #[test]
    fn refusals() {
        assert_eq!(rule("[]"), "schema.not_object");
        assert_eq!(
            decode_client("{").unwrap_err().code.as_str(),
            "invalid_request.malformed"
        );
        assert_eq!(rule("{\"d\":\"x\"}"), "schema.missing_field");
        assert_eq!(rule("{\"t\":1}"), "schema.type");
        assert_eq!(rule("{\"t\":\"seq\",\"n\":1}"), "frame.unknown_type");
        assert_eq!(rule("{\"t\":\"ping\",\"x\":1}"), "schema.unknown_field");
        assert_eq!(rule("{\"t\":\"i\"}"), "schema.missing_field");
        assert_eq!(rule("{\"t\":\"i\",\"d\":[]}"), "schema.type");
        assert_eq!(
            rule("{\"t\":\"r\",\"cols\":0,\"rows\":1}"),
            "frame.size_range"
        );
        assert_eq!(
            rule("{\"t\":\"r\",\"cols\":80,\"rows\":65536}"),
            "frame.size_range"
        );
        assert_eq!(
            rule("{\"t\":\"r\",\"cols\":80.0,\"rows\":24}"),
            "frame.size_range"
        );
        assert_eq!(
            rule("{\"t\":\"r\",\"cols\":\"80\",\"rows\":24}"),
            "schema.type"
        );
        assert_eq!(
            rule("{\"t\":\"i\",\"t\":\"i\",\"d\":\"\"}"),
            "json.duplicate_key"
        );
        let big = format!(
            "{{\"t\":\"i\",\"d\":\"{}\"}}",
            "a".repeat(MAX_CLIENT_TEXT_BYTES)
        );
        let e = decode_client(&big).unwrap_err();
        assert_eq!(
            (e.rule.id(), e.code.as_str()),
            ("frame.too_large", "invalid_request.frame_size")
        );
    }

    #[test]
    fn broker_frames() {
        assert_eq!(seq(42, 7), "{\"t\":\"seq\",\"n\":42,\"gen\":7}");
        assert_eq!(
            id("opencode:ses_A1"),
            "{\"t\":\"id\",\"sid\":\"opencode:ses_A1\"}"
        );
        assert_eq!(role(true, None), "{\"t\":\"role\",\"role\":\"owner\"}");
        let h = Holder {
            label: "desk \"A\"",
            since_ms: 5,
        };
        let v: serde_json::Value = serde_json::from_str(&role(false, Some(&h))).unwrap();
        assert_eq!(v["holder"]["label"], "desk \"A\"");
        assert_eq!(v["role"], "secondary");
    }
}
