//! Structure-aware checkpoints: a valid state from `vx_format::generate` (formats
//! 1–3), written canonically, then broken by exactly one rule, in the envelope, in
//! the payload (re-wrapped with a correct digest) or in the reading context; the
//! reader must refuse it with exactly that rule. The fuzzer spends its time past the
//! first syntax check, on each rule in turn.

use arbitrary::{Result, Unstructured};
use vx_format::{generate, read, wrap_envelope, write_payload, ReadContext, Rule};

/// Where a top-level member's value starts and ends in canonical JSON text (the
/// payload's own members come first, before any nested text, in the writer's order).
fn value_span(text: &str, key: &str) -> Option<(usize, usize)> {
    let start = text.find(&format!("\"{key}\":"))? + key.len() + 3;
    let b = text.as_bytes();
    let end = if b[start] == b'"' {
        let mut i = start + 1;
        while b[i] != b'"' {
            i += if b[i] == b'\\' { 2 } else { 1 };
        }
        i + 1
    } else {
        start + b[start..].iter().position(|c| matches!(c, b',' | b'}'))?
    };
    Some((start, end))
}

fn replace_value(text: &str, key: &str, value: &str) -> String {
    let (s, e) = value_span(text, key).expect("canonical payload member");
    format!("{}{value}{}", &text[..s], &text[e..])
}

fn insert_first(text: &str, member: &str) -> String {
    format!("{{{member},{}", &text[1..])
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// A broken checkpoint: its bytes, the context to read it with, the rule expected.
pub struct Broken {
    pub change: &'static str,
    pub bytes: Vec<u8>,
    pub file_name: Option<String>,
    pub socket: Option<String>,
    pub uid: Option<u64>,
    pub max_bytes: u64,
    pub rule: Rule,
}

/// Builds a valid checkpoint and breaks one rule chosen by `u`.
pub fn broken(u: &mut Unstructured) -> Result<Broken> {
    let (format, state) = generate::any(u)?;
    let payload = write_payload(&state, format).expect("generated states are valid");
    let n = format.number();
    let env = wrap_envelope(n, &payload);
    let mut b = Broken {
        change: "",
        bytes: Vec::new(),
        file_name: None,
        socket: None,
        uid: None,
        max_bytes: vx_format::limits::HARD_MAX_CHECKPOINT_BYTES,
        rule: Rule::Syntax,
    };
    let in_payload = "{\"format\":N,\"payload\":\"".len() + n.to_string().len() - 1;
    let head = format!("{{\"format\":{n}");
    let splice = |at: usize, bytes: &[u8]| {
        let mut out = env[..at].to_vec();
        out.extend_from_slice(bytes);
        out.extend_from_slice(&env[at..]);
        out
    };
    let rewrap = |p: String| wrap_envelope(n, &p);
    let sha_end = env.len() - 3;
    let (change, rule, bytes) = match u.int_in_range(0..=28)? {
        0 => ("BOM", Rule::Bom, splice(0, b"\xEF\xBB\xBF")),
        1 => (
            "data after the value",
            Rule::TrailingData,
            splice(env.len(), b"x"),
        ),
        2 => {
            let mut e = env.clone();
            e[sha_end - 1] = if e[sha_end - 1] == b'0' { b'1' } else { b'0' };
            ("digest changed", Rule::Checksum, e)
        }
        3 => {
            let mut e = env.clone();
            e[sha_end - 1] = b'G';
            ("digest not hex", Rule::Sha256Syntax, e)
        }
        4 => {
            let v = *u.choose(&["0", "4", "99"])?;
            let e = format!("{{\"format\":{v}").into_bytes();
            (
                "unknown format",
                Rule::FormatUnsupported,
                [&e[..], &env[head.len()..]].concat(),
            )
        }
        5 => {
            let v = *u.choose(&["\"1\"", "1.5", "true", "null"])?;
            let e = format!("{{\"format\":{v}").into_bytes();
            (
                "format not an integer",
                Rule::FormatType,
                [&e[..], &env[head.len()..]].concat(),
            )
        }
        6 => (
            "extra envelope key",
            Rule::EnvelopeKeys,
            splice(1, b"\"x\":0,"),
        ),
        7 => (
            "duplicate envelope key",
            Rule::DuplicateKey,
            splice(1, format!("\"format\":{n},").as_bytes()),
        ),
        8 => {
            let inner = &env[..env.len() - 1];
            (
                "envelope in an array",
                Rule::EnvelopeNotObject,
                [b"[", inner, b"]"].concat(),
            )
        }
        9 => (
            "envelope too deep",
            Rule::Depth,
            splice(1, format!("\"x\":{},", nested(32)).as_bytes()),
        ),
        10 => {
            let e = b"{\"format\":9007199254740992".to_vec();
            (
                "unsafe format",
                Rule::UnsafeInteger,
                [&e[..], &env[head.len()..]].concat(),
            )
        }
        11 => (
            "envelope not closed",
            Rule::Syntax,
            env[..env.len() - 2].to_vec(),
        ),
        12 => (
            "invalid UTF-8",
            Rule::Utf8,
            splice(in_payload, &[*u.choose(&[0x80u8, 0xC0, 0xFF])?]),
        ),
        13 => (
            "raw control character",
            Rule::ControlInString,
            splice(in_payload, &[u.int_in_range(0..=0x1F)?]),
        ),
        14 => (
            "lone surrogate",
            Rule::LoneSurrogate,
            splice(in_payload, b"\\ud800"),
        ),
        15 => {
            b.max_bytes = env.len() as u64 - 1;
            ("longer than the limit", Rule::FileTooLarge, env.clone())
        }
        16 => (
            "duplicate payload key",
            Rule::DuplicateKey,
            rewrap(insert_first(&payload, "\"generation\":1")),
        ),
        17 => (
            "unknown payload field",
            Rule::UnknownField,
            rewrap(insert_first(&payload, "\"zzz\":0")),
        ),
        18 => (
            "payload too deep",
            Rule::Depth,
            rewrap(insert_first(&payload, &format!("\"zzz\":{}", nested(32)))),
        ),
        19 => (
            "unsafe payload integer",
            Rule::UnsafeInteger,
            rewrap(replace_value(&payload, "generation", "9007199254740992")),
        ),
        20 => (
            "payload not closed",
            Rule::Syntax,
            rewrap(payload[..payload.len() - 1].to_owned()),
        ),
        21 => {
            let (s, e) = value_span(&payload, "uid").expect("uid");
            let p = format!("{}{}", &payload[..s - "\"uid\":".len()], &payload[e + 1..]);
            ("uid missing", Rule::MissingField, rewrap(p))
        }
        22 => (
            "generation a string",
            Rule::Type,
            rewrap(replace_value(&payload, "generation", "\"1\"")),
        ),
        23 => (
            "checkpoint id",
            Rule::CheckpointId,
            rewrap(replace_value(&payload, "checkpoint", "\"c0\"")),
        ),
        24 => (
            "relative socket",
            Rule::SocketSyntax,
            rewrap(replace_value(&payload, "socket", "\"run/x.sock\"")),
        ),
        25 => (
            "captured_at",
            Rule::Timestamp,
            rewrap(replace_value(
                &payload,
                "captured_at",
                "\"2026-13-01T00:00:00.000Z\"",
            )),
        ),
        26 => {
            b.file_name = Some("c00000000-0000-4000-8000-00000000000z.json".into());
            ("file name", Rule::FileName, env.clone())
        }
        27 => {
            b.socket = Some(format!("{}-other", state.socket));
            ("other socket", Rule::SocketMismatch, env.clone())
        }
        _ => {
            b.uid = Some(state.uid ^ 1);
            ("other uid", Rule::UidMismatch, env.clone())
        }
    };
    b.change = change;
    b.rule = rule;
    b.bytes = bytes;
    Ok(b)
}

/// Builds, breaks and reads; `Err` when the reader's verdict is not the broken rule.
pub fn check(data: &[u8]) -> std::result::Result<(), String> {
    let Ok(b) = broken(&mut Unstructured::new(data)) else {
        return Ok(());
    };
    let ctx = ReadContext {
        file_name: b.file_name.as_deref(),
        socket: b.socket.as_deref(),
        uid: b.uid,
        max_bytes: b.max_bytes,
    };
    match read(&b.bytes, &ctx) {
        Err(e) if e.rule == b.rule => Ok(()),
        Err(e) => Err(format!(
            "{}: want {}, got {}",
            b.change,
            b.rule.id(),
            e.rule.id()
        )),
        Ok(_) => Err(format!(
            "{}: want {}, the reader accepted",
            b.change,
            b.rule.id()
        )),
    }
}
