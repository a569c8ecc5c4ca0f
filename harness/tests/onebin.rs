//! One binary to hand out: `vxcert` and the reference's programs copied out of the
//! checkout certify with the checkout hidden (a tmpfs mounted over it in a private
//! mount namespace, as root; CI runs as root). The kit's suites, corpus and
//! reference profile come from the copy packed into vxcert, materialized in the
//! cache directory.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the reference's profile names through `{bin_dir}`, and vxcert's stand-in.
const PROGRAMS: [&str; 6] = [
    "vxcert",
    "vxstub",
    "vxref",
    "vxbroker",
    "vxpersist",
    "libvxfault.so",
];

fn copy_out(to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for p in PROGRAMS {
        std::fs::copy(common::bin_dir().join(p), to.join(p))
            .unwrap_or_else(|e| panic!("copying {p}: {e}"));
    }
}

fn run_args(bin: &Path, report: &Path) -> Vec<String> {
    [
        "run",
        "--quiet",
        "--contract",
        "agent-restore",
        "--tags",
        "@part-checker",
        "--bin-dir",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        bin.display().to_string(),
        "--report".into(),
        report.display().to_string(),
    ])
    .collect()
}

/// The report's verdict, and that its profile came from the cache.
fn judge(out: &std::process::Output, report: &Path, cache: &Path) {
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
    assert!(passed > 0, "no scenario passed: {json}");
    let profile = json["run"]["profile_path"].as_str().unwrap();
    assert!(
        profile.starts_with(&cache.join("vxcert").display().to_string()),
        "the default profile {profile} is not the cache's ({})",
        cache.display()
    );
    let materialized: Vec<PathBuf> = std::fs::read_dir(cache.join("vxcert"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(materialized.len(), 1, "{materialized:?}");
    assert!(materialized[0]
        .join("features/agent-restore/clauses.toml")
        .is_file());
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
    let (bin, report, cache) = (
        tmp.path().join("bin"),
        tmp.path().join("report"),
        tmp.path().join("cache"),
    );
    copy_out(&bin);
    let args = run_args(&bin, &report);
    if !nix::unistd::geteuid().is_root() {
        eprintln!(
            "not root: the checkout cannot be hidden in a mount namespace here; checking only \
             that the copied vxcert reads the kit's files from its cache"
        );
        let out = Command::new(bin.join("vxcert"))
            .args(&args)
            .env("XDG_CACHE_HOME", &cache)
            .env_remove("VXCERT_ASSETS")
            .current_dir(tmp.path())
            .output()
            .unwrap();
        judge(&out, &report, &cache);
        return;
    }
    // A tmpfs over the checkout, in a mount namespace of this command alone; the
    // shell proves the checkout is gone before vxcert starts.
    let out = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg(
            "mount -t tmpfs vxcert-hidden \"$1\" || exit 97; \
             test -e \"$1/features\" && exit 98; shift; exec \"$@\"",
        )
        .arg("sh")
        .arg(&checkout)
        .arg(bin.join("vxcert"))
        .args(&args)
        .env("XDG_CACHE_HOME", &cache)
        .env_remove("VXCERT_ASSETS")
        .current_dir(tmp.path())
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
    judge(&out, &report, &cache);
    // The checkout is back outside the namespace.
    assert!(checkout.join("features").is_dir());
}
