//! The packer over real temporary roots: the whitelist walk, refusals of unsafe
//! entries and caps, unpack's validation and its crash safety (a failure at any
//! step leaves HasSession false).

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::path::Path;

use vx_persist::blob::{read, ReadOptions};
use vx_persist::{ErrorCode, Layouts, PersistError, SessionPacker, UnpackStep};

const KEY: &str = "projects/-home-u-p/s1.jsonl";

fn put(root: &Path, rel: &str, body: &[u8]) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, body).unwrap();
}

fn packer(backend: &str, root: &Path) -> SessionPacker<'static> {
    SessionPacker::new(Layouts::builtin(), backend, root).unwrap()
}

fn claude_root() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    put(root, KEY, b"{\"type\":\"user\"}\n");
    put(
        root,
        "projects/-home-u-p/s1/subagents/agent-1.jsonl",
        b"{}\n",
    );
    put(root, "projects/-home-u-p/s1/auth.json", b"secret");
    put(root, "projects/-home-u-p/s2.jsonl", b"other session\n");
    put(root, ".credentials.json", b"secret");
    put(root, ".claude.json", b"secret");
    put(root, "settings.json", b"{}");
    dir
}

fn code(r: Result<impl std::fmt::Debug, PersistError>) -> (ErrorCode, Option<&'static str>) {
    let e = r.expect_err("refused");
    (e.code, e.rule)
}

fn paths(blob: &[u8]) -> Vec<String> {
    let blob = read(blob, &ReadOptions::new(Layouts::builtin())).unwrap();
    blob.members.iter().map(|m| m.path.clone()).collect()
}

#[test]
fn pack_takes_the_whitelist_only_never_auth_files() {
    let dir = claude_root();
    let blob = packer("claude_code", dir.path()).pack("s1").unwrap();
    assert_eq!(
        paths(&blob),
        [KEY, "projects/-home-u-p/s1/subagents/agent-1.jsonl"]
    );
    assert_eq!(
        packer("claude_code", dir.path()).pack("s1").unwrap(),
        blob,
        "packing twice gives equal bytes"
    );
    assert!(!blob.windows(6).any(|w| w == b"secret"));
}

#[test]
fn unsafe_entries_are_refused_on_pack() {
    type Make = fn(&Path);
    let cases: [(&str, Make); 5] = [
        ("symlinked key file", |r| {
            fs::remove_file(r.join(KEY)).unwrap();
            symlink("/etc/hostname", r.join(KEY)).unwrap();
        }),
        ("hard-linked key file", |r| {
            fs::hard_link(r.join(KEY), r.join("elsewhere")).unwrap()
        }),
        ("FIFO in the session dir", |r| {
            nix::unistd::mkfifo(
                &r.join("projects/-home-u-p/s1/f"),
                nix::sys::stat::Mode::S_IRWXU,
            )
            .unwrap()
        }),
        ("socket in the session dir", |r| {
            std::os::unix::net::UnixListener::bind(r.join("projects/-home-u-p/s1/sock")).unwrap();
        }),
        ("symlinked project dir", |r| {
            symlink(r.join("projects/-home-u-p"), r.join("projects/-link")).unwrap()
        }),
    ];
    for (what, make) in cases {
        let dir = claude_root();
        make(dir.path());
        assert_eq!(
            code(packer("claude_code", dir.path()).pack("s1")),
            (ErrorCode::SessionUnsafe, Some("pack.unsafe")),
            "{what}"
        );
    }
}

#[test]
fn caps_refuse_never_truncate() {
    let dir = claude_root();
    for i in 0..64 {
        put(dir.path(), &format!("projects/-home-u-p/s1/f{i}"), b"");
    }
    assert_eq!(
        code(packer("claude_code", dir.path()).pack("s1")),
        (ErrorCode::SessionSize, Some("pack.caps")),
        "65 files"
    );
    let dir = claude_root();
    put(
        dir.path(),
        "projects/-home-u-p/s1/big",
        &vec![0; 16 * 1024 * 1024 + 1],
    );
    assert_eq!(
        code(packer("claude_code", dir.path()).pack("s1")).1,
        Some("pack.caps"),
        "16 MiB + 1"
    );
    let dir = claude_root();
    for i in 0..3 {
        put(
            dir.path(),
            &format!("projects/-home-u-p/s1/b{i}"),
            &vec![0; 11 * 1024 * 1024],
        );
    }
    assert_eq!(
        code(packer("claude_code", dir.path()).pack("s1")).1,
        Some("pack.caps"),
        "32 MiB + 1"
    );
}

#[test]
fn bad_input_gets_clear_errors() {
    let dir = claude_root();
    assert_eq!(
        code(packer("claude_code", dir.path()).pack("s9")).0,
        ErrorCode::SessionNotFound
    );
    put(dir.path(), "projects/-other/s1.jsonl", b"x");
    assert_eq!(
        code(packer("claude_code", dir.path()).pack("s1")).0,
        ErrorCode::SessionAmbiguous
    );
    assert!(
        !packer("claude_code", dir.path()).has_session("s1"),
        "two key files: no guess"
    );
    assert_eq!(
        code(packer("claude_code", dir.path()).pack("../s1")).0,
        ErrorCode::InvalidSessionId
    );
    assert_eq!(
        code(SessionPacker::new(Layouts::builtin(), "nope", dir.path())).0,
        ErrorCode::InvalidBackend
    );
    assert_eq!(
        code(SessionPacker::new(Layouts::builtin(), "kimi", dir.path())).0,
        ErrorCode::NoCapability
    );
    let link = tempfile::tempdir().unwrap();
    symlink(dir.path(), link.path().join("root")).unwrap();
    let linked = packer("claude_code", &link.path().join("root"));
    assert_eq!(code(linked.pack("s1")).0, ErrorCode::PersistIo);
    assert_eq!(
        code(linked.unpack("s1", b"")).0,
        ErrorCode::BlobCorrupt,
        "the blob is judged first"
    );
    assert!(!linked.has_session("s1"));
}

#[test]
fn unpack_into_a_wiped_root_restores_the_session_privately() {
    let src = claude_root();
    let blob = packer("claude_code", src.path()).pack("s1").unwrap();
    let dst = tempfile::tempdir().unwrap();
    let root = dst.path().join("claude");
    let p = packer("claude_code", &root);
    assert!(!p.has_session("s1"));
    p.unpack("s1", &blob).unwrap();
    assert!(p.has_session("s1"));
    assert_eq!(
        fs::read(root.join(KEY)).unwrap(),
        fs::read(src.path().join(KEY)).unwrap()
    );
    let meta = fs::metadata(root.join(KEY)).unwrap();
    assert_eq!(
        (meta.permissions().mode() & 0o777, meta.nlink()),
        (0o600, 1)
    );
    assert_eq!(
        fs::metadata(root.join("projects/-home-u-p"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    assert!(!root.join("projects/-home-u-p/s1/auth.json").exists());
    let left: Vec<_> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["projects"], "no staging directory left");
    // Unpacking again replaces the files in place.
    p.unpack("s1", &blob).unwrap();
    assert_eq!(packer("claude_code", &root).pack("s1").unwrap(), blob);
}

#[test]
fn every_backend_round_trips_through_a_wiped_root() {
    for (backend, id, rel) in [
        (
            "codex",
            "0193-ab",
            "sessions/2025/05/07/rollout-2025-05-07T17-24-21-0193-ab.jsonl",
        ),
        ("pi", "p1", "sessions/--home-u--/1700000000_p1.jsonl"),
    ] {
        let src = tempfile::tempdir().unwrap();
        put(src.path(), rel, b"turn 1\n");
        put(src.path(), "auth.json", b"secret");
        let blob = packer(backend, src.path()).pack(id).unwrap();
        let dst = tempfile::tempdir().unwrap();
        packer(backend, dst.path()).unpack(id, &blob).unwrap();
        assert!(packer(backend, dst.path()).has_session(id), "{backend}");
        assert_eq!(fs::read(dst.path().join(rel)).unwrap(), b"turn 1\n");
        assert!(!dst.path().join("auth.json").exists());
    }
}

#[test]
fn unpack_refuses_mismatch_and_unsafe_blobs_leaving_the_root_unchanged() {
    let src = claude_root();
    let blob = packer("claude_code", src.path()).pack("s1").unwrap();
    let dst = tempfile::tempdir().unwrap();
    assert_eq!(
        code(packer("claude_code", dst.path()).unpack("s2", &blob)),
        (ErrorCode::BlobCorrupt, Some("blob.header"))
    );
    assert_eq!(
        code(packer("codex", dst.path()).unpack("s1", &blob)).1,
        Some("blob.header")
    );
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/persist/blobs");
    for (case, rule) in [
        ("auth-json", "blob.not_session_file"),
        ("path-dotdot", "blob.path"),
        ("type-symlink", "blob.type"),
    ] {
        let bytes = fs::read(corpus.join(format!("{case}.tar"))).unwrap();
        assert_eq!(
            code(packer("claude_code", dst.path()).unpack("s1", &bytes)).1,
            Some(rule),
            "{case}"
        );
    }
    assert_eq!(
        fs::read_dir(dst.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn a_symlinked_directory_under_the_root_is_never_followed_on_unpack() {
    let src = claude_root();
    let blob = packer("claude_code", src.path()).pack("s1").unwrap();
    let dst = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    symlink(outside.path(), dst.path().join("projects")).unwrap();
    assert_eq!(
        code(packer("claude_code", dst.path()).unpack("s1", &blob)).0,
        ErrorCode::SessionUnsafe
    );
    assert_eq!(
        fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing outside the root"
    );
    assert!(!packer("claude_code", dst.path()).has_session("s1"));
}

#[test]
fn a_failure_at_any_unpack_step_leaves_has_session_false() {
    let src = claude_root();
    let blob = packer("claude_code", src.path()).pack("s1").unwrap();
    let mut steps = 0;
    packer("claude_code", tempfile::tempdir().unwrap().path())
        .unpack_with("s1", &blob, &mut |_| {
            steps += 1;
            Ok(())
        })
        .unwrap();
    assert!(steps >= 5, "{steps} steps");
    for fail_at in 0..steps {
        for stale in [false, true] {
            let dst = tempfile::tempdir().unwrap();
            if stale {
                put(dst.path(), KEY, b"an older transcript\n");
            }
            let p = packer("claude_code", dst.path());
            let mut n = 0;
            let mut seen = Vec::new();
            let r = p.unpack_with("s1", &blob, &mut |step: UnpackStep| {
                seen.push(step);
                n += 1;
                if n == fail_at + 1 {
                    Err(PersistError::os("injected", nix::errno::Errno::EIO))
                } else {
                    Ok(())
                }
            });
            assert_eq!(r.unwrap_err().code, ErrorCode::PersistIo);
            if seen.last() == Some(&UnpackStep::RemoveStaleKey) {
                // The removal itself failed: nothing was touched, the old session stands whole.
                assert_eq!(
                    fs::read(dst.path().join(KEY)).unwrap(),
                    b"an older transcript\n"
                );
                assert!(!dst.path().join("projects/-home-u-p/s1").exists());
            } else {
                assert!(
                    !p.has_session("s1"),
                    "failed at step {fail_at} ({:?}), stale {stale}",
                    seen.last()
                );
            }
            // A later unpack succeeds and sweeps what the failed one left.
            p.unpack("s1", &blob).unwrap();
            assert!(p.has_session("s1"));
            assert!(fs::read_dir(dst.path()).unwrap().all(|e| !e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".vx-unpack-")));
        }
    }
}
