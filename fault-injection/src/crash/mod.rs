//! Crash-state exploration, as ALICE (Pillai et al., OSDI 2014) and CrashMonkey
//! (Mohan et al., OSDI 2018) do it: record a run's file-system operations under a
//! root ([`record`]), enumerate the disk states a persistence model allows after a
//! power cut ([`model`]), materialize each one and run a checker on it ([`explore`]).

pub mod cli;
pub mod explore;
pub mod log;
pub mod model;
pub mod replay;

pub use explore::{explore, Checker, ExploreError, Options, Report, Verdict};
pub use log::{read, FsOp, LogError, Meta, Recording};
pub use model::{enumerate, CrashState, Model, Strategy, Tear};

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// What `record` did.
#[derive(Debug)]
pub struct Recorded {
    pub status: ExitStatus,
    pub meta: Meta,
}

/// Copies the tree at `from` to `to` (files, directories, symlinks; modes kept).
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    fs::set_permissions(to, fs::metadata(from)?.permissions())?;
    for e in fs::read_dir(from)? {
        let e = e?;
        let ty = e.file_type()?;
        let dst = to.join(e.file_name());
        if ty.is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else if ty.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path())?, &dst)?;
        } else if ty.is_file() {
            fs::copy(e.path(), &dst)?;
        }
    }
    Ok(())
}

/// A recording in progress, for a program the caller starts itself (a daemon it
/// talks to): [`Recorder::env`] is the environment to start it with, and
/// [`Recorder::finish`] (after it stopped) writes `meta.json`.
#[derive(Debug)]
pub struct Recorder {
    out: PathBuf,
    root: PathBuf,
    _counters: tempfile::TempDir,
    counters: crate::Counters,
    plan: String,
}

impl Recorder {
    /// Snapshots `root` into `out/root` and creates the log and data files.
    pub fn start(out: &Path, root: &Path) -> io::Result<Recorder> {
        Recorder::with_plan(out, root, "")
    }

    /// As [`Recorder::start`], running the program under a fault plan too (`lie` on
    /// an fsync makes a deliberately wrong publisher out of a correct one: the call
    /// is not made, and the log leaves it out).
    pub fn with_plan(out: &Path, root: &Path, plan: &str) -> io::Result<Recorder> {
        crate::check_plan(plan)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        let root = root.canonicalize()?;
        if out.exists() && fs::read_dir(out)?.next().is_some() {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "the --out directory is not empty",
            ));
        }
        fs::create_dir_all(out)?;
        let out = out.canonicalize()?;
        if out.starts_with(&root) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the --out directory is inside the recorded root",
            ));
        }
        copy_tree(&root, &out.join("root"))?;
        fs::write(out.join("data.bin"), b"")?;
        fs::write(out.join("log.jsonl"), b"")?;
        let dir = tempfile::Builder::new().prefix("vxfault-rec-").tempdir()?;
        let counters = crate::Counters::create(&dir.path().join("counters"), plan)?;
        Ok(Recorder {
            out,
            root,
            _counters: dir,
            counters,
            plan: plan.to_string(),
        })
    }

    /// The environment that records a program: the preload with an empty plan, the
    /// trace, the data file and the shared counter file.
    pub fn env(&self, lib: &Path) -> Vec<(String, String)> {
        let s = |p: &Path| p.to_string_lossy().into_owned();
        vec![
            ("LD_PRELOAD".into(), s(lib)),
            ("VXFAULT_PLAN".into(), self.plan.clone()),
            ("VXFAULT_TRACE".into(), s(&self.out.join("log.jsonl"))),
            ("VXFAULT_DATA".into(), s(&self.out.join("data.bin"))),
            ("VXFAULT_SHM".into(), s(self.counters.path())),
        ]
    }

    /// Prepares `cmd` to be recorded by the seccomp backend (for programs the preload
    /// cannot see): spawn it, call [`crate::seccomp::Attached::spawned`], and after it
    /// exited [`crate::seccomp::Attached::finish`] before [`Recorder::finish`].
    pub fn attach(&self, cmd: &mut Command) -> io::Result<crate::seccomp::Attached> {
        let (log, data) = (self.out.join("log.jsonl"), self.out.join("data.bin"));
        crate::seccomp::attach(
            cmd,
            &crate::seccomp::Setup {
                plan: &self.plan,
                ops: &crate::planlang::ALL_OPS,
                seed: 0,
                trace: Some(&log),
                data: Some(&data),
                counters: Some(&self.counters),
            },
        )
    }

    /// The recording's counter file (made for its plan), for a runner that sets up
    /// the seccomp backend itself.
    pub fn counters(&self) -> &crate::Counters {
        &self.counters
    }

    /// The recording's directory.
    pub fn dir(&self) -> &Path {
        &self.out
    }

    /// Seals the recording once every recorded process has exited.
    pub fn finish(self, exit_code: i32) -> io::Result<Meta> {
        let text = fs::read(self.out.join("log.jsonl"))?;
        // A process killed mid-line leaves a torn last line: it is not counted, and
        // cut off so the log ends at a line boundary.
        let end = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if end != text.len() {
            fs::write(self.out.join("log.jsonl"), &text[..end])?;
        }
        let lines = text[..end]
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .count() as u64;
        let meta = Meta {
            format: log::FORMAT.into(),
            root: self.root.clone(),
            lines,
            data_bytes: fs::metadata(self.out.join("data.bin"))?.len(),
            exit_code,
        };
        let tmp = self.out.join("meta.json.tmp");
        fs::write(
            &tmp,
            serde_json::to_vec_pretty(&meta).map_err(io::Error::other)?,
        )?;
        fs::rename(&tmp, self.out.join("meta.json"))?;
        Ok(meta)
    }
}

/// Runs `cmd` under the preload recording every mutation, with a snapshot of `root`
/// taken before the run, into `out` (created; must not exist or be empty).
pub fn record(out: &Path, root: &Path, cmd: &mut Command) -> io::Result<Recorded> {
    record_with(out, root, cmd, crate::Backend::Preload)
}

/// [`record`] with a backend (`auto` chooses as `vxfault run` does).
pub fn record_with(
    out: &Path,
    root: &Path,
    cmd: &mut Command,
    backend: crate::Backend,
) -> io::Result<Recorded> {
    let rec = Recorder::start(out, root)?;
    let choice = crate::seccomp::choose(backend, Path::new(cmd.get_program()));
    let status = if choice.backend == crate::Backend::Seccomp {
        let mut att = rec.attach(cmd)?;
        let child = cmd.spawn();
        att.spawned();
        let status = child.and_then(|mut c| c.wait());
        att.finish()?;
        status?
    } else {
        let lib = crate::preload_path()?;
        for (k, v) in rec.env(&lib) {
            cmd.env(k, v);
        }
        cmd.status()?
    };
    let code = match (
        status.code(),
        std::os::unix::process::ExitStatusExt::signal(&status),
    ) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    };
    let pat: &[u8] = br#""op":"loaded""#;
    let loaded = fs::read(rec.dir().join("log.jsonl"))?
        .windows(pat.len())
        .any(|w| w == pat);
    let meta = rec.finish(code)?;
    if !loaded {
        return Err(io::Error::other(
            "not recordable: libvxfault.so was never loaded into the command (static binary? \
             try --backend seccomp)",
        ));
    }
    Ok(Recorded { status, meta })
}

/// The default `--out`-relative path of the snapshot.
pub fn snapshot_dir(out: &Path) -> PathBuf {
    out.join("root")
}
