//! A terminal for a command that needs one (the profile's `master_tty`): a pty whose
//! slave end is the command's stdin, stdout, stderr and controlling terminal (in a
//! session of its own), and whose master end a thread of the suite reads until the
//! last holder of the slave closes it, so the command never blocks on a full
//! terminal and what it said is there for a "fails loud" check.

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// Bytes the command wrote to its terminal so far.
pub type Output = Arc<Mutex<Vec<u8>>>;

/// Gives `cmd` a fresh terminal; returns what it will write there.
pub fn attach(cmd: &mut Command) -> std::io::Result<Output> {
    let pty = nix::pty::openpty(None, None)?;
    let slave: OwnedFd = pty.slave;
    cmd.stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave));
    // SAFETY: setsid and ioctl are async-signal-safe; between fork and exec the child
    // only makes its stdin (the pty's slave end) its controlling terminal. The
    // command may lead its session already (`start_state::clean_start` made one):
    // then setsid fails and the session is used as it is.
    unsafe {
        cmd.pre_exec(|| {
            let _ = nix::unistd::setsid();
            if nix::libc::ioctl(0, nix::libc::TIOCSCTTY, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output: Output = Arc::default();
    let kept = Arc::clone(&output);
    let mut master = std::fs::File::from(pty.master);
    debug_assert!(master.as_raw_fd() >= 0);
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        // EIO once no process holds the slave end any more: the command is gone.
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend_from_slice(&buf[..n]);
        }
    });
    Ok(output)
}
