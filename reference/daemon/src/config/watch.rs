//! The config file watcher (RFC §2 live reload). It only notices that the file may have
//! changed; the reactor then runs the same reload path as an explicit `config.reload`
//! (side-effect-free validation, retention cleanup on the worker, infallible
//! activation), so a watched change can never activate what `config.reload` would
//! refuse, and a failure leaves the effective config unchanged and is kept for doctor.
//!
//! The watch is on the parent directory, not the file: editors and `config.set` replace
//! the file by rename, which a watch on the old inode would miss. While the directory
//! does not exist, the watcher looks for it again once per [`RETRY`]. It runs on its own
//! thread because inotify reads block; it never touches reactor state itself.

use nix::poll::{poll, PollFd, PollFlags};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use std::ffi::OsString;
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Changes that arrive within this window after the previous one become one reload
/// (an editor's write, fsync and rename, or a burst of `config.set` calls).
pub const SETTLE: Duration = Duration::from_millis(100);
/// At most this many settle windows are merged, so a file rewritten nonstop still
/// gets reloaded.
const MAX_SETTLE_WINDOWS: u32 = 10;
/// How often a missing config directory is looked for again.
pub const RETRY: Duration = Duration::from_secs(1);

fn watch_flags() -> AddWatchFlags {
    AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
}

/// Calls `changed` each time the file at `path` may have changed, once changes have
/// settled. The thread ends when `changed` returns false.
pub fn spawn(path: PathBuf, changed: impl FnMut() -> bool + Send + 'static) {
    let _ = std::thread::Builder::new()
        .name("config-watch".into())
        .spawn(move || run(&path, changed));
}

fn run(path: &Path, mut changed: impl FnMut() -> bool) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    let name = name.to_os_string();
    let mut missed = false;
    loop {
        let Some(inotify) = open_watch(dir) else {
            missed = true;
            std::thread::sleep(RETRY);
            continue;
        };
        // The file may have appeared or changed while nothing watched it.
        if missed && !changed() {
            return;
        }
        missed = true;
        loop {
            match next_change(&inotify, &name) {
                Seen::Ours => {
                    if !changed() {
                        return;
                    }
                }
                Seen::Others => {}
                Seen::Lost => break,
            }
        }
    }
}

fn open_watch(dir: &Path) -> Option<Inotify> {
    let inotify = Inotify::init(InitFlags::IN_CLOEXEC).ok()?;
    inotify.add_watch(dir, watch_flags()).ok()?;
    Some(inotify)
}

enum Seen {
    /// The file changed and changes have settled.
    Ours,
    Others,
    /// The directory went away or the watch broke: watch it again.
    Lost,
}

/// Blocks for the next batch of events; if one names the file, waits until no event
/// has arrived for [`SETTLE`].
fn next_change(inotify: &Inotify, name: &OsString) -> Seen {
    let first = read_batch(inotify, name);
    if !matches!(first, Seen::Ours) {
        return first;
    }
    for _ in 0..MAX_SETTLE_WINDOWS {
        if !readable_within(inotify, SETTLE) {
            break;
        }
        if let Seen::Lost = read_batch(inotify, name) {
            return Seen::Lost;
        }
    }
    Seen::Ours
}

fn readable_within(inotify: &Inotify, wait: Duration) -> bool {
    let mut fds = [PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
    let timeout = u16::try_from(wait.as_millis()).unwrap_or(u16::MAX);
    matches!(poll(&mut fds, timeout), Ok(n) if n > 0)
}

fn read_batch(inotify: &Inotify, name: &OsString) -> Seen {
    let events = match inotify.read_events() {
        Ok(events) => events,
        Err(nix::errno::Errno::EINTR) => return Seen::Others,
        Err(_) => return Seen::Lost,
    };
    let mut seen = Seen::Others;
    for e in events {
        if e.mask.intersects(
            AddWatchFlags::IN_IGNORED | AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF,
        ) {
            return Seen::Lost;
        }
        if e.name.as_deref() == Some(name.as_os_str()) {
            seen = Seen::Ours;
        }
    }
    seen
}
