//! Where a socket's store lives and which store it is (RFC §2, pins.md "Where things
//! live"): `$XDG_STATE_HOME/venomx/recovery/<socket-key>/`, falling back to
//! `$HOME/.local/state/…`, with socket-key = lowercase hex SHA-256 of the absolute
//! socket path after resolving its existing parent directory.

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Result, StoreError};

/// The directories under the state home, in order; the last is the socket key.
pub const STORE_SUBDIRS: [&str; 2] = ["venomx", "recovery"];

/// A store's location and identity: which socket it belongs to, where it lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreLocation {
    /// `$XDG_STATE_HOME`, or `$HOME/.local/state`.
    pub state_home: PathBuf,
    /// The absolute socket path with its parent directory resolved; checkpoints in
    /// this store must carry exactly this `socket`.
    pub socket: String,
    /// Lowercase hex SHA-256 of `socket`.
    pub key: String,
}

impl StoreLocation {
    /// The location for `socket` from this process's environment.
    pub fn from_env(socket: &Path) -> Result<Self> {
        Self::resolve(
            std::env::var_os("XDG_STATE_HOME").as_deref(),
            std::env::var_os("HOME").as_deref(),
            socket,
        )
    }

    /// The location for `socket` given the two environment values.
    pub fn resolve(
        xdg_state_home: Option<&OsStr>,
        home: Option<&OsStr>,
        socket: &Path,
    ) -> Result<Self> {
        let state_home = state_home(xdg_state_home, home)?;
        let socket = resolve_socket_path(socket)?;
        let key = socket_key(&socket);
        Ok(StoreLocation {
            state_home,
            socket,
            key,
        })
    }

    /// The store directory's path. For display and for tools; the store itself only
    /// ever walks it component by component from held handles.
    pub fn dir(&self) -> PathBuf {
        let mut dir = self.state_home.clone();
        dir.extend(STORE_SUBDIRS);
        dir.push(&self.key);
        dir
    }
}

/// `$XDG_STATE_HOME` when set and non-empty (it must be absolute), else
/// `$HOME/.local/state` (HOME must be absolute). The XDG base-directory spec treats an
/// empty value as unset.
pub fn state_home(xdg_state_home: Option<&OsStr>, home: Option<&OsStr>) -> Result<PathBuf> {
    match xdg_state_home.filter(|v| !v.is_empty()) {
        Some(xdg) => {
            let path = PathBuf::from(xdg);
            if !path.is_absolute() {
                return Err(StoreError::io("XDG_STATE_HOME is not an absolute path"));
            }
            Ok(path)
        }
        None => {
            let home = home
                .filter(|v| !v.is_empty())
                .ok_or_else(|| StoreError::io("neither XDG_STATE_HOME nor HOME is set"))?;
            let path = PathBuf::from(home);
            if !path.is_absolute() {
                return Err(StoreError::io("HOME is not an absolute path"));
            }
            Ok(path.join(".local").join("state"))
        }
    }
}

/// The absolute socket path with its existing parent directory resolved (symlinks,
/// `.` and `..` in the parent), the socket's own name kept as written: the socket
/// may not exist yet, and a symlink in its place must not redirect the store.
pub fn resolve_socket_path(socket: &Path) -> Result<String> {
    let absolute = if socket.is_absolute() {
        socket.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|_| {
                StoreError::io("cannot read the working directory to resolve the socket path")
            })?
            .join(socket)
    };
    let name: OsString = match absolute.components().next_back() {
        Some(Component::Normal(name)) => name.to_os_string(),
        _ => return Err(StoreError::io("socket path does not end in a file name")),
    };
    let parent = absolute
        .parent()
        .ok_or_else(|| StoreError::io("socket path has no parent directory"))?;
    // realpath(3) through std: resolves every symlink of the existing parent.
    let parent = std::fs::canonicalize(parent)
        .map_err(|_| StoreError::io("socket's parent directory cannot be resolved"))?;
    let resolved = parent.join(name);
    resolved
        .into_os_string()
        .into_string()
        .map_err(|_| StoreError::io("socket path is not UTF-8"))
}

/// Lowercase hex SHA-256 of the UTF-8 socket path.
pub fn socket_key(resolved_socket: &str) -> String {
    let digest = Sha256::digest(resolved_socket.as_bytes());
    let mut key = String::with_capacity(64);
    for byte in digest {
        key.push_str(&format!("{byte:02x}"));
    }
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_key_is_lowercase_sha256_hex() {
        // Computed independently: printf %s /run/user/1000/venomx.sock | sha256sum
        assert_eq!(
            socket_key("/run/user/1000/venomx.sock"),
            "d5a872263374796c51e52e83e99ede8fc4b1349bc7a179871291100832c97f07"
        );
    }

    #[test]
    fn xdg_state_home_must_be_absolute() {
        let err = state_home(
            Some(OsStr::new("relative/state")),
            Some(OsStr::new("/home/u")),
        )
        .unwrap_err();
        assert_eq!(err.code.as_str(), "unavailable.recovery_io");
        assert!(err.reason.contains("XDG_STATE_HOME"));
    }

    #[test]
    fn home_fallback_when_xdg_unset_or_empty() {
        let home = Some(OsStr::new("/home/u"));
        assert_eq!(
            state_home(None, home).unwrap(),
            PathBuf::from("/home/u/.local/state")
        );
        assert_eq!(
            state_home(Some(OsStr::new("")), home).unwrap(),
            PathBuf::from("/home/u/.local/state")
        );
        assert_eq!(
            state_home(Some(OsStr::new("/x/state")), home).unwrap(),
            PathBuf::from("/x/state")
        );
        assert!(state_home(None, None).is_err());
        assert!(state_home(None, Some(OsStr::new("home"))).is_err());
    }

    #[test]
    fn socket_parent_is_resolved_but_not_the_socket_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, tmp.path().join("link")).unwrap();
        let real_canon = std::fs::canonicalize(&real).unwrap();

        let via_link = resolve_socket_path(&tmp.path().join("link/sub/../vx.sock"));
        // `sub` does not exist, so the parent cannot be resolved.
        assert!(via_link.is_err());

        let via_link = resolve_socket_path(&tmp.path().join("link/vx.sock")).unwrap();
        assert_eq!(via_link, real_canon.join("vx.sock").to_str().unwrap());
        let direct = resolve_socket_path(&real.join("vx.sock")).unwrap();
        assert_eq!(socket_key(&via_link), socket_key(&direct));

        let other = resolve_socket_path(&real.join("other.sock")).unwrap();
        assert_ne!(
            socket_key(&other),
            socket_key(&direct),
            "an alternate socket has its own store"
        );
    }

    #[test]
    fn location_dir_is_state_home_venomx_recovery_key() {
        let tmp = tempfile::tempdir().unwrap();
        let loc =
            StoreLocation::resolve(Some(OsStr::new("/state")), None, &tmp.path().join("s.sock"))
                .unwrap();
        assert_eq!(
            loc.dir(),
            PathBuf::from(format!("/state/venomx/recovery/{}", loc.key))
        );
        assert_eq!(loc.key, socket_key(&loc.socket));
    }
}
