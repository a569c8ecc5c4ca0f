//! `vxbroker serve --scope-wrapper CMD` (seed "Per-session systemd scopes"): each
//! LAUNCH's master runs inside its own transient scope,
//! `CMD --user --scope --collect --quiet --unit vx-<engine>-<id8>-<nonce>.scope
//! -p K=V … -- vxbroker master …`, so one runaway session cannot exhaust the broker's
//! cgroup. `--scope` execs the payload in place: the PTY, the session and the lock
//! descriptor (fd 3) pass through unchanged. Attaches are never scoped.
//!
//! The ladder, fail-open as the seed has it (a session is never refused for want of
//! isolation): the wrapper is probed (`CMD --user --scope --collect --quiet -- true`,
//! exit 0 within 5 s) before its first use; a failed probe means a plain spawn with
//! one warning, and the probe runs again after [`COOLDOWN`]. A wrapper that exits at
//! spawn is a launch that fails before its master serves: `unavailable.spawn`, close
//! 4502, retryable.
//!
//! Properties come from `VXBROKER_SCOPE_PROPERTIES` (space-separated), replacing the
//! default `TasksMax=2048` outright; a token that is not a bare `Key=Value` (key
//! `[A-Za-z][A-Za-z0-9]*`, value `[A-Za-z0-9._%:+-]+`) is dropped with a warning, so
//! the variable can never inject an argv token.

use std::ffi::OsString;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const PROPERTIES_ENV: &str = "VXBROKER_SCOPE_PROPERTIES";
pub const DEFAULT_PROPERTIES: &str = "TasksMax=2048";
/// How long a failed probe is trusted before the wrapper is probed again.
pub const COOLDOWN: Duration = Duration::from_secs(30);
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `token` is a bare `Key=Value` property.
pub fn is_property(token: &str) -> bool {
    let Some((k, v)) = token.split_once('=') else {
        return false;
    };
    let mut kc = k.chars();
    kc.next().is_some_and(|c| c.is_ascii_alphabetic())
        && kc.all(|c| c.is_ascii_alphanumeric())
        && !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._%:+-".contains(c))
}

/// The properties of `text` and how many tokens were dropped.
pub fn properties(text: &str) -> (Vec<String>, usize) {
    let (keep, drop): (Vec<&str>, Vec<&str>) =
        text.split_whitespace().partition(|t| is_property(t));
    (keep.into_iter().map(str::to_owned).collect(), drop.len())
}

/// One broker's scope wrapper and what its last probe said.
pub struct Scopes {
    wrapper: OsString,
    properties: Vec<String>,
    /// `(usable, when probed)`; `None` before the first probe.
    probe: Mutex<Option<(bool, Instant)>>,
    nonce: AtomicU64,
}

impl Scopes {
    /// A wrapper with the environment's properties (warning once for dropped tokens).
    pub fn new(wrapper: OsString) -> Scopes {
        let text = std::env::var(PROPERTIES_ENV).unwrap_or_else(|_| DEFAULT_PROPERTIES.into());
        let (properties, dropped) = properties(&text);
        if dropped > 0 {
            eprintln!(
                "vxbroker serve: {dropped} {PROPERTIES_ENV} token(s) are not Key=Value: dropped"
            );
        }
        Scopes {
            wrapper,
            properties,
            probe: Mutex::new(None),
            nonce: AtomicU64::new(u64::from(std::process::id()) << 20),
        }
    }

    fn base(&self) -> Vec<OsString> {
        let mut argv = vec![self.wrapper.clone()];
        argv.extend(["--user", "--scope", "--collect", "--quiet"].map(OsString::from));
        argv
    }

    fn usable(&self) -> bool {
        let mut probe = self.probe.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((ok, at)) = *probe {
            if ok || at.elapsed() < COOLDOWN {
                return ok;
            }
        }
        let ok = self.run_probe();
        if !ok {
            eprintln!("vxbroker serve: the scope wrapper is unavailable (probe): plain spawn");
        }
        *probe = Some((ok, Instant::now()));
        ok
    }

    fn run_probe(&self) -> bool {
        let argv = self.base();
        let mut cmd = Command::new(&argv[0]);
        if crate::variant::keys() {
            // The keys variant asks the user manager in its own words.
            cmd.args(["--user", "--version"]);
        } else {
            cmd.args(&argv[1..]).args(["--", "true"]);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let Ok(mut child) = cmd.spawn() else {
            return false;
        };
        let deadline = Instant::now() + PROBE_TIMEOUT;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => return status.success(),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return false;
                }
            }
        }
    }

    /// The argv prefix for one LAUNCH of `engine`/`id`, or `None` for a plain spawn.
    pub fn prefix(&self, engine: &str, id: &str) -> Option<Vec<OsString>> {
        if !self.usable() {
            return None;
        }
        let nonce = self.nonce.fetch_add(1, Ordering::Relaxed);
        let id8: String = id
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(8)
            .collect();
        let mut argv = self.base();
        let unit = format!("vx-{engine}-{id8}-{nonce:x}.scope");
        if crate::variant::keys() {
            argv.push(format!("--unit={unit}").into());
        } else {
            argv.push("--unit".into());
            argv.push(unit.into());
        }
        for p in &self.properties {
            argv.push("-p".into());
            argv.push(p.into());
        }
        argv.push("--".into());
        Some(argv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_are_strict_key_value() {
        let (keep, dropped) =
            properties("TasksMax=2048 MemoryHigh=8G --evil x=1;rm bad= =v Ok=a.b");
        assert_eq!(keep, ["TasksMax=2048", "MemoryHigh=8G", "Ok=a.b"]);
        assert_eq!(dropped, 4);
    }
}
