//! `vxcert store list` on real store directories: the right status for every kind of
//! entry, the RFC's JSON shape and order, and exit 6 for an unsafe store directory.

use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use vx_format::{
    Checkpoint, Format, Node, Pane, PaneState, Session, Shutdown, Text, Timestamp, Window,
};

const NOW: &str = "2026-11-06T22:00:00.000Z";
/// NOW in milliseconds since the epoch.
const NOW_MS: i64 = 1_794_002_400_000;
const DAY_MS: i64 = 86_400_000;
const SOCKET: &str = "/run/user/1000/venomx.sock";

fn vxcert(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vxcert"))
        .args(args)
        .output()
        .unwrap()
}

fn uid() -> u64 {
    vx_store::current_uid()
}

/// A private store directory (0700) in a temporary directory.
fn store_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    (tmp, dir)
}

fn id(n: u8) -> String {
    let h = format!("{:x}", n % 16);
    format!("c{0}{0}{0}{0}{0}{0}{0}{0}-{0}{0}{0}{0}-4{0}{0}{0}-8{0}{0}{0}-{0}{0}{0}{0}{0}{0}{0}{0}{0}{0}{0}{0}", h)
}

fn checkpoint(id: &str, generation: u64, captured_at: i64, socket: &str) -> Vec<u8> {
    let cp = Checkpoint {
        checkpoint: id.to_string(),
        generation,
        socket: socket.to_string(),
        uid: uid(),
        captured_at: Timestamp(captured_at),
        shutdown: Shutdown::Open,
        sessions: vec![Session {
            id: 0,
            name: "work".into(),
        }],
        windows: vec![Window {
            id: 0,
            session: 0,
            name: "shell".into(),
            revision: 1,
            nodes: vec![Node::Pane { pane: 0 }],
        }],
        panes: vec![Pane {
            id: 0,
            window: 0,
            session: 0,
            cols: 80,
            rows: 24,
            state: PaneState::Running,
            previous_state: None,
            float: None,
            tags: Vec::new(),
            text: Text::Omitted,
        }],
    };
    vx_format::write(&cp, Format::CURRENT).unwrap()
}

fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    use std::io::Write;
    let path = dir.join(name);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .unwrap();
    f.write_all(bytes).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

fn put_checkpoint(dir: &Path, n: u8, generation: u64, captured_at: i64) -> String {
    let id = id(n);
    put(
        dir,
        &format!("{id}.json"),
        &checkpoint(&id, generation, captured_at, SOCKET),
    );
    id
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn every_kind_of_entry_gets_its_status_in_rfc_order() {
    let (tmp, dir) = store_dir();
    let valid = put_checkpoint(&dir, 1, 1, NOW_MS - 1000);
    let expired = put_checkpoint(&dir, 2, 2, NOW_MS - 8 * DAY_MS);
    let future = put_checkpoint(&dir, 3, 3, NOW_MS + 60_000);
    let dup_a = put_checkpoint(&dir, 4, 4, NOW_MS);
    let dup_b = put_checkpoint(&dir, 5, 4, NOW_MS);
    // Corrupt: a checksum mismatch.
    let corrupt = id(6);
    let mut bytes = checkpoint(&corrupt, 6, NOW_MS, SOCKET);
    let at = bytes.len() / 2;
    bytes[at] ^= 1;
    put(&dir, &format!("{corrupt}.json"), &bytes);
    // Incompatible: an unknown format; and an oversized file.
    let format9 = id(7);
    put(
        &dir,
        &format!("{format9}.json"),
        b"{\"format\":9,\"payload\":\"{}\",\"sha256\":\"x\"}\n",
    );
    let oversized = id(8);
    put(&dir, &format!("{oversized}.json"), &vec![b' '; 70_000]);
    // Unsafe: symlink, hard link, FIFO, socket, directory, other owner, permissive mode.
    let symlink = id(9);
    std::os::unix::fs::symlink(
        dir.join(format!("{valid}.json")),
        dir.join(format!("{symlink}.json")),
    )
    .unwrap();
    let hard = put_checkpoint(&dir, 10, 10, NOW_MS);
    std::fs::hard_link(
        dir.join(format!("{hard}.json")),
        tmp.path().join("second-link"),
    )
    .unwrap();
    let fifo = id(11);
    let status = Command::new("mkfifo")
        .arg("-m")
        .arg("600")
        .arg(dir.join(format!("{fifo}.json")))
        .status()
        .unwrap();
    assert!(status.success());
    let socket = id(12);
    let short = tmp.path().join("s.sock");
    let listener = std::os::unix::net::UnixListener::bind(&short).unwrap();
    std::fs::rename(&short, dir.join(format!("{socket}.json"))).unwrap();
    drop(listener);
    let directory = id(13);
    std::fs::create_dir(dir.join(format!("{directory}.json"))).unwrap();
    let other_owner = put_checkpoint(&dir, 14, 14, NOW_MS);
    assert_eq!(
        uid(),
        0,
        "making a file of another owner needs root (CI runs as root)"
    );
    std::os::unix::fs::lchown(dir.join(format!("{other_owner}.json")), Some(65534), None).unwrap();
    let permissive = put_checkpoint(&dir, 15, 15, NOW_MS);
    std::fs::set_permissions(
        dir.join(format!("{permissive}.json")),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    // Never listed: a temporary file and a foreign name.
    put(
        &dir,
        ".tmp-11111111-1111-4111-8111-111111111111",
        b"partial",
    );
    put(&dir, "README", b"x");

    let out = vxcert(&[
        "store",
        "list",
        "--dir",
        dir.to_str().unwrap(),
        "--json",
        "--now",
        NOW,
        "--max-bytes",
        "65536",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let rows: Vec<(String, String, Option<u64>)> = value["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["checkpoint"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
                r["generation"].as_u64(),
            )
        })
        .collect();
    let row = |id: &str, status: &str, g: Option<u64>| (id.to_owned(), status.to_owned(), g);
    let mut unknown = vec![
        row(&corrupt, "corrupt", None),
        row(&format9, "incompatible", None),
        row(&oversized, "incompatible", None),
        row(&symlink, "unsafe", None),
        row(&hard, "unsafe", None),
        row(&fifo, "unsafe", None),
        row(&socket, "unsafe", None),
        row(&directory, "unsafe", None),
        row(&other_owner, "unsafe", None),
        row(&permissive, "unsafe", None),
    ];
    unknown.sort();
    let mut want = vec![
        row(&valid, "valid", Some(1)),
        row(&expired, "expired", Some(2)),
        row(&future, "future", Some(3)),
        row(&dup_a, "corrupt", Some(4)),
        row(&dup_b, "corrupt", Some(4)),
    ];
    want.extend(unknown);
    assert_eq!(rows, want);
    // Exactly the ok object, keys in the RFC's order, one line.
    assert!(text.starts_with(&format!(
        "{{\"checkpoints\":[{{\"checkpoint\":\"{valid}\",\"status\":\"valid\",\"generation\":1}}"
    )));
    assert_eq!(text.lines().count(), 1);
    assert_eq!(value.as_object().unwrap().len(), 1);
    // Nothing was changed.
    assert_eq!(
        std::fs::metadata(dir.join(format!("{permissive}.json")))
            .unwrap()
            .mode()
            & 0o777,
        0o644
    );
    assert!(dir
        .join(".tmp-11111111-1111-4111-8111-111111111111")
        .exists());
}

#[test]
fn max_age_and_now_decide_expired_and_future() {
    let (_tmp, dir) = store_dir();
    put_checkpoint(&dir, 1, 1, NOW_MS - 7200 * 1000);
    let dir = dir.to_str().unwrap();
    let status = |extra: &[&str]| {
        let mut args = vec!["store", "list", "--dir", dir, "--json"];
        args.extend_from_slice(extra);
        let out = vxcert(&args);
        assert_eq!(out.status.code(), Some(0));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["checkpoints"][0]["status"].as_str().unwrap().to_owned()
    };
    assert_eq!(status(&["--now", NOW]), "valid");
    assert_eq!(
        status(&["--now", NOW, "--max-age-seconds", "7200"]),
        "valid"
    );
    assert_eq!(
        status(&["--now", NOW, "--max-age-seconds", "7199"]),
        "expired"
    );
    assert_eq!(status(&["--now", "2026-11-06T19:59:59Z"]), "future");
    assert_eq!(status(&["--now", "2026-11-06T21:00:00+01:00"]), "valid");
    // Without --now the clock decides; either way the file is judged, never an error.
    assert!(["valid", "expired", "future"].contains(&status(&[]).as_str()));
}

#[test]
fn socket_is_checked_only_when_given() {
    let (_tmp, dir) = store_dir();
    put_checkpoint(&dir, 1, 1, NOW_MS);
    let dir = dir.to_str().unwrap();
    let status = |extra: &[&str]| {
        let mut args = vec!["store", "list", "--dir", dir, "--json", "--now", NOW];
        args.extend_from_slice(extra);
        let v: serde_json::Value = serde_json::from_slice(&vxcert(&args).stdout).unwrap();
        v["checkpoints"][0]["status"].as_str().unwrap().to_owned()
    };
    assert_eq!(status(&[]), "valid");
    assert_eq!(status(&["--socket", SOCKET]), "valid");
    assert_eq!(
        status(&["--socket", "/run/user/1000/other.sock"]),
        "corrupt"
    );
}

#[test]
fn an_unsafe_store_directory_is_exit_6() {
    let (tmp, dir) = store_dir();
    put_checkpoint(&dir, 1, 1, NOW_MS);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = vxcert(&[
        "store",
        "list",
        "--dir",
        dir.to_str().unwrap(),
        "--json",
        "--now",
        NOW,
    ]);
    assert_eq!(out.status.code(), Some(6));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "unavailable.recovery_io");
    assert_eq!(v["error"]["data"], serde_json::json!({}));
    assert!(
        !stdout(&out).contains(dir.to_str().unwrap()),
        "no path in the error"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("--dir {}: ", dir.display())) && err.contains("mode 0700"),
        "stderr names the directory and what it must be: {err}"
    );
    assert_eq!(
        std::fs::metadata(&dir).unwrap().mode() & 0o777,
        0o755,
        "never repaired"
    );

    // A symlink to a private directory, a missing directory, and a file.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    let file = put(tmp.path(), "file", b"");
    for path in [link, tmp.path().join("missing"), file] {
        let out = vxcert(&["store", "list", "--dir", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(6), "{}", path.display());
        assert!(String::from_utf8_lossy(&out.stderr).contains("unavailable.recovery_io"));
    }

    // Another owner.
    std::os::unix::fs::lchown(&dir, Some(65534), None).unwrap();
    assert_eq!(
        vxcert(&["store", "list", "--dir", dir.to_str().unwrap()])
            .status
            .code(),
        Some(6)
    );
}

#[test]
fn text_output_and_usage_errors() {
    let (_tmp, dir) = store_dir();
    let id = put_checkpoint(&dir, 1, 1, NOW_MS);
    put(&dir, &format!("{}.json", self::id(2)), b"{}");
    let out = vxcert(&[
        "store",
        "list",
        "--dir",
        dir.to_str().unwrap(),
        "--now",
        NOW,
    ]);
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    assert_eq!(lines[0], format!("{id}\tvalid\t1"));
    assert!(
        lines[1].starts_with(&format!("{}\tcorrupt\t-\t", self::id(2))),
        "{}",
        lines[1]
    );

    let bad_now = vxcert(&[
        "store",
        "list",
        "--dir",
        dir.to_str().unwrap(),
        "--now",
        "yesterday",
    ]);
    assert_eq!(bad_now.status.code(), Some(2));
    assert_eq!(
        vxcert(&["store", "list"]).status.code(),
        Some(2),
        "--dir is required"
    );
    // An empty store is an empty list.
    let (_t2, empty) = store_dir();
    let out = vxcert(&["store", "list", "--dir", empty.to_str().unwrap(), "--json"]);
    assert_eq!(stdout(&out), "{\"checkpoints\":[]}\n");
}
