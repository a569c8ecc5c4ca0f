//! A recording (`vxfault record --out DIR`): `meta.json`, the trace `log.jsonl` (one
//! JSON line per call, with `off`/`len`/`data` on writes), the bytes in `data.bin`
//! and the snapshot of the root before the run in `root/`. Reading it turns the trace
//! into the logical operations under the root, each on a file identity (an inode
//! number of our own), as ALICE's logical log does.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::trace::TraceRecord;

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
    Unlink {
        path: PathBuf,
    },
    Mkdir {
        path: PathBuf,
    },
    Rmdir {
        path: PathBuf,
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
            | FsOp::Unlink { path }
            | FsOp::Mkdir { path }
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
            FsOp::Unlink { path } => format!("unlink {}", p(path)),
            FsOp::Mkdir { path } => format!("mkdir {}", p(path)),
            FsOp::Rmdir { path } => format!("rmdir {}", p(path)),
            FsOp::Output => "output (write to a pipe, socket, terminal, stdout or stderr)".into(),
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

/// Reads the recording in `dir`; `root`, if given, must be the recorded root.
pub fn read(dir: &Path, root: Option<&Path>) -> Result<Recording, LogError> {
    let meta: Meta = fs::read(dir.join("meta.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|m: &Meta| m.format == FORMAT)
        .ok_or(LogError::NoMeta)?;
    if let Some(r) = root {
        let r = r.canonicalize().map_err(|_| LogError::OtherRoot)?;
        if r != meta.root {
            return Err(LogError::OtherRoot);
        }
    }
    let text = fs::read(dir.join("log.jsonl")).map_err(LogError::Io)?;
    let data = fs::read(dir.join("data.bin")).map_err(LogError::Io)?;
    if (data.len() as u64) < meta.data_bytes {
        return Err(LogError::Truncated);
    }
    let mut records = Vec::new();
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let r: Record = serde_json::from_slice(line).map_err(|_| {
            if records.len() as u64 >= meta.lines || !text.ends_with(b"\n") {
                LogError::Truncated
            } else {
                LogError::BadLine(i + 1)
            }
        })?;
        records.push((i + 1, r));
    }
    if (records.len() as u64) < meta.lines || !text.ends_with(b"\n") {
        return Err(LogError::Truncated);
    }
    let initial = snapshot_files(&dir.join("root")).map_err(LogError::Io)?;
    let (ops, lines) = logical_ops(&meta.root, &initial, &records)?;
    if !ops.iter().any(|o| !matches!(o, FsOp::Output)) {
        return Err(LogError::NothingUnderRoot);
    }
    Ok(Recording {
        dir: dir.to_path_buf(),
        meta,
        ops,
        lines,
        data,
    })
}

/// A trace line with the record's fields.
#[derive(Debug, Deserialize)]
struct Record {
    #[serde(flatten)]
    base: TraceRecord,
    #[serde(default)]
    off: Option<i64>,
    #[serde(default)]
    len: Option<i64>,
    #[serde(default)]
    data: Option<u64>,
    #[serde(default)]
    falloc_mode: Option<i64>,
}

/// The regular files of a snapshot, relative and sorted, with their sizes: they are
/// identities 1..=N, in this order (the replay numbers them the same way).
pub fn snapshot_files(root: &Path) -> std::io::Result<Vec<(PathBuf, u64)>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in fs::read_dir(root.join(&rel))? {
            let e = e?;
            let t = e.file_type()?;
            let p = rel.join(e.file_name());
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file() {
                out.push((p, e.metadata()?.len()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Tracks which path names which file identity while the log is read.
struct Names {
    by_path: HashMap<PathBuf, Ino>,
    size: HashMap<Ino, u64>,
    next: Ino,
}

impl Names {
    fn get_or_new(&mut self, p: &Path) -> Ino {
        if let Some(i) = self.by_path.get(p) {
            return *i;
        }
        self.next += 1;
        self.by_path.insert(p.to_path_buf(), self.next);
        self.next
    }

    fn fresh(&mut self, p: &Path) -> Ino {
        self.next += 1;
        self.by_path.insert(p.to_path_buf(), self.next);
        self.next
    }

    /// Moves every name at or under `from` to `to`.
    fn rename(&mut self, from: &Path, to: &Path) {
        let moved: Vec<(PathBuf, Ino)> = self
            .by_path
            .iter()
            .filter(|(p, _)| p.starts_with(from))
            .map(|(p, i)| (p.clone(), *i))
            .collect();
        self.by_path.retain(|p, _| !p.starts_with(to));
        for (p, i) in moved {
            self.by_path.remove(&p);
            self.by_path.insert(moved_name(&p, from, to), i);
        }
    }
}

/// The name `p` (at or under `from`) gets when `from` is renamed to `to`.
pub fn moved_name(p: &Path, from: &Path, to: &Path) -> PathBuf {
    match p.strip_prefix(from) {
        // `to.join("")` would add a trailing slash.
        Ok(rest) if !rest.as_os_str().is_empty() => to.join(rest),
        _ => to.to_path_buf(),
    }
}

/// Whether the preload made the call for real (`pass`, or an action that still does
/// it: `short:N`, `delay:MS`, `torn:N`, `crash-after`, `after:ERRNO`).
fn made(action: &str) -> bool {
    action == "pass"
        || ["short:", "delay:", "torn:", "after:"]
            .iter()
            .any(|p| action.starts_with(p))
        || action == "crash-after"
}

const FALLOC_FL_KEEP_SIZE: i64 = 1;

/// The logical operations of the successful calls under `root`.
fn logical_ops(
    root: &Path,
    initial: &[(PathBuf, u64)],
    records: &[(usize, Record)],
) -> Result<(Vec<FsOp>, Vec<usize>), LogError> {
    let rel = |s: &str| -> Option<PathBuf> {
        Path::new(s).strip_prefix(root).ok().map(Path::to_path_buf)
    };
    let mut names = Names {
        by_path: HashMap::new(),
        size: HashMap::new(),
        next: 0,
    };
    for (p, size) in initial {
        let ino = names.fresh(p);
        names.size.insert(ino, *size);
    }
    // Which file each (pid, fd) opened: the trace names an fd by the path it was
    // opened under, which a later rename makes stale.
    let mut fds: HashMap<(i64, i64), Ino> = HashMap::new();
    let mut ops = Vec::new();
    let mut lines = Vec::new();
    for (line, r) in records {
        let b = &r.base;
        // Only calls that were made: a failed one, or one an injected `lie` or error
        // skipped, changed nothing.
        // A call the seccomp backend let the kernel make (`continued`) has no result
        // in the trace: a write to a pipe or terminal, which is output.
        let made_it = b.result.map_or(b.continued == Some(true), |x| x >= 0);
        if !b.is_call() || !made_it || !made(&b.action) {
            continue;
        }
        let path = rel(&b.path);
        let path2 = b.path2.as_deref().and_then(rel);
        let key = b.fd.map(|fd| (b.pid, fd));
        let by_fd = key.and_then(|k| fds.get(&k).copied());
        let mut push = |op: FsOp| {
            ops.push(op);
            lines.push(*line);
        };
        match b.op.as_str() {
            "open" => {
                let Some(p) = path else { continue };
                let flags = b.flags.as_deref().unwrap_or("");
                let has = |f: &str| flags.split('|').any(|x| x == f);
                if has("O_CREAT") && !names.by_path.contains_key(&p) {
                    let ino = names.fresh(&p);
                    if let Some(k) = key {
                        fds.insert(k, ino);
                    }
                    let mode = b
                        .mode
                        .as_deref()
                        .and_then(|m| u32::from_str_radix(m, 8).ok())
                        .unwrap_or(0o644);
                    push(FsOp::Create { path: p, ino, mode });
                } else if has("O_TRUNC") {
                    let ino = names.get_or_new(&p);
                    if let Some(k) = key {
                        fds.insert(k, ino);
                    }
                    names.size.insert(ino, 0);
                    push(FsOp::Truncate { ino, len: 0 });
                } else {
                    let ino = names.get_or_new(&p);
                    if let Some(k) = key {
                        fds.insert(k, ino);
                    }
                }
            }
            "close" => {
                if let Some(k) = key {
                    fds.remove(&k);
                }
            }
            "write" => match path {
                Some(p) => {
                    let ino = by_fd.unwrap_or_else(|| names.get_or_new(&p));
                    let (Some(off), Some(len), Some(data)) = (r.off, r.len, r.data) else {
                        return Err(LogError::NoBytes(*line));
                    };
                    let (off, len) = (off.max(0) as u64, len.max(0) as u64);
                    let size = names.size.entry(ino).or_insert(0);
                    let extends = off + len > *size;
                    *size = (*size).max(off + len);
                    push(FsOp::Write {
                        ino,
                        off,
                        len,
                        data,
                        extends,
                    });
                }
                // Output: bytes written to a pipe, socket or terminal, or to standard
                // output/error whatever file they were redirected to (not a flush).
                None if r.len.is_some_and(|n| n > 0)
                    && ((r.off.is_none() && !b.path.starts_with('/'))
                        || matches!(b.fd, Some(1 | 2))) =>
                {
                    push(FsOp::Output)
                }
                None => {}
            },
            "ftruncate" => {
                if let Some(p) = path {
                    let ino = by_fd.unwrap_or_else(|| names.get_or_new(&p));
                    let len = r.len.unwrap_or(0).max(0) as u64;
                    names.size.insert(ino, len);
                    push(FsOp::Truncate { ino, len });
                }
            }
            "fallocate" => {
                if let Some(p) = path {
                    let ino = by_fd.unwrap_or_else(|| names.get_or_new(&p));
                    let (off, len) = (
                        r.off.unwrap_or(0).max(0) as u64,
                        r.len.unwrap_or(0).max(0) as u64,
                    );
                    let keep_size = r.falloc_mode.unwrap_or(0) & FALLOC_FL_KEEP_SIZE != 0;
                    if !keep_size {
                        let size = names.size.entry(ino).or_insert(0);
                        *size = (*size).max(off + len);
                    }
                    push(FsOp::Falloc {
                        ino,
                        off,
                        len,
                        keep_size,
                    });
                }
            }
            "fsync" => {
                let all = b.call.ends_with("syncfs");
                if b.call.ends_with("sync_file_range") {
                    // Not a barrier: it neither flushes metadata nor the disk cache.
                    continue;
                }
                if let Some(p) = path.or_else(|| all.then(PathBuf::new)) {
                    let dir = b.dir == Some(true);
                    let ino = (!dir && !all).then(|| by_fd.unwrap_or_else(|| names.get_or_new(&p)));
                    push(FsOp::Fsync {
                        ino,
                        path: p,
                        dir,
                        all,
                    });
                }
            }
            "rename" => match (path, path2) {
                (Some(from), Some(to)) => {
                    let src = names.by_path.get(&from).copied();
                    let replaces = names.by_path.contains_key(&to);
                    names.rename(&from, &to);
                    push(FsOp::Rename {
                        from,
                        to,
                        src,
                        replaces,
                    });
                }
                // Moved out of the root: gone from it.
                (Some(from), None) => {
                    names.by_path.retain(|p, _| !p.starts_with(&from));
                    push(FsOp::Unlink { path: from });
                }
                _ => {}
            },
            "link" => {
                if let (Some(from), Some(to)) = (path, path2) {
                    if b.call.contains("symlink") {
                        continue;
                    }
                    let ino = names.get_or_new(&from);
                    names.by_path.insert(to.clone(), ino);
                    push(FsOp::Link { from, to });
                }
            }
            "unlink" => {
                if let Some(p) = path {
                    names.by_path.remove(&p);
                    push(FsOp::Unlink { path: p });
                }
            }
            "mkdir" => {
                if let Some(p) = path {
                    push(FsOp::Mkdir { path: p });
                }
            }
            "rmdir" => {
                if let Some(p) = path {
                    push(FsOp::Rmdir { path: p });
                }
            }
            _ => {}
        }
    }
    Ok((ops, lines))
}
