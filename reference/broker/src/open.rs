//! `open_action`: the one ATTACH-vs-LAUNCH decision (docs/spec/single-writer.md
//! "Opening a session"). Serialized within a broker by one gate per key, and across brokers by
//! the per-key flock, so two concurrent opens of one key can never both LAUNCH.
//!
//! Live master (a non-blocking `connect()` succeeds) ⇒ ATTACH, no lock. Else acquire:
//! held ⇒ BUSY, nothing spawned; won ⇒ re-probe (a master appeared ⇒ release,
//! ATTACH), unlink a stale *socket* (anything else there ⇒ `conflict.not_socket`,
//! untouched), spawn the master with the lock descriptor, wait until it accepts,
//! `transfer` ⇒ LAUNCH. A launch failing before the master accepts frees the lock.
//! The broker reaches a master only through its socket; it reaps only the masters it
//! spawned.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::socket::{connect, socket, AddressFamily, SockFlag, SockType, UnixAddr};
use nix::sys::stat::lstat;

use crate::error::{BrokerError, Result, Rule};
use crate::key::SessionKey;
use crate::lock::{Acquired, LockDir};
use crate::negative::{self, Defect};

/// How long a launched master has to accept before the launch counts as failed.
pub const READY_TIMEOUT: Duration = Duration::from_secs(5);

/// `<runtime>/<physical>.sock` (`SessionKey::socket_stem`).
pub fn socket_path(runtime: &Path, key: &SessionKey) -> PathBuf {
    runtime.join(format!("{}.sock", key.socket_stem()))
}

/// What is at a session's socket path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// A master accepts connections (or its backlog is full, which also means one
    /// is listening).
    Live,
    /// A socket file nobody accepts on: a master that died without unlinking.
    Stale,
    Absent,
    /// Something other than a socket: never touched.
    NotSocket,
}

/// Classifies the socket path by `lstat` and a non-blocking `connect()`; file
/// presence alone never counts as live.
pub fn probe(path: &Path) -> Liveness {
    let st = if negative::is(Defect::FollowSymlink) {
        nix::sys::stat::stat(path)
    } else {
        lstat(path)
    };
    match st {
        Err(_) => return Liveness::Absent,
        Ok(st) if st.st_mode & nix::libc::S_IFMT != nix::libc::S_IFSOCK => {
            return Liveness::NotSocket
        }
        Ok(_) => {}
    }
    let Ok(addr) = UnixAddr::new(path) else {
        return Liveness::Stale;
    };
    let flags = SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC;
    let Ok(fd) = socket(AddressFamily::Unix, SockType::Stream, flags, None) else {
        return Liveness::Stale;
    };
    match connect(fd.as_raw_fd(), &addr) {
        Ok(()) | Err(Errno::EAGAIN) => Liveness::Live,
        Err(_) => Liveness::Stale,
    }
}

/// The decision of one open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A master is live: attach to it.
    Attach,
    /// This open spawned the master (its PID); the master now holds the lock.
    Launch { master_pid: u32 },
    /// Another holder has the lock and no master accepts yet: spawn nothing; the
    /// client retries (WebSocket close 4409).
    Busy,
}

/// How to start a master for a key.
#[derive(Clone, Debug)]
pub struct MasterSpec {
    /// The `vxbroker` binary that runs `master --create`.
    pub program: PathBuf,
    pub ring: u64,
    pub gen: u64,
    pub argv: Vec<OsString>,
    /// The agent's working directory (the master's, which the agent inherits); a
    /// directory that cannot be entered fails the launch.
    pub cwd: Option<PathBuf>,
    /// An argv the master runs under (a scope wrapper); empty for a plain spawn.
    pub wrapper: Vec<OsString>,
}

/// One broker's opener: its runtime directory, the shared lock directory, and one
/// gate per key (opens of one key are serialized; a slow launch never delays
/// another key's open).
pub struct Opener {
    runtime: PathBuf,
    locks: LockDir,
    gates: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// Keys whose launch is in flight (the list's `starting` state).
    starting: Mutex<HashSet<String>>,
}

/// Marks a key starting for as long as it lives.
struct Starting<'a> {
    set: &'a Mutex<HashSet<String>>,
    key: String,
}

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.key);
    }
}

impl Opener {
    pub fn new(runtime: PathBuf, locks: LockDir) -> Self {
        Opener {
            runtime,
            locks,
            gates: Mutex::new(HashMap::new()),
            starting: Mutex::new(HashSet::new()),
        }
    }

    /// The physical keys whose launch is in flight.
    pub fn starting(&self) -> Vec<String> {
        let set = self.starting.lock().unwrap_or_else(|p| p.into_inner());
        set.iter().cloned().collect()
    }

    fn gate(&self, physical: &str) -> Arc<Mutex<()>> {
        let mut gates = self.gates.lock().unwrap_or_else(|p| p.into_inner());
        // Forget gates nobody waits on, so the map stays as small as the opens in flight.
        gates.retain(|_, g| Arc::strong_count(g) > 1);
        Arc::clone(gates.entry(physical.to_owned()).or_default())
    }

    pub fn socket_path(&self, key: &SessionKey) -> PathBuf {
        socket_path(&self.runtime, key)
    }

    pub fn locks(&self) -> &LockDir {
        &self.locks
    }

    /// `open_action` for `key`; `spec` is built only when this open launches.
    pub fn open(&self, key: &SessionKey, spec: impl FnOnce() -> MasterSpec) -> Result<Action> {
        let gate = self.gate(&key.physical());
        let _turn = gate.lock().unwrap_or_else(|p| p.into_inner());
        let sock = self.socket_path(key);
        match probe(&sock) {
            Liveness::Live => return Ok(Action::Attach),
            Liveness::Stale if negative::is(Defect::AttachOnFile) => return Ok(Action::Attach),
            Liveness::NotSocket => return Err(Rule::NotSocket.into()),
            Liveness::Stale | Liveness::Absent => {}
        }
        let early = negative::is(Defect::RecheckFirst).then(|| probe(&sock));
        let lock = match self.locks.acquire(key)? {
            Acquired::Held => return Ok(Action::Busy),
            Acquired::Won(lock) => lock,
        };
        // Re-check between the probe and the acquire: a master that appeared means
        // another launch won first; its lock is not ours to keep.
        let again = match early.unwrap_or_else(|| probe(&sock)) {
            Liveness::Live if negative::is(Defect::NoRecheck) => Liveness::Stale,
            seen => seen,
        };
        match again {
            Liveness::Live => {
                lock.release()?;
                return Ok(Action::Attach);
            }
            Liveness::NotSocket => return Err(Rule::NotSocket.into()),
            // Under the lock nobody else can be racing for this path: the file is an
            // orphan of a dead master.
            Liveness::Stale => {
                nix::unistd::unlink(&sock).map_err(|_| BrokerError::new(Rule::ReapFailed))?
            }
            Liveness::Absent => {}
        }
        let _starting = {
            let physical = key.physical();
            let set = &self.starting;
            set.lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(physical.clone());
            Starting { set, key: physical }
        };
        let spec = spec();
        let mut cmd = match spec.wrapper.split_first() {
            Some((wrapper, args)) => {
                let mut c = Command::new(wrapper);
                c.args(args).arg(&spec.program);
                c
            }
            None => Command::new(&spec.program),
        };
        cmd.arg("master").arg("--create").arg(&sock);
        cmd.args([
            "--ring",
            &spec.ring.to_string(),
            "--gen",
            &spec.gen.to_string(),
        ]);
        cmd.args(["--lock-fd", "3", "--"]).args(&spec.argv);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(cwd) = &spec.cwd {
            cmd.current_dir(cwd);
        }
        let fd = lock.fd().as_raw_fd();
        // SAFETY: between fork and exec only async-signal-safe calls run: dup2 puts
        // the lock's description at descriptor 3 (clearing close-on-exec on the
        // copy), setsid takes the master out of the broker's session so the
        // broker's death or its terminal's hangup does not reach it.
        unsafe {
            cmd.pre_exec(move || {
                crate::lock::inherit_at_master_fd(fd)?;
                nix::unistd::setsid().map_err(std::io::Error::from)?;
                Ok(())
            });
        }
        // A launch that fails before the master is ready unlocks explicitly: a child
        // of a failed spawn (or a master still exiting) may hold a copy of the
        // descriptor for a moment, and closing ours alone would leave the key BUSY
        // until it is gone. No master serves the key on these paths.
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(_) => {
                let _ = lock.release();
                return Err(Rule::LaunchFailed.into());
            }
        };
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if probe(&sock) == Liveness::Live {
                break;
            }
            if matches!(child.try_wait(), Ok(Some(_))) || Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                let _ = lock.release();
                return Err(Rule::LaunchFailed.into());
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if negative::is(Defect::UnlockAfterSpawn) {
            // The defect: LOCK_UN on the description the master shares.
            let _ = lock.release();
        } else {
            lock.transfer();
        }
        let master_pid = child.id();
        // The broker spawned it, so the broker reaps it (no zombie); it never
        // signals or waits on a master it did not spawn.
        std::thread::spawn(move || {
            let _ = child.wait();
        });
        Ok(Action::Launch { master_pid })
    }
}
