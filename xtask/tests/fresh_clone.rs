//! `.ci/fresh-clone-certify.sh --here`, which CI runs first in its checkout: it runs
//! README's certify command only in a tree where nothing is built, changed or added,
//! so CI's certify step keeps proving the command on a clone with nothing built.

use std::path::Path;
use std::process::{Command, Output};

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A committed tree with the script and a README whose certify command fails at once
/// here (the tree has no `certify` alias): the tests look at what happens before it.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/fresh-clone-certify.sh");
    std::fs::create_dir_all(root.join(".ci")).unwrap();
    std::fs::copy(script, root.join(".ci/fresh-clone-certify.sh")).unwrap();
    std::fs::write(
        root.join("README.md"),
        "# kit\n\ncargo certify --report target/vxcert-report\n",
    )
    .unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-qm", "kit"]);
    dir
}

fn here(root: &Path, target_dir: Option<&str>) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg(root.join(".ci/fresh-clone-certify.sh"))
        .arg("--here")
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    match target_dir {
        Some(t) => cmd.env("CARGO_TARGET_DIR", t),
        None => cmd.env_remove("CARGO_TARGET_DIR"),
    };
    cmd.output().unwrap()
}

#[test]
fn a_tree_with_anything_built_is_not_a_fresh_clone() {
    let dir = tree();
    std::fs::create_dir_all(dir.path().join("target/debug")).unwrap();
    std::fs::write(dir.path().join("target/debug/vxref"), "built").unwrap();
    let out = here(dir.path(), None);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not a fresh clone") && err.contains("target/"),
        "{err}"
    );
    assert!(err.contains("without --here"), "no fix given: {err}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("cargo certify"),
        "the command ran"
    );
}

#[test]
fn a_changed_file_or_a_target_dir_elsewhere_is_refused_too() {
    let dir = tree();
    std::fs::write(dir.path().join("README.md"), "# changed\ncargo certify x\n").unwrap();
    let out = here(dir.path(), None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("README.md"));

    let dir = tree();
    let out = here(dir.path(), Some("/tmp/shared-target"));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("CARGO_TARGET_DIR is set (/tmp/shared-target)") && err.contains("unset it"),
        "{err}"
    );
}

#[test]
fn a_fresh_tree_runs_readmes_command_verbatim() {
    let dir = tree();
    let out = here(dir.path(), None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("): cargo certify --report target/vxcert-report"),
        "the guard did not let the command run: {stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
