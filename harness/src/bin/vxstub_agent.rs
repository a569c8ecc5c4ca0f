//! `vxstub agent`: the single-writer suite's stand-in for an agent CLI (claude,
//! opencode, …) run by a broker's master on a PTY. It does only what the suite
//! observes:
//!
//! - it holds `<history>/<engine>@<id>.writer` with `flock(LOCK_EX|LOCK_NB)` for its
//!   whole life; when another process holds it, a second writer of one session is
//!   running: it writes `<engine>@<id>.violation.<pid>` and exits 97;
//! - it appends its turns to `<history>/<engine>@<id>.jsonl` (`start`, `input`,
//!   `winch` with the PTY size, `minted`), so the suite sees what reached it;
//! - input lines are commands: `seq N` prints N bytes, `alt on|off` enters or leaves
//!   the alternate screen, `exit C` exits with C; anything else is only logged;
//! - SIGWINCH (the redraw nudge, or a resize) is logged and answered with `redraw`;
//! - `fork` starts a background process (`vxstub background`) in a session of its
//!   own, as an agent's tool would, and logs `forked` with its PID: it inherits
//!   every descriptor the agent holds without close-on-exec;
//! - without `--id` (an engine that mints its own ids, `pin = "none"`) it mints
//!   `ses_Stub<pid>` on its first input line and appends `id<TAB>cwd` to `--index`.
//!
//! A hang-up (the master going away, a retire) ends it without logging, so a retired
//! session's history is exactly what the agent wrote while it ran.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::Args;
use nix::fcntl::{Flock, FlockArg};
use serde_json::{json, Value};

/// Exit status of a second writer of one session (the violation the suite looks for).
const SECOND_WRITER_EXIT: i32 = 97;
/// Longest input line kept; longer input is cut (the suite's commands are short).
const MAX_LINE: usize = 4096;

#[derive(Args, Debug)]
pub struct AgentArgs {
    /// The engine name (the first half of the physical key).
    #[arg(long)]
    engine: String,
    /// The session's native id; absent for an engine that mints its own.
    #[arg(long)]
    id: Option<String>,
    /// Where history, the writer lock and violations go.
    #[arg(long)]
    history: PathBuf,
    /// The engine's id index (for minting).
    #[arg(long)]
    index: Option<PathBuf>,
    /// Started by the engine's `resume` template rather than `launch`.
    #[arg(long)]
    resume: bool,
}

static WINCH: AtomicBool = AtomicBool::new(false);

extern "C" fn on_winch(_: nix::libc::c_int) {
    WINCH.store(true, Ordering::SeqCst);
}

/// One session's files, once its id is known.
struct Session {
    log: File,
    _writer: Flock<File>,
}

fn physical(engine: &str, id: &str) -> String {
    format!("{engine}@{id}")
}

/// Takes the session's writer lock and opens its history; `Err(code)` ends the agent.
fn claim(a: &AgentArgs, id: &str) -> Result<Session, i32> {
    let name = physical(&a.engine, id);
    let open = |path: PathBuf, append: bool| {
        OpenOptions::new()
            .read(true)
            .write(!append)
            .append(append)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
    };
    let lock = open(a.history.join(format!("{name}.writer")), false).map_err(|_| 1)?;
    let writer = match Flock::lock(lock, FlockArg::LockExclusiveNonblock) {
        Ok(w) => w,
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
            let file = a
                .history
                .join(format!("{name}.violation.{}", std::process::id()));
            let note = json!({"pid": std::process::id(), "session": name});
            let _ = std::fs::write(file, format!("{note}\n"));
            return Err(SECOND_WRITER_EXIT);
        }
        Err(_) => return Err(1),
    };
    let log = open(a.history.join(format!("{name}.jsonl")), true).map_err(|_| 1)?;
    Ok(Session {
        log,
        _writer: writer,
    })
}

fn turn(session: &mut Option<Session>, line: Value) {
    // One write per turn: a reader polling the history for a line never sees it
    // without its newline (writeln! on a File writes in pieces).
    if let Some(s) = session {
        let _ = s.log.write_all(format!("{line}\n").as_bytes());
    }
}

fn winsize() -> (u16, u16) {
    let mut ws = nix::libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct we own; fd 0 is ours.
    let rc = unsafe { nix::libc::ioctl(0, nix::libc::TIOCGWINSZ, &mut ws) };
    if rc == 0 {
        (ws.ws_col, ws.ws_row)
    } else {
        (0, 0)
    }
}

fn raw_stdin() {
    use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};
    let stdin = std::io::stdin();
    if let Ok(mut t) = tcgetattr(stdin.as_fd()) {
        cfmakeraw(&mut t);
        let _ = tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &t);
    }
}

fn out(bytes: &[u8]) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(bytes);
    let _ = o.flush();
}

/// `seq N`: N bytes of a-z, cycling.
fn print_seq(n: u64) {
    let chunk: Vec<u8> = (0..8192u32).map(|i| b'a' + (i % 26) as u8).collect();
    let mut left = n;
    while left > 0 {
        let k = left.min(chunk.len() as u64) as usize;
        out(&chunk[..k]);
        left -= k as u64;
    }
}

pub fn run(a: &AgentArgs) -> i32 {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    let installed = unsafe {
        nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGWINCH,
            nix::sys::signal::SigHandler::Handler(on_winch),
        )
    };
    if installed.is_err() {
        return 1;
    }
    let mut session = match &a.id {
        Some(id) => match claim(a, id) {
            Ok(s) => Some(s),
            Err(code) => return code,
        },
        None => None,
    };
    let mode = if a.resume { "resume" } else { "launch" };
    turn(
        &mut session,
        json!({"turn": "start", "pid": std::process::id(), "mode": mode}),
    );
    raw_stdin();
    out(format!(
        "vxstub agent ready pid={} mode={mode}\r\n",
        std::process::id()
    )
    .as_bytes());
    let mut line: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if WINCH.swap(false, Ordering::SeqCst) {
            let (cols, rows) = winsize();
            turn(
                &mut session,
                json!({"turn": "winch", "cols": cols, "rows": rows}),
            );
            out(b"redraw\r\n");
        }
        let stdin = std::io::stdin();
        let mut fds = [nix::poll::PollFd::new(
            stdin.as_fd(),
            nix::poll::PollFlags::POLLIN,
        )];
        match nix::poll::poll(&mut fds, nix::poll::PollTimeout::from(50u16)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return 0,
            Ok(_) => {}
        }
        let n = match nix::unistd::read(0, &mut buf) {
            Ok(0) => return 0,
            Ok(n) => n,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return 0,
        };
        for &b in &buf[..n] {
            if b != b'\r' && b != b'\n' {
                if line.len() < MAX_LINE {
                    line.push(b);
                }
                continue;
            }
            if line.is_empty() {
                continue;
            }
            let text = String::from_utf8_lossy(&std::mem::take(&mut line)).into_owned();
            if session.is_none() {
                match mint(a) {
                    Ok(s) => session = Some(s),
                    Err(code) => return code,
                }
            }
            turn(&mut session, json!({"turn": "input", "line": text}));
            if text == "fork" {
                fork_background(a, &mut session);
            }
            if let Some(code) = command(&text) {
                return code;
            }
        }
    }
}

/// `fork`: a background process that outlives the master's hang-up (its own
/// session) and inherits what the agent holds without close-on-exec.
fn fork_background(a: &AgentArgs, session: &mut Option<Session>) {
    use std::os::unix::process::CommandExt;
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("background")
        .arg("--history")
        .arg(&a.history)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: the hook runs in the forked child before exec and calls only setsid,
    // which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(|_| ())
                .map_err(std::io::Error::from)
        });
    }
    if let Ok(child) = cmd.spawn() {
        turn(session, json!({"turn": "forked", "pid": child.id()}));
    }
}

/// Runs one command line; `Some(code)` ends the agent.
fn command(text: &str) -> Option<i32> {
    let mut words = text.split_whitespace();
    match (words.next(), words.next()) {
        (Some("seq"), Some(n)) => print_seq(n.parse().unwrap_or(0)),
        (Some("alt"), Some("on")) => out(b"\x1b[?1049h"),
        (Some("alt"), Some("off")) => out(b"\x1b[?1049l"),
        (Some("exit"), Some(c)) => return Some(c.parse().unwrap_or(1)),
        _ => {}
    }
    None
}

/// A self-minting engine's first turn: a new `ses_…` id, published in the index.
fn mint(a: &AgentArgs) -> Result<Session, i32> {
    let id = format!("ses_Stub{}", std::process::id());
    let session = claim(a, &id)?;
    if let Some(index) = &a.index {
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(index)
            .map_err(|_| 1)?;
        // One write: the broker polls the index and must never read half a line (a
        // cut id is still an id).
        let line = format!("{id}\t{}\n", cwd.display());
        f.write_all(line.as_bytes()).map_err(|_| 1)?;
    }
    let mut s = Some(session);
    turn(&mut s, json!({"turn": "minted", "id": id}));
    s.ok_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(history: &std::path::Path) -> AgentArgs {
        AgentArgs {
            engine: "claude".into(),
            id: Some("6a73c0de-1234-4abc-8def-0123456789ab".into()),
            history: history.to_path_buf(),
            index: None,
            resume: false,
        }
    }

    /// A second writer of one session exits 97 and leaves a violation file; the
    /// first keeps its lock and its history.
    #[test]
    fn a_second_writer_is_refused_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let a = args(dir.path());
        let mut first = Some(claim(&a, a.id.as_deref().unwrap()).map_err(|_| ()).unwrap());
        assert_eq!(
            claim(&a, a.id.as_deref().unwrap()).err(),
            Some(SECOND_WRITER_EXIT)
        );
        let violations: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".violation."))
            .collect();
        assert_eq!(violations.len(), 1);
        turn(&mut first, json!({"turn": "input", "line": "x"}));
        let log = std::fs::read_to_string(
            dir.path()
                .join("claude@6a73c0de-1234-4abc-8def-0123456789ab.jsonl"),
        )
        .unwrap();
        assert_eq!(log, "{\"line\":\"x\",\"turn\":\"input\"}\n");
        drop(first);
        assert!(
            claim(&a, a.id.as_deref().unwrap()).is_ok(),
            "the lock frees with its holder"
        );
    }

    #[test]
    fn commands() {
        assert_eq!(command("exit 3"), Some(3));
        assert_eq!(command("seq 0"), None);
        assert_eq!(command("anything else"), None);
    }
}
