//! One binary to hand out: `vxcert` and the reference's programs copied out of the
//! checkout certify with the checkout hidden (a tmpfs mounted over it in a private
//! mount namespace, as root; CI runs as root) and `HOME` elsewhere. The kit's suites,
//! corpus and reference profile come from the copy packed into vxcert, materialized in
//! the cache directory; so does the fault injector's preload library, which is not
//! copied: the packer's fault rows run on the copy inside vxcert (issue 48).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the reference's profile names through `{bin_dir}`, and vxcert's stand-in.
/// `libvxfault.so` is left behind on purpose.
const PROGRAMS: [&str; 5] = ["vxcert", "vxstub", "vxref", "vxbroker", "vxpersist"];

fn copy_out(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for p in PROGRAMS {
        std::fs::copy(common::bin_dir().join(p), to.join(p))
            .unwrap_or_else(|e| panic!("copying {p}: {e}"));
    }
}

/// `vxcert run` of `contract`'s rows tagged `tags`, on the copied programs.
fn run_args(contract: &str, tags: &str, bin: &Path, report: &Path) -> Vec<String> {
    ["run", "--quiet", "--contract", contract, "--tags", tags]
        .iter()
        .map(|s| s.to_string())
        .chain([
            "--bin-dir".into(),
            bin.display().to_string(),
            "--report".into(),
            report.display().to_string(),
        ])
        .collect()
}

/// The report's verdict (a pass with `at_least` passing scenarios), and that its
/// profile came from the cache.
fn judge(out: &std::process::Output, report: &Path, cache: &Path, at_least: usize) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap())
            .unwrap();
    assert_eq!(json["run"]["result"], "pass");
    let passed = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["verdict"] == "pass")
        .count();
    assert!(passed >= at_least, "{passed} scenario(s) passed: {json}");
    let profile = json["run"]["profile_path"].as_str().unwrap();
    assert!(
        profile.starts_with(&cache.join("vxcert").display().to_string()),
        "the default profile {profile} is not the cache's ({})",
        cache.display()
    );
    let materialized: Vec<PathBuf> = std::fs::read_dir(cache.join("vxcert"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(materialized.len(), 1, "{materialized:?}");
    assert!(materialized[0]
        .join("features/agent-restore/clauses.toml")
        .is_file());
}

/// Runs the copied vxcert with `args`, the checkout hidden under a tmpfs when root
/// (the shell proves it is gone before vxcert starts), else as it is.
fn run_hidden(checkout: &Path, tmp: &Path, vxcert: &Path, args: &[String]) -> std::process::Output {
    let cache = tmp.join("cache");
    let home = tmp.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = if nix::unistd::geteuid().is_root() {
        let mut c = Command::new("unshare");
        c.args(["--mount", "--propagation", "private", "sh", "-c"])
            .arg(
                "mount -t tmpfs vxcert-hidden \"$1\" || exit 97; \
                 test -e \"$1/features\" && exit 98; shift; exec \"$@\"",
            )
            .arg("sh")
            .arg(checkout)
            .arg(vxcert);
        c
    } else {
        Command::new(vxcert)
    };
    let out = cmd
        .args(args)
        .env("XDG_CACHE_HOME", &cache)
        .env("HOME", &home)
        .env_remove("VXCERT_ASSETS")
        .env_remove("VXFAULT_LIB")
        .current_dir(tmp)
        .output()
        .expect("unshare (util-linux) is installed");
    assert_ne!(out.status.code(), Some(98), "the checkout is still visible");
    assert_ne!(
        out.status.code(),
        Some(97),
        "cannot mount a tmpfs over {}: {}",
        checkout.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn a_copied_vxcert_certifies_with_the_checkout_hidden() {
    common::ensure_reference(&[]);
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .unwrap();
    let tmp = tempfile::Builder::new()
        .prefix("onebin")
        .tempdir_in("/tmp")
        .unwrap();
    assert!(!tmp.path().starts_with(&checkout));
    let (bin, cache) = (tmp.path().join("bin"), tmp.path().join("cache"));
    copy_out(&bin);
    if !nix::unistd::geteuid().is_root() {
        eprintln!(
            "not root: the checkout cannot be hidden in a mount namespace here; checking only \
             that the copied vxcert reads the kit's files from its cache"
        );
    }
    let checkers = tmp.path().join("report-checkers");
    let args = run_args("agent-restore", "@part-checker", &bin, &checkers);
    let out = run_hidden(&checkout, tmp.path(), &bin.join("vxcert"), &args);
    judge(&out, &checkers, &cache, 1);

    // The packer's crash and failing-call rows: every one injects faults (a plan that
    // never fired is inconclusive), through the library vxcert carries.
    let faults = tmp.path().join("report-faults");
    let args = run_args(
        "session-persist",
        "@part-packer and @sp-temp-rename",
        &bin,
        &faults,
    );
    let out = run_hidden(&checkout, tmp.path(), &bin.join("vxcert"), &args);
    judge(&out, &faults, &cache, 3);
    let unpacked: Vec<String> = std::fs::read_dir(cache.join("vxcert"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("libvxfault-") && n.ends_with(".so"))
        .collect();
    assert_eq!(
        unpacked.len(),
        1,
        "the preload library in the cache: {unpacked:?}"
    );
    assert!(!bin.join("libvxfault.so").exists());
    // The checkout is back outside the namespace.
    assert!(checkout.join("features").is_dir());
}
