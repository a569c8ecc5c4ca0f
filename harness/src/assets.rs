//! The kit's own files that `vxcert` reads at run time: the suites and clause
//! registries (`features/`), the corpus the suites feed, the session layouts and the
//! reference's profile. They travel inside the binary (packed by `build.rs`) and are
//! materialized once into a private cache directory named by their content hash
//! (`$XDG_CACHE_HOME/vxcert/<hash>/`, else `~/.cache/vxcert/<hash>/`, else
//! `<tmp>/vxcert-<uid>/<hash>/`), so a copied, installed or containerized `vxcert`
//! needs no checkout. `VXCERT_ASSETS=<checkout>` uses a checkout's files instead
//! (a developer editing the suites without rebuilding).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// The variable naming a checkout to use instead of the packed files.
pub const OVERRIDE: &str = "VXCERT_ASSETS";

/// The file that marks a complete cache directory; it holds [`HASH`].
const STAMP: &str = ".vxcert-assets";

/// Why the kit's files are not at hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssetsError {
    /// `VXCERT_ASSETS` names a directory without the kit's files.
    Override { path: PathBuf, missing: String },
    /// The cache directory could not be made or written.
    Cache { dir: PathBuf, error: String },
}

impl std::fmt::Display for AssetsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssetsError::Override { path, missing } => write!(
                f,
                "{OVERRIDE}={}: it has no {missing}; point {OVERRIDE} at a checkout of the kit \
                 (the directory holding features/, corpus/ and profiles/), or unset it to use \
                 the copy inside vxcert",
                path.display()
            ),
            AssetsError::Cache { dir, error } => write!(
                f,
                "cannot unpack the kit's suites and corpus into {}: {error}; set XDG_CACHE_HOME \
                 to a writable directory (or {OVERRIDE} to a checkout of the kit)",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for AssetsError {}

static ROOT: OnceLock<Result<PathBuf, AssetsError>> = OnceLock::new();

/// The root holding `features/`, `corpus/`, `persist/` and `profiles/`: the override,
/// or the cache directory (materialized on first use).
pub fn root() -> Result<&'static Path, AssetsError> {
    ROOT.get_or_init(
        || match std::env::var_os(OVERRIDE).filter(|v| !v.is_empty()) {
            Some(dir) => checkout(PathBuf::from(dir)),
            None => materialize(&cache_dir()),
        },
    )
    .as_ref()
    .map(PathBuf::as_path)
    .map_err(Clone::clone)
}

/// The reference's profile.
pub fn reference_profile() -> Result<PathBuf, AssetsError> {
    root().map(|r| r.join("profiles/reference.toml"))
}

/// The kit's corpus, for a scenario's step (the runner has materialized it before the
/// first scenario; a failure here is the suite's, a harness error).
pub fn corpus_dir() -> PathBuf {
    match root() {
        Ok(r) => r.join("corpus"),
        Err(e) => crate::harness_error!("{e}"),
    }
}

/// The packed bytes of one file (`persist/layouts.toml`), without touching the disk.
pub fn packed(rel: &str) -> Option<&'static [u8]> {
    FILES.iter().find(|(p, _)| *p == rel).map(|(_, b)| *b)
}

fn checkout(dir: PathBuf) -> Result<PathBuf, AssetsError> {
    for rel in ["features", "corpus", "profiles/reference.toml"] {
        if !dir.join(rel).exists() {
            return Err(AssetsError::Override {
                path: dir,
                missing: rel.into(),
            });
        }
    }
    std::path::absolute(&dir).map_err(|e| AssetsError::Override {
        path: dir.clone(),
        missing: format!("absolute path ({e})"),
    })
}

/// `<cache>/vxcert/<hash>`.
pub fn cache_dir() -> PathBuf {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let base = std::env::var_os("XDG_CACHE_HOME")
        .and_then(absolute)
        .map(|d| d.join("vxcert"))
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".cache/vxcert"))
        })
        .unwrap_or_else(|| std::env::temp_dir().join(format!("vxcert-{}", nix::unistd::geteuid())));
    base.join(HASH)
}

/// The fault injector's preload library packed inside vxcert (the `vxfault` crate's
/// copy, built with it), written once as `<cache>/vxcert/libvxfault-<sha256>.so` beside
/// the suites, through a temporary file and one rename.
pub fn fault_preload() -> Result<PathBuf, AssetsError> {
    static PATH: OnceLock<Result<PathBuf, AssetsError>> = OnceLock::new();
    PATH.get_or_init(|| {
        use sha2::Digest;
        let bytes = vxfault::embedded_preload();
        let hash = sha2::Sha256::digest(bytes);
        let name: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
        let dir = cache_dir()
            .parent()
            .map_or_else(std::env::temp_dir, Path::to_path_buf);
        let path = dir.join(format!("libvxfault-{name}.so"));
        let fail = |error: std::io::Error| AssetsError::Cache {
            dir: dir.clone(),
            error: error.to_string(),
        };
        if std::fs::read(&path).is_ok_and(|b| b == bytes) {
            return Ok(path);
        }
        private_dirs(&dir).map_err(fail)?;
        let mut staged = tempfile::Builder::new()
            .prefix(".libvxfault-")
            .tempfile_in(&dir)
            .map_err(fail)?;
        std::io::Write::write_all(&mut staged, bytes).map_err(fail)?;
        staged.persist(&path).map_err(|e| fail(e.error))?;
        Ok(path)
    })
    .clone()
}

/// Writes the packed files under `dir` unless a complete copy is there: into a fresh
/// sibling, then one rename, so a concurrent or interrupted run never sees half.
pub fn materialize(dir: &Path) -> Result<PathBuf, AssetsError> {
    let fail = |error: std::io::Error| AssetsError::Cache {
        dir: dir.to_path_buf(),
        error: error.to_string(),
    };
    if complete(dir) {
        return Ok(dir.to_path_buf());
    }
    let parent = dir.parent().unwrap_or(Path::new("/"));
    private_dirs(parent).map_err(fail)?;
    let staging = tempfile::Builder::new()
        .prefix(".staging-")
        .tempdir_in(parent)
        .map_err(fail)?;
    for (rel, bytes) in FILES {
        let path = staging.path().join(rel);
        if let Some(d) = path.parent() {
            private_dirs(d).map_err(fail)?;
        }
        std::fs::write(&path, bytes).map_err(fail)?;
    }
    std::fs::write(staging.path().join(STAMP), HASH).map_err(fail)?;
    if dir.exists() && !complete(dir) {
        // A copy left incomplete by something else than this code: replace it.
        std::fs::remove_dir_all(dir).map_err(fail)?;
    }
    let staged = staging.keep();
    match std::fs::rename(&staged, dir) {
        Ok(()) => Ok(dir.to_path_buf()),
        // Another run put its copy there first.
        Err(_) if complete(dir) => {
            let _ = std::fs::remove_dir_all(&staged);
            Ok(dir.to_path_buf())
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staged);
            Err(fail(e))
        }
    }
}

fn complete(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(STAMP)).is_ok_and(|s| s == HASH)
}

fn private_dirs(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed files are the checkout's, byte for byte, and cover what the
    /// runner and the suites read.
    #[test]
    fn the_packed_files_are_the_checkouts() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        for (rel, bytes) in FILES {
            assert_eq!(std::fs::read(root.join(rel)).unwrap(), *bytes, "{rel}");
        }
        for needed in [
            "profiles/reference.toml",
            "features/recovery/clauses.toml",
            "features/session-persist/clauses.toml",
            "corpus/persist/blobs/valid-claude_code.tar",
            "corpus/workspace/valid-phux-schema2.json",
            "corpus/broker/keys/claude-uuid.key",
            "persist/layouts.toml",
        ] {
            assert!(packed(needed).is_some(), "{needed} is not packed");
        }
    }

    /// Materializing writes every file once, stamps the directory, and reuses a
    /// complete copy; an incomplete one is replaced.
    #[test]
    fn materializing_writes_once_and_replaces_an_incomplete_copy() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cache").join(HASH);
        assert_eq!(materialize(&dir).unwrap(), dir);
        let (rel, bytes) = FILES[0];
        assert_eq!(std::fs::read(dir.join(rel)).unwrap(), bytes);
        let marker = dir.join("marker");
        std::fs::write(&marker, "kept").unwrap();
        materialize(&dir).unwrap();
        assert!(marker.exists(), "a complete copy is reused");
        std::fs::remove_file(dir.join(STAMP)).unwrap();
        materialize(&dir).unwrap();
        assert!(!marker.exists(), "an incomplete copy is replaced");
        assert!(complete(&dir));
    }

    /// A cache that cannot be written and an override without the kit's files are
    /// refused with the path and the fix.
    #[test]
    fn refusals_name_the_path_and_the_fix() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("not-a-dir");
        std::fs::write(&file, "").unwrap();
        let e = materialize(&file.join(HASH)).unwrap_err();
        assert!(matches!(e, AssetsError::Cache { .. }), "{e:?}");
        assert!(e.to_string().contains("set XDG_CACHE_HOME"), "{e}");
        let e = checkout(tmp.path().to_path_buf()).unwrap_err();
        assert_eq!(
            e,
            AssetsError::Override {
                path: tmp.path().to_path_buf(),
                missing: "features".into()
            }
        );
        assert!(e.to_string().contains("point VXCERT_ASSETS at a checkout"));
    }
}
