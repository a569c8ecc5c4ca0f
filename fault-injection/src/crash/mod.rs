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

/// Runs `cmd` under the preload recording every mutation, with a snapshot of `root`
/// taken before the run, into `out` (created; must not exist or be empty).
pub fn record(out: &Path, root: &Path, cmd: &mut Command) -> io::Result<Recorded> {
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
    let data = out.join("data.bin");
    fs::write(&data, b"")?;
    let log_path = out.join("log.jsonl");
    cmd.env("VXFAULT_DATA", &data);
    let injector = crate::Injector::new("")
        .map_err(|e| io::Error::other(e.to_string()))?
        .trace(&log_path);
    let outcome = injector.run(cmd)?;
    if let Err(why) = outcome.injectable() {
        return Err(io::Error::other(format!("not recordable: {why}")));
    }
    let text = fs::read(&log_path)?;
    let lines = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count() as u64;
    let meta = Meta {
        format: log::FORMAT.into(),
        root: root.clone(),
        lines,
        data_bytes: fs::metadata(&data)?.len(),
        exit_code: outcome.exit_code(),
    };
    let tmp = out.join("meta.json.tmp");
    fs::write(
        &tmp,
        serde_json::to_vec_pretty(&meta).map_err(io::Error::other)?,
    )?;
    fs::rename(&tmp, out.join("meta.json"))?;
    Ok(Recorded {
        status: outcome.status,
        meta,
    })
}

/// The default `--out`-relative path of the snapshot.
pub fn snapshot_dir(out: &Path) -> PathBuf {
    out.join("root")
}
