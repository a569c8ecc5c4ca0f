//! Wire frames: newline-delimited JSON over the Unix socket.
//!
//! Request `{"id","verb","params"}`; reply `{"id","ok"}` or
//! `{"id","error":{"code","message","data"}}`. A frame is at most
//! [`MAX_FRAME_BYTES`] bytes before its `\n`. `id` is a safe integer or a string of at
//! most [`MAX_ID_BYTES`] bytes and is echoed; a frame whose id cannot be read gets
//! `"id":null`.

use crate::errors::{ApiError, ErrorCode};
use crate::strict_json::parse_strict;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Longest frame, excluding its terminating newline.
pub const MAX_FRAME_BYTES: usize = 1 << 20;
/// Longest string id.
pub const MAX_ID_BYTES: usize = 256;
/// Longest verb name.
pub const MAX_VERB_BYTES: usize = 64;

/// One decoded request.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub id: Value,
    pub verb: String,
    pub params: Map<String, Value>,
}

/// A frame that is not a request; `id` is echoed when it could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameError {
    pub id: Value,
    pub error: ApiError,
}

/// Decodes one frame (without or with its trailing newline). Pure: bytes in, verdict out.
pub fn decode_request(frame: &[u8]) -> Result<Request, FrameError> {
    let malformed = |id: Value, message: &'static str| FrameError {
        id,
        error: ApiError::new(ErrorCode::Malformed, message),
    };
    if frame.len() > MAX_FRAME_BYTES + 1 {
        return Err(FrameError {
            id: Value::Null,
            error: frame_size_error(),
        });
    }
    let value = parse_strict(frame).map_err(|e| malformed(Value::Null, e.describe()))?;
    let Value::Object(mut object) = value else {
        return Err(malformed(Value::Null, "request is not a JSON object"));
    };
    let id = match object.remove("id") {
        Some(id @ Value::Number(_)) => id,
        Some(Value::String(s)) if s.len() <= MAX_ID_BYTES => Value::String(s),
        _ => {
            return Err(malformed(
                Value::Null,
                "id must be an integer or a short string",
            ))
        }
    };
    let verb = match object.remove("verb") {
        Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_VERB_BYTES => s,
        _ => return Err(malformed(id, "verb must be a non-empty string")),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(malformed(id, "params must be an object")),
    };
    if !object.is_empty() {
        return Err(malformed(id, "request has unknown members"));
    }
    Ok(Request { id, verb, params })
}

pub fn frame_size_error() -> ApiError {
    ApiError::new(ErrorCode::FrameSize, "frame exceeds the size limit")
        .with("limit", MAX_FRAME_BYTES as u64)
}

/// Encodes a success reply, newline-terminated.
pub fn encode_ok(id: &Value, ok: &Value) -> Vec<u8> {
    line(json!({"id": id, "ok": ok}))
}

/// [`encode_ok`] of a body already encoded: the same bytes (`{"id":…,"ok":…}`, keys
/// in the order a `Value` map prints them, compact) without decoding it again.
pub fn encode_ok_encoded(id: &Value, ok: &crate::stream::Encoded) -> Vec<u8> {
    let body = ok.as_bytes();
    let mut out = Vec::with_capacity(body.len() + 32);
    out.extend_from_slice(b"{\"id\":");
    if serde_json::to_writer(&mut out, id).is_err() {
        out.extend_from_slice(b"null");
    }
    out.extend_from_slice(b",\"ok\":");
    out.extend_from_slice(body);
    out.extend_from_slice(b"}\n");
    out
}

/// Encodes an error reply, newline-terminated.
pub fn encode_error(id: &Value, error: &ApiError) -> Vec<u8> {
    line(json!({"id": id, "error": error.to_json()}))
}

/// Encodes a request, newline-terminated (the CLI and tests use this).
pub fn encode_request(id: u64, verb: &str, params: &Map<String, Value>) -> Vec<u8> {
    line(json!({"id": id, "verb": verb, "params": params}))
}

/// Encodes a decoded request again, newline-terminated.
pub fn encode_request_frame(request: &Request) -> Vec<u8> {
    line(json!({"id": request.id, "verb": request.verb, "params": request.params}))
}

fn line(value: Value) -> Vec<u8> {
    let mut out = serde_json::to_vec(&value).unwrap_or_else(|_| b"{}".to_vec());
    out.push(b'\n');
    out
}

/// What the frame reader produced.
#[derive(Debug, PartialEq)]
pub enum Frame {
    Line(Vec<u8>),
    /// The peer sent more than [`MAX_FRAME_BYTES`] without a newline.
    Oversized,
    Eof,
}

/// Reads the next frame, never buffering more than the limit plus one read.
pub async fn read_frame<R: AsyncBufRead + Unpin>(reader: &mut R) -> std::io::Result<Frame> {
    let mut frame = Vec::new();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if frame.is_empty() {
                Frame::Eof
            } else {
                Frame::Line(frame)
            });
        }
        match available.iter().position(|&b| b == b'\n') {
            Some(pos) => {
                frame.extend_from_slice(&available[..pos]);
                reader.consume(pos + 1);
                if frame.len() > MAX_FRAME_BYTES {
                    return Ok(Frame::Oversized);
                }
                return Ok(Frame::Line(frame));
            }
            None => {
                let n = available.len();
                frame.extend_from_slice(available);
                reader.consume(n);
                if frame.len() > MAX_FRAME_BYTES {
                    return Ok(Frame::Oversized);
                }
            }
        }
    }
}

/// True when a frame holds nothing but JSON whitespace (skipped, never answered).
pub fn is_blank(frame: &[u8]) -> bool {
    frame.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_request() {
        let r = decode_request(br#"{"id":7,"verb":"pane.list","params":{"window":"w0"}}"#).unwrap();
        assert_eq!(r.id, json!(7));
        assert_eq!(r.verb, "pane.list");
        assert_eq!(r.params["window"], "w0");
    }

    #[test]
    fn params_may_be_absent() {
        let r = decode_request(br#"{"id":"a","verb":"session.list"}"#).unwrap();
        assert!(r.params.is_empty());
    }

    #[test]
    fn refuses_shapes_with_the_id_when_known() {
        let e = decode_request(br#"{"id":3,"verb":1}"#).unwrap_err();
        assert_eq!(e.id, json!(3));
        assert_eq!(e.error.code, ErrorCode::Malformed);
        let e = decode_request(br#"{"id":3,"verb":"x","params":[]}"#).unwrap_err();
        assert_eq!(e.id, json!(3));
        let e = decode_request(br#"{"id":3,"verb":"x","extra":1}"#).unwrap_err();
        assert_eq!(e.id, json!(3));
        let e = decode_request(br#"{"id":1.5,"verb":"x"}"#).unwrap_err();
        assert_eq!(e.id, Value::Null);
        let e = decode_request(br#"{"id":1,"id":2,"verb":"x"}"#).unwrap_err();
        assert_eq!(e.id, Value::Null);
        assert_eq!(decode_request(b"[]").unwrap_err().id, Value::Null);
    }

    #[test]
    fn error_messages_never_echo_input() {
        let e = decode_request(b"{\"id\":1,\"verb\":\"secret-canary\",\"params\":7}").unwrap_err();
        let text = e.error.to_json().to_string();
        assert!(!text.contains("secret-canary"));
    }

    #[tokio::test]
    async fn reader_splits_frames_and_flags_oversize() {
        let mut input: &[u8] = b"{\"a\":1}\n\n{\"b\":2}";
        let mut reader = tokio::io::BufReader::new(&mut input);
        assert_eq!(
            read_frame(&mut reader).await.unwrap(),
            Frame::Line(b"{\"a\":1}".to_vec())
        );
        assert_eq!(
            read_frame(&mut reader).await.unwrap(),
            Frame::Line(Vec::new())
        );
        assert_eq!(
            read_frame(&mut reader).await.unwrap(),
            Frame::Line(b"{\"b\":2}".to_vec())
        );
        assert_eq!(read_frame(&mut reader).await.unwrap(), Frame::Eof);

        let big = vec![b'x'; MAX_FRAME_BYTES + 10];
        let mut slice: &[u8] = &big;
        let mut reader = tokio::io::BufReader::new(&mut slice);
        assert_eq!(read_frame(&mut reader).await.unwrap(), Frame::Oversized);
    }
}
