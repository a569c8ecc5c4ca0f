//! Starting a pane's program without copying the daemon.
//!
//! A pre-exec hook (what `pty-process` installs to call `setsid` and `TIOCSCTTY`)
//! makes std `fork` the whole daemon: the kernel copies its page tables and the parent
//! takes copy-on-write faults afterwards, so a spawn costs time in proportion to the
//! daemon's memory, which grows with every pane (`copy_page_range` led the profile in
//! docs/performance.md). glibc's `posix_spawn` shares the parent's memory until the
//! exec (`CLONE_VM | CLONE_VFORK`) and does the rest itself: `POSIX_SPAWN_SETSID`
//! makes the child a session leader, and opening the terminal by path afterwards
//! (without `O_NOCTTY`) makes it the controlling terminal, as `TIOCSCTTY` did.
//! Exec failures (a vanished executable) are reported by `posix_spawnp` itself.
//!
//! The child is waited for through a pidfd ([`Child`]), not tokio's process driver.

use nix::libc;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use tokio::io::unix::AsyncFd;

/// How a child ended: its exit code, or the signal that ended it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Code(i32),
    Signal(i32),
    /// The status could not be read (it was reaped elsewhere).
    Unknown,
}

/// A spawned child, waitable without blocking a thread.
pub struct Child {
    pid: u32,
    pidfd: AsyncFd<OwnedFd>,
}

impl Child {
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Waits until the child has ended and reaps it.
    pub async fn wait(&mut self) -> Ended {
        let pid = Pid::from_raw(self.pid as i32);
        loop {
            match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(_, code)) => return Ended::Code(code),
                Ok(WaitStatus::Signaled(_, sig, _)) => return Ended::Signal(sig as i32),
                Ok(WaitStatus::StillAlive) => {}
                Ok(_) => {}
                Err(_) => return Ended::Unknown,
            }
            // The pidfd becomes readable when the process ends.
            match self.pidfd.readable().await {
                Ok(mut guard) => guard.clear_ready(),
                Err(_) => return Ended::Unknown,
            }
        }
    }
}

fn c_string(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn check(rc: libc::c_int) -> io::Result<()> {
    match rc {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// Initialized spawn attributes and file actions (both, always), destroyed on drop.
struct SpawnConfig {
    attr: libc::posix_spawnattr_t,
    actions: libc::posix_spawn_file_actions_t,
}

impl SpawnConfig {
    fn new(tty: &CStr, cwd: Option<&CStr>) -> io::Result<SpawnConfig> {
        let mut attr = std::mem::MaybeUninit::<libc::posix_spawnattr_t>::uninit();
        let mut actions = std::mem::MaybeUninit::<libc::posix_spawn_file_actions_t>::uninit();
        // SAFETY: init writes the whole object behind a valid pointer.
        check(unsafe { libc::posix_spawnattr_init(attr.as_mut_ptr()) })?;
        // SAFETY: as above; on failure the initialized `attr` is destroyed once.
        if let Err(e) = check(unsafe { libc::posix_spawn_file_actions_init(actions.as_mut_ptr()) })
        {
            // SAFETY: `attr` was initialized just above and is not used again.
            unsafe { libc::posix_spawnattr_destroy(attr.as_mut_ptr()) };
            return Err(e);
        }
        // SAFETY: both inits succeeded. Neither object points into itself (glibc keeps
        // the file actions' array on the heap), so moving them is sound.
        let mut c = unsafe {
            SpawnConfig {
                attr: attr.assume_init(),
                actions: actions.assume_init(),
            }
        };
        c.configure(tty)?;
        if let Some(dir) = cwd {
            // SAFETY: `actions` is initialized; addchdir copies the path.
            check(unsafe {
                libc::posix_spawn_file_actions_addchdir_np(&mut c.actions, dir.as_ptr())
            })?;
        }
        Ok(c)
    }

    fn configure(&mut self, tty: &CStr) -> io::Result<()> {
        let flags = libc::POSIX_SPAWN_SETSID
            | libc::POSIX_SPAWN_SETSIGMASK as libc::c_short
            | libc::POSIX_SPAWN_SETSIGDEF as libc::c_short;
        // SAFETY: `attr` and `actions` are initialized (the type's invariant); each
        // sigset is initialized by sigemptyset before it is read; `tty` outlives the
        // call (addopen copies the path).
        unsafe {
            check(libc::posix_spawnattr_setflags(&mut self.attr, flags))?;
            // The child starts with no signal blocked and every disposition at its
            // default: the daemon ignores SIGPIPE (Rust's runtime does), and may have
            // been started with SIGHUP ignored (nohup), which a pane must not inherit
            // (its stop's SIGHUP would not end it). Handlers are reset by the exec.
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            check(libc::posix_spawnattr_setsigmask(&mut self.attr, &none))?;
            let mut default: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut default);
            libc::sigdelset(&mut default, libc::SIGKILL);
            libc::sigdelset(&mut default, libc::SIGSTOP);
            check(libc::posix_spawnattr_setsigdefault(
                &mut self.attr,
                &default,
            ))?;
            // After setsid, the first terminal the session leader opens becomes its
            // controlling terminal: the pane's PTY, on fd 0, duplicated to 1 and 2.
            check(libc::posix_spawn_file_actions_addopen(
                &mut self.actions,
                0,
                tty.as_ptr(),
                libc::O_RDWR,
                0,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &mut self.actions,
                0,
                1,
            ))?;
            check(libc::posix_spawn_file_actions_adddup2(
                &mut self.actions,
                0,
                2,
            ))?;
        }
        Ok(())
    }
}

impl Drop for SpawnConfig {
    fn drop(&mut self) {
        // SAFETY: both objects are initialized (the type's invariant) and destroyed
        // exactly once, here.
        unsafe {
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
            libc::posix_spawnattr_destroy(&mut self.attr);
        }
    }
}

/// Starts `argv` (looked up in `PATH`) as the leader of a new session whose stdin,
/// stdout and stderr are the terminal at `tty`, with the daemon's environment plus
/// `env` (which wins), in `cwd` when given (a missing directory fails the spawn).
pub fn spawn_on_tty(
    argv: &[String],
    env: &[(String, String)],
    cwd: Option<&str>,
    tty: &CStr,
) -> io::Result<Child> {
    let cwd = cwd.map(|d| c_string(d.as_bytes())).transpose()?;
    let args: Vec<CString> = argv
        .iter()
        .map(|a| c_string(a.as_bytes()))
        .collect::<io::Result<_>>()?;
    let program = args
        .first()
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    let mut vars: Vec<CString> = Vec::new();
    for (key, value) in std::env::vars_os() {
        if env.iter().any(|(k, _)| k.as_bytes() == key.as_bytes()) {
            continue;
        }
        let mut kv = key.as_bytes().to_vec();
        kv.push(b'=');
        kv.extend_from_slice(value.as_bytes());
        if let Ok(c) = CString::new(kv) {
            vars.push(c);
        }
    }
    for (key, value) in env {
        vars.push(c_string(format!("{key}={value}").as_bytes())?);
    }
    let mut arg_ptrs: Vec<*mut libc::c_char> = args.iter().map(|a| a.as_ptr().cast_mut()).collect();
    arg_ptrs.push(std::ptr::null_mut());
    let mut env_ptrs: Vec<*mut libc::c_char> = vars.iter().map(|v| v.as_ptr().cast_mut()).collect();
    env_ptrs.push(std::ptr::null_mut());
    let config = SpawnConfig::new(tty, cwd.as_deref())?;
    let mut pid: libc::pid_t = 0;
    // SAFETY: every pointer is valid for the call: `program`, the argv and envp
    // strings are CStrings alive until after it returns, both pointer arrays are
    // null-terminated, and `config` holds initialized attributes and file actions.
    check(unsafe {
        libc::posix_spawnp(
            &mut pid,
            program.as_ptr(),
            &config.actions,
            &config.attr,
            arg_ptrs.as_ptr(),
            env_ptrs.as_ptr(),
        )
    })?;
    drop(config);
    let pid = u32::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
    let raw = rustix::process::Pid::from_raw(pid as i32)
        .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidData))?;
    let pidfd = match rustix::process::pidfd_open(raw, rustix::process::PidfdFlags::empty()) {
        Ok(fd) => fd,
        Err(e) => {
            // Without a pidfd it cannot be supervised: end it and reap it now.
            let _ = nix::sys::signal::kill(Pid::from_raw(pid as i32), nix::sys::signal::SIGKILL);
            let _ = waitpid(Pid::from_raw(pid as i32), None);
            return Err(e.into());
        }
    };
    // SAFETY: the AsyncFd owns the pidfd, so it stays open and refers to the same
    // process for as long as it is registered, and is closed only when dropped.
    let pidfd = unsafe { AsyncFd::register(pidfd) }.map_err(|e| e.into_parts().1)?;
    Ok(Child { pid, pidfd })
}
