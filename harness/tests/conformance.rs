//! `cargo test` runs the whole acceptance suite against the reference daemon through
//! `vxcert run` (harness = false: one process, cucumber's own parallelism). Expected
//! failures are declared, with reasons, in profiles/reference.toml; one that passes
//! fails this test, so the list cannot go stale.

mod common;

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let vxcert = PathBuf::from(env!("CARGO_BIN_EXE_vxcert"));
    let bin_dir = vxcert.parent().expect("bin dir").to_path_buf();
    common::ensure_reference(&[]);
    let report = tempfile::tempdir().expect("tempdir");
    let status = Command::new(&vxcert)
        .arg("run")
        .arg("--report")
        .arg(report.path())
        .status()
        .expect("run vxcert");
    let json = std::fs::read_to_string(report.path().join("report.json")).unwrap_or_default();
    let keep = bin_dir.parent().expect("target dir").join("vxcert-report");
    if std::fs::create_dir_all(&keep).is_ok() {
        for f in [
            "report.json",
            "report.xml",
            "report.md",
            "cucumber-recovery.log",
            "cucumber-recovery.json",
        ] {
            let _ = std::fs::copy(report.path().join(f), keep.join(f));
        }
    }
    assert!(!json.is_empty(), "vxcert run wrote no report.json");
    if !status.success() {
        eprintln!("reports kept in {}", keep.display());
        std::process::exit(1);
    }
}
