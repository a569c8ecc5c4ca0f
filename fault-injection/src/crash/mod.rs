//! Crash-state exploration, as ALICE (Pillai et al., OSDI 2014) and CrashMonkey
//! (Mohan et al., OSDI 2018) do it: record a run's file-system operations under a
//! root ([`record`]), enumerate the disk states a persistence model allows after a
//! power cut ([`model`]), materialize each one and run a checker on it ([`explore`]).

#[cfg(test)]
mod attr_tests;
pub mod cli;
pub mod explore;
pub mod log;
pub mod model;
mod reader;
pub mod replay;
mod verify;

pub use explore::{explore, state_acknowledged, Checker, ExploreError, Options, Report, Verdict};
pub use log::{FsOp, LogError, Meta, Recording};
pub use model::{enumerate, CrashState, Model, Strategy, Tear};
pub use reader::{read, read_any};
pub use verify::{verify, Missed};

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// What `record` did.
#[derive(Debug)]
pub struct Recorded {
    pub status: ExitStatus,
    pub meta: Meta,
    /// The backend that made the recording.
    pub backend: crate::Backend,
    /// With `auto`: why the preload's recording was dropped for seccomp's.
    pub switched: Option<String>,
}

/// Copies the tree at `from` to `to` (files, directories, symlinks; modes kept).
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    copy_into(from, to)
}

/// The variables [`Recorder::env`] sets.
pub const RECORD_ENV: [&str; 5] = [
    "LD_PRELOAD",
    "VXFAULT_PLAN",
    "VXFAULT_TRACE",
    "VXFAULT_DATA",
    "VXFAULT_SHM",
];

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
    umask: Option<u32>,
    /// Our stdout and stderr, which a command we start inherits.
    outputs: Vec<String>,
}

/// This process's umask, which the commands it starts inherit.
fn own_umask() -> Option<u32> {
    fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
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
        if out.starts_with(&root) || root.starts_with(&out) {
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
            umask: own_umask(),
            outputs: [1, 2]
                .iter()
                .filter_map(|fd| fs::read_link(format!("/proc/self/fd/{fd}")).ok())
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
        })
    }

    /// The environment that records a program: the preload with an empty plan, the
    /// trace, the data file and the shared counter file (the names of [`RECORD_ENV`]).
    pub fn env(&self, lib: &Path) -> Vec<(String, String)> {
        let s = |p: &Path| p.to_string_lossy().into_owned();
        let values = [
            s(lib),
            self.plan.clone(),
            s(&self.out.join("log.jsonl")),
            s(&self.out.join("data.bin")),
            s(self.counters.path()),
        ];
        RECORD_ENV
            .iter()
            .map(|k| k.to_string())
            .zip(values)
            .collect()
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
            umask: self.umask,
            outputs: self.outputs.clone(),
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

/// [`record`] with a backend. `auto` chooses as `vxfault run` does and, when the
/// preload's recording does not reproduce the root the run left ([`verify`]), puts
/// the root back as it was, and records the command again under seccomp. Any other
/// backend whose recording does not reproduce the root is an error naming what the
/// log missed.
pub fn record_with(
    out: &Path,
    root: &Path,
    cmd: &mut Command,
    backend: crate::Backend,
) -> io::Result<Recorded> {
    let choice = crate::seccomp::choose(backend, Path::new(cmd.get_program()));
    let mut r = record_once(out, root, cmd, choice.backend)?;
    let Err(missed) = verify(out) else {
        return Ok(r);
    };
    if backend != crate::Backend::Auto || choice.backend != crate::Backend::Preload {
        return Err(io::Error::other(missed.message(choice.backend)));
    }
    // Again from the same start: the root as the snapshot has it, an empty --out.
    let root = root.canonicalize()?;
    let saved = tempfile::Builder::new()
        .prefix("vxfault-rec-root-")
        .tempdir()?;
    copy_tree(&snapshot_dir(out), &saved.path().join("root"))?;
    empty_dir(&root)?;
    copy_into(&saved.path().join("root"), &root)?;
    empty_dir(out)?;
    for k in RECORD_ENV {
        cmd.env_remove(k);
    }
    r = record_once(out, &root, cmd, crate::Backend::Seccomp)?;
    if let Err(m) = verify(out) {
        return Err(io::Error::other(m.message(crate::Backend::Seccomp)));
    }
    r.switched = Some(missed.message(crate::Backend::Preload));
    Ok(r)
}

/// Removes everything inside `dir` (not `dir` itself).
fn empty_dir(dir: &Path) -> io::Result<()> {
    for e in fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            fs::remove_dir_all(e.path())?;
        } else {
            fs::remove_file(e.path())?;
        }
    }
    Ok(())
}

/// Copies the entries of `from` into the existing `to`, and `from`'s mode onto it.
fn copy_into(from: &Path, to: &Path) -> io::Result<()> {
    for e in fs::read_dir(from)? {
        let e = e?;
        let dst = to.join(e.file_name());
        let ty = e.file_type()?;
        if ty.is_dir() {
            copy_tree(&e.path(), &dst)?;
        } else if ty.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(e.path())?, &dst)?;
        } else if ty.is_file() {
            fs::copy(e.path(), &dst)?;
        }
    }
    fs::set_permissions(to, fs::metadata(from)?.permissions())
}

/// One recording with a resolved backend.
fn record_once(
    out: &Path,
    root: &Path,
    cmd: &mut Command,
    backend: crate::Backend,
) -> io::Result<Recorded> {
    let rec = Recorder::start(out, root)?;
    let status = if backend == crate::Backend::Seccomp {
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
    Ok(Recorded {
        status,
        meta,
        backend,
        switched: None,
    })
}

/// The default `--out`-relative path of the snapshot.
pub fn snapshot_dir(out: &Path) -> PathBuf {
    out.join("root")
}
