//! `vxbroker master`: the dtach-like owner of one session's agent
//! (docs/spec/single-writer.md "Master").
//!
//! `--create SOCK` is create-only: it binds SOCK (failing loud when the path exists),
//! runs ARGV on a PTY, keeps the output ring and its absolute total, multiplexes
//! viewers, keeps the inherited lock descriptor open (close-on-exec, so the agent
//! does not hold it past the master), and when the agent exits tells every viewer,
//! unlinks its socket and exits with the agent's status. `--attach SOCK` is
//! attach-only: it never creates anything.

mod attach;
pub mod frame;
mod ring;
mod screen;
mod viewer;

use std::ffi::OsString;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixListener;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use clap::Args;
use nix::fcntl::{fcntl, FcntlArg, FdFlag};

use crate::error::{BrokerError, Param, Result, Rule};
use crate::resume::parse_counter;

pub use ring::Ring;
pub use screen::AltScreen;

/// The seed's example ring (256 KiB).
pub const DEFAULT_RING: &str = "262144";
/// Frames queued for one viewer before the PTY reader waits for it.
const VIEWER_QUEUE: usize = 1024;
/// How long the master waits for the PTY to drain after the agent exited.
const DRAIN: Duration = Duration::from_secs(2);
/// A viewer whose socket accepts nothing for this long is dropped.
pub(crate) const WRITE_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Args, Debug)]
pub struct MasterArgs {
    /// Create-only: bind SOCK and run ARGV.
    #[arg(
        long,
        value_name = "SOCK",
        conflicts_with = "attach",
        required_unless_present = "attach"
    )]
    pub create: Option<PathBuf>,
    /// Attach-only: relay stdin/stdout to the master at SOCK.
    #[arg(long, value_name = "SOCK")]
    pub attach: Option<PathBuf>,
    /// Ring capacity in bytes (create).
    #[arg(long, default_value = DEFAULT_RING)]
    pub ring: String,
    /// The master's generation (create), or the generation the viewer saw (attach).
    #[arg(long, allow_hyphen_values = true)]
    pub gen: Option<String>,
    /// Bytes already consumed (attach).
    #[arg(long, allow_hyphen_values = true)]
    pub have: Option<String>,
    /// An inherited descriptor holding the key's flock (create).
    #[arg(long = "lock-fd")]
    pub lock_fd: Option<i32>,
    #[arg(long, default_value_t = 80)]
    pub cols: u16,
    #[arg(long, default_value_t = 24)]
    pub rows: u16,
    /// The agent (create).
    #[arg(last = true)]
    pub argv: Vec<OsString>,
}

/// Runs the master subcommand; returns the exit code.
pub fn run(a: &MasterArgs) -> i32 {
    let outcome = match (&a.create, &a.attach) {
        (Some(sock), _) => create(a, sock.clone()),
        (None, Some(sock)) => attach::run(a, sock),
        (None, None) => Err(Rule::ArgvEmpty.into()),
    };
    outcome.unwrap_or_else(|e| {
        eprintln!("vxbroker master: {e}");
        e.code.exit_code()
    })
}

/// What every thread of one master shares.
pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    pub(crate) pty: pty_process::blocking::Pty,
    pub(crate) child_pid: i32,
    pub(crate) master_gen: u64,
}

pub(crate) struct State {
    pub(crate) ring: Ring,
    pub(crate) screen: AltScreen,
    pub(crate) viewers: Vec<ViewerQueue>,
    pub(crate) writers: Vec<JoinHandle<()>>,
    next_id: u64,
}

pub(crate) struct ViewerQueue {
    pub(crate) id: u64,
    pub(crate) tx: SyncSender<Vec<u8>>,
}

impl State {
    pub(crate) fn add_viewer(&mut self, tx: SyncSender<Vec<u8>>, writer: JoinHandle<()>) -> u64 {
        self.next_id += 1;
        self.viewers.push(ViewerQueue {
            id: self.next_id,
            tx,
        });
        self.writers.push(writer);
        self.next_id
    }

    pub(crate) fn remove_viewer(&mut self, id: u64) {
        self.viewers.retain(|v| v.id != id);
    }

    /// Queues a frame for every viewer. A full queue blocks the PTY reader (back-
    /// pressure, as dtach does, so a live viewer never loses bytes); a viewer whose
    /// socket takes nothing for `WRITE_TIMEOUT` ends its writer, which drops the
    /// queue's receiver and so the viewer (it reconnects with `have` and resumes
    /// from the ring).
    fn broadcast(&mut self, frame: &[u8]) {
        self.viewers.retain(|v| v.tx.send(frame.to_vec()).is_ok());
    }
}

fn create(a: &MasterArgs, sock: PathBuf) -> Result<i32> {
    let ring = parse_counter(&a.ring, Param::Ring)?;
    if ring == 0 {
        return Err(Rule::RingZero.into());
    }
    let master_gen = a
        .gen
        .as_deref()
        .map(|g| parse_counter(g, Param::Gen))
        .transpose()?
        .unwrap_or(0);
    if let Some(fd) = a.lock_fd {
        keep_lock_fd(fd)?;
    }
    if let (Some(fd), true) = (
        a.lock_fd,
        crate::negative::is(crate::negative::Defect::LockToAgent),
    ) {
        let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::empty()));
    }
    let Some((program, args)) = a.argv.split_first() else {
        return Err(Rule::ArgvEmpty.into());
    };
    let bound = bind_socket(&sock)?;
    let spawned = (|| {
        let (pty, pts) = pty_process::blocking::open().ok()?;
        pty.resize(pty_process::Size::new(a.rows, a.cols)).ok()?;
        let command = pty_process::blocking::Command::new(program).args(args);
        // SAFETY: the hook runs in the forked child before exec and calls only
        // sigaction and sigprocmask, which are async-signal-safe.
        let command = unsafe { command.pre_exec(default_signals) };
        let child = command.spawn(pts).ok()?;
        Some((pty, child))
    })();
    let Some((pty, mut child)) = spawned else {
        let _ = std::fs::remove_file(&sock);
        return Err(Rule::SpawnFailed.into());
    };
    // Listening only now: until the agent runs, a connect is refused, so nobody can
    // take a master whose launch is still failing for a live one.
    let listener = listen(bound, &sock)?;
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            ring: Ring::new(ring.min(usize::MAX as u64) as usize),
            screen: AltScreen::default(),
            viewers: Vec::new(),
            writers: Vec::new(),
            next_id: 0,
        }),
        pty,
        child_pid: child.id() as i32,
        master_gen,
    });
    let (drained_tx, drained) = mpsc::channel();
    let reader = Arc::clone(&shared);
    std::thread::spawn(move || {
        pump_output(&reader);
        let _ = drained_tx.send(());
    });
    let acceptor = Arc::clone(&shared);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let shared = Arc::clone(&acceptor);
            std::thread::spawn(move || viewer::serve(&shared, stream));
        }
    });
    let status = child
        .wait()
        .map_err(|_| BrokerError::new(Rule::SpawnFailed))?;
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    // Everything the agent wrote reaches the viewers before they hear of its exit.
    let _ = drained.recv_timeout(DRAIN);
    let _ = std::fs::remove_file(&sock);
    let writers = {
        let mut st = shared.state.lock().expect("state lock");
        st.broadcast(&frame::encode(frame::EXIT, &code.to_be_bytes()));
        st.viewers.clear();
        std::mem::take(&mut st.writers)
    };
    for w in writers {
        let _ = w.join();
    }
    Ok(code)
}

/// Binds SOCK without listening; create-only: any file at the path refuses.
fn bind_socket(sock: &std::path::Path) -> Result<OwnedFd> {
    use nix::sys::socket::{bind, socket, AddressFamily, SockFlag, SockType, UnixAddr};
    let failed = || BrokerError::new(Rule::SocketBind);
    let addr = UnixAddr::new(sock).map_err(|_| failed())?;
    let fd = socket(
        AddressFamily::Unix,
        SockType::Stream,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|_| failed())?;
    if crate::negative::is(crate::negative::Defect::LenientMaster) {
        let _ = std::fs::remove_file(sock);
    }
    match bind(fd.as_raw_fd(), &addr) {
        Ok(()) => Ok(fd),
        Err(nix::errno::Errno::EADDRINUSE) => Err(Rule::SocketExists.into()),
        Err(_) => Err(failed()),
    }
}

fn listen(fd: OwnedFd, sock: &std::path::Path) -> Result<UnixListener> {
    use nix::sys::socket::{listen, Backlog};
    if listen(&fd, Backlog::new(128).unwrap_or(Backlog::MAXCONN)).is_err() {
        let _ = std::fs::remove_file(sock);
        return Err(Rule::SocketBind.into());
    }
    Ok(UnixListener::from(fd))
}

/// Keeps an inherited lock descriptor for the master's life, and out of the agent.
fn keep_lock_fd(fd: i32) -> Result<()> {
    let invalid = || BrokerError::new(Rule::LockFdInvalid);
    let flags = fcntl(fd, FcntlArg::F_GETFD).map_err(|_| invalid())?;
    let flags = FdFlag::from_bits_truncate(flags) | FdFlag::FD_CLOEXEC;
    fcntl(fd, FcntlArg::F_SETFD(flags)).map_err(|_| invalid())?;
    Ok(())
}

/// PTY output → ring, alternate-screen state, every viewer; until the PTY closes.
fn pump_output(shared: &Shared) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match std::io::Read::read(&mut &shared.pty, &mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // EIO: every slave descriptor closed (the agent and its children exited).
            Err(_) => return,
        };
        let data = &buf[..n];
        let mut st = shared.state.lock().expect("state lock");
        st.ring.push(data);
        st.screen.feed(data);
        st.broadcast(&frame::encode(frame::OUTPUT, data));
    }
}

/// Asks the master at `sock` to stop its agent (the stop frame after a hello); the
/// master then exits with it. False when no master accepts there.
pub fn request_stop(sock: &std::path::Path) -> bool {
    use std::io::Write;
    let Ok(mut s) = std::os::unix::net::UnixStream::connect(sock) else {
        return false;
    };
    let mut bytes = frame::encode(frame::HELLO, &frame::hello(None, None));
    bytes.extend(frame::encode(frame::STOP, &[]));
    s.write_all(&bytes).is_ok()
}

/// Sends SIGWINCH to the PTY's foreground process group: the redraw nudge.
pub(crate) fn nudge(shared: &Shared) {
    // SAFETY: the PTY descriptor is owned by `shared` and open for this call.
    let fd = unsafe { BorrowedFd::borrow_raw(shared.pty.as_raw_fd()) };
    let group = nix::unistd::tcgetpgrp(fd).unwrap_or(nix::unistd::Pid::from_raw(shared.child_pid));
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGWINCH);
}

/// The agent starts with the default disposition of the signals its master stops it
/// with, and none blocked: a broker started with SIGHUP ignored (under `nohup`, or as
/// a shell's background job, which ignores SIGINT and SIGQUIT) hands SIG_IGN down
/// through exec, and STOP's hangup would then leave the agent running.
fn default_signals() -> std::io::Result<()> {
    use nix::sys::signal::{signal, sigprocmask, SigHandler, SigSet, SigmaskHow, Signal};
    for s in [
        Signal::SIGHUP,
        Signal::SIGINT,
        Signal::SIGQUIT,
        Signal::SIGTERM,
        Signal::SIGPIPE,
    ] {
        // SAFETY: SigDfl installs no handler, so no Rust code runs in signal context.
        unsafe { signal(s, SigHandler::SigDfl) }.map_err(std::io::Error::from)?;
    }
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None).map_err(std::io::Error::from)
}
