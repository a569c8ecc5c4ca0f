//! Panes over real PTYs (`pty-process` opens them; `spawn.rs` starts the child with
//! `posix_spawn`): each child runs in its own session and process group with the PTY
//! as its controlling terminal. A supervisor task per pane
//! reads output into the pane's emulator, waits for the child, delivers signals to its
//! process group while the leader is not yet reaped (so the group ID cannot have been
//! reused), and reports the exit. A writer task per pane drains its input queue, so a
//! program that does not read its input never blocks the daemon.

use crate::attach::feed::{Feeder, HIGH_WATER};
use crate::attach::ring::{ExitStatus, PaneOutput};
use crate::emulator::Emulator;
use crate::ids::PaneId;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::sync::mpsc;
use tokio::time::{sleep_until, Instant};

/// How long a removed pane's group has between SIGHUP and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_millis(2000);
/// After the child is reaped, output still in the PTY is read until EOF or this idle gap.
const DRAIN_IDLE: Duration = Duration::from_millis(100);
const DRAIN_MAX: Duration = Duration::from_millis(1000);
/// Pending input chunks per pane.
const INPUT_QUEUE: usize = 1024;

/// Signals the reactor asks a supervisor to deliver to the pane's process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Shutdown, first phase.
    Terminate,
    /// Shutdown, at the deadline.
    Kill,
    /// The pane was removed: SIGHUP now, SIGKILL after [`KILL_GRACE`].
    Remove,
}

/// A supervisor's report to the reactor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exited {
    pub pane: PaneId,
    pub exit_code: Option<i32>,
    /// Symbolic name (`SIGTERM`), matching `SIG[A-Z0-9]+`.
    pub signal: Option<String>,
}

/// The reactor's handle on a live pane.
pub struct PaneHandle {
    pub pid: u32,
    pub emulator: Arc<Mutex<Emulator>>,
    /// Everything read from the PTY, for `pane.attach` viewers.
    pub output: Arc<PaneOutput>,
    input: mpsc::Sender<Vec<u8>>,
    control: mpsc::UnboundedSender<Control>,
    /// A duplicate of the PTY master, used only to set the window size.
    winsize: OwnedFd,
}

#[derive(Debug, PartialEq, Eq)]
pub enum InputError {
    Full,
    Closed,
}

impl PaneHandle {
    pub fn send_input(&self, bytes: Vec<u8>) -> Result<(), InputError> {
        self.input.try_send(bytes).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => InputError::Full,
            mpsc::error::TrySendError::Closed(_) => InputError::Closed,
        })
    }

    /// The pane's input queue, for an attached viewer's input frames.
    pub fn input_sender(&self) -> mpsc::Sender<Vec<u8>> {
        self.input.clone()
    }

    /// Resizes the emulator and the PTY; the kernel sends SIGWINCH to the foreground group.
    pub fn resize(&self, cols: u16, rows: u16) {
        if let Ok(mut e) = self.emulator.lock() {
            e.resize(cols, rows);
        }
        let _ = rustix::termios::tcsetwinsize(
            self.winsize.as_fd(),
            rustix::termios::Winsize {
                ws_row: rows,
                ws_col: cols,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        );
    }

    pub fn control(&self, c: Control) {
        let _ = self.control.send(c);
    }
}

/// Why a spawn failed. Carries no argv or path.
#[derive(Debug)]
pub struct SpawnError;

/// What to run. `env` is added to the daemon's environment.
pub struct SpawnSpec<'a> {
    pub argv: &'a [String],
    pub cols: u16,
    pub rows: u16,
    pub env: Vec<(String, String)>,
    /// The working directory (default: the daemon's).
    pub cwd: Option<&'a str>,
    pub history_rows: usize,
}

/// Starts `spec.argv` on a fresh PTY. Must run inside the tokio runtime.
pub fn spawn(
    pane: PaneId,
    spec: SpawnSpec<'_>,
    exits: mpsc::UnboundedSender<Exited>,
) -> Result<PaneHandle, SpawnError> {
    let (pty, pts) = pty_process::open().map_err(|_| SpawnError)?;
    pty.resize(pty_process::Size::new(spec.rows, spec.cols))
        .map_err(|_| SpawnError)?;
    let tty = rustix::pty::ptsname(pty.as_fd(), Vec::new()).map_err(|_| SpawnError)?;
    // The parent's slave fd keeps the PTY open until the child holds its own (the
    // child opens it before its exec, and posix_spawn returns after the exec).
    let child =
        crate::spawn::spawn_on_tty(spec.argv, &spec.env, spec.cwd, &tty).map_err(|_| SpawnError)?;
    drop(pts);
    let pid = child.id();
    let winsize = rustix::io::fcntl_dupfd_cloexec(pty.as_fd(), 0).map_err(|_| SpawnError)?;
    let (reader, writer) = pty.into_split();
    let emulator = Arc::new(Mutex::new(Emulator::new(
        spec.cols,
        spec.rows,
        spec.history_rows,
    )));
    let output = PaneOutput::new();
    let (input_tx, input_rx) = mpsc::channel(INPUT_QUEUE);
    let (control_tx, control_rx) = mpsc::unbounded_channel();
    tokio::spawn(write_input(writer, input_rx));
    tokio::spawn(supervise(Supervisor {
        pane,
        pid,
        child,
        reader,
        feeder: Feeder::new(emulator.clone(), output.clone()),
        output: output.clone(),
        control: control_rx,
        exits,
    }));
    Ok(PaneHandle {
        pid,
        emulator,
        output,
        input: input_tx,
        control: control_tx,
        winsize,
    })
}

async fn write_input(mut writer: pty_process::OwnedWritePty, mut queue: mpsc::Receiver<Vec<u8>>) {
    while let Some(bytes) = queue.recv().await {
        if writer.write_all(&bytes).await.is_err() {
            break;
        }
    }
}

struct Supervisor {
    pane: PaneId,
    pid: u32,
    child: crate::spawn::Child,
    reader: pty_process::OwnedReadPty,
    output: Arc<PaneOutput>,
    feeder: Arc<Feeder>,
    control: mpsc::UnboundedReceiver<Control>,
    exits: mpsc::UnboundedSender<Exited>,
}

fn signal_group(pid: u32, signal: Signal) {
    if let Ok(raw) = i32::try_from(pid) {
        let _ = killpg(Pid::from_raw(raw), signal);
    }
}

/// The reader only appends; the emulator is fed from the ring by the pane's
/// [`Feeder`], so the most expensive per-byte work runs beside the reading.
fn feed(output: &PaneOutput, bytes: &[u8]) {
    output.append_quiet(bytes);
}

/// Output read in one burst before viewers are woken and the supervisor's other
/// duties (signals, exit) get a turn.
const BURST: usize = 256 * 1024;

/// A PTY read's buffer. Reads return at most a few KiB; a larger buffer only costs
/// memory while a pane reads.
const READ_BUF: usize = 16 * 1024;

/// Reads while output is already waiting (a PTY read returns at most a few KiB), so
/// a fast producer wakes viewers once per burst. Returns the bytes read and whether
/// the PTY reached its end. The buffer lives only as long as the burst: an idle pane
/// holds none (it was 16 KiB of each idle pane's ~17).
fn read_burst(s: &mut Supervisor) -> (usize, bool) {
    use std::future::Future as _;
    let mut buf = vec![0u8; READ_BUF];
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut done = 0;
    while done < BURST {
        let read = std::pin::pin!(s.reader.read(&mut buf)).poll(&mut cx);
        match read {
            std::task::Poll::Ready(Ok(n)) if n > 0 => {
                feed(&s.output, &buf[..n]);
                done += n;
            }
            std::task::Poll::Ready(_) => return (done, true),
            std::task::Poll::Pending => break,
        }
    }
    (done, false)
}

/// Under a flood, viewers are woken at most once per this interval (the first output
/// after a quiet spell wakes them at once), so each wake moves a large frame instead
/// of one PTY read's worth.
const WAKE_EVERY: Duration = Duration::from_millis(2);

async fn supervise(mut s: Supervisor) {
    let mut eof = false;
    let mut control_open = true;
    let mut kill_at: Option<Instant> = None;
    let mut signalled = false;
    let mut next_wake = Instant::now();
    let mut held = false;
    let status = loop {
        // Back-pressure: un-fed output must stay in the ring (see attach::feed).
        let backlogged = s.feeder.backlog() > HIGH_WATER;
        tokio::select! {
            () = s.feeder.progressed(), if backlogged => {}
            // An empty read waits for the PTY to be readable without a buffer: it
            // resolves (with 0) once output or the end is there, and the burst reads.
            ready = s.reader.read(&mut []), if !eof && !backlogged => match ready {
                Err(_) => eof = true,
                Ok(_) => {
                    let (n, at_end) = read_burst(&mut s);
                    eof = at_end;
                    if n == 0 {
                        continue;
                    }
                    s.feeder.kick();
                    let now = Instant::now();
                    held = now < next_wake;
                    if !held {
                        s.output.announce();
                        next_wake = now + WAKE_EVERY;
                    }
                }
            },
            _ = sleep_until(next_wake), if held => {
                held = false;
                s.output.announce();
                next_wake = Instant::now() + WAKE_EVERY;
            }
            ended = s.child.wait() => break ended,
            c = s.control.recv(), if control_open => match c {
                Some(Control::Terminate) => { signalled = true; signal_group(s.pid, Signal::SIGTERM) }
                Some(Control::Kill) => { signalled = true; signal_group(s.pid, Signal::SIGKILL) }
                Some(Control::Remove) => {
                    signalled = true;
                    signal_group(s.pid, Signal::SIGHUP);
                    kill_at = Some(Instant::now() + KILL_GRACE);
                }
                None => control_open = false,
            },
            _ = async { sleep_until(kill_at.unwrap_or_else(Instant::now)).await }, if kill_at.is_some() => {
                kill_at = None;
                signal_group(s.pid, Signal::SIGKILL);
            }
        }
    };
    // Output written just before exit may still be in the PTY; a pane being torn down
    // does not wait for it.
    if !eof && !signalled {
        let mut buf = vec![0u8; READ_BUF];
        let until = Instant::now() + DRAIN_MAX;
        while Instant::now() < until {
            match tokio::time::timeout(DRAIN_IDLE, s.reader.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => {
                    feed(&s.output, &buf[..n]);
                    s.feeder.kick();
                    s.output.announce();
                    if s.feeder.backlog() > HIGH_WATER {
                        s.feeder.flush().await;
                    }
                }
                _ => break,
            }
        }
    }
    let (exit_code, signal) = match status {
        crate::spawn::Ended::Code(code) => (Some(code), None),
        crate::spawn::Ended::Signal(sig) => (None, Some(signal_name(sig))),
        crate::spawn::Ended::Unknown => (None, None),
    };
    // A capture after the exit must see all output.
    s.feeder.flush().await;
    // Every byte is in the ring by now, so viewers send EXIT after the last output.
    s.output.set_exit(ExitStatus {
        exit_code,
        signal: signal.clone(),
    });
    let _ = s.exits.send(Exited {
        pane: s.pane,
        exit_code,
        signal,
    });
}

/// `SIGTERM` for 15; unknown numbers become `SIG<n>` (still `SIG[A-Z0-9]+`).
pub fn signal_name(sig: i32) -> String {
    Signal::try_from(sig).map_or_else(|_| format!("SIG{sig}"), |s| s.as_str().to_string())
}
