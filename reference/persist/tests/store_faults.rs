//! FsStore puts under `libvxfault.so` (issue 17's fault plans), through
//! `vxpersist store put`: a failed write or fsync is a failed put with nothing
//! published; a crash at the rename leaves no blob under the ref, only a temporary
//! that DeleteRun sweeps.

use std::path::Path;
use std::process::{Command, Output};

use vxfault::Injector;

const REF: &str = "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T";
const RUN: &str = "run-1";

fn store_cmd(root: &Path, op: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_vxpersist"));
    cmd.args(["store", op, "--store"])
        .arg(format!("fs:{}", root.display()))
        .args(["--run", RUN]);
    if op != "delete-run" {
        cmd.args(["--ref", REF]);
    }
    cmd
}

fn put_under(plan: &str, root: &Path, blob: &Path) -> Output {
    let mut cmd = store_cmd(root, "put");
    cmd.arg(blob);
    let (outcome, out) = Injector::new(plan).unwrap().output(&mut cmd).unwrap();
    outcome
        .injectable()
        .unwrap_or_else(|why| panic!("{plan}: {why}"));
    assert!(outcome.rules[0].fired >= 1, "{plan}: the point was not hit");
    out
}

fn get(root: &Path) -> Output {
    store_cmd(root, "get").output().unwrap()
}

/// Every name under the run's node directory.
fn node_entries(root: &Path) -> Vec<String> {
    match std::fs::read_dir(root.join("runs").join(RUN).join("writer")) {
        Ok(dir) => dir
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("persist");
    let blob = tmp.path().join("blob.bin");
    std::fs::write(&blob, vec![7u8; 256 * 1024]).unwrap();
    (tmp, root, blob)
}

#[test]
fn a_put_whose_write_or_fsync_fails_fails_and_publishes_nothing() {
    for plan in [
        "write@*/persist/runs/*=ENOSPC",
        "fsync@*/persist/runs/*=EIO",
    ] {
        let (_tmp, root, blob) = setup();
        let out = put_under(plan, &root, &blob);
        assert_eq!(
            out.status.code(),
            Some(6),
            "{plan}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stderr).contains("unavailable.persist_io"));
        let got = get(&root);
        assert_eq!(got.status.code(), Some(3), "{plan}: a blob was published");
        assert!(String::from_utf8_lossy(&got.stderr).contains("not_found.blob"));
        let left = node_entries(&root);
        // The fsync plan also fails the directory fsync after a rename on some
        // paths; whatever happened, no temporary is left and no blob is readable.
        assert!(
            left.iter().all(|n| !n.starts_with(".tmp-")),
            "{plan}: temporary left: {left:?}"
        );
        // The store still works afterwards.
        let again = store_cmd(&root, "put").arg(&blob).output().unwrap();
        assert!(again.status.success(), "{plan}");
    }
}

#[test]
fn a_put_crashed_at_its_rename_leaves_no_blob_and_delete_run_sweeps_the_temporary() {
    let (_tmp, root, blob) = setup();
    let plan = "rename@*/persist/runs/*=crash";
    let out = put_under(plan, &root, &blob);
    assert!(!out.status.success(), "{plan}: the put survived its crash");
    let got = get(&root);
    assert_eq!(
        got.status.code(),
        Some(3),
        "{plan}: a blob is under the ref"
    );
    let left = node_entries(&root);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with(".tmp-"), "{left:?}");
    let swept = store_cmd(&root, "delete-run").output().unwrap();
    assert!(swept.status.success());
    assert!(!root.join("runs").join(RUN).exists());
}
