//! The harness's fault rows under `fault_backend = "seccomp"` (issue 33): the reference
//! profile with the backend forced, so the daemon, the save and the packer are started
//! under the seccomp filter with vxcert as supervisor instead of `LD_PRELOAD`. The rows
//! must reach the same verdicts; `vxcert crash-explore` records the daemon through the
//! supervisor (its log says so) and still finds a wrong publisher made by `--plan`; a
//! broker's crash row that times out names the plan's counts, as under the preload.

mod common;

use std::process::Command;

/// The reference profile with `fault_backend = "seccomp"`, written into `dir`.
fn seccomp_profile(dir: &std::path::Path) -> std::path::PathBuf {
    let reference =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/reference.toml");
    let text = std::fs::read_to_string(&reference).expect("the reference profile");
    assert!(
        !text.contains("fault_backend"),
        "the reference names no backend"
    );
    // A top-level key: before the first table.
    let at = text.find("\n[").expect("a table in the reference profile");
    let text = format!(
        "{}\nfault_backend = \"seccomp\"{}",
        &text[..at],
        &text[at..]
    );
    let p = dir.join("seccomp.toml");
    std::fs::write(&p, text).expect("write the profile");
    p
}

fn crash_explore(profile: &std::path::Path, extra: &[&str]) -> (i32, String, String) {
    let o = Command::new(common::vxcert())
        .arg("crash-explore")
        .arg("--profile")
        .arg(profile)
        .arg("--bin-dir")
        .arg(common::bin_dir())
        .args(extra)
        .output()
        .expect("run vxcert crash-explore");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn crash_explore_records_the_daemon_through_the_seccomp_supervisor() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let profile = seccomp_profile(dir.path());
    let keep = dir.path().join("rec");
    let (code, out, err) = crash_explore(&profile, &["--keep", keep.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(" 0 failing"), "{out}");
    let log = std::fs::read_to_string(keep.join("log.jsonl")).unwrap();
    assert!(log.contains(r#""backend":"seccomp""#), "{log}");
    assert!(
        log.lines()
            .any(|l| l.contains(r#""op":"rename""#) && l.contains("/venomx/recovery/")),
        "the checkpoint's rename is in the supervisor's log: {log}"
    );
    // The directory fsync made to lie (the supervisor answers it without the call):
    // an acknowledged generation can be lost.
    let (code, out, err) = crash_explore(&profile, &["--plan", "fsync@*/recovery/*=lie"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("was acknowledged but"), "{out}");
}

/// Runs `contract`'s rows tagged `tags` on the reference with the backend forced to
/// seccomp; requires them all to pass and returns every scenario's name.
fn all_pass_under_seccomp(contract: &str, tags: &str) -> std::collections::BTreeSet<String> {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(seccomp_profile(dir.path())).unwrap();
    let (code, report) = common::run_profile(&text, &["--contract", contract, "--tags", tags]);
    let failing = common::scenario_names(&report, true);
    assert_eq!(code, 0, "failing under seccomp: {failing:?}");
    common::scenario_names(&report, false)
}

#[test]
fn the_packers_crash_and_fault_sweeps_pass_under_seccomp() {
    let all = all_pass_under_seccomp("session-persist", "@part-packer");
    assert!(
        all.iter().any(|n| n.contains("crash")),
        "the crash sweep ran: {all:?}"
    );
}

/// The single-writer fault rows start the broker under the profile's backend: forced
/// to seccomp, each plan still reaches it (a lock that fails, a crash after the lock,
/// a crash in the alias sidecar's replacement) and the rows pass.
#[test]
fn the_broker_fault_rows_pass_under_seccomp() {
    let all = all_pass_under_seccomp("single-writer", "@fault-plans");
    assert_eq!(all.len(), 12, "every fault row ran: {all:?}");
}

/// Under seccomp too, a crash row whose plan never fires times out with a note that
/// says how often the plan matched: the supervisor counts into the file the note reads
/// while the broker still runs.
#[test]
fn a_broker_crash_that_never_fires_under_seccomp_is_named_with_its_counts() {
    common::ensure_reference(&[]);
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(seccomp_profile(dir.path())).unwrap();
    common::sidecar_crash_that_never_fires_names_its_counts(|args| {
        let args = [&["--contract", "single-writer"], args].concat();
        common::run_profile(&text, &args)
    });
}
