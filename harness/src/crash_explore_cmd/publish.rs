//! `vxcert crash-explore --publish FILE -- CMD ARGS...`: the crash-state check of any
//! program that replaces one file (write a temporary file, fsync it, rename it over
//! the final name, fsync the directory), recorded under the profile's `fault_backend`
//! — so a Go or statically linked program, which the preload cannot see, is recorded
//! by the seccomp backend.
//!
//! The harness makes a root holding FILE with an old generation, runs CMD there
//! recorded, and takes what FILE holds afterwards as the new generation. In every
//! crash state the persistence model allows, FILE must hold exactly the old or exactly
//! the new generation (a publish is atomic), and the new one once the command
//! acknowledged it (every output it made, or, with none, its whole run).

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use vxfault::crash::{self, Model, Recorder, Report};

/// FILE's content before the recorded run.
pub const OLD_GENERATION: &[u8] = b"generation N\n";

/// What the recorded run published, for the judge of each state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// FILE, relative to the root.
    pub file: PathBuf,
    /// SHA-256 of the old and the new generation, lowercase hex.
    pub old: String,
    pub new: String,
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// FILE must be a relative path that stays under the root.
pub fn check_file(file: &Path) -> Result<(), String> {
    let plain = file.components().all(|c| matches!(c, Component::Normal(_)));
    if file.as_os_str().is_empty() || !plain {
        return Err(format!(
            "--publish {}: give a path relative to the command's root, without `..`",
            file.display()
        ));
    }
    Ok(())
}

/// Runs `argv` (`{root}` and `{file}` expanded) in a fresh root, recorded under the
/// profile's backend with `plan`; the recording's directory and what it published.
/// `work` holds the root, the recording and the command's output.
pub fn record(
    work: &Path,
    file: &Path,
    argv: &[String],
    plan: &str,
) -> Result<(PathBuf, Published), String> {
    check_file(file)?;
    let Some(prog) = argv.first() else {
        return Err("--publish needs the command after `--`".into());
    };
    let root = work.join("root");
    let target = root.join(file);
    let parent = target.parent().unwrap_or(&root);
    fs::create_dir_all(parent).map_err(|e| format!("create {}: {e}", parent.display()))?;
    fs::write(&target, OLD_GENERATION).map_err(|e| format!("write {}: {e}", target.display()))?;
    let expand = |a: &String| {
        a.replace("{root}", &root.to_string_lossy())
            .replace("{file}", &target.to_string_lossy())
    };
    let dir = work.join("recording");
    let rec = Recorder::with_plan(&dir, &root, plan).map_err(|e| format!("--plan: {e}"))?;
    // Standard output is a file outside the root: what the command prints there is
    // an output of the recording (its acknowledgement), not a file change.
    let out_path = work.join("stdout");
    let err_path = work.join("stderr");
    let open = |p: &Path| fs::File::create(p).map_err(|e| format!("create {}: {e}", p.display()));
    // The command runs in the root: a program named by a relative path is the
    // caller's, so it is made absolute first (a bare name is looked up on PATH).
    let program = expand(prog);
    let program = if program.contains('/') {
        std::path::absolute(&program)
            .map_err(|e| format!("{program}: {e}"))?
            .to_string_lossy()
            .into_owned()
    } else {
        program
    };
    let mut cmd = Command::new(&program);
    cmd.args(argv[1..].iter().map(expand))
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(open(&out_path)?)
        .stderr(open(&err_path)?);
    let requested = crate::drivers::fault::backend();
    let choice = vxfault::seccomp::choose(requested, Path::new(&program));
    eprintln!(
        "vxcert crash-explore: backend {} ({})",
        choice.backend.name(),
        choice.reason
    );
    let mut sup = if choice.backend == vxfault::Backend::Seccomp {
        Some(
            rec.attach(&mut cmd)
                .map_err(|e| format!("set up the seccomp filter: {e}"))?,
        )
    } else {
        let lib = vxfault::preload_path().map_err(|e| format!("provide libvxfault.so: {e}"))?;
        cmd.envs(rec.env(&lib));
        None
    };
    let child = cmd.spawn();
    if let Some(s) = sup.as_mut() {
        s.spawned();
    }
    let mut child = child.map_err(|e| format!("cannot start {prog}: {e}"))?;
    let limit = crate::drivers::scaled(60_000);
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if started.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{prog} did not exit within {}s while recorded",
                    limit.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("wait for {prog}: {e}")),
        }
    };
    if let Some(s) = sup {
        s.finish()
            .map_err(|e| format!("the seccomp supervisor: {e}"))?;
    }
    let code = status.code().unwrap_or(1);
    let meta = rec
        .finish(code)
        .map_err(|e| format!("seal the recording: {e}"))?;
    let mut said = String::new();
    if let Ok(mut f) = fs::File::open(&err_path) {
        let _ = f.read_to_string(&mut said);
    }
    let said = said.lines().next().unwrap_or("").to_string();
    if !status.success() {
        return Err(format!(
            "{prog} failed while recorded ({status}){}",
            if said.is_empty() {
                String::new()
            } else {
                format!(": {said}")
            }
        ));
    }
    let log = fs::read(dir.join("log.jsonl")).unwrap_or_default();
    let loaded: &[u8] = br#""op":"loaded""#;
    if meta.lines == 0 || !log.windows(loaded.len()).any(|w| w == loaded) {
        return Err(format!(
            "not recordable: backend {} saw nothing of {prog} (fault_backend {}; a Go or \
             static program needs seccomp)",
            choice.backend.name(),
            requested.name()
        ));
    }
    let new = fs::read(&target).map_err(|e| {
        format!(
            "{prog} left no {} behind: nothing was published ({e})",
            file.display()
        )
    })?;
    if new == OLD_GENERATION {
        return Err(format!(
            "{prog} did not replace {}: it still holds the old generation",
            file.display()
        ));
    }
    Ok((
        dir,
        Published {
            file: file.to_path_buf(),
            old: sha256(OLD_GENERATION),
            new: sha256(&new),
        },
    ))
}

/// Explores the recording with `vxcert crash-explore --check-state` as the judge.
pub fn explore(dir: &Path, p: &Published, model: Model) -> Result<Report, String> {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let ctx = crate::profile::context();
    let bin_dir = abs(&ctx.bin_dir);
    let q = |p: &Path| format!("'{}'", p.to_string_lossy().replace('\'', r"'\''"));
    let check = format!(
        "{} crash-explore --profile {} --bin-dir {} --check-state {{root}} --publish {} \
         --old-sha256 {} --new-sha256 {}",
        q(&bin_dir.join("vxcert")),
        q(&abs(&ctx.profile_path)),
        q(&bin_dir),
        q(&p.file),
        p.old,
        p.new
    );
    let checker = crash::Checker::new(&check).map_err(|e| e.to_string())?;
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let opts = crash::Options {
        model,
        checker,
        jobs,
        only: None,
        timeout: crate::drivers::scaled(60_000),
    };
    crash::explore(dir, None, &opts).map_err(|e| e.to_string())
}

/// Judges one state: FILE holds the old or the new generation, whole, and the new one
/// once acknowledged. `Err` is the one-line reason.
pub fn check_state(state: &Path, p: &Published) -> Result<(), String> {
    let acked = vxfault::crash::state_acknowledged();
    let name = p.file.display();
    let Ok(bytes) = fs::read(state.join(&p.file)) else {
        return Err(format!(
            "{name} is missing: neither the old nor the new generation survived"
        ));
    };
    let got = sha256(&bytes);
    if got == p.new {
        return Ok(());
    }
    if got != p.old {
        return Err(format!(
            "{name} holds neither the old nor the new generation ({} bytes): a partial \
             publish is visible under the final name",
            bytes.len()
        ));
    }
    if acked {
        return Err(format!(
            "{name} holds the old generation after the command acknowledged the new one"
        ));
    }
    Ok(())
}
