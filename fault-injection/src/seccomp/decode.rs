//! A notification decoded into what the plan matches and the trace says: the family,
//! the path(s) the call acts on, the fd, open flags and mode, the lock, and where its
//! bytes are — read from the process as `planlang::syscalls` lays each call out.

use crate::planlang::attrs::{self, Mtime};
use crate::planlang::syscalls::{Args, Syscall, AT_REMOVEDIR};
use crate::Op;

use super::notif::Notif;
use super::target::{abs_path, fd_kind, fd_path, read_cstr, read_mem};

/// What the trace says about a call beyond its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    None,
    Open {
        flags: i32,
        mode: Option<u32>,
    },
    Flock(i32),
    Fcntl {
        cmd: i32,
        kind: Option<i16>,
    },
    /// An fsync-family call on a directory.
    SyncDir,
    /// mkdir's mode (before the umask), chmod's mode.
    Mode(u32),
    /// mknod's mode: the node type and its permission bits (before the umask).
    Node(u32),
    /// A timestamp call: the modification time it sets (`None`: unreadable) and
    /// whether it acts on a symlink itself.
    Times {
        mtime: Option<Mtime>,
        nofollow: bool,
    },
}

/// One decoded call.
#[derive(Debug, Clone)]
pub struct Call {
    pub sys: &'static Syscall,
    pub op: Op,
    pub tid: u32,
    pub args: [u64; 6],
    /// The fd acted on (the destination of copy_file_range, splice and sendfile).
    pub fd: Option<i64>,
    pub path: Vec<u8>,
    pub path2: Option<Vec<u8>>,
    /// Path arguments as the process passed them (for making the call on its behalf
    /// relative to its own directory fds).
    pub raw: Option<Vec<u8>>,
    pub raw2: Option<Vec<u8>>,
    pub detail: Detail,
    /// Whether the fd is a regular file (write family: what `record` copies).
    pub regular: bool,
    /// A write's byte count as the caller asked (for `lie`, `short`, `torn`).
    pub len: u64,
    /// Whether anything was read from the process (its memory or `/proc`): only then
    /// must the notification be checked still pending before the answer relies on it.
    pub read: bool,
}

/// Why a notification is not a call of the plan's families after all.
pub enum Skip {
    /// Not in a family (sendfile/splice into a pipe or socket): let it through,
    /// untraced, as the preload does.
    Untraced,
    /// Its arguments could not be read (a bad pointer): let the kernel fail it.
    Unreadable,
}

/// `open` flag for creating a file.
const O_CREAT: i32 = 0o100;
const O_TMPFILE: i32 = 0o20200000;

fn open_detail(flags: i32, mode: u32) -> Detail {
    let takes_mode = flags & O_CREAT != 0 || flags & O_TMPFILE == O_TMPFILE;
    Detail::Open {
        flags,
        mode: takes_mode.then_some(mode & 0o7777),
    }
}

/// Decodes notification `n` of table entry `sys`. Paths are resolved only when
/// `paths` (a rule's glob needs them, or the call is traced); whether a write's fd is
/// a regular file only when `kinds` (`record` copies those) or for sendfile and splice
/// (which are writes only into regular files): each costs a `/proc` look-up.
pub fn decode(n: &Notif, sys: &'static Syscall, paths: bool, kinds: bool) -> Result<Call, Skip> {
    let a = n.data.args;
    let tid = n.pid;
    let mut c = Call {
        sys,
        op: sys.ops[0],
        tid,
        args: a,
        fd: None,
        path: Vec::new(),
        path2: None,
        raw: None,
        raw2: None,
        detail: Detail::None,
        regular: false,
        len: 0,
        read: true,
    };
    let int = |i: usize| a[i] as i64 as i32;
    let cstr = |i: usize| read_cstr(tid, a[i]).map_err(|_| Skip::Unreadable);
    let at = |dirfd: i64, raw: &[u8]| {
        if paths {
            abs_path(tid, dirfd, raw)
        } else {
            Vec::new()
        }
    };
    let cwd = libc::AT_FDCWD as i64;
    match sys.args {
        Args::Buf { .. } | Args::Iov { .. } | Args::Range | Args::Sendfile => {
            let (fd, len) = match sys.args {
                Args::Range => (a[2] as i32 as i64, a[4]),
                Args::Sendfile => (int(0) as i64, a[3]),
                Args::Iov { .. } => (int(0) as i64, iov_total(tid, a[1], a[2])),
                _ => (int(0) as i64, a[2]),
            };
            let needs_kind = kinds || matches!(sys.name, "sendfile" | "splice");
            let regular = needs_kind && fd_kind(tid, fd).1;
            if matches!(sys.name, "sendfile" | "splice") && !regular {
                return Err(Skip::Untraced);
            }
            c.fd = Some(fd);
            c.len = len;
            c.regular = regular;
            c.read = paths || needs_kind || matches!(sys.args, Args::Iov { .. });
            if paths {
                c.path = fd_path(tid, fd);
            }
        }
        Args::Open { at: is_at, creat } => {
            let (dirfd, p, flags, mode) = match (is_at, creat) {
                (true, _) => (int(0) as i64, 1, int(2), a[3] as u32),
                (false, true) => (cwd, 0, O_CREAT | 0o1 | 0o1000, a[1] as u32),
                (false, false) => (cwd, 0, int(1), a[2] as u32),
            };
            let raw = cstr(p)?;
            c.path = at(dirfd, &raw);
            c.raw = Some(raw);
            c.detail = open_detail(flags, mode);
        }
        Args::Openat2 => {
            let raw = cstr(1)?;
            // struct open_how { u64 flags; u64 mode; u64 resolve; }
            let how = read_mem(tid, a[2], 16).map_err(|_| Skip::Unreadable)?;
            let word = |i: usize| {
                how.get(i * 8..i * 8 + 8)
                    .map_or(0, |b| u64::from_ne_bytes(b.try_into().unwrap_or([0; 8])))
            };
            c.path = at(int(0) as i64, &raw);
            c.raw = Some(raw);
            c.detail = open_detail(word(0) as i32, word(1) as u32);
        }
        Args::Fd | Args::FcntlLock | Args::CloseRange => {
            let fd = int(0) as i64;
            c.fd = Some(fd);
            let one_fd = sys.args != Args::CloseRange || a[0] == a[1];
            c.read = paths || sys.name == "fcntl";
            if paths && one_fd {
                c.path = fd_path(tid, fd);
            }
            match sys.name {
                "flock" => c.detail = Detail::Flock(int(1)),
                "fcntl" => {
                    // l_type is the first field of `struct flock`.
                    let kind = read_mem(tid, a[2], 2)
                        .ok()
                        .and_then(|b| Some(i16::from_ne_bytes(b.get(..2)?.try_into().ok()?)));
                    c.detail = Detail::Fcntl { cmd: int(1), kind };
                }
                "fchmod" => c.detail = Detail::Mode(a[1] as u32 & 0o7777),
                _ if paths && c.op == Op::Fsync && fd_kind(tid, fd).0 => c.detail = Detail::SyncDir,
                _ => {}
            }
        }
        Args::Path { at: is_at } => {
            let (dirfd, p) = if is_at { (int(0) as i64, 1) } else { (cwd, 0) };
            let raw = cstr(p)?;
            c.path = at(dirfd, &raw);
            c.raw = Some(raw);
            c.detail = match c.op {
                Op::Mkdir if sys.name.starts_with("mknod") => Detail::Node(a[p + 1] as u32),
                Op::Mkdir | Op::Chmod => Detail::Mode(a[p + 1] as u32 & 0o7777),
                _ => Detail::None,
            };
        }
        Args::Unlinkat => {
            if int(2) & AT_REMOVEDIR != 0 {
                c.op = Op::Rmdir;
            }
            let raw = cstr(1)?;
            c.path = at(int(0) as i64, &raw);
            c.raw = Some(raw);
        }
        Args::Path2 { at: is_at } => {
            let (d1, p1, d2, p2) = if is_at {
                (int(0) as i64, 1, int(2) as i64, 3)
            } else {
                (cwd, 0, cwd, 1)
            };
            let (r1, r2) = (cstr(p1)?, cstr(p2)?);
            c.path = at(d1, &r1);
            c.path2 = Some(at(d2, &r2));
            c.raw = Some(r1);
            c.raw2 = Some(r2);
        }
        Args::Symlink { at: is_at } => {
            let (d2, p2) = if is_at { (int(1) as i64, 2) } else { (cwd, 1) };
            let target = cstr(0)?;
            let r2 = cstr(p2)?;
            c.path = target.clone();
            c.path2 = Some(at(d2, &r2));
            c.raw = Some(target);
            c.raw2 = Some(r2);
        }
        Args::Times { at: is_at, times } => {
            let (dirfd, p) = if is_at { (int(0) as i64, 1) } else { (cwd, 0) };
            if is_at && a[1] == 0 {
                // futimens: the fd itself.
                c.fd = Some(dirfd);
                if paths {
                    c.path = fd_path(tid, dirfd);
                }
            } else {
                let raw = cstr(p)?;
                c.path = at(dirfd, &raw);
                c.raw = Some(raw);
            }
            let ptr = a[p + 1];
            let bytes = (ptr != 0)
                .then(|| read_mem(tid, ptr, attrs::times_size(times)).unwrap_or_default());
            let flags = if is_at && sys.name == "utimensat" {
                int(3)
            } else {
                0
            };
            c.detail = Detail::Times {
                mtime: attrs::mtime_of(times, bytes.as_deref()),
                nofollow: flags & attrs::AT_SYMLINK_NOFOLLOW != 0,
            };
        }
    }
    if c.path2.is_none() && matches!(c.op, Op::Rename | Op::Link) {
        c.path2 = Some(Vec::new());
    }
    Ok(c)
}

/// The byte count of an iovec array in `tid` (0 when it cannot be read).
fn iov_total(tid: u32, iov: u64, cnt: u64) -> u64 {
    let cnt = cnt.min(1024) as usize;
    read_mem(tid, iov, cnt * 16)
        .map(|raw| {
            raw.chunks_exact(16)
                .map(|c| u64::from_ne_bytes(c[8..].try_into().unwrap_or([0; 8])))
                .fold(0u64, u64::saturating_add)
        })
        .unwrap_or(0)
}
