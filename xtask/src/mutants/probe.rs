//! What the runner observes of one build: whether its program starts (the daemon
//! answers `server.info`, any other program its `--help`), and what the clean `vxcert`
//! says about it.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a daemon may take to create its socket, and `server.info` to answer.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// A recovery run of the reference takes ~30 s on a loaded 2-core machine; a mutant
/// that makes a contract's suite hang past this is reported, never counted as a kill.
const RUN_TIMEOUT: Duration = Duration::from_secs(600);

/// A fresh private directory for one probe, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Result<TempDir, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path =
            std::env::temp_dir().join(format!("vx-mutant-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TempDir(path))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Kills and reaps the child by its own PID when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether the mutant's program `binary` (at `path`) starts: `vxref` must serve and
/// answer `server.info`; a checker or broker program must answer `--help` (a broker
/// that then fails to serve is refused by `vxcert`'s preflight: exit 2, INVALID too).
pub fn program_starts(binary: &str, path: &Path) -> Result<(), String> {
    if binary == "vxref" {
        return daemon_starts(path);
    }
    let tmp = TempDir::new("help")?;
    let mut help = Command::new(path);
    help.arg("--help")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &tmp.0)
        .current_dir(&tmp.0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    match wait_output(help, START_TIMEOUT)? {
        (Some(0), _) => Ok(()),
        (code, _) => Err(format!("{binary} --help exited with {code:?}")),
    }
}

/// Starts `vxref serve` on a temporary socket with a temporary home, and asks it
/// `server.info`. `Err` says why the build is not a valid mutant.
fn daemon_starts(vxref: &Path) -> Result<(), String> {
    let tmp = TempDir::new("start")?;
    let dir = &tmp.0;
    let socket = dir.join("s.sock");
    let env = |c: &mut Command| {
        c.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", dir)
            .env("XDG_RUNTIME_DIR", dir)
            .env("XDG_STATE_HOME", dir.join("state"))
            .env("XDG_CONFIG_HOME", dir.join("config"))
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
    };
    let mut serve = Command::new(vxref);
    serve.arg("serve").arg("--socket").arg(&socket);
    env(&mut serve);
    let mut daemon = Reaped(serve.spawn().map_err(|e| format!("spawn vxref: {e}"))?);
    let started = Instant::now();
    while !socket.exists() {
        if let Ok(Some(status)) = daemon.0.try_wait() {
            return Err(format!("vxref serve exited at startup ({status})"));
        }
        if started.elapsed() > START_TIMEOUT {
            return Err("vxref serve created no socket".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut info = Command::new(vxref);
    info.arg("--socket").arg(&socket).args(["server", "info"]);
    env(&mut info);
    info.stdout(Stdio::piped());
    let out = wait_output(info, START_TIMEOUT)?;
    let answer: Value = serde_json::from_slice(&out.1).unwrap_or(Value::Null);
    if out.0 != Some(0) || answer.get("protocol").is_none() {
        return Err("vxref server info did not answer".into());
    }
    Ok(())
}

/// Runs `cmd` to completion or `limit`; (exit code, stdout).
fn wait_output(mut cmd: Command, limit: Duration) -> Result<(Option<i32>, Vec<u8>), String> {
    let child = cmd.spawn().map_err(|e| format!("spawn: {e}"))?;
    let mut child = Reaped(child);
    let mut stdout = child.0.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(s) = stdout.as_mut() {
            let _ = std::io::Read::read_to_end(s, &mut buf);
        }
        buf
    });
    let started = Instant::now();
    loop {
        if let Some(status) = child.0.try_wait().map_err(|e| e.to_string())? {
            let bytes = reader.join().unwrap_or_default();
            return Ok((status.code(), bytes));
        }
        if started.elapsed() > limit {
            return Err(format!("timed out after {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The clean `vxcert`'s verdict on one bin dir.
#[derive(Debug)]
pub struct Verdict {
    /// Failing (fail or timeout) MUST scenarios, as "row: scenario [example]".
    pub failing: BTreeSet<String>,
    /// Scenarios the suite could not carry out (harness-error): never a kill.
    pub harness_errors: usize,
}

pub struct Certifier<'a> {
    /// The contract `vxcert run --contract` certifies.
    pub contract: &'a str,
    pub vxcert: &'a Path,
    pub profile: &'a Path,
    pub root: &'a Path,
}

impl Certifier<'_> {
    /// `vxcert run --contract CONTRACT --profile … --bin-dir BIN --report REPORT`, with
    /// `--tags TAGS` when given (CI's subset runs each mutant's clause rows only).
    pub fn run(
        &self,
        bin_dir: &Path,
        report: &Path,
        tags: Option<&str>,
    ) -> Result<Verdict, String> {
        let _ = std::fs::remove_dir_all(report);
        let mut cmd = Command::new(self.vxcert);
        cmd.args(["run", "--contract", self.contract, "--quiet"]);
        if let Some(tags) = tags {
            cmd.args(["--tags", tags]);
        }
        cmd.arg("--profile")
            .arg(self.profile)
            .arg("--bin-dir")
            .arg(bin_dir)
            .arg("--report")
            .arg(report)
            .current_dir(self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let (exit, _) = wait_output(cmd, RUN_TIMEOUT).map_err(|e| format!("vxcert run {e}"))?;
        if exit == Some(2) {
            return Err("vxcert run refused the bin dir (exit 2)".into());
        }
        let text = std::fs::read_to_string(report.join("report.json"))
            .map_err(|e| format!("vxcert wrote no report.json: {e}"))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| format!("report.json: {e}"))?;
        let mut failing = BTreeSet::new();
        let mut harness_errors = 0;
        for s in json["scenarios"].as_array().into_iter().flatten() {
            let verdict = s["verdict"].as_str().unwrap_or("");
            // Only an assertion or a deadline about the daemon is a finding; a
            // harness-error is the suite failing to do a step (kept apart).
            if verdict == "harness-error" {
                harness_errors += 1;
            }
            if !matches!(verdict, "fail" | "timeout") {
                continue;
            }
            // A SHOULD row's fail never fails certification, so it kills nothing: a
            // mutant only the SHOULD rows see would still be certified.
            if s["level"].as_str() == Some("should") {
                continue;
            }
            let row = s["row"].as_str().unwrap_or("?").to_string();
            let mut name = format!("{row}: {}", s["name"].as_str().unwrap_or("?"));
            if let Some(e) = s["example"].as_str() {
                name.push_str(&format!(" [{e}]"));
            }
            failing.insert(name);
        }
        Ok(Verdict {
            failing,
            harness_errors,
        })
    }
}
