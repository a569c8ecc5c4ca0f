//! Compiles `plan/src/lib.rs` (an rlib) and `preload/src/lib.rs` into `$OUT_DIR/libvxfault.so` with `panic=abort` and
//! full optimisation, whatever the profile, so that the runner (and any crate that
//! depends on this one) always has the preload library next to it without relying on
//! workspace build order. Also builds a statically linked helper for the
//! "not injectable" tests.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = env::var("TARGET").unwrap_or_default();
    let host = env::var("HOST").unwrap_or_default();
    println!("cargo:rerun-if-changed=preload/src");
    println!("cargo:rerun-if-changed=plan/src");
    println!("cargo:rerun-if-changed=testdata/static_probe.rs");

    // The preload's one dependency, built the same way (an rlib it links statically).
    let plan_rlib = out.join("libvxfault_plan.rlib");
    let mut cmd = optimised_rustc(&rustc, &target, &host, "rlib", "vxfault_plan");
    cmd.arg("-o")
        .arg(&plan_rlib)
        .arg(manifest.join("plan/src/lib.rs"));
    run_rustc(cmd, "vxfault-plan");

    let so = out.join("libvxfault.so");
    let mut cmd = optimised_rustc(&rustc, &target, &host, "cdylib", "vxfault");
    let mut extern_arg = std::ffi::OsString::from("vxfault_plan=");
    extern_arg.push(&plan_rlib);
    cmd.arg("--extern")
        .arg(extern_arg)
        .arg("-L")
        .arg(&out)
        .arg("-o")
        .arg(&so)
        .arg(manifest.join("preload/src/lib.rs"));
    run_rustc(cmd, "libvxfault.so");
    println!("cargo:rustc-env=VXFAULT_PRELOAD_BUILT={}", so.display());

    // The static helper: optional (needs glibc's static libraries); tests that use it
    // fail with the recorded reason when it could not be built.
    let stat = out.join("vxfault-static-probe");
    let mut cmd = Command::new(&rustc);
    cmd.args([
        "--edition=2021",
        "-C",
        "target-feature=+crt-static",
        "-C",
        "opt-level=1",
    ]);
    if !target.is_empty() && target != host {
        cmd.arg("--target").arg(&target);
    }
    cmd.arg("-o")
        .arg(&stat)
        .arg(manifest.join("testdata/static_probe.rs"));
    match cmd.output() {
        Ok(r) if r.status.success() => {
            println!("cargo:rustc-env=VXFAULT_STATIC_PROBE={}", stat.display());
            println!("cargo:rustc-env=VXFAULT_STATIC_PROBE_ERROR=");
        }
        Ok(r) => {
            let why = String::from_utf8_lossy(&r.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            println!("cargo:warning=static test helper not built: {why}");
            println!("cargo:rustc-env=VXFAULT_STATIC_PROBE=");
            println!("cargo:rustc-env=VXFAULT_STATIC_PROBE_ERROR={why}");
        }
        Err(e) => {
            println!("cargo:rustc-env=VXFAULT_STATIC_PROBE=");
            println!("cargo:rustc-env=VXFAULT_STATIC_PROBE_ERROR={e}");
        }
    }
}

/// `rustc` with the preload's flags (full optimisation, `panic=abort`), whatever the
/// cargo profile.
fn optimised_rustc(
    rustc: &std::ffi::OsStr,
    target: &str,
    host: &str,
    crate_type: &str,
    name: &str,
) -> Command {
    let mut cmd = Command::new(rustc);
    cmd.arg("--edition=2021")
        .arg(format!("--crate-type={crate_type}"))
        .arg(format!("--crate-name={name}"))
        .args([
            "-C",
            "opt-level=3",
            "-C",
            "panic=abort",
            "-C",
            "codegen-units=1",
            "-C",
            "debuginfo=0",
            "--cap-lints=allow",
        ]);
    if !target.is_empty() && target != host {
        cmd.arg("--target").arg(target);
    }
    cmd
}

fn run_rustc(mut cmd: Command, what: &str) {
    let res = cmd
        .output()
        .unwrap_or_else(|e| panic!("run rustc for {what}: {e}"));
    if !res.status.success() {
        panic!(
            "building {what} failed:\n{}",
            String::from_utf8_lossy(&res.stderr)
        );
    }
}
