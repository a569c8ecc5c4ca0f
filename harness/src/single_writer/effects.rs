//! Side effects the seed forbids, seen directly rather than through an outcome a wrong
//! broker could also produce: which processes hold a session's lock file open (from
//! `/proc/<pid>/fd`: the lock's descriptor must stay with the master, never reach the
//! agent, what the agent forks, or another key's processes), and how the engine's
//! index is opened (inotify: a close after a write-open is `IN_CLOSE_WRITE` whether or
//! not a byte was written, so a broker that opens the index read-write is seen even
//! when it changes nothing).

use std::collections::BTreeMap;
use std::os::fd::AsFd;
use std::path::Path;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};

/// What the suite set up or watched for one scenario's side-effect rows.
#[derive(Default)]
pub struct Effects {
    /// The background process an agent forked (`vxstub agent`'s `fork`), by key.
    pub forked: BTreeMap<String, i32>,
    /// The watch on the engine's index, once asked for.
    pub index_watch: Option<IndexWatch>,
    /// A socket of the suite's that a symbolic link at a session's socket path names
    /// (never accepted on: a connection through the link waits in its backlog).
    pub link_target: Option<(std::os::unix::net::UnixListener, std::path::PathBuf)>,
}

/// One process: its PID, parent and command line.
#[derive(Debug, Clone)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub argv: Vec<String>,
}

impl Proc {
    /// The first words of its command line, for a report.
    pub fn describe(&self) -> String {
        let words: Vec<&str> = self.argv.iter().take(3).map(String::as_str).collect();
        format!("pid {} ({})", self.pid, words.join(" "))
    }
}

/// Every process the suite can read, with its parent.
pub fn processes() -> Vec<Proc> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Some(ppid) = parent_of(pid) else {
            continue;
        };
        let argv = std::fs::read(entry.path().join("cmdline"))
            .unwrap_or_default()
            .split(|b| *b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        out.push(Proc { pid, ppid, argv });
    }
    out
}

/// The parent PID from `/proc/<pid>/stat` (the field after the command, which may
/// itself hold spaces and parentheses: read after the last `)`).
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `pid` and every process below it.
pub fn tree_of(all: &[Proc], pid: i32) -> Vec<i32> {
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(all.iter().filter(|p| p.ppid == parent).map(|p| p.pid));
        i += 1;
    }
    tree
}

/// The processes that hold `file` open (a descriptor whose link names it). A process
/// that exits while it is read is skipped.
pub fn holders(file: &Path) -> Vec<Proc> {
    let Ok(target) = std::fs::canonicalize(file) else {
        return Vec::new();
    };
    processes()
        .into_iter()
        .filter(|p| {
            std::fs::read_dir(format!("/proc/{}/fd", p.pid))
                .into_iter()
                .flatten()
                .flatten()
                .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l == target))
        })
        .collect()
}

/// The names of `procs` for a report.
pub fn describe(procs: &[Proc]) -> String {
    if procs.is_empty() {
        return "none".into();
    }
    procs
        .iter()
        .map(Proc::describe)
        .collect::<Vec<_>>()
        .join(", ")
}

/// An inotify watch on one file, counting how it was opened and closed.
pub struct IndexWatch {
    inotify: Inotify,
    /// Closes of a descriptor opened read-only (`IN_CLOSE_NOWRITE`).
    pub reads: usize,
    /// Closes of a descriptor opened for writing (`IN_CLOSE_WRITE`), and
    /// modifications (`IN_MODIFY`).
    pub writes: usize,
    pub modified: usize,
}

impl IndexWatch {
    /// Watches `path` (which must exist: a watch is on an inode).
    pub fn new(path: &Path) -> nix::Result<IndexWatch> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)?;
        inotify.add_watch(
            path,
            AddWatchFlags::IN_CLOSE_WRITE
                | AddWatchFlags::IN_CLOSE_NOWRITE
                | AddWatchFlags::IN_MODIFY,
        )?;
        Ok(IndexWatch {
            inotify,
            reads: 0,
            writes: 0,
            modified: 0,
        })
    }

    /// Counts the events queued so far.
    pub fn drain(&mut self) {
        loop {
            let mut fds = [nix::poll::PollFd::new(
                self.inotify.as_fd(),
                nix::poll::PollFlags::POLLIN,
            )];
            if !matches!(
                nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO),
                Ok(n) if n > 0
            ) {
                return;
            }
            let Ok(events) = self.inotify.read_events() else {
                return;
            };
            for e in events {
                if e.mask.contains(AddWatchFlags::IN_CLOSE_WRITE) {
                    self.writes += 1;
                }
                if e.mask.contains(AddWatchFlags::IN_CLOSE_NOWRITE) {
                    self.reads += 1;
                }
                if e.mask.contains(AddWatchFlags::IN_MODIFY) {
                    self.modified += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_open_and_a_write_open_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        std::fs::write(&path, "ses_A\n").unwrap();
        let mut w = IndexWatch::new(&path).unwrap();
        drop(std::fs::File::open(&path).unwrap());
        w.drain();
        assert_eq!((w.reads, w.writes), (1, 0));
        // Opened read-write, nothing written: still a write-open.
        drop(
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .unwrap(),
        );
        w.drain();
        assert_eq!((w.reads, w.writes, w.modified), (1, 1, 0));
    }

    #[test]
    fn the_holders_of_a_file_include_this_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lock");
        let _open = std::fs::File::create(&path).unwrap();
        let me = std::process::id() as i32;
        assert!(holders(&path).iter().any(|p| p.pid == me));
        let all = processes();
        assert!(tree_of(&all, parent_of(me).unwrap()).contains(&me));
    }
}
