//! Atomic publish of the alias sidecar: it reads back equal, and a crash at the
//! rename or an fsync failure leaves the previous sidecar intact.

use std::path::{Path, PathBuf};
use std::process::Command;

use vx_broker::alias::{self, AliasMap};
use vx_broker::key::SessionKey;
use vx_broker::Rule;
use vxfault::Injector;

const U: &str = "6a73c0de-1234-4abc-8def-0123456789ab";
const U2: &str = "0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3";
const CHILD_ENV: &str = "VX_BROKER_PUBLISH_CHILD_DIR";

fn map(entries: &[(&str, &str)]) -> AliasMap {
    let mut m = AliasMap::new();
    for (p, r) in entries {
        let p = SessionKey::from_physical(&format!("opencode@new-{p}")).unwrap();
        let r = SessionKey::from_physical(&format!("opencode@{r}")).unwrap();
        m.insert(p, r).unwrap();
    }
    m
}

fn old() -> AliasMap {
    map(&[(U, "ses_old")])
}

fn new() -> AliasMap {
    map(&[(U, "ses_old"), (U2, "ses_new")])
}

#[test]
fn publish_then_load_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    assert!(alias::load(dir.path()).unwrap().is_empty());
    alias::publish(dir.path(), &old()).unwrap();
    assert_eq!(alias::load(dir.path()).unwrap(), old());
    alias::publish(dir.path(), &new()).unwrap();
    assert_eq!(alias::load(dir.path()).unwrap(), new());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["aliases.json"], "no temporary left behind");
}

#[test]
fn a_dangling_symlink_is_not_an_empty_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/nonexistent", dir.path().join("aliases.json")).unwrap();
    assert_eq!(
        alias::load(dir.path()).unwrap_err().rule,
        Rule::FileNotRegular
    );
}

/// The workload: publish the new map over the old one.
#[test]
fn publish_child_under_injection() {
    let Some(dir) = std::env::var_os(CHILD_ENV).map(PathBuf::from) else {
        return;
    };
    let line = match alias::publish(&dir, &new()) {
        Ok(()) => "ok".to_string(),
        Err(e) => e.rule.id().to_string(),
    };
    std::fs::write(dir.join("outcome"), line).unwrap();
}

fn under(plan: &str, dir: &Path) -> vxfault::Outcome {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "publish_child_under_injection",
        "--exact",
        "--test-threads=1",
        "--quiet",
    ]);
    cmd.env(CHILD_ENV, dir).stdout(std::process::Stdio::null());
    let outcome = Injector::new(plan).unwrap().run(&mut cmd).unwrap();
    outcome.injectable().unwrap();
    outcome
}

#[test]
fn a_crash_at_the_rename_keeps_the_old_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    alias::publish(dir.path(), &old()).unwrap();
    let outcome = under("rename@*/aliases.json*=crash", dir.path());
    assert_eq!(
        outcome.exit_code(),
        128 + 9,
        "the child was killed at the rename"
    );
    assert!(!dir.path().join("outcome").exists());
    assert_eq!(alias::load(dir.path()).unwrap(), old());
    alias::publish(dir.path(), &new()).unwrap();
    assert_eq!(alias::load(dir.path()).unwrap(), new());
}

#[test]
fn an_fsync_failure_is_reported_and_keeps_the_old_sidecar() {
    let dir = tempfile::tempdir().unwrap();
    alias::publish(dir.path(), &old()).unwrap();
    under("fsync@*/.aliases.json.tmp-*=EIO", dir.path());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("outcome")).unwrap(),
        "file.publish"
    );
    assert_eq!(alias::load(dir.path()).unwrap(), old());
    let temps = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains(".tmp-")
        })
        .count();
    assert_eq!(temps, 0, "the failed temporary is removed");
}
