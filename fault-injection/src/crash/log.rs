//! A recording (`vxfault record --out DIR`): `meta.json`, the trace `log.jsonl` (one
//! JSON line per call, with `off`/`len`/`data` on writes), the bytes in `data.bin`
//! and the snapshot of the root before the run in `root/`; the logical operations
//! under the root ([`FsOp`], each on a file identity: an inode number of our own, as
//! ALICE's logical log has) that `reader` turns the trace into.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// `meta.json`'s `format`.
pub const FORMAT: &str = "vxfault-record-1";

/// `meta.json`: written after the run, so a recording without it (or with fewer
/// lines or data bytes than it says) is truncated.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Meta {
    pub format: String,
    /// The watched root, canonical.
    pub root: PathBuf,
    /// Complete lines in `log.jsonl`.
    pub lines: u64,
    /// Bytes in `data.bin`.
    pub data_bytes: u64,
    /// The command's exit code (128+N for signal N).
    pub exit_code: i32,
    /// The umask the command started with (the recorder's), octal: what a created
    /// file's or directory's mode is masked with when its line carries none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub umask: Option<u32>,
    /// What the command's standard output and error were (`pipe:[N]`, `/dev/pts/3`,
    /// a file), as `/proc` names them: writes to these are outputs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
}

/// Why a recording cannot be explored (the CLI prints it as one line, exit 2).
#[derive(Debug)]
pub enum LogError {
    /// `meta.json` is missing or unreadable: the recording is incomplete.
    NoMeta,
    /// Fewer lines or data bytes than `meta.json` says.
    Truncated,
    /// A line that is not a trace record.
    BadLine(usize),
    /// `--root` names a directory other than the recorded one.
    OtherRoot,
    /// Nothing in the log touched the root.
    NothingUnderRoot,
    /// A write under the root whose bytes were not recorded (stdio, copy_file_range,
    /// sendfile, splice, raw syscall).
    NoBytes(usize),
    /// A call under the root that the log cannot model (its line and call name).
    Unmodeled(usize, String),
    Io(std::io::Error),
}

impl fmt::Display for LogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogError::NoMeta => write!(f, "not a complete recording (no readable meta.json)"),
            LogError::Truncated => write!(
                f,
                "truncated recording: log.jsonl or data.bin is shorter than meta.json says"
            ),
            LogError::BadLine(n) => write!(f, "log.jsonl line {n} is not a trace record"),
            LogError::OtherRoot => write!(f, "the log was recorded under another root"),
            LogError::NothingUnderRoot => write!(
                f,
                "the log has no file-system operation under its root (recorded with the wrong --root?)"
            ),
            LogError::NoBytes(n) => write!(
                f,
                "log.jsonl line {n}: a write under the root whose bytes were not recorded \
                 (stdio, copy_file_range, sendfile, splice or a raw syscall)"
            ),
            LogError::Unmodeled(n, call) => write!(
                f,
                "log.jsonl line {n}: `{call}` under the root is an operation the crash log \
                 cannot model"
            ),
            LogError::Io(e) => write!(f, "cannot read the recording: {}", e.kind()),
        }
    }
}

impl std::error::Error for LogError {}

/// A file identity (our own inode number).
pub type Ino = u64;

/// One logical operation under the root. Paths are relative to the root.
#[derive(Debug, Clone, PartialEq)]
pub enum FsOp {
    /// `open` with `O_CREAT` that made a new file (`trunc`: with `O_TRUNC`).
    Create {
        path: PathBuf,
        ino: Ino,
        /// The mode the open gave (permission bits).
        mode: u32,
    },
    /// `open` with `O_TRUNC` or `ftruncate`.
    Truncate {
        ino: Ino,
        len: u64,
    },
    /// A write of `len` bytes at `off`, whose bytes are at `data` in `data.bin`.
    Write {
        ino: Ino,
        off: u64,
        len: u64,
        data: u64,
        /// Whether it grew the file (an append), as the run saw it.
        extends: bool,
    },
    /// fallocate: extends the file to `off+len` unless `keep_size`.
    Falloc {
        ino: Ino,
        off: u64,
        len: u64,
        keep_size: bool,
    },
    /// fsync/fdatasync of a file (`dir`: false) or directory; `all`: syncfs.
    Fsync {
        ino: Option<Ino>,
        path: PathBuf,
        dir: bool,
        all: bool,
    },
    Rename {
        from: PathBuf,
        to: PathBuf,
        /// The file renamed, and whether the rename replaced an existing name.
        src: Option<Ino>,
        replaces: bool,
    },
    Link {
        from: PathBuf,
        to: PathBuf,
    },
    /// A symbolic link at `path` whose content is `target`, as written.
    Symlink {
        target: PathBuf,
        path: PathBuf,
    },
    Unlink {
        path: PathBuf,
    },
    Mkdir {
        path: PathBuf,
        /// The directory's permission bits (the umask applied).
        mode: u32,
    },
    Rmdir {
        path: PathBuf,
    },
    /// mknod/mkfifo: a name that is not a file, directory or symlink — a fifo (`p`),
    /// socket (`s`), character (`c`) or block (`b`) device.
    Mknod {
        path: PathBuf,
        kind: char,
        /// Its permission bits (the umask applied).
        mode: u32,
    },
    /// chmod/fchmod/fchmodat: the permission bits of the file `ino` (when the call
    /// named an open or known file) or of whatever is at `path` (a directory, a
    /// node).
    Chmod {
        path: PathBuf,
        ino: Option<Ino>,
        mode: u32,
    },
    /// A timestamp call: the modification time it leaves (`None`: the present,
    /// which a materialized state has anyway). Only modification times are part of
    /// a state: they are what `make`, `rsync` and caches compare.
    Utimes {
        path: PathBuf,
        ino: Option<Ino>,
        mtime: Option<(i64, u32)>,
    },
    /// A write to a pipe, socket or terminal: no effect on disk, but it is what the
    /// program told the world (an acknowledgement's position in the order).
    Output,
}

impl FsOp {
    /// The directories whose entries this op changes (relative to the root).
    pub fn entry_dirs(&self) -> Vec<PathBuf> {
        let parent = |p: &Path| p.parent().map(Path::to_path_buf).unwrap_or_default();
        match self {
            FsOp::Create { path, .. }
            | FsOp::Mknod { path, .. }
            | FsOp::Symlink { path, .. }
            | FsOp::Unlink { path }
            | FsOp::Mkdir { path, .. }
            | FsOp::Rmdir { path } => vec![parent(path)],
            FsOp::Rename { from, to, .. } | FsOp::Link { from, to } => {
                let (a, b) = (parent(from), parent(to));
                if a == b {
                    vec![a]
                } else {
                    vec![a, b]
                }
            }
            _ => vec![],
        }
    }

    /// The file whose data this op changes.
    pub fn data_ino(&self) -> Option<Ino> {
        match self {
            FsOp::Truncate { ino, .. } | FsOp::Write { ino, .. } | FsOp::Falloc { ino, .. } => {
                Some(*ino)
            }
            _ => None,
        }
    }

    /// The inode whose attributes (mode, times) this op changes: a file's identity
    /// and its path when the call was made.
    pub fn attr_target(&self) -> Option<(Option<Ino>, &Path)> {
        match self {
            FsOp::Chmod { path, ino, .. } | FsOp::Utimes { path, ino, .. } => {
                Some((*ino, path.as_path()))
            }
            _ => None,
        }
    }

    /// Whether the op changes the disk at all.
    pub fn is_mutation(&self) -> bool {
        !matches!(self, FsOp::Fsync { .. } | FsOp::Output)
    }

    /// A short human description (for reports).
    pub fn describe(&self) -> String {
        let p = |p: &Path| p.display().to_string();
        match self {
            FsOp::Create { path, .. } => format!("create {}", p(path)),
            FsOp::Truncate { ino, len } => format!("truncate #{ino} to {len}"),
            FsOp::Write { ino, off, len, .. } => format!("write #{ino} [{off}, +{len})"),
            FsOp::Falloc { ino, off, len, .. } => format!("fallocate #{ino} [{off}, +{len})"),
            FsOp::Fsync { path, dir, all, .. } => match (all, dir) {
                (true, _) => "syncfs".into(),
                (_, true) => format!("fsync dir {}", p(path)),
                _ => format!("fsync {}", p(path)),
            },
            FsOp::Rename { from, to, .. } => format!("rename {} -> {}", p(from), p(to)),
            FsOp::Link { from, to } => format!("link {} -> {}", p(from), p(to)),
            FsOp::Symlink { target, path } => format!("symlink {} -> {}", p(path), p(target)),
            FsOp::Unlink { path } => format!("unlink {}", p(path)),
            FsOp::Mkdir { path, .. } => format!("mkdir {}", p(path)),
            FsOp::Rmdir { path } => format!("rmdir {}", p(path)),
            FsOp::Mknod { path, kind, mode } => format!("mknod {} ({kind}, {mode:04o})", p(path)),
            FsOp::Chmod { path, mode, .. } => format!("chmod {} {mode:04o}", p(path)),
            FsOp::Utimes { path, mtime, .. } => match mtime {
                Some((s, n)) => format!("set mtime of {} to {s}.{n:09}", p(path)),
                None => format!("set mtime of {} to now", p(path)),
            },
            FsOp::Output => {
                "output (write to the command's stdout or stderr, a terminal or a socket)".into()
            }
        }
    }
}

/// A parsed recording.
#[derive(Debug)]
pub struct Recording {
    pub dir: PathBuf,
    pub meta: Meta,
    pub ops: Vec<FsOp>,
    /// Which trace line each op came from (1-based).
    pub lines: Vec<usize>,
    pub data: Vec<u8>,
}

impl Recording {
    /// The snapshot of the root taken before the run.
    pub fn snapshot(&self) -> PathBuf {
        self.dir.join("root")
    }

    /// The bytes of a write.
    pub fn bytes(&self, data: u64, len: u64) -> &[u8] {
        let a = (data as usize).min(self.data.len());
        let b = (data.saturating_add(len) as usize).min(self.data.len());
        &self.data[a..b]
    }
}

/// Every entry below `root` that is not a directory, relative, with its type and
/// metadata (not followed through symlinks).
fn snapshot_entries(root: &Path) -> std::io::Result<Vec<(PathBuf, fs::FileType, fs::Metadata)>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in fs::read_dir(root.join(&rel))? {
            let e = e?;
            let t = e.file_type()?;
            let p = rel.join(e.file_name());
            if t.is_dir() {
                stack.push(p);
            } else {
                out.push((p, t, e.metadata()?));
            }
        }
    }
    Ok(out)
}

/// The regular files of a snapshot, relative and sorted, with their sizes: they are
/// identities 1..=N, in this order (the replay numbers them the same way).
pub fn snapshot_files(root: &Path) -> std::io::Result<Vec<(PathBuf, u64)>> {
    let mut out: Vec<(PathBuf, u64)> = snapshot_entries(root)?
        .into_iter()
        .filter(|(_, t, _)| t.is_file())
        .map(|(p, _, m)| (p, m.len()))
        .collect();
    out.sort();
    Ok(out)
}

/// The symbolic links of a snapshot, relative.
pub fn snapshot_symlinks(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    Ok(snapshot_entries(root)?
        .into_iter()
        .filter(|(_, t, _)| t.is_symlink())
        .map(|(p, _, _)| p)
        .collect())
}

/// The name `p` (at or under `from`) gets when `from` is renamed to `to`.
pub fn moved_name(p: &Path, from: &Path, to: &Path) -> PathBuf {
    match p.strip_prefix(from) {
        // `to.join("")` would add a trailing slash.
        Ok(rest) if !rest.as_os_str().is_empty() => to.join(rest),
        _ => to.to_path_buf(),
    }
}
