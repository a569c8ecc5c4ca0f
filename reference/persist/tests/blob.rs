//! The blob reader and writer: round trips, determinism and each rule on blobs
//! derived from the writer's output (the independent corpus is in corpus_verdicts.rs).

use vx_persist::blob::{read, write, ReadOptions, SessionFile};
use vx_persist::limits::{BLOCK, MAX_BLOB_BYTES, MAX_MEMBERS};
use vx_persist::{BlobRule, FileKind, Layouts, SessionHeader};

fn header(backend: &str, id: &str) -> SessionHeader {
    SessionHeader {
        backend: backend.into(),
        session_id: id.into(),
    }
}

fn file(path: &str, body: &[u8]) -> SessionFile {
    SessionFile {
        path: path.into(),
        body: body.to_vec(),
    }
}

fn opts() -> ReadOptions<'static> {
    ReadOptions::new(Layouts::builtin())
}

fn claude_files() -> Vec<SessionFile> {
    vec![
        file(
            "projects/-home-u-p/s1/subagents/agent-1.jsonl",
            b"{\"a\":1}\n",
        ),
        file("projects/-home-u-p/s1.jsonl", b"{\"type\":\"user\"}\n"),
        file("projects/-home-u-p/s1/tool-results/r.txt", b""),
    ]
}

fn rule(blob: &[u8], opts: &ReadOptions<'_>) -> BlobRule {
    read(blob, opts).expect_err("refused").rule
}

/// Rewrites the header block at `offset` with `edit` and fixes its checksum.
fn edit_block(blob: &mut [u8], offset: usize, edit: impl FnOnce(&mut tar::Header)) {
    let mut h = tar::Header::new_old();
    h.as_mut_bytes()
        .copy_from_slice(&blob[offset..offset + BLOCK]);
    edit(&mut h);
    h.set_cksum();
    blob[offset..offset + BLOCK].copy_from_slice(h.as_bytes());
}

#[test]
fn every_backend_round_trips_and_packs_to_equal_bytes() {
    let cases = [
        ("claude_code", "s1", claude_files()),
        (
            "codex",
            "t-9",
            vec![file(
                "sessions/2025/05/07/rollout-2025-05-07T17-24-21-t-9.jsonl",
                b"x\n",
            )],
        ),
        (
            "pi",
            "p.1",
            vec![file("sessions/--home-u--/1700000000_p.1.jsonl", b"y\n")],
        ),
    ];
    for (backend, id, files) in cases {
        let h = header(backend, id);
        let blob = write(&h, &files, &opts()).unwrap();
        let mut reversed = files.clone();
        reversed.reverse();
        assert_eq!(
            write(&h, &reversed, &opts()).unwrap(),
            blob,
            "{backend}: order-independent bytes"
        );
        let read_back = read(&blob, &opts().expecting(backend, id)).unwrap();
        assert_eq!(read_back.header, h);
        let mut want = files.clone();
        want.sort();
        assert_eq!(read_back.files(), want);
        assert_eq!(
            read_back
                .members
                .iter()
                .filter(|m| m.kind == FileKind::Key)
                .count(),
            1
        );
        assert_eq!(write(&h, &read_back.files(), &opts()).unwrap(), blob);
    }
}

#[test]
fn canonical_members_are_0600_owned_by_0_at_time_0() {
    let blob = write(&header("claude_code", "s1"), &claude_files(), &opts()).unwrap();
    let mut archive = tar::Archive::new(&blob[..]);
    let mut names = Vec::new();
    for entry in archive.entries().unwrap() {
        let entry = entry.unwrap();
        let h = entry.header();
        assert_eq!(
            (
                h.mode().unwrap(),
                h.uid().unwrap(),
                h.gid().unwrap(),
                h.mtime().unwrap()
            ),
            (0o600, 0, 0, 0)
        );
        assert!(h.as_ustar().is_some());
        names.push(entry.path().unwrap().to_string_lossy().into_owned());
    }
    assert_eq!(names[0], ".session-header.json");
    let mut sorted = names[1..].to_vec();
    sorted.sort();
    assert_eq!(names[1..], sorted[..]);
    assert_eq!(&blob[blob.len() - 2 * BLOCK..], &[0u8; 2 * BLOCK][..]);
}

#[test]
fn long_paths_get_a_pax_path_record_and_read_back() {
    let long_dir = "d".repeat(120);
    let path = format!("projects/{long_dir}/s1.jsonl");
    let blob = write(&header("claude_code", "s1"), &[file(&path, b"z")], &opts()).unwrap();
    assert_eq!(
        blob[BLOCK * 2 + 156],
        b'x',
        "a PAX record precedes the long member"
    );
    assert_eq!(read(&blob, &opts()).unwrap().members[0].path, path);
    // A short path never gets one.
    let short = write(&header("claude_code", "s1"), &claude_files(), &opts()).unwrap();
    assert!(!short
        .chunks(BLOCK)
        .any(|b| b[156] == b'x' && b[257..262] == *b"ustar"));
}

#[test]
fn header_identity_is_checked() {
    let blob = write(&header("claude_code", "s1"), &claude_files(), &opts()).unwrap();
    assert_eq!(
        rule(&blob, &opts().expecting("claude_code", "s2")),
        BlobRule::Header
    );
    assert_eq!(
        rule(&blob, &opts().expecting("codex", "s1")),
        BlobRule::Header
    );
    // Another header-member name: no header, so nothing is whitelisted either.
    assert_eq!(
        rule(&blob, &opts().header_member(".iterion-session.json")),
        BlobRule::Header
    );
}

#[test]
fn writer_refuses_what_the_reader_refuses() {
    let h = header("claude_code", "s1");
    let key = file("projects/p/s1.jsonl", b"k");
    let w = |files: &[SessionFile]| write(&h, files, &opts()).expect_err("refused").rule;
    assert_eq!(
        w(&[key.clone(), file("projects/p/s1/auth.json", b"{}")]),
        BlobRule::NotSessionFile
    );
    assert_eq!(
        w(&[key.clone(), file("projects/p/../s1.jsonl", b"")]),
        BlobRule::Path
    );
    assert_eq!(
        w(&[key.clone(), file("projects/q/s2.jsonl", b"")]),
        BlobRule::NotSessionFile
    );
    assert_eq!(w(&[key.clone(), key.clone()]), BlobRule::Header);
    assert_eq!(
        w(&[file("projects/p/s1/x", b"")]),
        BlobRule::Header,
        "no key file"
    );
    let many: Vec<_> = std::iter::once(key.clone())
        .chain((0..MAX_MEMBERS).map(|i| file(&format!("projects/p/s1/{i}"), b"")))
        .collect();
    assert_eq!(w(&many), BlobRule::Caps);
    assert_eq!(
        w(&[file("projects/p/s1.jsonl", &vec![0; 16 * 1024 * 1024 + 1])]),
        BlobRule::Caps
    );
}

#[test]
fn each_rule_fires_on_a_tampered_blob() {
    let good = write(&header("claude_code", "s1"), &claude_files(), &opts()).unwrap();
    // Member 2 (the key file, sorted first) starts after the header member's two blocks.
    let second = 2 * BLOCK;

    let mut b = good.clone();
    b[second + 3] ^= 1;
    assert_eq!(rule(&b, &opts()), BlobRule::Framing, "checksum");

    let mut b = good.clone();
    edit_block(&mut b, second, |h| {
        h.as_mut_bytes()[257..263].copy_from_slice(b"ustar ")
    });
    assert_eq!(rule(&b, &opts()), BlobRule::Framing, "GNU magic");

    let mut b = good.clone();
    b.push(0);
    assert_eq!(rule(&b, &opts()), BlobRule::Framing, "trailing byte");
    assert_eq!(
        rule(&good[..good.len() - BLOCK], &opts()),
        BlobRule::Framing,
        "one end block"
    );

    for (flag, want) in [
        (b'2', BlobRule::Type),
        (b'5', BlobRule::Type),
        (b'g', BlobRule::Type),
        (b'L', BlobRule::Type),
    ] {
        let mut b = good.clone();
        edit_block(&mut b, second, |h| h.as_mut_bytes()[156] = flag);
        assert_eq!(rule(&b, &opts()), want, "type {}", flag as char);
    }

    let mut b = good.clone();
    edit_block(&mut b, second, |h| {
        h.as_old_mut().name[..2].copy_from_slice(b"/p")
    });
    assert_eq!(rule(&b, &opts()), BlobRule::Path);

    let mut b = good.clone();
    edit_block(&mut b, second, |h| h.set_mode(0o4600));
    assert_eq!(rule(&b, &opts()), BlobRule::Mode);

    let mut b = good.clone();
    edit_block(&mut b, second, |h| h.set_size(1 << 30));
    assert_eq!(rule(&b, &opts()), BlobRule::Caps, "size past the end");

    assert_eq!(
        rule(&vec![0u8; MAX_BLOB_BYTES as usize + 1], &opts()),
        BlobRule::Size
    );
    assert_eq!(rule(&[], &opts()), BlobRule::Framing);
}
