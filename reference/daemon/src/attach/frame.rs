//! Binary frames of an attached connection: one type byte, a u32 big-endian payload
//! length, the payload. Output travels as raw bytes, never JSON-escaped.

/// A frame whose payload is longer than this ends the stream (`CLOSE protocol`).
pub const MAX_PAYLOAD: usize = 1 << 20;
/// Output available at once is coalesced into frames of at most this many bytes, so
/// a fast producer costs few writes while one frame never pins much memory.
pub const OUTPUT_CHUNK: usize = 256 * 1024;
pub const HEADER: usize = 5;

pub const SNAPSHOT: u8 = b'S';
pub const READY: u8 = b'R';
pub const OUTPUT: u8 = b'O';
pub const EXIT: u8 = b'X';
pub const CLOSE: u8 = b'C';
pub const INPUT: u8 = b'I';
pub const RESIZE: u8 = b'Z';
pub const DETACH: u8 = b'D';

pub fn header(kind: u8, len: usize) -> [u8; HEADER] {
    let len = u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes();
    [kind, len[0], len[1], len[2], len[3]]
}

pub fn encode(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&header(kind, payload.len()));
    out.extend_from_slice(payload);
    out
}

/// Parses a header: the type byte and the payload length.
pub fn parse_header(h: [u8; HEADER]) -> (u8, usize) {
    (h[0], u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize)
}

pub fn resize_payload(cols: u16, rows: u16) -> [u8; 4] {
    let (c, r) = (cols.to_be_bytes(), rows.to_be_bytes());
    [c[0], c[1], r[0], r[1]]
}

/// `cols, rows` of a `Z` payload; both must be at least 1.
pub fn parse_resize(payload: &[u8]) -> Option<(u16, u16)> {
    let [c0, c1, r0, r1] = *<&[u8; 4]>::try_from(payload).ok()?;
    let (cols, rows) = (u16::from_be_bytes([c0, c1]), u16::from_be_bytes([r0, r1]));
    (cols > 0 && rows > 0).then_some((cols, rows))
}

/// What a client frame asks for, decided from its header and payload alone.
#[derive(Debug, PartialEq, Eq)]
pub enum ClientFrame<'a> {
    Input(&'a [u8]),
    Resize {
        cols: u16,
        rows: u16,
    },
    Detach,
    /// The stream ends with `CLOSE` and this reason.
    Refused(super::ring::CloseReason),
}

/// The daemon's reading of one client frame (`may_write`: the viewer holds `write`
/// on the pane). Pure, so the fuzzer can drive it (`vxref::fuzzing::attach_frames`).
pub fn decode_client(kind: u8, payload: &[u8], may_write: bool) -> ClientFrame<'_> {
    use super::ring::CloseReason::{Denied, Protocol};
    if payload.len() > MAX_PAYLOAD {
        return ClientFrame::Refused(Protocol);
    }
    match kind {
        DETACH if payload.is_empty() => ClientFrame::Detach,
        INPUT | RESIZE if !may_write => ClientFrame::Refused(Denied),
        INPUT => ClientFrame::Input(payload),
        RESIZE => match parse_resize(payload) {
            Some((cols, rows)) => ClientFrame::Resize { cols, rows },
            None => ClientFrame::Refused(Protocol),
        },
        _ => ClientFrame::Refused(Protocol),
    }
}

/// Splits one whole frame off the front of `buf`: `(kind, payload, rest)`, or None
/// when `buf` does not yet hold a whole frame.
pub fn split(buf: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let h: [u8; HEADER] = buf.get(..HEADER)?.try_into().ok()?;
    let (kind, len) = parse_header(h);
    let body = &buf[HEADER..];
    (body.len() >= len).then(|| (kind, &body[..len], &body[len..]))
}
