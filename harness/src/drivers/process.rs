//! A real PID reuse for the "Orphans / PID reuse" row (RFC §7): after a crashed
//! daemon's pane process is gone, start an unrelated process that has exactly that
//! PID, so "an unrelated process reusing a former PID stays untouched" is tested on
//! the PID itself rather than on a stand-in.
//!
//! Two things make this possible on Linux: the run is a child subreaper (a crashed
//! daemon's orphans are re-parented to it, so it can reap them and free their PIDs,
//! which a container's PID 1 often never does), and `/proc/sys/kernel/ns_last_pid`
//! (writable by root in its PID namespace) chooses the next PID. Where either is
//! unavailable the step says so in the transcript and uses a stand-in.

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag};
use nix::unistd::Pid;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NS_LAST_PID: &str = "/proc/sys/kernel/ns_last_pid";
/// Another process may take the PID between the write and our fork.
const SPAWN_ATTEMPTS: usize = 50;

/// Makes this process the reaper of its descendants' orphans (once, at run start).
pub fn become_subreaper() -> bool {
    nix::sys::prctl::set_child_subreaper(true).is_ok()
}

/// Why a real reuse could not be arranged (for the transcript).
#[derive(Debug)]
pub enum NoReuse {
    /// The process (or a zombie of it) never went away: someone else must reap it.
    StillAllocated,
    /// `ns_last_pid` is not writable here (no root in this PID namespace).
    NoPidControl,
    /// Other processes kept taking the PID.
    Raced,
}

/// Kills `pid`'s process group (it led one on its PTY) and waits until the PID is
/// free. A PID stays allocated while any process, zombies included, still has it as
/// its process group or session, so every member of the group that became our orphan
/// is reaped too.
pub fn kill_and_free(pid: i32, within: Duration) -> Result<(), NoReuse> {
    let target = Pid::from_raw(pid);
    let _ = killpg(target, Signal::SIGKILL);
    let _ = kill(target, Signal::SIGKILL);
    let until = Instant::now() + within;
    loop {
        let group = Pid::from_raw(-pid);
        while let Ok(status) = waitpid(group, Some(WaitPidFlag::WNOHANG)) {
            if status == nix::sys::wait::WaitStatus::StillAlive {
                break;
            }
        }
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() && !group_in_use(pid) {
            return Ok(());
        }
        if Instant::now() >= until {
            return Err(NoReuse::StillAllocated);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An unrelated process: `sleep 300` in its own process group, nothing inherited.
pub fn spawn_unrelated() -> std::io::Result<Child> {
    let mut cmd = Command::new("sleep");
    cmd.arg("300")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd.spawn()
}

/// Starts [`spawn_unrelated`]'s process with exactly `pid`.
pub fn spawn_with_pid(pid: i32) -> Result<Child, NoReuse> {
    for _ in 0..SPAWN_ATTEMPTS {
        std::fs::write(NS_LAST_PID, format!("{}", pid - 1)).map_err(|_| NoReuse::NoPidControl)?;
        let mut child = spawn_unrelated().map_err(|_| NoReuse::Raced)?;
        if i32::try_from(child.id()) == Ok(pid) {
            return Ok(child);
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    Err(NoReuse::Raced)
}

pub use super::start_state::stat_fields;

/// Whether any process still has `pgid` as its process group or session.
fn group_in_use(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let Some(fields) = stat_fields(&e.path().join("stat")) else {
            return false;
        };
        let is = |i: usize| fields.get(i).and_then(|f| f.parse::<i32>().ok()) == Some(pgid);
        is(2) || is(3)
    })
}

/// Alive and not a zombie.
pub fn alive(pid: i32) -> bool {
    let path = std::path::PathBuf::from(format!("/proc/{pid}/stat"));
    match stat_fields(&path) {
        None => false,
        Some(fields) => !matches!(
            fields.first().map(String::as_str),
            Some("Z") | Some("X") | None
        ),
    }
}

/// Direct children of `pid` (all its threads), alive.
pub fn children_of(pid: u32) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in rd.flatten() {
            let list = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            out.extend(
                list.split_whitespace()
                    .filter_map(|x| x.parse::<i32>().ok()),
            );
        }
    }
    out.retain(|p| alive(*p));
    out
}

/// A live process as the kernel knows it: its pid, its parent's and its start time
/// (clock ticks since boot), so a reused pid is never taken for the old process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub started: u64,
}

/// `pid`'s live descendants, children first.
pub fn descendants_of(pid: u32) -> Vec<Proc> {
    let mut out: Vec<Proc> = Vec::new();
    let mut parents = vec![pid as i32];
    while let Some(parent) = parents.pop() {
        for child in children_of(parent as u32) {
            let fields = stat_fields(std::path::Path::new(&format!("/proc/{child}/stat")));
            // After the comm: state (0), ppid (1), …, starttime (19).
            let started = fields
                .as_ref()
                .and_then(|f| f.get(19))
                .and_then(|v| v.parse().ok());
            if let Some(started) = started {
                if !out.iter().any(|p| p.pid == child) {
                    out.push(Proc {
                        pid: child,
                        ppid: parent,
                        started,
                    });
                    parents.push(child);
                }
            }
        }
    }
    out
}

/// The peak resident set (VmHWM) of `pid`, in KiB.
pub fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| crate::harness_error!("/proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| crate::harness_error!("/proc/{pid}/status has no VmHWM"))
}

/// Every process's PID and argv, from `/proc`.
pub fn argvs() -> std::collections::BTreeMap<i32, Vec<String>> {
    let mut out = std::collections::BTreeMap::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(raw) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let argv = raw
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        out.insert(pid, argv);
    }
    out
}
