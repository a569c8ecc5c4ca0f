//! Reading a recording ([`read`]) and its trace into logical operations: which calls count (made, under the
//! root), which file identity each path and fd names as the log goes, and what each
//! call becomes ([`FsOp`]); a call the log cannot model is an error, never skipped.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::log::{
    moved_name, snapshot_files, snapshot_symlinks, FsOp, Ino, LogError, Meta, Recording, FORMAT,
};
use crate::trace::TraceRecord;

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
