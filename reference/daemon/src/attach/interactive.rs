//! `vxref pane attach --pane P`: the pane in this terminal. The terminal goes raw;
//! the snapshot and then live output are written to it as the stream carries them;
//! typed keys go to the pane as `I` frames and a window-size change as a `Z` frame
//! (docs/spec/attach.md). Ctrl-\ then `d` detaches, leaving the pane running. The
//! attach also ends when the pane exits (`X`) or is removed, when the daemon closes
//! the stream, or on SIGTERM, SIGHUP, SIGINT or SIGQUIT; the terminal is restored
//! first on every one of these paths.
//!
//! One loop owns the terminal's output and the connection's sending side; threads
//! only read (frames, keys, signals) and hand what they read to the loop through a
//! bounded queue, so a terminal slower than the pane's output stops the frame reader
//! and the daemon sees a lagging viewer, which reattaches with a fresh snapshot.

use super::client::{self, Attached, Frame, FrameSender};
use super::ring::CloseReason;
use super::terminal::{self, DetachKeys, RawMode, SignalEvent, SignalWaiter};
use crate::errors::{ApiError, ErrorCode, EXIT_OK};
use crate::manifest::{flag_name, Verb};
use clap::{Arg, Command};
use nix::sys::signal::Signal;
use serde_json::Value;
use std::io::{self, Read as _, Write as _};
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::time::Instant;

/// The interactive attach's limits, in one table.
pub mod limits {
    use std::time::Duration;

    /// How long a detach waits for the daemon's `CLOSE detached` before leaving anyway
    /// (the pane keeps running either way).
    pub const DETACH_WAIT: Duration = Duration::from_secs(2);
    /// Events (frames, keys, signals) waiting for the terminal loop. Output frames are
    /// at most 256 KiB, so the queue holds at most a few MiB.
    pub const QUEUE: usize = 16;
    /// Bytes read from the terminal at once.
    pub const KEY_READ: usize = 4096;
}

const AFTER_HELP: &str = "\
Keys:
  Ctrl-\\ then d            detach; the pane keeps running
  Ctrl-\\ then another key  send both keys to the pane
Resizing the terminal resizes the pane's window (a `Z` frame). Without write on
the pane the attach is read-only: keys other than the detach sequence are dropped.

The attach ends when the pane exits, when it is removed, when the daemon closes the
stream, on detach, or on SIGTERM/SIGHUP/SIGINT/SIGQUIT. The terminal settings are
restored, then one line on stderr says why. Exit status: 0 on detach, pane exit or
removal; 128+N on signal N; otherwise the error's code (unavailable.terminal when
standard input is not a terminal, unavailable.shutdown or unavailable.daemon when
the daemon goes away).";

/// The `attach` subcommand of the `pane` group.
pub fn command(verb: &'static Verb, name: &str) -> Command {
    let mut c = Command::new(name.to_string())
        .about("Attach this terminal to a pane: its screen, then live output; keys go to the pane (detach: Ctrl-\\ then d)")
        .after_help(AFTER_HELP);
    // Only the pane: `resume` serves programs that keep their own screen.
    if let Some(p) = verb.param("pane") {
        c = c.arg(
            Arg::new(p.name)
                .long(flag_name(p.name))
                .required(p.required)
                .value_name("PANE")
                .help(p.help),
        );
    }
    c
}

/// How an attach ended without an error: the reason line and the exit code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub reason: String,
    pub code: i32,
}

impl Ended {
    fn ok(reason: String) -> Ended {
        Ended {
            reason,
            code: EXIT_OK,
        }
    }

    fn signal(signal: Signal, pane: &str) -> Ended {
        Ended {
            reason: format!("ended by {}; pane {pane} keeps running", signal.as_str()),
            code: terminal::signal_exit_code(signal),
        }
    }
}

/// Attaches this terminal to `pane` (on the socket and with the token a CLI call
/// uses) until the attach ends. `Err` is a wire error object
/// (`{"code","message","data"}`). The terminal is restored before either return,
/// and a line break written first when the pane's output left the cursor mid-line.
pub fn run(socket_flag: Option<&Path>, pane: &str) -> Result<Ended, Value> {
    if !terminal::stdin_is_terminal() {
        return Err(ApiError::code(ErrorCode::Terminal).to_json());
    }
    let (socket, token) = crate::client::target(socket_flag).map_err(|e| e.to_json())?;
    let (socket, token) = (socket.as_path(), token.as_deref());
    let attached = client::attach(socket, token, pane, None).map_err(attach_error)?;
    let writable = attached.reply["input"] == true;
    if !writable {
        eprintln!("vxref: read-only attach (no write on the pane); Ctrl-\\ then d detaches");
    }
    // Before any thread starts, so every thread has them blocked.
    let signals = SignalWaiter::block().map_err(|_| internal())?;
    let raw = RawMode::enter().map_err(|_| {
        ApiError::new(
            ErrorCode::Terminal,
            "the terminal cannot be set to raw mode",
        )
        .to_json()
    })?;
    let (tx, rx) = mpsc::sync_channel(limits::QUEUE);
    spawn("vxref-signals", {
        let tx = tx.clone();
        move || loop {
            let event = signals.wait();
            let failed = event.is_err();
            if tx.send(Event::Signal(event)).is_err() || failed {
                return;
            }
        }
    })?;
    spawn("vxref-keys", {
        let tx = tx.clone();
        move || read_keys(tx)
    })?;
    let mut session = Session::new(socket, token, pane, writable, attached, tx, rx)?;
    let result = session.run();
    drop(raw);
    if session.mid_line {
        eprintln!();
    }
    result
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), Value> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .map(drop)
        .map_err(|_| internal())
}

fn internal() -> Value {
    ApiError::internal().to_json()
}

fn daemon_gone() -> Value {
    ApiError::new(ErrorCode::Daemon, "the daemon closed the connection").to_json()
}

fn attach_error(e: Result<Value, io::Error>) -> Value {
    e.unwrap_or_else(|_| ApiError::code(ErrorCode::Daemon).to_json())
}

/// What the reader threads hand to the loop.
enum Event {
    /// A frame of connection `generation` (a reattach starts a new one).
    Frame {
        generation: u64,
        frame: io::Result<Option<Frame>>,
    },
    /// Typed bytes; empty when the terminal closed.
    Typed(io::Result<Vec<u8>>),
    Signal(io::Result<SignalEvent>),
}

fn read_keys(tx: SyncSender<Event>) {
    let mut buf = vec![0u8; limits::KEY_READ];
    let mut stdin = io::stdin().lock();
    loop {
        let read = match stdin.read(&mut buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => r.map(|n| buf[..n].to_vec()),
        };
        let end = !matches!(&read, Ok(b) if !b.is_empty());
        if tx.send(Event::Typed(read)).is_err() || end {
            return;
        }
    }
}

fn read_frames(mut attached: Attached, generation: u64, tx: SyncSender<Event>) {
    loop {
        let frame = attached.read_frame();
        let end = !matches!(frame, Ok(Some(_)));
        if tx.send(Event::Frame { generation, frame }).is_err() || end {
            return;
        }
    }
}

struct Session<'a> {
    socket: &'a Path,
    token: Option<&'a str>,
    pane: &'a str,
    writable: bool,
    source: String,
    /// The offset of the next output byte.
    offset: u64,
    generation: u64,
    sender: FrameSender,
    keys: DetachKeys,
    /// The size last sent in a `Z` frame (or reported by the attach reply).
    size: Option<(u16, u16)>,
    /// Set once `D` was sent: the loop waits this long for `CLOSE detached`.
    detach_deadline: Option<Instant>,
    /// The last byte written to the terminal was not a line feed.
    mid_line: bool,
    tx: SyncSender<Event>,
    rx: Receiver<Event>,
}

impl<'a> Session<'a> {
    fn new(
        socket: &'a Path,
        token: Option<&'a str>,
        pane: &'a str,
        writable: bool,
        attached: Attached,
        tx: SyncSender<Event>,
        rx: Receiver<Event>,
    ) -> Result<Session<'a>, Value> {
        let size = reply_size(&attached.reply);
        let sender = attached.sender().map_err(|_| daemon_gone())?;
        let mut s = Session {
            socket,
            token,
            pane,
            writable,
            source: String::new(),
            offset: 0,
            generation: 0,
            sender,
            keys: DetachKeys::default(),
            size,
            detach_deadline: None,
            mid_line: false,
            tx,
            rx,
        };
        s.start_reader(attached)?;
        Ok(s)
    }

    /// Takes over a freshly attached connection (whose sending side is already
    /// `self.sender`): its source, offset and a reader of its frames.
    fn start_reader(&mut self, attached: Attached) -> Result<(), Value> {
        self.source = attached.source().to_string();
        self.offset = attached.offset();
        self.generation += 1;
        let (generation, tx) = (self.generation, self.tx.clone());
        spawn("vxref-frames", move || {
            read_frames(attached, generation, tx)
        })
    }

    fn run(&mut self) -> Result<Ended, Value> {
        self.send_size()?;
        loop {
            let event = match self.detach_deadline {
                None => self.rx.recv().map_err(|_| internal())?,
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    match self.rx.recv_timeout(left) {
                        Ok(e) => e,
                        Err(RecvTimeoutError::Timeout) => return Ok(self.detached()),
                        Err(RecvTimeoutError::Disconnected) => return Err(internal()),
                    }
                }
            };
            let ended = match event {
                Event::Frame { generation, .. } if generation != self.generation => None,
                Event::Frame { frame, .. } => self.on_frame(frame)?,
                Event::Typed(Ok(typed)) if !typed.is_empty() => self.on_keys(&typed)?,
                Event::Typed(_) => Some(Ended {
                    reason: format!("the terminal closed; pane {} keeps running", self.pane),
                    code: terminal::signal_exit_code(Signal::SIGHUP),
                }),
                Event::Signal(Ok(SignalEvent::Resized)) => {
                    self.send_size()?;
                    None
                }
                Event::Signal(Ok(SignalEvent::Stop(s))) => Some(Ended::signal(s, self.pane)),
                // No more signals will be seen; the attach goes on without them.
                Event::Signal(Err(_)) => None,
            };
            if let Some(ended) = ended {
                return Ok(ended);
            }
        }
    }

    fn detached(&self) -> Ended {
        Ended::ok(format!(
            "detached from pane {}; it keeps running",
            self.pane
        ))
    }

    fn on_keys(&mut self, typed: &[u8]) -> Result<Option<Ended>, Value> {
        if self.detach_deadline.is_some() {
            return Ok(None);
        }
        let keys = self.keys.feed(typed);
        if self.writable && !keys.input.is_empty() {
            self.sender
                .send_input(&keys.input)
                .map_err(|_| daemon_gone())?;
        }
        if keys.detach {
            if self.sender.send_detach().is_err() {
                return Ok(Some(self.detached()));
            }
            self.detach_deadline = Some(Instant::now() + limits::DETACH_WAIT);
        }
        Ok(None)
    }

    fn on_frame(&mut self, frame: io::Result<Option<Frame>>) -> Result<Option<Ended>, Value> {
        let detaching = self.detach_deadline.is_some();
        let frame = match frame {
            Ok(Some(f)) => f,
            // After a detach the daemon may close before its `CLOSE` is read.
            _ if detaching => return Ok(Some(self.detached())),
            _ => return Err(daemon_gone()),
        };
        match frame {
            Frame::Snapshot(bytes) => Ok(self.show(&bytes)),
            Frame::Output { offset, bytes } => {
                self.offset = offset + bytes.len() as u64;
                Ok(self.show(&bytes))
            }
            Frame::Ready => Ok(None),
            // A detach under way waits for its `CLOSE`.
            Frame::Exit(_) if detaching => Ok(None),
            Frame::Exit(status) => Ok(Some(Ended::ok(format!(
                "pane {} exited ({})",
                self.pane,
                exit_description(&status)
            )))),
            Frame::Close(reason) => self.on_close(&reason),
            Frame::Other(..) => Err(ApiError::new(
                ErrorCode::Internal,
                "the daemon sent a frame the attach protocol does not define",
            )
            .to_json()),
        }
    }

    fn on_close(&mut self, reason: &str) -> Result<Option<Ended>, Value> {
        let Some(reason) = CloseReason::parse(reason) else {
            return Err(ApiError::new(
                ErrorCode::Internal,
                "the stream closed for an unknown reason",
            )
            .to_json());
        };
        match reason {
            CloseReason::Detached => Ok(Some(self.detached())),
            CloseReason::PaneRemoved => {
                Ok(Some(Ended::ok(format!("pane {} was removed", self.pane))))
            }
            // The viewer fell out of the ring: attach again from its offset, which
            // brings a fresh snapshot (docs/spec/attach.md).
            CloseReason::Lagging => {
                let resume = Some((self.source.as_str(), self.offset));
                let attached = client::attach(self.socket, self.token, self.pane, resume)
                    .map_err(attach_error)?;
                self.sender = attached.sender().map_err(|_| daemon_gone())?;
                self.start_reader(attached)?;
                Ok(None)
            }
            CloseReason::Shutdown => Err(ApiError::code(ErrorCode::Shutdown).to_json()),
            CloseReason::Denied => Err(ApiError::code(ErrorCode::DeniedWrite).to_json()),
            CloseReason::Protocol => Err(ApiError::new(
                ErrorCode::Internal,
                "the daemon refused a frame of this client",
            )
            .to_json()),
        }
    }

    /// Writes stream bytes to the terminal as they are; a terminal that cannot be
    /// written to any more ends the attach.
    fn show(&mut self, bytes: &[u8]) -> Option<Ended> {
        let &last = bytes.last()?;
        let mut out = io::stdout().lock();
        match out.write_all(bytes).and_then(|()| out.flush()) {
            Ok(()) => {
                self.mid_line = last != b'\n';
                None
            }
            Err(_) => Some(Ended {
                reason: format!("the terminal closed; pane {} keeps running", self.pane),
                code: terminal::signal_exit_code(Signal::SIGHUP),
            }),
        }
    }

    /// Sends the terminal's size when it differs from the last one sent; only a
    /// viewer with write may (`Z` without it closes the stream `denied`).
    fn send_size(&mut self) -> Result<(), Value> {
        let Some(size) = terminal::window_size() else {
            return Ok(());
        };
        if !self.writable || self.size == Some(size) {
            return Ok(());
        }
        self.sender
            .send_resize(size.0, size.1)
            .map_err(|_| daemon_gone())?;
        self.size = Some(size);
        Ok(())
    }
}

fn reply_size(reply: &Value) -> Option<(u16, u16)> {
    let dim = |k: &str| reply[k].as_u64().and_then(|n| u16::try_from(n).ok());
    Some((dim("cols")?, dim("rows")?))
}

/// `exit code 3`, `signal SIGKILL`, from an `X` payload.
fn exit_description(status: &Value) -> String {
    if let Some(code) = status["exit_code"].as_i64() {
        format!("exit code {code}")
    } else if let Some(signal) = status["signal"].as_str() {
        format!("signal {signal}")
    } else {
        "no exit status".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exit_descriptions_name_the_code_or_signal() {
        assert_eq!(exit_description(&json!({"exit_code": 3})), "exit code 3");
        assert_eq!(
            exit_description(&json!({"signal": "SIGKILL"})),
            "signal SIGKILL"
        );
        assert_eq!(exit_description(&json!({})), "no exit status");
    }

    #[test]
    fn the_reply_size_is_read_only_when_it_fits() {
        assert_eq!(reply_size(&json!({"cols": 80, "rows": 24})), Some((80, 24)));
        assert_eq!(reply_size(&json!({"cols": 70000, "rows": 24})), None);
        assert_eq!(reply_size(&json!({})), None);
    }

    #[test]
    fn every_close_reason_parses() {
        for r in CloseReason::ALL {
            assert_eq!(CloseReason::parse(r.as_str()), Some(r));
        }
        assert_eq!(CloseReason::parse("nonsense"), None);
    }

    #[test]
    fn the_help_names_the_detach_keys() {
        let verb = crate::manifest::VerbId::PaneAttach.verb();
        let help = command(verb, "attach").render_long_help().to_string();
        assert!(help.contains("Ctrl-\\ then d"), "{help}");
        assert!(help.contains("--pane"), "{help}");
        assert!(!help.contains("--resume"), "{help}");
    }
}
