//! What the harness's integration tests share: where vxcert is, and building the
//! programs it runs next to itself.
#![allow(dead_code)] // each test binary uses a part

use std::path::PathBuf;
use std::process::Command;

pub fn vxcert() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_vxcert"))
}

/// The directory vxcert (and the kit's other programs) live in.
pub fn bin_dir() -> PathBuf {
    vxcert().parent().expect("bin dir").to_path_buf()
}

/// Builds the reference daemon, the injector and (with `examples`) the relay
/// examples into vxcert's target directory, unless they are there: `cargo test
/// --workspace` builds them, `cargo test -p vxcert` may not.
pub fn ensure_reference(examples: &[&str]) {
    let dir = bin_dir();
    let present = dir.join("vxref").is_file()
        && dir.join("libvxfault.so").is_file()
        && examples
            .iter()
            .all(|e| dir.join("examples").join(e).is_file());
    if present {
        return;
    }
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args([
        "build",
        "-p",
        "vxref",
        "-p",
        "vxfault-preload",
        "-p",
        "vxcert",
    ]);
    for e in examples {
        cmd.args(["--example", e]);
    }
    let status = cmd
        .arg("--target-dir")
        .arg(dir.parent().expect("target dir"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo build the reference");
    assert!(status.success(), "building the reference failed");
}
