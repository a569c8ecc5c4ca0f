//! Frames on a master's socket: `[kind u8][len u32 BE][payload]`, the same layout
//! both ways. Viewer → master: `h` hello (`[mask u8][have u64][gen u64]`, mask bit 0
//! = have present, bit 1 = gen present), `i` input bytes, `r` resize
//! (`[cols u16][rows u16]`), `k` stop the agent (retire). Master → viewer: `p` plan
//! (`[plan u8][from u64]`), `o` output bytes, `s` seq (`[total u64][gen u64]`), `x` exit
//! (`[code i32]`).

use std::io::{self, Read, Write};

/// A payload bound checked before allocating: larger frames end the connection.
pub const MAX_FRAME_PAYLOAD: usize = 1 << 20;

pub const HELLO: u8 = b'h';
pub const INPUT: u8 = b'i';
pub const RESIZE: u8 = b'r';
pub const STOP: u8 = b'k';
pub const PLAN: u8 = b'p';
pub const OUTPUT: u8 = b'o';
pub const SEQ: u8 = b's';
pub const EXIT: u8 = b'x';

pub fn encode(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + payload.len());
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// Reads one frame; `Ok(None)` at a clean end of stream.
pub fn read(r: &mut impl Read) -> io::Result<Option<(u8, Vec<u8>)>> {
    let mut header = [0u8; 5];
    match r.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_be_bytes(header[1..].try_into().expect("four bytes")) as usize;
    if len > MAX_FRAME_PAYLOAD {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "frame over the payload bound",
        ));
    }
    let mut payload = vec![0u8; len];
    r.read_exact(&mut payload)?;
    Ok(Some((header[0], payload)))
}

pub fn write(w: &mut impl Write, kind: u8, payload: &[u8]) -> io::Result<()> {
    w.write_all(&encode(kind, payload))
}

pub fn hello(have: Option<u64>, gen: Option<u64>) -> Vec<u8> {
    let mask = u8::from(have.is_some()) | (u8::from(gen.is_some()) << 1);
    let mut p = vec![mask];
    p.extend_from_slice(&have.unwrap_or(0).to_be_bytes());
    p.extend_from_slice(&gen.unwrap_or(0).to_be_bytes());
    p
}

pub fn parse_hello(p: &[u8]) -> Option<(Option<u64>, Option<u64>)> {
    if p.len() != 17 || p[0] & !3 != 0 {
        return None;
    }
    let have = u64::from_be_bytes(p[1..9].try_into().ok()?);
    let gen = u64::from_be_bytes(p[9..17].try_into().ok()?);
    Some((
        (p[0] & 1 != 0).then_some(have),
        (p[0] & 2 != 0).then_some(gen),
    ))
}

/// `[plan u8][from u64]`: 0 delta, 1 fresh, 2 full, 3 fell behind.
pub fn plan(p: crate::resume::Plan) -> Vec<u8> {
    use crate::resume::Plan;
    let (code, from) = match p {
        Plan::Delta { from } => (0u8, from),
        Plan::Fresh => (1, 0),
        Plan::Full => (2, 0),
        Plan::FellBehind => (3, 0),
    };
    let mut out = vec![code];
    out.extend_from_slice(&from.to_be_bytes());
    out
}

pub fn parse_plan(p: &[u8]) -> Option<crate::resume::Plan> {
    use crate::resume::Plan;
    let from = u64::from_be_bytes(p.get(1..9)?.try_into().ok()?);
    match (p.len(), p[0]) {
        (9, 0) => Some(Plan::Delta { from }),
        (9, 1) => Some(Plan::Fresh),
        (9, 2) => Some(Plan::Full),
        (9, 3) => Some(Plan::FellBehind),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resume::Plan;

    #[test]
    fn round_trips() {
        for (h, g) in [
            (None, None),
            (Some(5), None),
            (None, Some(2)),
            (Some(u64::MAX), Some(0)),
        ] {
            assert_eq!(parse_hello(&hello(h, g)), Some((h, g)));
        }
        assert_eq!(parse_hello(&[4; 17]), None);
        for p in [
            Plan::Delta { from: 9 },
            Plan::Fresh,
            Plan::Full,
            Plan::FellBehind,
        ] {
            assert_eq!(parse_plan(&plan(p)), Some(p));
        }
        let bytes = encode(OUTPUT, b"abc");
        assert_eq!(
            read(&mut &bytes[..]).unwrap(),
            Some((OUTPUT, b"abc".to_vec()))
        );
        assert_eq!(read(&mut &b""[..]).unwrap(), None);
        let huge = [OUTPUT, 0xff, 0xff, 0xff, 0xff];
        assert!(read(&mut &huge[..]).is_err());
    }
}
