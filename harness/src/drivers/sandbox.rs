//! One scenario's private world: a temporary directory with its own `HOME` and XDG
//! directories, the placeholders command templates expand to, and the environment an
//! implementation runs with (nothing inherited but `PATH`).

use crate::verdict::OrHarness;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

/// Values substituted into command templates (`{socket}`, `{bin_dir}`, …).
#[derive(Debug, Clone)]
pub struct Placeholders {
    pub socket: PathBuf,
    pub state_home: PathBuf,
    pub config_home: PathBuf,
    pub runtime_dir: PathBuf,
    pub home: PathBuf,
    pub bin_dir: PathBuf,
    pub store: PathBuf,
}

impl Placeholders {
    pub fn expand(&self, s: &str) -> String {
        s.replace("{socket}", &self.socket.to_string_lossy())
            .replace("{state_home}", &self.state_home.to_string_lossy())
            .replace("{config_home}", &self.config_home.to_string_lossy())
            .replace("{runtime_dir}", &self.runtime_dir.to_string_lossy())
            .replace("{home}", &self.home.to_string_lossy())
            .replace("{bin_dir}", &self.bin_dir.to_string_lossy())
            .replace("{store}", &self.store.to_string_lossy())
    }
}

/// The names every template may use.
pub const PLACEHOLDERS: [&str; 7] = [
    "{socket}",
    "{state_home}",
    "{config_home}",
    "{runtime_dir}",
    "{home}",
    "{bin_dir}",
    "{store}",
];

/// A scenario's temporary directory. Dropping it kills every process still running
/// that belongs to it ([`super::start_state::sweep_scenario`]: whatever the
/// implementation and its agents started, also after a crash or a panicking step),
/// then removes the directory.
#[derive(Debug)]
pub struct SandboxDir(tempfile::TempDir);

impl SandboxDir {
    pub fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl Drop for SandboxDir {
    fn drop(&mut self) {
        super::start_state::sweep_scenario(self.0.path());
    }
}

/// Where scenario sandboxes go: `$VXCERT_SANDBOX_PARENT` when it names an absolute
/// directory (so that runs sharing a machine can tell their processes apart, as
/// `.ci/leftovers.sh` does), else `/tmp`; any other value is a harness error naming it.
/// Not `$TMPDIR`: a socket path inside the sandbox must stay under the 108 bytes of
/// `sun_path`.
pub fn sandbox_parent() -> PathBuf {
    match std::env::var_os("VXCERT_SANDBOX_PARENT").filter(|p| !p.is_empty()) {
        None => PathBuf::from("/tmp"),
        Some(p) => {
            let p = PathBuf::from(p);
            if !p.is_absolute() || !p.is_dir() {
                crate::harness_error!(
                    "VXCERT_SANDBOX_PARENT={}: not an absolute path of a directory",
                    p.display()
                );
            }
            p
        }
    }
}

/// A fresh temporary directory with `home`, `run`, `run/venomx`, `config` and
/// `state`, each 0700. The socket is `run/venomx/s.sock`; `store` is left to the
/// contract (it depends on the socket).
pub fn create(bin_dir: PathBuf) -> (SandboxDir, Placeholders) {
    let dir = tempfile::Builder::new()
        .prefix("vxc")
        .tempdir_in(sandbox_parent())
        .or_harness("cannot create the scenario's temporary directory");
    let root = dir.path().to_path_buf();
    for sub in ["home", "run", "run/venomx", "config", "state"] {
        let p = root.join(sub);
        std::fs::create_dir_all(&p).or_harness("mkdir in the scenario directory");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))
            .or_harness("chmod in the scenario directory");
    }
    let ph = Placeholders {
        socket: root.join("run/venomx/s.sock"),
        state_home: root.join("state"),
        config_home: root.join("config"),
        runtime_dir: root.join("run"),
        home: root.join("home"),
        bin_dir,
        store: PathBuf::new(),
    };
    (SandboxDir(dir), ph)
}

/// A command from `template` with the scenario's environment: `PATH` inherited,
/// `HOME` and the XDG directories pointing into the sandbox, then `env` (expanded),
/// working directory `cwd`. It starts in a clean process state
/// ([`super::start_state::clean_command`]).
pub fn command(
    ph: &Placeholders,
    template: &[String],
    env: &[(String, String)],
    cwd: &std::path::Path,
) -> Command {
    let words: Vec<String> = template.iter().map(|w| ph.expand(w)).collect();
    let Some((program, args)) = words.split_first() else {
        crate::harness_error!("an empty command template");
    };
    let mut vars: Vec<(OsString, OsString)> = vec![
        ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
        ("HOME".into(), ph.home.clone().into()),
        ("XDG_RUNTIME_DIR".into(), ph.runtime_dir.clone().into()),
        ("XDG_CONFIG_HOME".into(), ph.config_home.clone().into()),
        ("XDG_STATE_HOME".into(), ph.state_home.clone().into()),
    ];
    let passed = crate::profile::try_context().map_or(&[][..], |c| &c.profile.pass_env[..]);
    for name in passed {
        if let Some(v) = std::env::var_os(name) {
            vars.push((name.into(), v));
        }
    }
    for (k, v) in env {
        vars.push((k.into(), ph.expand(v).into()));
    }
    super::start_state::clean_command(program, args, &vars, cwd)
}

#[cfg(test)]
mod tests {
    use super::super::start_state::{belongs_to, live_descendants};
    use super::*;
    use std::path::Path;
    use std::time::{Duration, Instant};

    fn naming(root: &Path) -> Vec<i32> {
        let marker = root.as_os_str().as_encoded_bytes().to_vec();
        live_descendants()
            .into_iter()
            .filter(|p| belongs_to(*p, &marker))
            .collect()
    }

    /// A "daemon" whose "panes" left its session (setsid) and fork, killed
    /// mid-scenario as a crash row kills one: its orphans come back to the run (the
    /// subreaper) and the sandbox's drop kills every one of them.
    #[test]
    fn a_killed_daemon_leaves_nothing_once_its_sandbox_is_dropped() {
        nix::sys::prctl::set_child_subreaper(true).expect("become a subreaper");
        let (dir, ph) = create(std::path::PathBuf::from("/"));
        let root = dir.path().to_path_buf();
        let script = "setsid sh -c 'sleep 300 & sleep 300' & sleep 300 & sleep 300";
        let mut daemon = command(&ph, &["sh".into(), "-c".into(), script.into()], &[], &root)
            .spawn()
            .expect("start the stand-in daemon");
        let deadline = Instant::now() + Duration::from_secs(10);
        while naming(&root).len() < 5 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            naming(&root).len() >= 5,
            "the daemon and its four sleeps should be running: {:?}",
            naming(&root)
        );
        daemon.kill().expect("kill the daemon");
        daemon.wait().expect("reap the daemon");
        assert!(
            naming(&root).len() >= 4,
            "the daemon's orphans come back to the subreaper and still run"
        );
        drop(dir);
        assert_eq!(
            naming(&root),
            Vec::<i32>::new(),
            "left after the sandbox's drop"
        );
    }
}
