//! Loopback ports for implementations that listen on TCP, handed out so that no two
//! of the kit's own sandboxes (scenarios running side by side, or two `vxcert` runs
//! on one machine) are given the same one.
//!
//! The kernel's pick of a free port is released before the implementation binds it,
//! and another sandbox asking in that window may be given the same port: then one
//! implementation fails to bind while the suite's readiness probe reaches the other,
//! and a scenario runs against a stranger's broker. A reservation is a lock on the
//! port's byte of one machine-wide file (an open-file-description lock, so two
//! sandboxes of one process exclude each other too), held for the sandbox's life.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use nix::fcntl::{fcntl, FcntlArg};
use nix::libc;

use crate::verdict::OrHarness;

/// A loopback port no other sandbox of the kit holds while this lives.
pub struct ReservedPort {
    pub port: u16,
    /// Holds the port's byte lock; `None` when the lock file could not be opened
    /// (a read-only temporary directory), where only the kernel's pick protects.
    _lock: Option<File>,
}

/// The machine-wide file whose bytes stand for ports.
fn lock_file() -> PathBuf {
    std::env::temp_dir().join("vxcert-loopback-ports.lock")
}

fn open_lock_file() -> Option<File> {
    use std::os::unix::fs::PermissionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(lock_file())
        .ok()?;
    // Any user's runs share it (a write lock needs it open for writing; nothing is
    // ever written). Only its creator may chmod, so the others' attempts fail quietly.
    let _ = file.set_permissions(std::fs::Permissions::from_mode(0o666));
    Some(file)
}

/// Locks byte `port` of `file` without waiting; false when another holds it.
fn try_lock(file: &File, port: u16) -> bool {
    let lock = libc::flock {
        l_type: libc::F_WRLCK as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: libc::off_t::from(port),
        l_len: 1,
        // Open-file-description locks require 0 here.
        l_pid: 0,
    };
    fcntl(file.as_raw_fd(), FcntlArg::F_OFD_SETLK(&lock)).is_ok()
}

/// The kernel's pick of a port nothing listens on now.
fn kernel_pick() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .or_harness("picking a free loopback port")
}

/// A free loopback port, reserved against every other sandbox of the kit.
pub fn reserve() -> ReservedPort {
    let Some(file) = open_lock_file() else {
        return ReservedPort {
            port: kernel_pick(),
            _lock: None,
        };
    };
    for _ in 0..64 {
        let port = kernel_pick();
        if try_lock(&file, port) {
            return ReservedPort {
                port,
                _lock: Some(file),
            };
        }
    }
    crate::harness_error!(
        "64 loopback ports in a row were held by other sandboxes (lock file {})",
        lock_file().display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_port_is_not_reserved_twice() {
        let first = reserve();
        let other = open_lock_file().expect("the lock file opens");
        assert!(
            !try_lock(&other, first.port),
            "a second reservation of the same port succeeded"
        );
    }

    #[test]
    fn a_released_port_can_be_reserved_again() {
        let r = reserve();
        let port = r.port;
        drop(r);
        let file = open_lock_file().expect("the lock file opens");
        assert!(try_lock(&file, port), "the released port stayed locked");
    }
}
