//! Socket selection (pins.md "Where things live"): `--socket PATH`, else
//! `VENOMX_SOCKET`, else `$XDG_RUNTIME_DIR/venomx/default.sock`. The lock is
//! `<socket>.lock` and the owner token `<socket>.owner`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Why no socket path could be chosen.
#[derive(Debug, PartialEq, Eq)]
pub struct NoSocket;

/// Picks the socket path; relative paths are made absolute against the working directory.
pub fn select_socket(flag: Option<&Path>) -> Result<PathBuf, NoSocket> {
    let chosen = match flag {
        Some(p) => p.to_path_buf(),
        None => match std::env::var_os("VENOMX_SOCKET").filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => {
                let runtime = std::env::var_os("XDG_RUNTIME_DIR")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .ok_or(NoSocket)?;
                runtime.join("venomx").join("default.sock")
            }
        },
    };
    if chosen.as_os_str().is_empty() {
        return Err(NoSocket);
    }
    if chosen.is_absolute() {
        Ok(chosen)
    } else {
        std::env::current_dir()
            .map(|d| d.join(chosen))
            .map_err(|_| NoSocket)
    }
}

fn with_suffix(socket: &Path, suffix: &str) -> PathBuf {
    let mut s: OsString = socket.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

pub fn lock_path(socket: &Path) -> PathBuf {
    with_suffix(socket, ".lock")
}

pub fn owner_path(socket: &Path) -> PathBuf {
    with_suffix(socket, ".owner")
}

/// Publishes `bytes` at `path` through `tmp` (a new 0600 file in the same
/// directory): write, fsync, rename, fsync of the directory. On failure the
/// temporary file is removed and `path` is as it was.
pub fn write_atomic(path: &Path, tmp: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        std::fs::rename(tmp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes() {
        let s = Path::new("/run/x/default.sock");
        assert_eq!(lock_path(s), Path::new("/run/x/default.sock.lock"));
        assert_eq!(owner_path(s), Path::new("/run/x/default.sock.owner"));
    }

    #[test]
    fn flag_wins_and_is_made_absolute() {
        assert_eq!(
            select_socket(Some(Path::new("/a/b.sock"))).unwrap(),
            Path::new("/a/b.sock")
        );
        assert!(select_socket(Some(Path::new("rel.sock")))
            .unwrap()
            .is_absolute());
    }
}
