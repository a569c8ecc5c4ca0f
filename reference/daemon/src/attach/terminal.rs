//! The controlling terminal of `vxref pane attach`: raw mode that is undone on every
//! way out, the signals that end or resize an attach, the window size, and the
//! detach key sequence. Everything here goes through glibc (`nix`, `rustix` with
//! `use-libc`).

use nix::sys::signal::{SigSet, Signal};
use nix::sys::termios::{self, SetArg, Termios};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

/// The first key of the detach sequence: Ctrl-\ (FS, 0x1c).
pub const DETACH_PREFIX: u8 = 0x1c;
/// The second key of the detach sequence.
pub const DETACH_KEY: u8 = b'd';

/// Whether standard input is a terminal.
pub fn stdin_is_terminal() -> bool {
    rustix::termios::isatty(io::stdin().as_fd())
}

/// The terminal's size as `(cols, rows)`; None when unknown or zero.
pub fn window_size() -> Option<(u16, u16)> {
    let ws = rustix::termios::tcgetwinsize(io::stdin().as_fd()).ok()?;
    (ws.ws_col > 0 && ws.ws_row > 0).then_some((ws.ws_col, ws.ws_row))
}

/// Standard input in raw mode while this lives; dropping it (normal return, an error,
/// a panic's unwinding) puts back the settings it found.
pub struct RawMode {
    saved: Termios,
}

impl RawMode {
    pub fn enter() -> io::Result<RawMode> {
        let stdin = io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd())?;
        let mut raw = saved.clone();
        termios::cfmakeraw(&mut raw);
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSADRAIN, &raw)?;
        Ok(RawMode { saved })
    }

    fn restore(&self, fd: BorrowedFd<'_>) {
        // TCSADRAIN: output already written is shown under the raw settings it was
        // written for. A terminal that hung up cannot be restored, nor needs to be.
        let _ = termios::tcsetattr(fd, SetArg::TCSADRAIN, &self.saved);
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        self.restore(io::stdin().as_fd());
    }
}

/// What a signal means for an attach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalEvent {
    /// The terminal changed size.
    Resized,
    /// A request to stop (SIGTERM, SIGHUP, SIGINT, SIGQUIT): restore and exit.
    Stop(Signal),
}

const STOP_SIGNALS: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGINT,
    Signal::SIGQUIT,
];

/// The signals an attach handles, blocked in the calling thread (and so in every
/// thread it starts afterwards) and taken one by one by [`SignalWaiter::wait`]:
/// no handler runs in signal context, and none can end the process before the
/// terminal is restored. Call it before starting any thread.
pub struct SignalWaiter {
    set: SigSet,
}

impl SignalWaiter {
    pub fn block() -> io::Result<SignalWaiter> {
        let mut set = SigSet::empty();
        set.add(Signal::SIGWINCH);
        for s in STOP_SIGNALS {
            set.add(s);
        }
        set.thread_block()?;
        Ok(SignalWaiter { set })
    }

    /// The next of the blocked signals, waiting for it.
    pub fn wait(&self) -> io::Result<SignalEvent> {
        loop {
            match self.set.wait()? {
                Signal::SIGWINCH => return Ok(SignalEvent::Resized),
                s if STOP_SIGNALS.contains(&s) => return Ok(SignalEvent::Stop(s)),
                _ => continue,
            }
        }
    }
}

/// The exit code of a process stopped by `signal`, as shells report it.
pub fn signal_exit_code(signal: Signal) -> i32 {
    128 + signal as i32
}

/// Splits typed bytes into what goes to the pane and the detach sequence: Ctrl-\
/// then `d` detaches; Ctrl-\ then any other byte sends both as typed. A Ctrl-\ at
/// the end of one read waits for the next.
#[derive(Debug, Default)]
pub struct DetachKeys {
    prefix_pending: bool,
}

/// What one read of keys asks for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Keys {
    /// Bytes for the pane, in order.
    pub input: Vec<u8>,
    /// The detach sequence was typed; bytes after it are dropped.
    pub detach: bool,
}

impl DetachKeys {
    pub fn feed(&mut self, typed: &[u8]) -> Keys {
        let mut keys = Keys::default();
        for &b in typed {
            if self.prefix_pending {
                self.prefix_pending = false;
                if b == DETACH_KEY {
                    keys.detach = true;
                    return keys;
                }
                keys.input.push(DETACH_PREFIX);
                if b == DETACH_PREFIX {
                    self.prefix_pending = true;
                    continue;
                }
                keys.input.push(b);
            } else if b == DETACH_PREFIX {
                self.prefix_pending = true;
            } else {
                keys.input.push(b);
            }
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed_all(reads: &[&[u8]]) -> (Vec<u8>, bool) {
        let mut keys = DetachKeys::default();
        let mut input = Vec::new();
        for r in reads {
            let k = keys.feed(r);
            input.extend(k.input);
            if k.detach {
                return (input, true);
            }
        }
        (input, false)
    }

    #[test]
    fn ctrl_backslash_then_d_detaches_and_drops_what_follows() {
        assert_eq!(feed_all(&[b"ls\x1cdrest"]), (b"ls".to_vec(), true));
        assert_eq!(feed_all(&[b"ls\x1c", b"d"]), (b"ls".to_vec(), true));
    }

    #[test]
    fn other_keys_pass_through_with_the_prefix() {
        assert_eq!(feed_all(&[b"a\x1cxb"]), (b"a\x1cxb".to_vec(), false));
        assert_eq!(feed_all(&[b"d\x1c", b"\x1c"]), (b"d\x1c".to_vec(), false));
        assert_eq!(feed_all(&[b"\x1c\x1cd"]), (b"\x1c".to_vec(), true));
        assert_eq!(feed_all(&[b"\x1cD"]), (b"\x1cD".to_vec(), false));
    }

    #[test]
    fn a_trailing_prefix_waits_for_the_next_read() {
        let mut keys = DetachKeys::default();
        assert_eq!(
            keys.feed(b"x\x1c"),
            Keys {
                input: b"x".to_vec(),
                detach: false
            }
        );
        assert_eq!(
            keys.feed(b"y"),
            Keys {
                input: b"\x1cy".to_vec(),
                detach: false
            }
        );
    }
}
