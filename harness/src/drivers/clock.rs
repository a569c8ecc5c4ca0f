//! The clock driver: libfaketime (`LD_PRELOAD`, `FAKETIME`) moves a dynamically
//! linked implementation's "now".

use std::path::Path;

pub const DEFAULT_FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// The libfaketime `configured` names (or Debian's), when it exists.
pub fn faketime_preload(configured: Option<&str>) -> Option<String> {
    let p = configured.unwrap_or(DEFAULT_FAKETIME);
    Path::new(p).is_file().then(|| p.to_string())
}

/// The `FAKETIME` value for a clock `amount` `unit`s behind or ahead.
pub fn faketime_offset(amount: u64, unit: &str, behind: bool) -> String {
    let u = if unit.starts_with("day") { "d" } else { "h" };
    format!("{}{amount}{u}", if behind { "-" } else { "+" })
}

/// Removes what libfaketime left in `/dev/shm` for the process `pid`, once that process
/// is gone. The first process of a tree that loads libfaketime (0.9.10) makes a shared
/// segment and a semaphore named after its PID, which its children reuse, and unlinks
/// them at exit; a process killed (a crash row, the end of a scenario) cannot, and they
/// would pile up on the user's machine, a pair per scenario.
pub fn remove_leftovers(pid: u32) {
    for name in [
        format!("faketime_shm_{pid}"),
        format!("sem.faketime_sem_{pid}"),
    ] {
        let _ = std::fs::remove_file(Path::new("/dev/shm").join(name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process under libfaketime that is killed leaves its pair, which is then
    /// removed.
    #[test]
    fn a_killed_process_leaves_a_pair_that_is_removed() {
        let Some(lib) = faketime_preload(None) else {
            eprintln!("note: libfaketime is not installed; nothing to check");
            return;
        };
        let shm = |pid: u32| Path::new("/dev/shm").join(format!("faketime_shm_{pid}"));
        let sem = |pid: u32| Path::new("/dev/shm").join(format!("sem.faketime_sem_{pid}"));
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .env("LD_PRELOAD", &lib)
            .env("FAKETIME", "-1d")
            .spawn()
            .unwrap();
        let pid = child.id();
        crate::drivers::wait_until(std::time::Duration::from_secs(5), || {
            (shm(pid).exists() && sem(pid).exists(), ())
        });
        assert!(
            shm(pid).exists() && sem(pid).exists(),
            "libfaketime made no pair"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(shm(pid).exists(), "a killed process leaves its pair");
        remove_leftovers(pid);
        assert!(!shm(pid).exists() && !sem(pid).exists());
    }
}
