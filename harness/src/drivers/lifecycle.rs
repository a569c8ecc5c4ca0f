//! Starting an implementation and waiting until it is ready, stopping it with a
//! signal and timing its exit.

use super::{poll, scaled};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Spawns `cmd` with stdin and stdout closed and stderr into `log`.
pub fn spawn(mut cmd: Command, log: &Path) -> Child {
    let err = std::fs::File::create(log)
        .unwrap_or_else(|e| crate::harness_error!("cannot create a log file: {e}"));
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(err));
    let program = super::start_state::shown_argv(&cmd)
        .0
        .to_string_lossy()
        .into_owned();
    cmd.spawn()
        .unwrap_or_else(|e| crate::harness_error!("cannot start the implementation {program}: {e}"))
}

/// How the suite knows an implementation is ready.
pub struct Readiness {
    pub socket: PathBuf,
    /// A file that must exist first (profile `readiness.kind = "file"`).
    pub file: Option<PathBuf>,
    pub timeout_ms: u64,
}

/// Waits until the socket accepts a connection (after the readiness file exists);
/// `Err` with the exit status when the child exits first.
pub fn wait_ready(child: &mut Child, r: &Readiness) -> Result<(), ExitStatus> {
    poll("daemon readiness", scaled(r.timeout_ms), || {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(Err(status));
        }
        if let Some(f) = &r.file {
            if !f.exists() {
                return None;
            }
        }
        UnixStream::connect(&r.socket).ok().map(|_| Ok(()))
    })
}

/// Sends `signal` (the child may be gone already: then it is only reaped) and waits
/// for the exit: its status and how long it took.
pub fn stop(mut child: Child, signal: nix::sys::signal::Signal) -> (ExitStatus, Duration) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let start = Instant::now();
    let _ = nix::sys::signal::kill(pid, signal);
    let status = poll("daemon exit", scaled(15_000), || {
        child.try_wait().ok().flatten()
    });
    (status, start.elapsed())
}

/// The last `n` bytes of a log, for a failure message.
pub fn log_tail(log: &Path, n: usize) -> String {
    let bytes = std::fs::read(log).unwrap_or_default();
    String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(n)..]).into_owned()
}
