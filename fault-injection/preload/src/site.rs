//! One intercepted call as data: what it acts on ([`Target`]), what the trace says
//! about it ([`Detail`]), the bytes it writes ([`Bytes`]) and the [`Call`] record the
//! hooks fill. Deciding and acting on a call is `call.rs`; the trace (`trace.rs`) and
//! the record (`record.rs`) read a call from here, so none of the three imports
//! another.

use core::ffi::{c_char, c_int, c_uint, c_void};

use plan::Op;
use vxfault_plan as plan;

use crate::sys::{IoVec, O_CREAT, O_TMPFILE};

/// What a call acts on.
pub enum Target {
    None,
    Fd(c_int),
    /// A path relative to a directory fd (or `AT_FDCWD`).
    At(c_int, *const c_char),
    /// A path used as given, not resolved (a symlink's target).
    Raw(*const c_char),
}

/// What the trace says about a call beyond its path.
#[derive(Clone, Copy)]
pub enum Detail {
    None,
    Open {
        flags: c_int,
        mode: Option<c_uint>,
    },
    Flock(c_int),
    /// An fcntl lock: the command and the `l_type` of the caller's `struct flock`.
    Fcntl {
        cmd: c_int,
        kind: Option<i16>,
    },
    /// An fsync-family call: the trace marks a directory fd.
    Sync,
    /// mkdir's mode (before the umask), chmod's mode.
    Mode(c_uint),
    /// mknod's mode: the node type and its permission bits (before the umask).
    Node(c_uint),
    /// A timestamp call: the modification time it sets (`None`: unreadable) and
    /// whether it acts on a symlink itself.
    Times {
        mtime: Option<plan::attrs::Mtime>,
        nofollow: bool,
    },
    /// ftruncate and truncate (`len`) and fallocate (`mode`, `off`, `len`): recorded by `vxfault
    /// record` so the crash explorer can replay them.
    Range {
        mode: Option<c_int>,
        off: i64,
        len: i64,
    },
}

/// The bytes a write-family call writes, as the caller passed them: `vxfault record`
/// copies what the call accepted into its data file.
#[derive(Clone, Copy)]
pub enum Bytes {
    None,
    Buf(*const c_void),
    Iov(*const IoVec, c_int),
}

impl Detail {
    /// The open flags, and the mode only when the call takes one (O_CREAT, O_TMPFILE).
    pub fn open(flags: c_int, mode: c_uint) -> Detail {
        let takes_mode = flags & O_CREAT != 0 || flags & O_TMPFILE == O_TMPFILE;
        Detail::Open {
            flags,
            mode: takes_mode.then_some(mode & 0o7777),
        }
    }

    /// An fcntl lock command with the `struct flock *` it was given.
    ///
    /// # Safety
    /// `arg` is null or points to a readable `struct flock`, as the call requires.
    pub unsafe fn fcntl(cmd: c_int, arg: usize) -> Detail {
        let p = arg as *const i16;
        // SAFETY: the caller's guarantee; l_type is the struct's first field.
        let kind = (!p.is_null()).then(|| unsafe { p.read_unaligned() });
        Detail::Fcntl { cmd, kind }
    }

    pub fn for_op(op: Op) -> Detail {
        match op {
            Op::Fsync => Detail::Sync,
            _ => Detail::None,
        }
    }
}

pub struct Call {
    pub op: Op,
    pub name: &'static str,
    pub(crate) target: Target,
    pub(crate) target2: Target,
    pub fd: c_int,
    pub has_path2: bool,
    /// 1-based rule that acted (0: none).
    pub rule: usize,
    pub hit: u64,
    pub entry_errno: c_int,
    pub detail: Detail,
    /// With `after:ERRNO`: what the call really returned before the error was reported.
    pub real_result: Option<i64>,
    /// What the call returns when it fails (-1; 0 for fwrite).
    pub(crate) fail: i64,
    /// The stdio stream of a stdio call: flushed before `torn:N`/`crash-after` kill.
    pub(crate) stream: *mut c_void,
    /// A write's bytes, and its explicit offset (pwrite), for the record.
    pub bytes: Bytes,
    pub at: Option<i64>,
}
