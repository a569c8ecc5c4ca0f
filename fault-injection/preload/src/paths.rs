//! The paths calls are matched on: absolute, lexically normalised paths for path calls,
//! the kernel's canonical path for fd calls (`/proc/self/fd/N`, through the fd cache),
//! and the file type of an fd.

use core::ffi::{c_char, c_int, CStr};
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicBool, Ordering};

use plan::fdtable::{FdTable, FDS};
use vxfault_plan as plan;

use crate::sys::{
    errno, getcwd, readlink, set_errno, statx, AT_EMPTY_PATH, AT_FDCWD, STATX_TYPE, S_IFMT,
};

/// Capacity of one path buffer (PATH_MAX plus room for a base directory).
pub const PATH_CAP: usize = 4352;

/// A path in a stack buffer that is never zeroed: only `buf[..len]` is initialised.
pub struct PathBuf {
    buf: [MaybeUninit<u8>; PATH_CAP],
    len: usize,
}

impl PathBuf {
    #[inline(always)]
    pub fn new() -> PathBuf {
        PathBuf {
            buf: [MaybeUninit::uninit(); PATH_CAP],
            len: 0,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: every writer initialises buf[..len] before setting len, and len never
        // exceeds PATH_CAP.
        unsafe {
            core::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), self.len.min(PATH_CAP))
        }
    }

    fn as_mut_bytes(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_bytes`; `&mut self` makes the slice unique.
        unsafe {
            core::slice::from_raw_parts_mut(
                self.buf.as_mut_ptr().cast::<u8>(),
                self.len.min(PATH_CAP),
            )
        }
    }

    fn ptr(&mut self) -> *mut u8 {
        self.buf.as_mut_ptr().cast()
    }

    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends as much of `s` as fits.
    pub fn push(&mut self, s: &[u8]) {
        let at = self.len.min(PATH_CAP);
        let n = s.len().min(PATH_CAP - at);
        // SAFETY: `at + n <= PATH_CAP`, and `s` cannot overlap our own buffer (we hand
        // out no `&mut` to it while `s` is borrowed).
        unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), self.ptr().add(at), n) };
        self.len = at + n;
    }

    /// Replaces the contents with the NUL-terminated string at `p`.
    ///
    /// # Safety
    /// `p` is null or points to a NUL-terminated string.
    pub unsafe fn set_cstr(&mut self, p: *const c_char) {
        self.len = 0;
        if !p.is_null() {
            // SAFETY: the caller's guarantee.
            self.push(unsafe { CStr::from_ptr(p) }.to_bytes());
        }
    }
}

/// `readlink` of a NUL-terminated path into `out` (replacing it); empty on failure.
pub fn readlink_into(link: &CStr, out: &mut PathBuf) {
    // SAFETY: `link` is NUL-terminated; `out` has PATH_CAP writable bytes, and readlink
    // writes at most that many and returns how many.
    let n = unsafe { readlink(link.as_ptr(), out.ptr().cast(), PATH_CAP) };
    out.len = if n <= 0 {
        0
    } else {
        (n as usize).min(PATH_CAP)
    };
}

/// `readlink("/proc/self/fd/N")` into `out`.
pub fn proc_fd_path(fd: c_int, out: &mut PathBuf) {
    out.len = 0;
    if fd < 0 {
        return;
    }
    let mut link = *b"/proc/self/fd/\0\0\0\0\0\0\0\0\0\0\0\0";
    let mut digits = [0u8; 10];
    let mut n = 0;
    let mut v = fd as u32;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..n {
        link[14 + i] = digits[n - 1 - i];
    }
    link[14 + n] = 0;
    if let Ok(c) = CStr::from_bytes_until_nul(&link) {
        readlink_into(c, out)
    }
}

// ---------------------------------------------------------------------------------
// The fd -> path cache (`plan::fdtable`): `readlink("/proc/self/fd/N")` costs
// microseconds, too much for every write a globbed rule has to look at. Filled only
// from `/proc` when one of our open hooks (or fopen/freopen) returned N; cleared by
// every close, dup and reuse we can see. So it never changes what a call matches,
// only how fast.

static CACHE: FdTable = FdTable::new();
/// Whether fd paths are needed at all (some fd-call rule has a glob, or tracing).
pub static CACHE_ON: AtomicBool = AtomicBool::new(false);

pub fn cache_on() -> bool {
    CACHE_ON.load(Ordering::Relaxed)
}

pub fn cache_clear(fd: c_int) {
    CACHE.clear(fd);
}

/// Clears every slot from `first` to `last` (inclusive, capped at the table).
pub fn cache_clear_range(first: u32, last: u32) {
    let last = (last as usize).min(FDS - 1);
    let mut fd = first as usize;
    while fd <= last {
        CACHE.clear(fd as c_int);
        fd += 1;
    }
}

/// After one of our hooks handed out `fd`: cache its canonical path.
pub fn cache_opened(fd: c_int) {
    if fd < 0 || fd as usize >= FDS || !cache_on() {
        return;
    }
    let saved = errno();
    let mut p = PathBuf::new();
    proc_fd_path(fd, &mut p);
    CACHE.store(fd, p.as_bytes());
    set_errno(saved);
}

/// The path of open fd `fd`: from the fd cache, else from /proc.
pub fn fd_path(fd: c_int, out: &mut PathBuf) {
    // The table initialises the first n bytes of the buffer and returns n; only then
    // is `len` set.
    match CACHE.load(fd, &mut out.buf) {
        Some(n) => out.len = n,
        None => proc_fd_path(fd, out),
    }
}

/// The absolute path that `path` names relative to `dirfd`, lexically normalised (an
/// unknown base leaves the relative path as given).
///
/// # Safety
/// `path` is null or points to a NUL-terminated string.
pub unsafe fn abs_path(dirfd: c_int, path: *const c_char, out: &mut PathBuf) {
    out.len = 0;
    if path.is_null() {
        return;
    }
    // SAFETY: the caller's guarantee.
    let rel = unsafe { CStr::from_ptr(path) }.to_bytes();
    if rel.first() != Some(&b'/') {
        if dirfd == AT_FDCWD {
            // SAFETY: the buffer has PATH_CAP writable bytes; getcwd NUL-terminates
            // what it writes, or returns null.
            if !unsafe { getcwd(out.ptr().cast(), PATH_CAP) }.is_null() {
                // SAFETY: getcwd succeeded, so the buffer holds a NUL-terminated string.
                out.len = unsafe { CStr::from_ptr(out.ptr().cast()) }.to_bytes().len();
            }
        } else {
            fd_path(dirfd, out);
        }
        if out.len == 0 || out.as_bytes()[0] != b'/' {
            out.len = 0;
            out.push(rel);
            return;
        }
        out.push(b"/");
    }
    out.push(rel);
    out.len = plan::path::normalize(out.as_mut_bytes());
}

/// The `S_IFMT` bits of `fd`'s file (a statx of the fd itself), `None` when unknown.
/// Leaves errno as it found it.
pub fn file_type(fd: c_int) -> Option<u32> {
    if fd < 0 {
        return None;
    }
    let saved = errno();
    let mut buf = [0u64; 32];
    // SAFETY: an empty path with AT_EMPTY_PATH names `fd` itself; the buffer is 256
    // bytes, the size of struct statx.
    let r = unsafe {
        statx(
            fd,
            c"".as_ptr(),
            AT_EMPTY_PATH,
            STATX_TYPE,
            buf.as_mut_ptr().cast(),
        )
    };
    set_errno(saved);
    if r != 0 {
        return None;
    }
    // struct statx: stx_mode is the u16 at byte offset 28.
    let b = buf[3].to_ne_bytes();
    let mode = u32::from(u16::from_ne_bytes([b[4], b[5]]));
    Some(mode & S_IFMT)
}

/// The resolved path(s) of a call; built (without zeroing) only when some rule or the
/// trace needs them.
pub struct Paths {
    pub p1: PathBuf,
    pub p2: PathBuf,
}

/// The paths of a call that needs none.
pub static NO_PATHS: Paths = Paths {
    p1: PathBuf {
        buf: [MaybeUninit::new(0); PATH_CAP],
        len: 0,
    },
    p2: PathBuf {
        buf: [MaybeUninit::new(0); PATH_CAP],
        len: 0,
    },
};

impl Paths {
    /// Runs `f` with both buffers on the stack, uninitialised except their lengths.
    #[inline(always)]
    pub fn with_stack<R>(f: impl FnOnce(&mut Paths) -> R) -> R {
        // Built in place: only the two lengths are written, never the 8.7 KB of
        // buffers (moving a `Paths` value could copy them on every call).
        let mut slot = MaybeUninit::<Paths>::uninit();
        let p = slot.as_mut_ptr();
        // SAFETY: raw-pointer writes to two fields of our own uninitialised local.
        unsafe {
            core::ptr::addr_of_mut!((*p).p1.len).write(0);
            core::ptr::addr_of_mut!((*p).p2.len).write(0);
        }
        // SAFETY: every field that is not `MaybeUninit` (the lengths) is initialised,
        // so the value is valid; `slot` outlives the borrow.
        f(unsafe { &mut *p })
    }
}
