//! The suite's stand-in for `systemd-run` (the `@optional-scopes` rows): a script in
//! the broker sandbox that logs each call's arguments and, as its mode says, runs,
//! refuses, or refuses only the launches.

use std::path::PathBuf;

use super::broker::BrokerSandbox;
use crate::verdict::OrHarness;

impl BrokerSandbox {
    /// Where the suite's stand-in for `systemd-run` is (`write_scope_wrapper`).
    pub fn scope_wrapper(&self) -> PathBuf {
        self.root.join("systemd-run")
    }

    /// What the stand-in logs, one line per call: its arguments.
    pub fn scope_wrapper_log(&self) -> PathBuf {
        self.root.join("systemd-run.log")
    }

    /// Writes the stand-in for `systemd-run`: it logs its arguments, then as `mode`
    /// says runs what follows `--` (`working`, as `--scope` does: exec in place, every
    /// descriptor kept), fails every call (`failing`: no user manager), or passes
    /// a probe (a call that runs no command of two words or more, as the scope rows
    /// classify it) and fails every launch (`spawn-failing`).
    pub fn write_scope_wrapper(&self, mode: &str) {
        use std::os::unix::fs::PermissionsExt;
        let run = match mode {
            "working" => {
                "while [ $# -gt 0 ] && [ \"$1\" != -- ]; do shift; done\n\
                 [ $# -gt 0 ] && shift\n[ $# -eq 0 ] && exit 0\nexec \"$@\""
            }
            "failing" => "exit 1",
            "spawn-failing" => {
                "n=0; s=0; for a in \"$@\"; do [ $s = 1 ] && n=$((n+1)); [ \"$a\" = -- ] && s=1; done\n\
                 [ $n -lt 2 ] && exit 0\nexit 1"
            }
            other => crate::harness_error!("no scope wrapper mode {other:?}"),
        };
        let log = self.scope_wrapper_log();
        let body = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\n{run}\n",
            log.display()
        );
        let path = self.scope_wrapper();
        std::fs::write(&path, body).or_harness("writing the scope wrapper");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .or_harness("chmod of the scope wrapper");
    }
}
