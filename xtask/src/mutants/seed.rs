//! Seeding the scratch tree's target directory with the repository's registry builds.
//!
//! The scratch tree builds into a target directory of its own: a workspace crate of
//! the scratch tree and the same crate of the repository have the same artifact hash
//! (cargo hashes a path package's path relative to its workspace), so in one target
//! directory each would take the other's fingerprint as its own. Registry crates have
//! no such twin: their units are named by a hash of name, version, source, features,
//! profile and compiler, and their fingerprints point into cargo's registry, which
//! both trees share. So every unit of `target/debug` that is not a workspace member's
//! is valid as is in the scratch target, and copying it there saves building vxref's
//! whole dependency tree a second time. A unit already in the scratch target is left
//! alone; one that does not fit (other features) is simply never used.
//!
//! Artifacts (`.rlib`, `.rmeta`, `.so`, `.a`) are hard links (rustc replaces such an
//! output by renaming a new file over it, so neither side can change the other's);
//! everything else (fingerprints, dep-info, build-script output) is copied with its
//! mtime, because cargo and rustc rewrite those in place.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// The names of the workspace's packages, whose units must never be shared.
pub fn workspace_packages(root: &Path) -> Result<BTreeSet<String>, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed ({})", out.status));
    }
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    Ok(json["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["name"].as_str().map(String::from))
        .collect())
}

/// The 16-hex-digit unit hash that ends `name` (before any extension): `serde-0123…`,
/// `libserde-0123….rlib`.
fn unit_hash(name: &str) -> Option<&str> {
    let stem = match name.find('.') {
        Some(dot) => &name[..dot],
        None => name,
    };
    let (_, hash) = stem.rsplit_once('-')?;
    (hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(hash)
}

/// Copies the units of `from` (a profile directory such as `target/debug`) that belong
/// to no package of `members` into `to`. Returns how many entries were added.
pub fn seed(from: &Path, to: &Path, members: &BTreeSet<String>) -> Result<usize, String> {
    let fingerprints = from.join(".fingerprint");
    let Ok(entries) = std::fs::read_dir(&fingerprints) else {
        return Ok(0); // nothing built yet: nothing to share
    };
    // A unit's fingerprint directory is `<package>-<hash>`; its hash names its files.
    let mut member_hashes = BTreeSet::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let (Some(hash), Some((package, _))) = (unit_hash(&name), name.rsplit_once('-')) {
            if members.contains(package) {
                member_hashes.insert(hash.to_string());
            }
        }
    }
    let shared = |name: &str| unit_hash(name).is_some_and(|h| !member_hashes.contains(h));
    let mut added = 0;
    for dir in [".fingerprint", "build", "deps"] {
        let src = from.join(dir);
        let dst = to.join(dir);
        let Ok(entries) = std::fs::read_dir(&src) else {
            continue;
        };
        std::fs::create_dir_all(&dst).map_err(|e| format!("{}: {e}", dst.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let target = dst.join(&name);
            if !shared(&name) || target.symlink_metadata().is_ok() {
                continue;
            }
            copy_tree(&entry.path(), &target)?;
            added += 1;
        }
    }
    Ok(added)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let meta = from
        .symlink_metadata()
        .map_err(|e| format!("{}: {e}", from.display()))?;
    if meta.is_dir() {
        std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
        let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
        for entry in entries.flatten() {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        return Ok(());
    }
    if meta.file_type().is_symlink() {
        return Ok(()); // cargo makes none in these directories
    }
    let artifact = from
        .extension()
        .is_some_and(|e| e == "rlib" || e == "rmeta" || e == "so" || e == "a");
    if artifact && std::fs::hard_link(from, to).is_ok() {
        return Ok(());
    }
    std::fs::copy(from, to)
        .map_err(|e| format!("copy {} to {}: {e}", from.display(), to.display()))?;
    // Cargo compares the mtimes of a unit's outputs with its dependencies': a copy
    // keeps its original's, or every unit beside a copied one would look stale.
    let modified = meta
        .modified()
        .map_err(|e| format!("{}: {e}", from.display()))?;
    std::fs::File::options()
        .write(true)
        .open(to)
        .and_then(|f| f.set_modified(modified))
        .map_err(|e| format!("{}: {e}", to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn unit_hashes_are_read_from_every_kind_of_name() {
        assert_eq!(
            unit_hash("libserde-0123456789abcdef.rlib"),
            Some("0123456789abcdef")
        );
        assert_eq!(
            unit_hash("vx-format-0123456789abcdef"),
            Some("0123456789abcdef")
        );
        assert_eq!(unit_hash("vxref"), None);
        assert_eq!(unit_hash("libfoo-123.rlib"), None);
    }

    #[test]
    fn registry_units_are_seeded_and_workspace_units_are_not() {
        let tmp = tempfile::tempdir().unwrap();
        let (from, to) = (tmp.path().join("from"), tmp.path().join("to"));
        let reg = "1111111111111111";
        let ws = "2222222222222222";
        touch(
            &from.join(format!(".fingerprint/serde-{reg}/lib-serde")),
            "fp",
        );
        touch(
            &from.join(format!(".fingerprint/vx-format-{ws}/lib-vx_format")),
            "fp",
        );
        touch(&from.join(format!("deps/libserde-{reg}.rlib")), "rlib");
        touch(&from.join(format!("deps/serde-{reg}.d")), "d");
        touch(&from.join(format!("deps/libvx_format-{ws}.rlib")), "rlib");
        touch(&from.join(format!("build/serde-{reg}/out/x.rs")), "out");
        touch(&from.join("vxref"), "uplifted binary");
        let members: BTreeSet<String> = ["vx-format".to_string()].into();
        assert_eq!(seed(&from, &to, &members).unwrap(), 4);
        assert!(to.join(format!("deps/libserde-{reg}.rlib")).exists());
        assert!(to.join(format!("deps/serde-{reg}.d")).exists());
        assert!(to.join(format!("build/serde-{reg}/out/x.rs")).exists());
        assert!(to
            .join(format!(".fingerprint/serde-{reg}/lib-serde"))
            .exists());
        assert!(!to.join(format!("deps/libvx_format-{ws}.rlib")).exists());
        assert!(!to.join(format!(".fingerprint/vx-format-{ws}")).exists());
        assert!(!to.join("vxref").exists());
        // A second seeding adds nothing and keeps what the scratch build changed.
        std::fs::write(to.join(format!("deps/serde-{reg}.d")), "rewritten").unwrap();
        assert_eq!(seed(&from, &to, &members).unwrap(), 0);
        assert_eq!(
            std::fs::read_to_string(from.join(format!("deps/serde-{reg}.d"))).unwrap(),
            "d"
        );
    }
}
