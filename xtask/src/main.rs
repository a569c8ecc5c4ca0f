//! `cargo xtask` (and its alias `cargo certify`): tasks that need more than one cargo
//! command.
//!
//! `certify [VXCERT-RUN-ARGS…]` builds the kit's own programs (the reference daemon
//! `vxref`, the broker `vxbroker`, the session packer `vxpersist`, the fault injector `libvxfault.so`, the harness
//! `vxcert` and its stand-in `vxstub`) with the same profile as this task, then runs `vxcert run` with the
//! arguments given, so a fresh clone certifies the reference in one command.
//!
//! `mutants [--contract NAME] [--list] [--only ID,…] [--out FILE]` runs a contract's
//! mutant battery (`harness/mutants/`, docs/detection.md): its suite's detection
//! power; `mutants --ci` runs every contract's fast CI subset.

mod mutants;

use std::path::PathBuf;
use std::process::{exit, Command};

/// The packages whose programs `vxcert run` expects next to itself.
const KIT_PACKAGES: [&str; 5] = [
    "vxref",
    "vxcert",
    "vxfault-preload",
    "vx-broker",
    "vx-persist",
];

fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("certify") => exit(certify(args.collect())),
        Some("mutants") => exit(mutants::main(args.collect())),
        _ => {
            eprintln!("usage: cargo xtask certify [vxcert run arguments…]");
            eprintln!(
                "       cargo xtask mutants [--contract NAME] [--list] [--only ID,…] [--out FILE]"
            );
            eprintln!("       cargo xtask mutants --ci");
            exit(2);
        }
    }
}

fn certify(run_args: Vec<String>) -> i32 {
    let bin_dir = match std::env::current_exe() {
        Ok(exe) => exe
            .parent()
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(".")),
        Err(e) => {
            eprintln!("xtask: cannot find its own location: {e}");
            return 2;
        }
    };
    // This task runs from target/<profile>/; build into the same place.
    let release = bin_dir.file_name().is_some_and(|n| n == "release");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build.arg("build").arg("--quiet");
    for p in KIT_PACKAGES {
        build.args(["--package", p]);
    }
    if release {
        build.arg("--release");
    }
    match build.status() {
        Ok(s) if s.success() => {}
        Ok(s) => {
            eprintln!("xtask: building the kit failed ({s})");
            return 2;
        }
        Err(e) => {
            eprintln!("xtask: cannot run cargo: {e}");
            return 2;
        }
    }
    let vxcert = bin_dir.join("vxcert");
    match Command::new(&vxcert).arg("run").args(&run_args).status() {
        Ok(s) => s.code().unwrap_or(1),
        Err(e) => {
            eprintln!("xtask: cannot run {}: {e}", vxcert.display());
            2
        }
    }
}
