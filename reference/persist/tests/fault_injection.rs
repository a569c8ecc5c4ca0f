//! `vxpersist unpack` under `libvxfault.so`: every rename and fsync under the root is
//! crashed at (SIGKILL) and failed (EIO) in turn. Afterwards the root holds no
//! session or the whole session, and an unpack that reported failure left none.

use std::path::Path;
use std::process::Command;

use vx_persist::{Layouts, SessionPacker};
use vxfault::{escape_glob, points, Injector, PointFilter};

const KEY: &str = "projects/-home-u-p/s1.jsonl";

fn source_blob(dir: &Path) -> Vec<u8> {
    let src = dir.join("src");
    for (rel, body) in [
        (KEY, &b"turn 1\n"[..]),
        ("projects/-home-u-p/s1/a.json", b"{}"),
        ("projects/-home-u-p/s1/b/c.txt", b"c"),
    ] {
        std::fs::create_dir_all(src.join(rel).parent().unwrap()).unwrap();
        std::fs::write(src.join(rel), body).unwrap();
    }
    SessionPacker::new(Layouts::builtin(), "claude_code", &src)
        .unwrap()
        .pack("s1")
        .unwrap()
}

fn unpack(root: &Path, blob: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vxpersist"));
    cmd.args(["unpack", "--backend", "claude_code", "--root"])
        .arg(root)
        .args(["--session-id", "s1"])
        .arg(blob);
    cmd
}

#[test]
fn unpack_crashed_or_failed_at_every_rename_and_fsync_leaves_no_session_or_all_of_it() {
    let tmp = tempfile::tempdir().unwrap();
    let blob = source_blob(tmp.path());
    let blob_file = tmp.path().join("s1.tar");
    std::fs::write(&blob_file, &blob).unwrap();
    let root = tmp.path().join("root");
    let root_glob = format!("{}/*", escape_glob(root.as_os_str().as_encoded_bytes()));
    let filter = PointFilter {
        glob: Some(root_glob.clone()),
        ..Default::default()
    };
    let found = points(&mut unpack(&root, &blob_file), &filter)
        .expect("the unpack's calls reach the injector");
    let count = |op: &str| found.points.iter().filter(|p| p.op == op).count();
    assert!(
        count("rename") >= 3 && count("fsync") >= 3,
        "renames {} fsyncs {}",
        count("rename"),
        count("fsync")
    );
    let packer = SessionPacker::new(Layouts::builtin(), "claude_code", &root).unwrap();
    assert!(packer.has_session("s1"));

    eprintln!(
        "injection points: {} renames, {} fsyncs under the root",
        count("rename"),
        count("fsync")
    );
    let mut without_session = 0;
    for op in ["rename", "fsync"] {
        for k in 1..=count(op) {
            for action in ["crash", "EIO"] {
                let _ = std::fs::remove_dir_all(&root);
                let plan = format!("{op}@{root_glob}##{k}={action}");
                let (outcome, out) = Injector::new(&plan)
                    .unwrap()
                    .output(&mut unpack(&root, &blob_file))
                    .unwrap();
                outcome
                    .injectable()
                    .unwrap_or_else(|why| panic!("{plan}: {why}"));
                assert_eq!(outcome.rules[0].fired, 1, "{plan}: the point was not hit");
                if action == "EIO" {
                    assert_eq!(
                        out.status.code(),
                        Some(6),
                        "{plan}: a failed {op} is reported"
                    );
                }
                if packer.has_session("s1") {
                    assert_eq!(
                        action, "crash",
                        "{plan}: failure reported but a session is present"
                    );
                    assert_eq!(
                        packer.pack("s1").unwrap(),
                        blob,
                        "{plan}: a partial session"
                    );
                } else {
                    without_session += 1;
                }
                // The next unpack always completes and sweeps what was left.
                let again = unpack(&root, &blob_file).output().unwrap();
                assert!(
                    again.status.success(),
                    "{plan}: {}",
                    String::from_utf8_lossy(&again.stderr)
                );
                assert_eq!(packer.pack("s1").unwrap(), blob, "{plan}");
                let names: Vec<_> = std::fs::read_dir(&root)
                    .unwrap()
                    .map(|e| e.unwrap().file_name())
                    .collect();
                assert_eq!(names, ["projects"], "{plan}: leftovers");
            }
        }
    }
    assert!(
        without_session > count("rename"),
        "the faults hit before the key file's rename too"
    );
}
