//! Structure-aware blobs: a valid session blob built from `arbitrary` input for a
//! backend of the kit's layouts (`persist/layouts.toml`), packed by the canonical
//! writer, then broken by exactly one rule; the reader must refuse it with exactly
//! that rule (docs/spec/persist-blob.md's rule order makes the first broken rule the
//! verdict, and only one is broken).

use arbitrary::{Result, Unstructured};
use vx_persist::blob::{read, write, ReadOptions, SessionFile};
use vx_persist::error::BlobRule;
use vx_persist::header::SessionHeader;
use vx_persist::Layouts;

const BLOCK: usize = 512;
const ID_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789-_.";

fn word(u: &mut Unstructured, chars: &[u8], min: usize, max: usize) -> Result<String> {
    let len = u.int_in_range(min..=max)?;
    let mut s = String::with_capacity(len);
    for _ in 0..len {
        s.push(char::from(*u.choose(chars)?));
    }
    Ok(s)
}

fn digits(u: &mut Unstructured, n: usize) -> Result<String> {
    word(u, b"0123456789", n, n)
}

/// A header and files the layouts accept: the key file and some other session files.
pub fn session(u: &mut Unstructured) -> Result<(SessionHeader, Vec<SessionFile>)> {
    let backend = *u.choose(&["claude_code", "codex", "pi"])?;
    let first = char::from(*u.choose(b"abcdefghijklmnopqrstuvwxyz0123456789")?);
    let id = format!("{first}{}", word(u, ID_CHARS, 0, 24)?);
    let dir = word(u, b"abcdefghij-_.", 1, 12)?.replace('.', "d");
    let mut paths = Vec::new();
    match backend {
        "claude_code" => {
            paths.push(format!("projects/{dir}/{id}.jsonl"));
            for _ in 0..u.int_in_range(0..=3)? {
                let depth = u.int_in_range(1..=3)?;
                let rest: Vec<String> = (0..depth)
                    .map(|_| word(u, b"abcdefgh", 1, 8))
                    .collect::<Result<_>>()?;
                paths.push(format!("projects/{dir}/{id}/{}", rest.join("/")));
            }
        }
        "codex" => {
            let ts = word(u, b"0123456789ABCDEFabc-", 1, 20)?;
            let y = digits(u, 4)?;
            let (m, d) = (u.int_in_range(1..=12u8)?, u.int_in_range(1..=31u8)?);
            paths.push(format!(
                "sessions/{y}/{m:02}/{d:02}/rollout-{ts}-{id}.jsonl"
            ));
        }
        _ => {
            let any = word(u, b"abcxyz0123-", 1, 10)?;
            paths.push(format!("sessions/{dir}/{any}_{id}.jsonl"));
        }
    }
    // One path per file, prefixes of one another excluded (file and directory).
    paths.sort();
    paths.dedup();
    let mut kept: Vec<String> = Vec::new();
    for p in paths {
        if !kept
            .iter()
            .any(|k| p.starts_with(&format!("{k}/")) || k.starts_with(&format!("{p}/")))
        {
            kept.push(p);
        }
    }
    let mut files = Vec::new();
    for path in kept {
        let len = u.int_in_range(0..=700)?;
        files.push(SessionFile {
            path,
            body: u.bytes(len)?.to_vec(),
        });
    }
    Ok((
        SessionHeader {
            backend: backend.into(),
            session_id: id,
        },
        files,
    ))
}

/// The header blocks of `blob` (canonical: no PAX records for these short paths).
fn headers(blob: &[u8]) -> Vec<usize> {
    let mut at = 0;
    let mut out = Vec::new();
    while at + BLOCK <= blob.len() && blob[at..at + BLOCK].iter().any(|b| *b != 0) {
        out.push(at);
        let size = std::str::from_utf8(&blob[at + 124..at + 135]).expect("octal");
        let size = usize::from_str_radix(size, 8).expect("octal size");
        at += BLOCK + size.div_ceil(BLOCK) * BLOCK;
    }
    out
}

fn set_field(blob: &mut [u8], header: usize, offset: usize, value: &[u8]) {
    let field = &mut blob[header + offset..header + offset + value.len()];
    field.copy_from_slice(value);
    let block = &mut blob[header..header + BLOCK];
    block[148..156].fill(b' ');
    let sum: u32 = block.iter().map(|b| u32::from(*b)).sum();
    block[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
}

fn set_name(blob: &mut [u8], header: usize, name: &str) {
    let mut field = [0u8; 100];
    field[..name.len()].copy_from_slice(name.as_bytes());
    set_field(blob, header, 0, &field);
}

/// One rule broken: the name of the change and the rule the reader must report.
pub fn break_one(u: &mut Unstructured, blob: &mut Vec<u8>) -> Result<(&'static str, BlobRule)> {
    let heads = headers(blob);
    let session = heads[u.int_in_range(1..=heads.len() - 1)?];
    let last = *heads.last().expect("a header");
    Ok(match u.int_in_range(0..=11)? {
        0 => {
            let at = heads[u.choose_index(heads.len())?] + 148;
            blob[at] = if blob[at] == b'1' { b'2' } else { b'1' };
            ("checksum", BlobRule::Framing)
        }
        1 => {
            blob.push(*u.choose(&[0u8, b'x'])?);
            ("byte after the end", BlobRule::Framing)
        }
        2 => {
            set_field(blob, heads[u.choose_index(heads.len())?], 257, b"ustar ");
            ("GNU magic", BlobRule::Framing)
        }
        3 => {
            set_field(blob, session, 100, b"0000698\0");
            ("mode not octal", BlobRule::Framing)
        }
        4 => {
            set_field(blob, session, 156, &[*u.choose(b"12345679")?]);
            ("not a regular file", BlobRule::Type)
        }
        5 => {
            let bad = *u.choose(&["../escape", "/abs", "a//b", "a/./b", "a\\b"])?;
            set_name(blob, session, bad);
            ("unsafe path", BlobRule::Path)
        }
        6 => {
            let name = *u.choose(&[".credentials.json", "auth.json", "x/.claude.json"])?;
            set_name(blob, session, name);
            ("auth file", BlobRule::NotSessionFile)
        }
        7 => {
            set_name(blob, session, "not/a/session/file.jsonl");
            ("not a session file", BlobRule::NotSessionFile)
        }
        8 => {
            set_name(blob, heads[0], "header-renamed.json");
            ("header renamed", BlobRule::Header)
        }
        9 => {
            set_field(blob, heads[0], 100, b"0004600\0");
            ("setuid header", BlobRule::Mode)
        }
        10 => {
            set_field(blob, session, 100, b"0002600\0");
            ("setgid member", BlobRule::Mode)
        }
        _ => {
            set_field(blob, last, 124, b"77777777777\0");
            ("size past the end", BlobRule::Caps)
        }
    })
}

/// Builds, breaks and reads; `Err` when the reader's verdict is not the broken rule.
pub fn check(data: &[u8]) -> std::result::Result<(), String> {
    let mut u = Unstructured::new(data);
    let Ok((header, files)) = session(&mut u) else {
        return Ok(());
    };
    let opts = ReadOptions::new(Layouts::builtin());
    let mut blob = write(&header, &files, &opts)
        .map_err(|e| format!("the generator's session is refused by the writer: {e}"))?;
    assert_eq!(
        blob,
        write(&header, &files, &opts).expect("written once"),
        "writer is deterministic"
    );
    let Ok((change, rule)) = break_one(&mut u, &mut blob) else {
        return Ok(());
    };
    match read(&blob, &opts) {
        Err(e) if e.rule == rule => Ok(()),
        Err(e) => Err(format!("{change}: want {}, got {e}", rule.id())),
        Ok(_) => Err(format!("{change}: want {}, the reader accepted", rule.id())),
    }
}
