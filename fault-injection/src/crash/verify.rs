//! Whether a recording is faithful: replayed in full, its log must leave the root
//! exactly as the run left it (names, types, modes, sizes, bytes; not timestamps).
//! A difference means the backend missed an operation — stdio buffers glibc flushed
//! itself, a raw system call, a call the log does not model — and a crash state
//! built from that log would be a state of another program.

use std::fmt;
use std::path::{Path, PathBuf};

use super::log::LogError;
use super::model::{CrashState, Strategy};
use super::reader;
use super::replay::{state_tree, Seen, Tree};
use crate::Backend;

/// What the log missed: the first path whose replay differs from the run's result.
#[derive(Debug)]
pub enum Missed {
    /// The log itself cannot be read or modelled.
    Log(LogError),
    /// The root after the run cannot be read.
    Io(std::io::Error),
    /// An explicit modification time set on `path` while it was not a regular file
    /// (a directory, a node): states do not carry those.
    Times(PathBuf),
    /// `path` after the run (`real`) and after the replay (`replayed`).
    Differs {
        path: PathBuf,
        real: Option<Box<Seen>>,
        replayed: Option<Box<Seen>>,
    },
}

fn kind(s: &Seen) -> String {
    match s {
        Seen::Dir(m) => format!("a directory of mode {m:04o}"),
        Seen::File {
            mode,
            len,
            mtime: Some((sec, ns)),
            ..
        } => format!("a file of {len} bytes, mode {mode:04o} and mtime {sec}.{ns:09}"),
        Seen::File { mode, len, .. } => format!("a file of {len} bytes and mode {mode:04o}"),
        Seen::Symlink(t) => format!("a symlink to {}", t.display()),
        Seen::Special(k, _) => match k {
            'p' => "a fifo".into(),
            's' => "a socket".into(),
            _ => "a device node".into(),
        },
    }
}

impl Missed {
    /// The sentence `record` fails with, naming what `backend` did not see and the
    /// backend that sees it.
    pub fn message(&self, backend: Backend) -> String {
        let (path, real, replayed) = match self {
            Missed::Log(e) => return format!("the {} backend's log: {e}", backend.name()),
            Missed::Io(e) => return format!("cannot read the root after the run: {}", e.kind()),
            Missed::Times(p) => {
                return format!(
                    "the {} backend's recording sets an explicit modification time on {}, \
                     which is not a regular file: the crash log cannot model utimensat \
                     there",
                    backend.name(),
                    p.display()
                )
            }
            Missed::Differs {
                path,
                real,
                replayed,
            } => (path, real.as_deref(), replayed.as_deref()),
        };
        let what = |s: Option<&Seen>| s.map_or("nothing".to_string(), kind);
        let why = match (real, replayed) {
            (Some(Seen::Special('s', _)), None) => {
                "a socket made by bind(2) is not recorded: the crash log cannot model it"
            }
            (Some(Seen::Special(..)), None) if backend == Backend::Preload => {
                "a node made by a call the preload did not see (a raw system call); \
                 --backend seccomp sees mknod as a system call"
            }
            (Some(Seen::File { mode: a, .. }), Some(Seen::File { mode: b, .. }))
            | (Some(Seen::Dir(a)), Some(Seen::Dir(b)))
                if a != b =>
            {
                "a chmod the backend did not see (a raw system call, or a chmod through a \
                 symlink), or a umask the program set itself"
            }
            (Some(Seen::File { len: a, sha: x, .. }), Some(Seen::File { len: b, sha: y, .. }))
                if a == b && x == y =>
            {
                "a timestamp call the backend did not see"
            }
            (Some(Seen::File { .. }), Some(Seen::File { .. })) if backend == Backend::Preload => {
                "writes glibc made itself (stdio buffers flushed at exit) or raw system calls \
                 were not seen by the preload; --backend seccomp sees every write as a \
                 system call"
            }
            _ if backend == Backend::Preload => {
                "a call the preload did not see (a raw system call, or one made inside \
                 glibc); --backend seccomp sees them as system calls"
            }
            _ => "a call the crash log does not record",
        };
        format!(
            "the {} backend's recording does not reproduce the run: {} is {} after the run \
             but {} when the log is replayed ({why})",
            backend.name(),
            path.display(),
            what(real),
            what(replayed),
        )
    }
}

impl fmt::Display for Missed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Missed::Log(e) => e.fmt(f),
            Missed::Io(e) => write!(f, "cannot read the root after the run: {}", e.kind()),
            Missed::Times(p) => write!(
                f,
                "{}: an explicit modification time on a non-file is not modelled",
                p.display()
            ),
            Missed::Differs { path, .. } => {
                write!(f, "{} differs from the replayed log", path.display())
            }
        }
    }
}

/// Checks the recording in `dir` against its root as the run left it.
pub fn verify(dir: &Path) -> Result<(), Missed> {
    let rec = reader::read_any(dir, None).map_err(Missed::Log)?;
    let base = Tree::load(&rec.snapshot()).map_err(Missed::Io)?;
    let complete = CrashState {
        id: 0,
        strategy: Strategy::Prefix,
        crash: rec.ops.len(),
        dropped: vec![],
        torn: None,
        zeroed: false,
    };
    let tree = state_tree(&rec, &base, &complete);
    if let Some(p) = tree.times_unmodelled.first() {
        return Err(Missed::Times(p.clone()));
    }
    let replayed = tree.view();
    // The run's times count only where the log set one: any other is the moment
    // of a write, which no replay reproduces.
    let mut real = Tree::load_with_times(&rec.meta.root).map_err(Missed::Io)?;
    real.keep_times_of(&tree);
    let real = real.view();
    let paths: std::collections::BTreeSet<&PathBuf> = real.keys().chain(replayed.keys()).collect();
    for p in paths {
        let (a, b) = (real.get(p), replayed.get(p));
        if a != b {
            return Err(Missed::Differs {
                path: p.clone(),
                real: a.cloned().map(Box::new),
                replayed: b.cloned().map(Box::new),
            });
        }
    }
    Ok(())
}
