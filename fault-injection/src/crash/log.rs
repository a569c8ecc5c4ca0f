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

/// Reads the recording in `dir`; `root`, if given, must be the recorded root.
pub fn read(dir: &Path, root: Option<&Path>) -> Result<Recording, LogError> {
    let rec = read_any(dir, root)?;
    if !rec.ops.iter().any(|o| !matches!(o, FsOp::Output)) {
        return Err(LogError::NothingUnderRoot);
    }
    Ok(rec)
}

/// [`read`], also when nothing in the log touched the root.
pub fn read_any(dir: &Path, root: Option<&Path>) -> Result<Recording, LogError> {
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
    let links = snapshot_symlinks(&dir.join("root")).map_err(LogError::Io)?;
    let (ops, lines) = logical_ops(&meta, &initial, &links, &records)?;
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
    /// The process's umask at a creating call (seccomp backend), octal.
    #[serde(default)]
    umask: Option<String>,
    /// mknod's node type (`fifo`, `socket`, `char`, `block`, `file`).
    #[serde(default)]
    node: Option<String>,
    /// A timestamp call's modification time: `now`, `omit` or `SECONDS.NANOS`.
    #[serde(default)]
    mtime: Option<String>,
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

/// Tracks which path names which file identity while the log is read.
struct Names {
    by_path: HashMap<PathBuf, Ino>,
    size: HashMap<Ino, u64>,
    /// The identities that are symlinks: a call through one acts on its target,
    /// which the log does not resolve.
    links: std::collections::HashSet<Ino>,
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

/// Whether the preload made the call for real (`pass`; `stdio`, a write glibc made for
/// a stdio call already decided; or an action that still does it: `short:N`,
/// `delay:MS`, `torn:N`, `crash-after`, `after:ERRNO`).
fn made(action: &str) -> bool {
    action == "pass"
        || action == "stdio"
        || ["short:", "delay:", "torn:", "after:"]
            .iter()
            .any(|p| action.starts_with(p))
        || action == "crash-after"
}

const FALLOC_FL_KEEP_SIZE: i64 = 1;

/// Whether a write to `path` (as `/proc` names the fd; not under the root) is output:
/// the command's own stdout or stderr, a terminal, or a socket (a reply a client
/// reads). A pipe the command made for itself (a shell's `$(…)`) and a file outside
/// the root are not.
fn is_output(meta: &Meta, path: &str) -> bool {
    meta.outputs.iter().any(|o| o == path)
        || path.starts_with("socket:")
        || path.starts_with("/dev/pts/")
        || path.starts_with("/dev/tty")
}

/// Whether a write is the recorded program's own stdout or stderr redirected to a
/// file (a daemon's log: what it prints after a publish acknowledges it). The
/// recorder's `outputs` name its own descriptors, which a program started by a
/// harness with its own redirections does not share; a pipe on fd 1 (a shell's
/// `$(…)`) is not such a file.
fn redirected_std(fd: Option<i64>, path: &str) -> bool {
    matches!(fd, Some(1 | 2)) && path.starts_with('/')
}

/// The permission bits a creating call with `mode` gives under `umask`.
fn masked(mode: Option<&str>, umask: Option<&str>, meta: &Meta, default: u32) -> u32 {
    let oct = |s: &str| u32::from_str_radix(s, 8).ok();
    let mode = mode.and_then(oct).unwrap_or(default);
    let umask = umask.and_then(oct).or(meta.umask).unwrap_or(0o022);
    mode & !umask & 0o7777
}

/// A trace `mtime` of `SECONDS.NANOSECONDS` (nine digits).
fn parse_mtime(t: &str) -> Option<(i64, u32)> {
    let (sec, ns) = t.split_once('.')?;
    Some((sec.parse().ok()?, ns.parse().ok()?))
}

/// The logical operations of the successful calls under `root`.
fn logical_ops(
    meta: &Meta,
    initial: &[(PathBuf, u64)],
    links: &[PathBuf],
    records: &[(usize, Record)],
) -> Result<(Vec<FsOp>, Vec<usize>), LogError> {
    let root = meta.root.as_path();
    let rel = |s: &str| -> Option<PathBuf> {
        Path::new(s).strip_prefix(root).ok().map(Path::to_path_buf)
    };
    let mut names = Names {
        by_path: HashMap::new(),
        size: HashMap::new(),
        links: Default::default(),
        next: 0,
    };
    for (p, size) in initial {
        let ino = names.fresh(p);
        names.size.insert(ino, *size);
    }
    // Symlinks get identities after the files' (the replay never looks them up):
    // a rename over one replaces an existing name.
    for p in links {
        let ino = names.fresh(p);
        names.links.insert(ino);
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
                    let mode = masked(b.mode.as_deref(), r.umask.as_deref(), meta, 0o666);
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
                // A stdio call's own line: its bytes are on the lines of the writes
                // glibc made (`_IO_file_write`); what no line shows, `verify` finds.
                Some(_) if r.len.is_none() => {}
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
                // Output: bytes the world reads (not a flush of nothing).
                None if r.len.is_some_and(|n| n > 0)
                    && (is_output(meta, &b.path) || redirected_std(b.fd, &b.path)) =>
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
                // Moved in from outside the root: its bytes were never seen.
                (None, Some(_)) => return Err(LogError::Unmodeled(*line, b.call.clone())),
                _ => {}
            },
            // A symlink's `path` is its target as written (never relative to the
            // root); only the new name must be under it.
            "link" if b.call.contains("symlink") => {
                if let Some(p) = path2 {
                    let ino = names.fresh(&p);
                    names.links.insert(ino);
                    push(FsOp::Symlink {
                        target: PathBuf::from(&b.path),
                        path: p,
                    });
                }
            }
            "link" => match (path, path2) {
                (Some(from), Some(to)) => {
                    let ino = names.get_or_new(&from);
                    names.by_path.insert(to.clone(), ino);
                    push(FsOp::Link { from, to });
                }
                // A file from outside the root linked into it: its bytes were never
                // seen.
                (None, Some(_)) => return Err(LogError::Unmodeled(*line, b.call.clone())),
                _ => {}
            },
            "unlink" => {
                if let Some(p) = path {
                    names.by_path.remove(&p);
                    push(FsOp::Unlink { path: p });
                }
            }
            "mkdir" if b.call.contains("mknod") || b.call.contains("mkfifo") => {
                let Some(p) = path else { continue };
                let mode = masked(b.mode.as_deref(), r.umask.as_deref(), meta, 0o666);
                let kind = match r.node.as_deref() {
                    Some("fifo") => 'p',
                    Some("socket") => 's',
                    Some("char") => 'c',
                    Some("block") => 'b',
                    Some("file") => {
                        // mknod of a regular file: an empty file, as open(O_CREAT).
                        let ino = names.fresh(&p);
                        names.size.insert(ino, 0);
                        push(FsOp::Create { path: p, ino, mode });
                        continue;
                    }
                    _ => return Err(LogError::Unmodeled(*line, b.call.clone())),
                };
                names.by_path.remove(&p);
                push(FsOp::Mknod {
                    path: p,
                    kind,
                    mode,
                });
            }
            "chmod" | "utimens" => {
                let Some(p) = path else { continue };
                let ino = by_fd.or_else(|| names.by_path.get(&p).copied());
                // Through a symlink the call acts on its target, which the log does
                // not resolve.
                if ino.is_some_and(|i| names.links.contains(&i)) {
                    return Err(LogError::Unmodeled(*line, b.call.clone()));
                }
                if b.op == "chmod" {
                    let oct = b
                        .mode
                        .as_deref()
                        .and_then(|m| u32::from_str_radix(m, 8).ok());
                    let Some(mode) = oct else {
                        return Err(LogError::Unmodeled(*line, b.call.clone()));
                    };
                    push(FsOp::Chmod { path: p, ino, mode });
                    continue;
                }
                let mtime = match r.mtime.as_deref() {
                    Some("omit") => continue,
                    Some("now") => None,
                    Some(t) => match parse_mtime(t) {
                        Some(m) => Some(m),
                        None => return Err(LogError::Unmodeled(*line, b.call.clone())),
                    },
                    // Times the recorder could not read.
                    None => return Err(LogError::Unmodeled(*line, b.call.clone())),
                };
                push(FsOp::Utimes {
                    path: p,
                    ino,
                    mtime,
                });
            }
            "mkdir" => {
                if let Some(p) = path {
                    let mode = masked(b.mode.as_deref(), r.umask.as_deref(), meta, 0o777);
                    push(FsOp::Mkdir { path: p, mode });
                }
            }
            "rmdir" => {
                if let Some(p) = path {
                    push(FsOp::Rmdir { path: p });
                }
            }
            "flock" => {}
            // A family this reader does not know, under the root: never skipped.
            _ if path.is_some() || path2.is_some() => {
                return Err(LogError::Unmodeled(*line, b.call.clone()))
            }
            _ => {}
        }
    }
    Ok((ops, lines))
}
