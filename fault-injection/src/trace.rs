//! Reading the trace `libvxfault.so` writes (`VXFAULT_TRACE`): one JSON object per line.

use std::fs;
use std::io;
use std::path::Path;

use serde::Deserialize;

/// One line of the trace.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct TraceRecord {
    /// Order of the line in the whole process tree (1-based).
    pub seq: u64,
    pub pid: i64,
    #[serde(default)]
    pub tid: i64,
    /// The process's random stream for `%P` draws (one per process of the tree).
    #[serde(default)]
    pub stream: Option<u64>,
    /// Call family, or `loaded` / `plan-error` for the events of a process.
    pub op: String,
    /// The intercepted symbol (`pwrite64`, `syscall:fsync`, …).
    #[serde(default)]
    pub call: String,
    /// Absolute path the call acts on (for fd calls the fd's path; for rename the
    /// source). Lossy if the path was not UTF-8 (see `path_hex`).
    pub path: String,
    #[serde(default)]
    pub path_hex: Option<String>,
    /// Rename destination.
    #[serde(default)]
    pub path2: Option<String>,
    #[serde(default)]
    pub path2_hex: Option<String>,
    #[serde(default)]
    pub fd: Option<i64>,
    /// Return value; `None` when the process was killed before the call.
    pub result: Option<i64>,
    pub errno: i64,
    /// `pass`, `none` (events) or the action taken (`EIO`, `short:3`, …).
    pub action: String,
    /// With `after:ERRNO`: what the call really returned (the caller saw `result`).
    #[serde(default)]
    pub real_result: Option<i64>,
    /// open: the flags, by name (`O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`).
    #[serde(default)]
    pub flags: Option<String>,
    /// open with `O_CREAT`/`O_TMPFILE`: the mode, four octal digits (`0600`).
    #[serde(default)]
    pub mode: Option<String>,
    /// flock: `EX`, `SH`, `UN`, with `|NB`; fcntl locks: `SETLK F_WRLCK` and the like.
    #[serde(default)]
    pub lock: Option<String>,
    /// fsync family: `true` when the fd is a directory.
    #[serde(default)]
    pub dir: Option<bool>,
    /// `loaded` lines: the backend that saw the process (`preload`, `seccomp`).
    #[serde(default)]
    pub backend: Option<String>,
    /// seccomp backend: the kernel made the call after the supervisor let it through,
    /// so its result was not seen (`result` is null).
    #[serde(default)]
    pub continued: Option<bool>,
    /// 1-based number of the rule that acted.
    #[serde(default)]
    pub rule: Option<usize>,
    /// That rule's ordinal for this call.
    #[serde(default)]
    pub hit: Option<u64>,
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() & 1 == 1 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

impl TraceRecord {
    /// The exact path bytes.
    pub fn path_bytes(&self) -> Vec<u8> {
        self.path_hex
            .as_deref()
            .and_then(unhex)
            .unwrap_or_else(|| self.path.as_bytes().to_vec())
    }

    /// The exact rename destination bytes.
    pub fn path2_bytes(&self) -> Option<Vec<u8>> {
        let p = self.path2.as_ref()?;
        Some(
            self.path2_hex
                .as_deref()
                .and_then(unhex)
                .unwrap_or_else(|| p.as_bytes().to_vec()),
        )
    }

    /// Whether this line is a call (not a `loaded`/`plan-error` event).
    pub fn is_call(&self) -> bool {
        self.op != "loaded" && self.op != "plan-error"
    }
}

/// Reads a trace file. A last line cut short by a crash of the writer is ignored;
/// any other bad line is an error.
pub fn read_trace(path: &Path) -> io::Result<Vec<TraceRecord>> {
    let text = fs::read(path)?;
    let mut out = Vec::new();
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        match serde_json::from_slice::<TraceRecord>(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines.len() => {}
            Err(e) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: line {}: {e}", path.display(), i + 1),
                ))
            }
        }
    }
    Ok(out)
}
