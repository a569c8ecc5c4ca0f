//! `libvxfault.so`: an `LD_PRELOAD` library that breaks chosen file-system calls.
//!
//! Read `docs/fault-injection.md` for the design. In short:
//! - every hook is a `#[no_mangle] extern "C"` function named like the glibc symbol;
//!   it forwards to the original found with `dlsym(RTLD_NEXT, …)` at load time;
//! - a call family with no rule (and no trace) costs one atomic load and an indirect
//!   call; otherwise the call's absolute path is resolved into a stack buffer, every
//!   matching rule counts it, and the first rule whose trigger fires acts;
//! - nothing on the hot path allocates, takes a lock or can unwind (a panic inside an
//!   `extern "C"` function aborts), and a thread-local guard makes hooks re-entered
//!   from inside a hook (signal handlers) plain pass-throughs.
//!
//! This crate has no dependencies: everything it needs from libc is declared below.
#![allow(clippy::missing_safety_doc)]

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
compile_error!("libvxfault supports Linux on x86_64 and aarch64 only");

mod flags;
mod line;
#[allow(dead_code)]
mod plan;

use core::cell::{Cell, UnsafeCell};
use core::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};
use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use line::Line;
use plan::{Action, Op, Plan, MAX_RULES, NUM_OPS};

// ---------------------------------------------------------------------------------
// libc, declared by hand (no `libc` crate): only functions that this library does not
// itself define, so calling them never re-enters a hook.

#[repr(C)]
#[derive(Clone, Copy)]
pub struct IoVec {
    pub base: *mut c_void,
    pub len: usize,
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn getenv(name: *const c_char) -> *const c_char;
    fn __errno_location() -> *mut c_int;
    fn readlink(path: *const c_char, buf: *mut c_char, len: usize) -> isize;
    fn getcwd(buf: *mut c_char, size: usize) -> *mut c_char;
    fn getpid() -> c_int;
    fn kill(pid: c_int, sig: c_int) -> c_int;
    fn nanosleep(req: *const Timespec, rem: *mut Timespec) -> c_int;
    fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        off: i64,
    ) -> *mut c_void;
    fn pthread_atfork(
        prepare: Option<unsafe extern "C" fn()>,
        parent: Option<unsafe extern "C" fn()>,
        child: Option<unsafe extern "C" fn()>,
    ) -> c_int;
    fn _exit(code: c_int) -> !;
    fn fileno(fp: *mut c_void) -> c_int;
    fn statx(
        dirfd: c_int,
        path: *const c_char,
        flags: c_int,
        mask: c_uint,
        buf: *mut c_void,
    ) -> c_int;
    fn dirfd(dir: *mut c_void) -> c_int;
}

const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;
const AT_FDCWD: c_int = -100;
const O_WRONLY: c_int = 0o1;
const O_RDWR: c_int = 0o2;
const O_CREAT: c_int = 0o100;
const O_APPEND: c_int = 0o2000;
const O_TRUNC: c_int = 0o1000;
#[cfg(target_arch = "x86_64")]
const O_TMPFILE: c_int = 0o20200000;
#[cfg(target_arch = "aarch64")]
const O_TMPFILE: c_int = 0o20040000;
const AT_EMPTY_PATH: c_int = 0x1000;
const STATX_TYPE: c_uint = 1;
const S_IFMT: u32 = 0o170000;
const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const AT_REMOVEDIR: c_int = 0x200;
const O_CLOEXEC: c_int = 0o2000000;
const F_DUPFD: c_int = 0;
const F_DUPFD_CLOEXEC: c_int = 1030;
const F_SETLK: c_int = 6;
const F_SETLKW: c_int = 7;
const F_OFD_SETLK: c_int = 37;
const F_OFD_SETLKW: c_int = 38;
const EBADF: c_int = 9;
const EINTR: c_int = 4;
const ENOSYS: c_int = 38;
const SIGKILL: c_int = 9;
const PROT_READ: c_int = 1;
const PROT_WRITE: c_int = 2;
const MAP_SHARED: c_int = 1;
const MAP_ANONYMOUS: c_int = 0x20;
const MAP_FAILED: *mut c_void = !0usize as *mut c_void;

/// System call numbers of the calls `syscall()` is watched for.
#[cfg(target_arch = "x86_64")]
mod nr {
    pub const WRITE: super::c_long = 1;
    pub const OPEN: super::c_long = 2;
    pub const CLOSE: super::c_long = 3;
    pub const PWRITE64: super::c_long = 18;
    pub const WRITEV: super::c_long = 20;
    pub const FCNTL: super::c_long = 72;
    pub const FLOCK: super::c_long = 73;
    pub const FSYNC: super::c_long = 74;
    pub const FDATASYNC: super::c_long = 75;
    pub const FTRUNCATE: super::c_long = 77;
    pub const RENAME: super::c_long = 82;
    pub const MKDIR: super::c_long = 83;
    pub const CREAT: super::c_long = 85;
    pub const UNLINK: super::c_long = 87;
    pub const GETTID: super::c_long = 186;
    pub const OPENAT: super::c_long = 257;
    pub const MKDIRAT: super::c_long = 258;
    pub const UNLINKAT: super::c_long = 263;
    pub const RENAMEAT: super::c_long = 264;
    pub const SYNC_FILE_RANGE: super::c_long = 277;
    pub const PWRITEV: super::c_long = 296;
    pub const SYNCFS: super::c_long = 306;
    pub const RENAMEAT2: super::c_long = 316;
    pub const PWRITEV2: super::c_long = 328;
    pub const RMDIR: super::c_long = 84;
    pub const LINK: super::c_long = 86;
    pub const SYMLINK: super::c_long = 88;
    pub const LINKAT: super::c_long = 265;
    pub const SYMLINKAT: super::c_long = 266;
    pub const FALLOCATE: super::c_long = 285;
    pub const COPY_FILE_RANGE: super::c_long = 326;
}

/// System call numbers of the calls `syscall()` is watched for (asm-generic: no
/// open, creat, rename, mkdir, unlink, rmdir, link or symlink).
#[cfg(target_arch = "aarch64")]
mod nr {
    pub const WRITE: super::c_long = 64;
    pub const OPEN: super::c_long = -1001;
    pub const CLOSE: super::c_long = 57;
    pub const PWRITE64: super::c_long = 68;
    pub const WRITEV: super::c_long = 66;
    pub const FCNTL: super::c_long = 25;
    pub const FLOCK: super::c_long = 32;
    pub const FSYNC: super::c_long = 82;
    pub const FDATASYNC: super::c_long = 83;
    pub const FTRUNCATE: super::c_long = 46;
    pub const RENAME: super::c_long = -1002;
    pub const MKDIR: super::c_long = -1003;
    pub const CREAT: super::c_long = -1004;
    pub const UNLINK: super::c_long = -1005;
    pub const GETTID: super::c_long = 178;
    pub const OPENAT: super::c_long = 56;
    pub const MKDIRAT: super::c_long = 34;
    pub const UNLINKAT: super::c_long = 35;
    pub const RENAMEAT: super::c_long = 38;
    pub const SYNC_FILE_RANGE: super::c_long = 84;
    pub const PWRITEV: super::c_long = 70;
    pub const SYNCFS: super::c_long = 267;
    pub const RENAMEAT2: super::c_long = 276;
    pub const PWRITEV2: super::c_long = 287;
    pub const RMDIR: super::c_long = -1006;
    pub const LINK: super::c_long = -1007;
    pub const SYMLINK: super::c_long = -1008;
    pub const LINKAT: super::c_long = 37;
    pub const SYMLINKAT: super::c_long = 36;
    pub const FALLOCATE: super::c_long = 47;
    pub const COPY_FILE_RANGE: super::c_long = 285;
}

#[inline(always)]
unsafe fn errno() -> c_int {
    *__errno_location()
}

#[inline(always)]
unsafe fn set_errno(e: c_int) {
    *__errno_location() = e;
}

// ---------------------------------------------------------------------------------
// The originals.

macro_rules! reals {
    ($($id:ident = $name:literal : $ty:ty;)*) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        #[repr(usize)]
        enum R { $($id,)* }
        const REAL_NAMES: &[&[u8]] = &[$(concat!($name, "\0").as_bytes(),)*];
        const REAL_COUNT: usize = REAL_NAMES.len();
        #[allow(non_snake_case)]
        mod ty {
            use super::*;
            $(pub type $id = $ty;)*
        }
    };
}

reals! {
    Open = "open": unsafe extern "C" fn(*const c_char, c_int, ...) -> c_int;
    Open64 = "open64": unsafe extern "C" fn(*const c_char, c_int, ...) -> c_int;
    Openat = "openat": unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int;
    Openat64 = "openat64": unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int;
    Open2 = "__open_2": unsafe extern "C" fn(*const c_char, c_int) -> c_int;
    Open64_2 = "__open64_2": unsafe extern "C" fn(*const c_char, c_int) -> c_int;
    Openat2 = "__openat_2": unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;
    Openat64_2 = "__openat64_2": unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;
    Creat = "creat": unsafe extern "C" fn(*const c_char, c_uint) -> c_int;
    Creat64 = "creat64": unsafe extern "C" fn(*const c_char, c_uint) -> c_int;
    Write = "write": unsafe extern "C" fn(c_int, *const c_void, usize) -> isize;
    Pwrite = "pwrite": unsafe extern "C" fn(c_int, *const c_void, usize, i64) -> isize;
    Pwrite64 = "pwrite64": unsafe extern "C" fn(c_int, *const c_void, usize, i64) -> isize;
    Writev = "writev": unsafe extern "C" fn(c_int, *const IoVec, c_int) -> isize;
    Pwritev = "pwritev": unsafe extern "C" fn(c_int, *const IoVec, c_int, i64) -> isize;
    Pwritev64 = "pwritev64": unsafe extern "C" fn(c_int, *const IoVec, c_int, i64) -> isize;
    Pwritev2 = "pwritev2": unsafe extern "C" fn(c_int, *const IoVec, c_int, i64, c_int) -> isize;
    Fsync = "fsync": unsafe extern "C" fn(c_int) -> c_int;
    Fdatasync = "fdatasync": unsafe extern "C" fn(c_int) -> c_int;
    SyncFileRange = "sync_file_range": unsafe extern "C" fn(c_int, i64, i64, c_uint) -> c_int;
    Syncfs = "syncfs": unsafe extern "C" fn(c_int) -> c_int;
    Rename = "rename": unsafe extern "C" fn(*const c_char, *const c_char) -> c_int;
    Renameat = "renameat": unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char) -> c_int;
    Renameat2 = "renameat2": unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, c_uint) -> c_int;
    Unlink = "unlink": unsafe extern "C" fn(*const c_char) -> c_int;
    Unlinkat = "unlinkat": unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;
    Mkdir = "mkdir": unsafe extern "C" fn(*const c_char, c_uint) -> c_int;
    Mkdirat = "mkdirat": unsafe extern "C" fn(c_int, *const c_char, c_uint) -> c_int;
    Close = "close": unsafe extern "C" fn(c_int) -> c_int;
    Flock = "flock": unsafe extern "C" fn(c_int, c_int) -> c_int;
    Fcntl = "fcntl": unsafe extern "C" fn(c_int, c_int, ...) -> c_int;
    Fcntl64 = "fcntl64": unsafe extern "C" fn(c_int, c_int, ...) -> c_int;
    Ftruncate = "ftruncate": unsafe extern "C" fn(c_int, i64) -> c_int;
    Ftruncate64 = "ftruncate64": unsafe extern "C" fn(c_int, i64) -> c_int;
    Syscall = "syscall": unsafe extern "C" fn(c_long, ...) -> c_long;
    Dup2 = "dup2": unsafe extern "C" fn(c_int, c_int) -> c_int;
    Dup3 = "dup3": unsafe extern "C" fn(c_int, c_int, c_int) -> c_int;
    CloseRange = "close_range": unsafe extern "C" fn(c_uint, c_uint, c_int) -> c_int;
    Closefrom = "closefrom": unsafe extern "C" fn(c_int);
    Fclose = "fclose": unsafe extern "C" fn(*mut c_void) -> c_int;
    Closedir = "closedir": unsafe extern "C" fn(*mut c_void) -> c_int;
    Dup = "dup": unsafe extern "C" fn(c_int) -> c_int;
    Rmdir = "rmdir": unsafe extern "C" fn(*const c_char) -> c_int;
    CopyFileRange = "copy_file_range": unsafe extern "C" fn(c_int, *mut i64, c_int, *mut i64, usize, c_uint) -> isize;
    Sendfile = "sendfile": unsafe extern "C" fn(c_int, c_int, *mut i64, usize) -> isize;
    Sendfile64 = "sendfile64": unsafe extern "C" fn(c_int, c_int, *mut i64, usize) -> isize;
    Splice = "splice": unsafe extern "C" fn(c_int, *mut i64, c_int, *mut i64, usize, c_uint) -> isize;
    Fallocate = "fallocate": unsafe extern "C" fn(c_int, c_int, i64, i64) -> c_int;
    Fallocate64 = "fallocate64": unsafe extern "C" fn(c_int, c_int, i64, i64) -> c_int;
    PosixFallocate = "posix_fallocate": unsafe extern "C" fn(c_int, i64, i64) -> c_int;
    PosixFallocate64 = "posix_fallocate64": unsafe extern "C" fn(c_int, i64, i64) -> c_int;
    Link = "link": unsafe extern "C" fn(*const c_char, *const c_char) -> c_int;
    Linkat = "linkat": unsafe extern "C" fn(c_int, *const c_char, c_int, *const c_char, c_int) -> c_int;
    Symlink = "symlink": unsafe extern "C" fn(*const c_char, *const c_char) -> c_int;
    Symlinkat = "symlinkat": unsafe extern "C" fn(*const c_char, c_int, *const c_char) -> c_int;
    Fwrite = "fwrite": unsafe extern "C" fn(*const c_void, usize, usize, *mut c_void) -> usize;
    Fputs = "fputs": unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;
    Fflush = "fflush": unsafe extern "C" fn(*mut c_void) -> c_int;
    Fopen = "fopen": unsafe extern "C" fn(*const c_char, *const c_char) -> *mut c_void;
    Fopen64 = "fopen64": unsafe extern "C" fn(*const c_char, *const c_char) -> *mut c_void;
    Freopen = "freopen": unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void) -> *mut c_void;
    Freopen64 = "freopen64": unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void) -> *mut c_void;
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicUsize = AtomicUsize::new(0);
static REAL: [AtomicUsize; REAL_COUNT] = [ZERO; REAL_COUNT];

#[cold]
#[inline(never)]
unsafe fn resolve(r: R) -> usize {
    let i = r as usize;
    let p = match REAL_NAMES.get(i) {
        Some(name) => dlsym(RTLD_NEXT, name.as_ptr().cast()) as usize,
        None => 0,
    };
    if let Some(slot) = REAL.get(i) {
        slot.store(p, Ordering::Relaxed);
    }
    p
}

/// The original `R::X` as a typed function pointer, or `None` if libc lacks it.
macro_rules! real {
    ($id:ident) => {{
        let mut p = REAL[R::$id as usize].load(Ordering::Relaxed);
        if p == 0 {
            p = resolve(R::$id);
        }
        if p == 0 {
            None
        } else {
            Some(core::mem::transmute::<usize, ty::$id>(p))
        }
    }};
}

#[cold]
unsafe fn enosys_ptr() -> *mut c_void {
    set_errno(ENOSYS);
    core::ptr::null_mut()
}

#[cold]
unsafe fn enosys<T: From<i8>>() -> T {
    set_errno(ENOSYS);
    T::from(-1)
}

// ---------------------------------------------------------------------------------
// Global state, written once by `init` before `FLAGS` gets `INIT`, read-only after.

const INIT: u32 = 1 << 31;
/// Bit `op` set: that family has a rule or the trace is on.
static FLAGS: AtomicU32 = AtomicU32::new(0);
static INIT_STARTED: AtomicBool = AtomicBool::new(false);

struct State {
    plan: Plan,
    needs_path: [bool; NUM_OPS],
    tracing: bool,
    seed: u64,
    trace_path: [u8; 4097],
    trace_path_len: usize,
}

struct Global(UnsafeCell<State>);
// Written only by `init` before `FLAGS` is published with `INIT`; read-only after.
unsafe impl Sync for Global {}

static STATE: Global = Global(UnsafeCell::new(State {
    plan: Plan::EMPTY,
    needs_path: [false; NUM_OPS],
    tracing: false,
    seed: 0,
    trace_path: [0; 4097],
    trace_path_len: 0,
}));

#[inline(always)]
fn state() -> &'static State {
    // SAFETY: only read after INIT was published (or during init, by init itself).
    unsafe { &*STATE.0.get() }
}

static TRACE_FD: AtomicI32 = AtomicI32::new(-1);

/// This process's random stream for `%P` draws: a tree-wide number handed out at load
/// and in every forked child, so the processes of a tree draw independently while a
/// deterministic workload gets the same streams on every run (see `next_stream`).
static STREAM: AtomicU64 = AtomicU64::new(0);
/// Whether the counter file is the runner's (`VXFAULT_SHM`), shared across exec.
static SHM_FROM_RUNNER: AtomicBool = AtomicBool::new(false);

/// Takes the next stream number of the tree. Without the runner's counter file the
/// numbering restarts at each exec, so the pid is mixed in to keep streams apart.
unsafe fn next_stream() -> u64 {
    let n = shm(plan::SHM_STREAMS).fetch_add(1, Ordering::Relaxed) + 1;
    if SHM_FROM_RUNNER.load(Ordering::Relaxed) {
        n
    } else {
        n ^ (u64::from(getpid() as u32) << 32)
    }
}

/// Per-process match counters (reset in a forked child).
#[allow(clippy::declare_interior_mutable_const)]
const ZERO64: AtomicU64 = AtomicU64::new(0);
static LOCAL: [AtomicU64; MAX_RULES] = [ZERO64; MAX_RULES];

/// Used when no shared mapping could be made.
static FALLBACK_SHM: [AtomicU64; plan::SHM_WORDS] = [ZERO64; plan::SHM_WORDS];
static SHM: AtomicUsize = AtomicUsize::new(0);

#[inline(always)]
fn shm(word: usize) -> &'static AtomicU64 {
    let base = SHM.load(Ordering::Relaxed);
    if base == 0 || word >= plan::SHM_WORDS {
        return &FALLBACK_SHM[word.min(plan::SHM_WORDS - 1)];
    }
    // SAFETY: `base` maps at least SHM_WORDS u64 words for the process's lifetime.
    unsafe { &*(base as *const AtomicU64).add(word) }
}

/// Whether family `op` needs the slow path; initialises on first use.
#[inline(always)]
fn active(op: Op) -> bool {
    let f = FLAGS.load(Ordering::Acquire);
    if f & INIT != 0 {
        return f & (1 << op as u32) != 0;
    }
    active_slow(op)
}

#[cold]
#[inline(never)]
fn active_slow(op: Op) -> bool {
    unsafe { init() };
    let f = FLAGS.load(Ordering::Acquire);
    f & INIT != 0 && f & (1 << op as u32) != 0
}

// ---------------------------------------------------------------------------------
// Re-entrancy guard.

std::thread_local! {
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
}

struct Guard;

impl Guard {
    #[inline(always)]
    fn enter() -> Option<Guard> {
        IN_HOOK
            .try_with(|c| {
                if c.get() {
                    None
                } else {
                    c.set(true);
                    Some(Guard)
                }
            })
            .ok()
            .flatten()
    }
}

impl Drop for Guard {
    #[inline(always)]
    fn drop(&mut self) {
        let _ = IN_HOOK.try_with(|c| c.set(false));
    }
}

// ---------------------------------------------------------------------------------
// Load-time initialisation.

#[used]
#[link_section = ".init_array"]
static CONSTRUCTOR: unsafe extern "C" fn() = constructor;

unsafe extern "C" fn constructor() {
    init();
}

unsafe extern "C" fn atfork_child() {
    for c in LOCAL.iter() {
        c.store(0, Ordering::Relaxed);
    }
    STREAM.store(next_stream(), Ordering::Relaxed);
}

unsafe fn env(name: &[u8]) -> Option<&'static [u8]> {
    let p = getenv(name.as_ptr().cast());
    if p.is_null() {
        return None;
    }
    Some(core::ffi::CStr::from_ptr(p).to_bytes())
}

fn parse_seed(s: &[u8]) -> u64 {
    let mut v: u64 = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            return plan::fnv1a(s);
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
    }
    v
}

unsafe fn init() {
    if INIT_STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    for (slot, name) in REAL.iter().zip(REAL_NAMES) {
        if slot.load(Ordering::Relaxed) == 0 {
            let p = dlsym(RTLD_NEXT, name.as_ptr().cast()) as usize;
            slot.store(p, Ordering::Relaxed);
        }
    }
    let st = &mut *STATE.0.get();
    let plan_text = env(b"VXFAULT_PLAN\0").unwrap_or(b"");
    let plan_result = plan::parse(plan_text, &mut st.plan);
    if plan_result.is_err() {
        st.plan = Plan::EMPTY;
    }
    st.seed = env(b"VXFAULT_SEED\0").map(parse_seed).unwrap_or(0);
    map_shared(plan_text);
    STREAM.store(next_stream(), Ordering::Relaxed);

    if let Some(path) = env(b"VXFAULT_TRACE\0") {
        if !path.is_empty() && path.len() < st.trace_path.len() {
            st.trace_path[..path.len()].copy_from_slice(path);
            st.trace_path[path.len()] = 0;
            st.trace_path_len = path.len();
            st.tracing = true;
            open_trace();
        }
    }
    let mut mask = 0u32;
    for rule in st.plan.rules() {
        mask |= 1 << rule.op as u32;
        if rule.needs_path {
            st.needs_path[rule.op as usize] = true;
        }
    }
    if st.tracing {
        mask |= (1 << NUM_OPS) - 1;
        st.needs_path = [true; NUM_OPS];
    }
    if st.needs_path.iter().any(|&b| b) {
        // Paths are needed: keep the fd cache, which needs to see opens and closes.
        CACHE_ON.store(true, Ordering::Relaxed);
        mask |= (1 << Op::Open as u32) | (1 << Op::Close as u32);
    }
    pthread_atfork(None, None, Some(atfork_child));

    shm(plan::SHM_LOADED).fetch_add(1, Ordering::Relaxed);
    if let Err(e) = plan_result {
        // Never a silent pass: a plan that does not parse injects nothing, so the
        // process says why and stops before the program runs.
        shm(plan::SHM_PLAN_ERROR).fetch_add(1, Ordering::Relaxed);
        trace_event(b"plan-error", e.msg.as_bytes(), e.rule as i64);
        plan_error_exit(e);
    }
    let mut exe = PathBuf::new();
    readlink_into(b"/proc/self/exe\0", &mut exe);
    trace_event(b"loaded", exe.as_bytes(), st.plan.rules().len() as i64);
    FLAGS.store(INIT | mask, Ordering::Release);
}

/// Exit status of a process whose `VXFAULT_PLAN` does not parse (the same code
/// `vxfault run` uses for a bad plan).
const EXIT_BAD_PLAN: c_int = 125;

/// Writes one line about a bad plan to stderr and ends the process.
unsafe fn plan_error_exit(e: plan::PlanError) -> ! {
    let mut l = line::Line::new();
    l.raw(b"libvxfault: bad VXFAULT_PLAN: rule ");
    let mut d = [0u8; 20];
    let mut i = d.len();
    let mut v = e.rule as u64;
    loop {
        i -= 1;
        d[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    l.raw(&d[i..]);
    l.raw(b": ");
    l.raw(e.msg.as_bytes());
    l.raw(b" (nothing would be injected; exiting)\n");
    if let Some(write) = real!(Write) {
        let b = l.as_bytes();
        write(2, b.as_ptr().cast(), b.len());
    }
    _exit(EXIT_BAD_PLAN)
}

/// Maps the shared counter file named by `VXFAULT_SHM` (or an anonymous shared page
/// that forked children inherit).
unsafe fn map_shared(plan_text: &[u8]) {
    let hash = plan::fnv1a(plan_text);
    let len = plan::SHM_SIZE;
    if let (Some(path), Some(open)) = (env(b"VXFAULT_SHM\0"), real!(Open)) {
        let mut p = [0u8; 4097];
        if !path.is_empty() && path.len() < p.len() {
            p[..path.len()].copy_from_slice(path);
            let fd = open(p.as_ptr().cast(), O_RDWR | O_CLOEXEC);
            if fd >= 0 {
                let m = mmap(
                    core::ptr::null_mut(),
                    len,
                    PROT_READ | PROT_WRITE,
                    MAP_SHARED,
                    fd,
                    0,
                );
                if let Some(close) = real!(Close) {
                    close(fd);
                }
                if m != MAP_FAILED && !m.is_null() {
                    let words = m as *const AtomicU64;
                    let magic = &*words.add(plan::SHM_MAGIC);
                    let their_hash = &*words.add(plan::SHM_PLAN_HASH);
                    if magic
                        .compare_exchange(
                            0,
                            plan::SHM_MAGIC_VALUE,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        )
                        .is_ok()
                    {
                        their_hash.store(hash, Ordering::Release);
                    }
                    if their_hash.load(Ordering::Acquire) == hash {
                        SHM.store(m as usize, Ordering::Release);
                        SHM_FROM_RUNNER.store(true, Ordering::Relaxed);
                        return;
                    }
                    // A different plan: count ourselves there, but keep our own counters.
                    (*words.add(plan::SHM_PLAN_MISMATCH)).fetch_add(1, Ordering::Relaxed);
                    (*words.add(plan::SHM_LOADED)).fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
    let m = mmap(
        core::ptr::null_mut(),
        len,
        PROT_READ | PROT_WRITE,
        MAP_SHARED | MAP_ANONYMOUS,
        -1,
        0,
    );
    if m != MAP_FAILED && !m.is_null() {
        let words = m as *const AtomicU64;
        (*words.add(plan::SHM_MAGIC)).store(plan::SHM_MAGIC_VALUE, Ordering::Relaxed);
        (*words.add(plan::SHM_PLAN_HASH)).store(hash, Ordering::Relaxed);
        SHM.store(m as usize, Ordering::Release);
    }
}

unsafe fn open_trace() {
    let st = state();
    let Some(open) = real!(Open) else { return };
    let fd = open(
        st.trace_path.as_ptr().cast(),
        O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
        0o644 as c_uint,
    );
    if fd < 0 {
        shm(plan::SHM_TRACE_ERRORS).fetch_add(1, Ordering::Relaxed);
        return;
    }
    // Move it out of the way of programs that reuse low fd numbers.
    let mut fd_final = fd;
    if let Some(fcntl) = real!(Fcntl) {
        let high = fcntl(fd, F_DUPFD_CLOEXEC, 700 as c_int);
        if high >= 0 {
            if let Some(close) = real!(Close) {
                close(fd);
            }
            fd_final = high;
        }
    }
    TRACE_FD.store(fd_final, Ordering::Release);
}

// ---------------------------------------------------------------------------------
// Paths.

const PATH_CAP: usize = 4352;

/// A path in a stack buffer that is never zeroed: only `buf[..len]` is initialised.
struct PathBuf {
    buf: [MaybeUninit<u8>; PATH_CAP],
    len: usize,
}

impl PathBuf {
    #[inline(always)]
    fn new() -> PathBuf {
        PathBuf {
            buf: [MaybeUninit::uninit(); PATH_CAP],
            len: 0,
        }
    }

    fn as_bytes(&self) -> &[u8] {
        // SAFETY: every writer initialises buf[..len] before setting len.
        unsafe {
            core::slice::from_raw_parts(self.buf.as_ptr().cast::<u8>(), self.len.min(PATH_CAP))
        }
    }

    fn as_mut_bytes(&mut self) -> &mut [u8] {
        // SAFETY: as above.
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

    /// Appends as much of `s` as fits.
    fn push(&mut self, s: &[u8]) {
        let n = s.len().min(PATH_CAP - self.len.min(PATH_CAP));
        // SAFETY: in bounds; source and destination do not overlap.
        unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), self.ptr().add(self.len), n) };
        self.len += n;
    }
}

/// `readlink` of a NUL-terminated path into `out` (replacing it); len 0 on failure.
unsafe fn readlink_into(link: &[u8], out: &mut PathBuf) {
    let n = readlink(link.as_ptr().cast(), out.ptr().cast(), PATH_CAP);
    out.len = if n <= 0 {
        0
    } else {
        (n as usize).min(PATH_CAP)
    };
}

/// `readlink("/proc/self/fd/N")` into `out`.
unsafe fn proc_fd_path(fd: c_int, out: &mut PathBuf) {
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
    readlink_into(&link, out)
}

/// The path of open fd `fd`: from the fd cache, else from /proc.
unsafe fn fd_path(fd: c_int, out: &mut PathBuf) {
    if !cache_load(fd, out) {
        proc_fd_path(fd, out);
    }
}

// ---------------------------------------------------------------------------------
// The fd -> path cache.
//
// `readlink("/proc/self/fd/N")` costs microseconds, too much for every write that a
// globbed rule has to look at. So when one of our open hooks returns fd N, the fd's
// canonical path (read once from /proc) is stored in slot N; every close we see (close,
// dup2/dup3 onto N, close_range, closefrom, fclose, closedir) clears it before and
// after the real call. Slots are seqlocks: readers never wait; a reader that sees a
// write in progress falls back to /proc. Only fds opened through our hooks are ever
// cached, so fds from fopen/socket/pipe… are always looked up in /proc.

const FD_CACHE: usize = 1024;
const SLOT_CAP: usize = 244;

struct Slot {
    /// Even: stable; odd: being written.
    seq: AtomicU32,
    /// 0: empty.
    len: AtomicU32,
    path: UnsafeCell<[u8; SLOT_CAP]>,
}

// Concurrent access to `path` is guarded by the seqlock protocol in `seq`.
unsafe impl Sync for Slot {}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_SLOT: Slot = Slot {
    seq: AtomicU32::new(0),
    len: AtomicU32::new(0),
    path: UnsafeCell::new([0; SLOT_CAP]),
};
static CACHE: [Slot; FD_CACHE] = [EMPTY_SLOT; FD_CACHE];
/// Whether fd paths are needed at all (some fd-call rule has a glob, or tracing).
static CACHE_ON: AtomicBool = AtomicBool::new(false);

fn slot(fd: c_int) -> Option<&'static Slot> {
    if fd < 0 {
        return None;
    }
    CACHE.get(fd as usize)
}

/// Takes the slot's write side (spinning only against another writer of the same fd).
fn slot_lock(s: &Slot) -> u32 {
    loop {
        let v = s.seq.load(Ordering::Relaxed);
        if v & 1 == 0
            && s.seq
                .compare_exchange_weak(v, v.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return v;
        }
        core::hint::spin_loop();
    }
}

fn cache_clear(fd: c_int) {
    if let Some(s) = slot(fd) {
        if s.len.load(Ordering::Relaxed) == 0 && s.seq.load(Ordering::Relaxed) & 1 == 0 {
            return;
        }
        let v = slot_lock(s);
        s.len.store(0, Ordering::Relaxed);
        s.seq.store(v.wrapping_add(2), Ordering::Release);
    }
}

fn cache_store(fd: c_int, path: &[u8]) {
    let Some(s) = slot(fd) else { return };
    let v = slot_lock(s);
    if path.is_empty() || path.len() > SLOT_CAP {
        s.len.store(0, Ordering::Relaxed);
    } else {
        // SAFETY: we hold the write side; readers validate with `seq`.
        unsafe {
            core::ptr::copy_nonoverlapping(path.as_ptr(), (*s.path.get()).as_mut_ptr(), path.len())
        };
        s.len.store(path.len() as u32, Ordering::Relaxed);
    }
    s.seq.store(v.wrapping_add(2), Ordering::Release);
}

fn cache_load(fd: c_int, out: &mut PathBuf) -> bool {
    let Some(s) = slot(fd) else { return false };
    let v1 = s.seq.load(Ordering::Acquire);
    if v1 & 1 == 1 {
        return false;
    }
    let len = (s.len.load(Ordering::Relaxed) as usize).min(SLOT_CAP);
    if len == 0 {
        return false;
    }
    // SAFETY: bytes may be torn by a concurrent writer; `seq` tells, and then they are
    // discarded. Volatile reads keep the compiler from assuming they are stable.
    unsafe {
        let src = (*s.path.get()).as_ptr();
        let dst = out.ptr();
        for i in 0..len {
            dst.add(i).write(src.add(i).read_volatile());
        }
    }
    core::sync::atomic::fence(Ordering::Acquire);
    if s.seq.load(Ordering::Relaxed) != v1 {
        return false;
    }
    out.len = len;
    true
}

/// After one of our open hooks returned `fd`: cache its canonical path.
unsafe fn cache_opened(fd: c_int) {
    if fd < 0 || fd as usize >= FD_CACHE || !CACHE_ON.load(Ordering::Relaxed) {
        return;
    }
    let saved = errno();
    let mut p = PathBuf::new();
    proc_fd_path(fd, &mut p);
    cache_store(fd, p.as_bytes());
    set_errno(saved);
}

/// The absolute path that `path` names relative to `dirfd`, lexically normalised.
unsafe fn abs_path(dirfd: c_int, path: *const c_char, out: &mut PathBuf) {
    out.len = 0;
    if path.is_null() {
        return;
    }
    let rel = core::ffi::CStr::from_ptr(path).to_bytes();
    if rel.first() != Some(&b'/') {
        if dirfd == AT_FDCWD {
            if !getcwd(out.ptr().cast(), PATH_CAP).is_null() {
                out.len = core::ffi::CStr::from_ptr(out.ptr().cast()).to_bytes().len();
            }
        } else {
            fd_path(dirfd, out);
        }
        if out.len == 0 || out.as_bytes()[0] != b'/' {
            // Unknown base: keep the relative path as given.
            out.len = 0;
            out.push(rel);
            return;
        }
        out.push(b"/");
    }
    out.push(rel);
    let n = normalize(out.as_mut_bytes());
    out.len = n;
}

/// Removes empty and `.` components and applies `..` lexically, in place.
fn normalize(buf: &mut [u8]) -> usize {
    let len = buf.len();
    if len == 0 || buf[0] != b'/' {
        return len;
    }
    let (mut r, mut w) = (0usize, 0usize);
    while r < len {
        while r < len && buf[r] == b'/' {
            r += 1;
        }
        if r >= len {
            break;
        }
        let start = r;
        while r < len && buf[r] != b'/' {
            r += 1;
        }
        let comp = &buf[start..r];
        if comp == b"." {
            continue;
        }
        if comp == b".." {
            while w > 0 && buf[w - 1] != b'/' {
                w -= 1;
            }
            w = w.saturating_sub(1);
            continue;
        }
        buf[w] = b'/';
        w += 1;
        buf.copy_within(start..r, w);
        w += r - start;
    }
    if w == 0 {
        buf[0] = b'/';
        w = 1;
    }
    w
}

// ---------------------------------------------------------------------------------
// One intercepted call.

enum Target {
    None,
    Fd(c_int),
    At(c_int, *const c_char),
    /// A path used as given, not resolved (a symlink's target).
    Raw(*const c_char),
}

struct Call {
    op: Op,
    name: &'static str,
    target: Target,
    target2: Target,
    fd: c_int,
    has_path2: bool,
    rule: usize,
    hit: u64,
    entry_errno: c_int,
    detail: Detail,
    /// With `after:ERRNO`: what the call really returned before the error was reported.
    real_result: Option<i64>,
    /// What the call returns when it fails (-1; 0 for fwrite).
    fail: i64,
    /// The stdio stream of a stdio call: flushed before `torn:N`/`crash-after` kill.
    stream: *mut c_void,
}

/// What the trace says about a call beyond its path: open flags and mode, the lock
/// operation, whether an fsync is of a directory.
#[derive(Clone, Copy)]
enum Detail {
    None,
    Open {
        flags: c_int,
        mode: Option<c_uint>,
    },
    Flock(c_int),
    Fcntl {
        cmd: c_int,
        arg: c_ulong,
    },
    /// An fsync-family call: the trace marks a directory fd.
    Sync,
}

impl Detail {
    /// The open flags, and the mode only when the call takes one (O_CREAT, O_TMPFILE).
    fn open(flags: c_int, mode: c_uint) -> Detail {
        let takes_mode = flags & O_CREAT != 0 || flags & O_TMPFILE == O_TMPFILE;
        Detail::Open {
            flags,
            mode: takes_mode.then_some(mode & 0o7777),
        }
    }

    fn for_fd_op(op: Op) -> Detail {
        match op {
            Op::Fsync => Detail::Sync,
            _ => Detail::None,
        }
    }
}

/// The resolved path(s) of a call; only built (and zeroed) when some rule or the
/// trace needs them.
struct Paths {
    p1: PathBuf,
    p2: PathBuf,
}

static NO_PATHS: Paths = Paths {
    p1: PathBuf {
        buf: [MaybeUninit::new(0); PATH_CAP],
        len: 0,
    },
    p2: PathBuf {
        buf: [MaybeUninit::new(0); PATH_CAP],
        len: 0,
    },
};

impl Call {
    #[inline(always)]
    fn new(op: Op, name: &'static str, target: Target) -> Call {
        let fd = match target {
            Target::Fd(fd) => fd,
            _ => -1,
        };
        Call {
            op,
            name,
            target,
            target2: Target::None,
            fd,
            has_path2: false,
            rule: 0,
            hit: 0,
            entry_errno: unsafe { errno() },
            detail: Detail::None,
            real_result: None,
            fail: -1,
            stream: core::ptr::null_mut(),
        }
    }

    /// A stdio call on `fp`, which returns `fail` on error.
    fn stdio(mut self, fp: *mut c_void, fail: i64) -> Call {
        self.stream = fp;
        self.fail = fail;
        self
    }

    fn with_detail(mut self, d: Detail) -> Call {
        self.detail = d;
        self
    }

    fn with_second(mut self, t: Target) -> Call {
        self.target2 = t;
        self.has_path2 = true;
        self
    }

    /// Counts the call for every matching rule and returns the action of the first
    /// rule that fires.
    unsafe fn decide(&mut self, paths: &Paths) -> Option<Action> {
        let st = state();
        let seen = shm(plan::SHM_SEEN + self.op as usize);
        if seen.load(Ordering::Relaxed) == 0 {
            seen.store(1, Ordering::Relaxed);
        }
        let mut chosen = None;
        for (i, rule) in st.plan.rules().iter().enumerate() {
            if rule.op != self.op {
                continue;
            }
            let hit = rule.matches(paths.p1.as_bytes())
                || (self.has_path2 && rule.matches(paths.p2.as_bytes()));
            if !hit {
                continue;
            }
            let local = LOCAL[i].fetch_add(1, Ordering::Relaxed) + 1;
            let tree = shm(plan::SHM_MATCHED + i).fetch_add(1, Ordering::Relaxed) + 1;
            let ordinal = if rule.tree { tree } else { local };
            let stream = STREAM.load(Ordering::Relaxed);
            if chosen.is_none() && plan::fires(rule.trigger, st.seed, stream, i, ordinal) {
                shm(plan::SHM_FIRED + i).fetch_add(1, Ordering::Relaxed);
                chosen = Some(rule.action);
                self.rule = i + 1;
                self.hit = ordinal;
            }
        }
        set_errno(self.entry_errno);
        chosen
    }

    /// Writes this call's trace line (if tracing). Leaves errno as it found it.
    unsafe fn trace(&self, paths: &Paths, result: Option<i64>, err: c_int, action: &[u8]) {
        if !state().tracing {
            return;
        }
        let saved = errno();
        let mut l = Line::new();
        l.u64("seq", next_seq());
        l.i64("pid", i64::from(getpid()));
        l.i64("tid", gettid());
        l.u64("stream", STREAM.load(Ordering::Relaxed));
        l.str("op", self.op.name().as_bytes());
        l.str("call", self.name.as_bytes());
        l.str("path", paths.p1.as_bytes());
        if self.has_path2 {
            l.str("path2", paths.p2.as_bytes());
        }
        let fd = match (self.op, result) {
            (Op::Open, Some(r)) if r >= 0 => r,
            _ => i64::from(self.fd),
        };
        if fd >= 0 {
            l.i64("fd", fd);
        }
        match result {
            Some(r) => l.i64("result", r),
            None => l.null("result"),
        }
        l.i64("errno", i64::from(err));
        match plan::errno_name(err) {
            Some(n) if err != 0 => l.str("errno_name", n.as_bytes()),
            _ => {}
        }
        l.str("action", action);
        if let Some(r) = self.real_result {
            l.i64("real_result", r);
        }
        self.trace_detail(&mut l);
        if self.rule > 0 {
            l.u64("rule", self.rule as u64);
            l.u64("hit", self.hit);
        } else {
            l.null("rule");
        }
        l.finish();
        emit(l.as_bytes());
        set_errno(saved);
    }
}

impl Call {
    /// The call's own fields: `flags`/`mode` (open), `lock` (flock, fcntl locks),
    /// `dir` (an fsync of a directory).
    unsafe fn trace_detail(&self, l: &mut Line) {
        match self.detail {
            Detail::None => {}
            Detail::Open { flags, mode } => {
                let mut buf = [0u8; 256];
                let n = flags::open_flags(flags, &mut buf);
                l.str("flags", &buf[..n]);
                if let Some(m) = mode {
                    let oct = flags::octal4(m);
                    l.str("mode", &oct);
                }
            }
            Detail::Flock(how) => {
                let mut buf = [0u8; 32];
                let n = flags::flock_op(how, &mut buf);
                l.str("lock", &buf[..n]);
            }
            Detail::Fcntl { cmd, arg } => {
                // The struct flock the caller passed: l_type is its first field.
                let p = arg as *const i16;
                let kind = if p.is_null() {
                    None
                } else {
                    Some(p.read_volatile())
                };
                let mut buf = [0u8; 48];
                let n = flags::fcntl_lock(cmd, kind, &mut buf);
                l.str("lock", &buf[..n]);
            }
            Detail::Sync => {
                if is_dir(self.fd) {
                    l.bool("dir", true);
                }
            }
        }
    }
}

/// Whether `fd` is a directory (statx of the fd itself; false when unknown).
unsafe fn is_dir(fd: c_int) -> bool {
    file_type(fd) == Some(S_IFDIR)
}

/// The `S_IFMT` bits of `fd`'s file.
unsafe fn file_type(fd: c_int) -> Option<u32> {
    if fd < 0 {
        return None;
    }
    let saved = errno();
    let mut buf = [0u64; 32];
    let r = statx(
        fd,
        c"".as_ptr(),
        AT_EMPTY_PATH,
        STATX_TYPE,
        buf.as_mut_ptr().cast(),
    );
    set_errno(saved);
    if r != 0 {
        return None;
    }
    // struct statx: stx_mode is the u16 at byte offset 28.
    let mode = u32::from(
        buf.as_ptr()
            .cast::<u8>()
            .add(28)
            .cast::<u16>()
            .read_unaligned(),
    );
    Some(mode & S_IFMT)
}

unsafe fn resolve_target(t: &Target, out: &mut PathBuf) {
    match *t {
        Target::None => out.len = 0,
        Target::Raw(p) => {
            out.len = 0;
            if !p.is_null() {
                out.push(core::ffi::CStr::from_ptr(p).to_bytes());
            }
        }
        Target::Fd(fd) => fd_path(fd, out),
        Target::At(dirfd, p) => abs_path(dirfd, p, out),
    }
}

fn next_seq() -> u64 {
    shm(plan::SHM_SEQ).fetch_add(1, Ordering::Relaxed) + 1
}

unsafe fn gettid() -> i64 {
    match real!(Syscall) {
        Some(f) => f(nr::GETTID),
        None => -1,
    }
}

/// Appends one complete line to the trace with the original `write` (O_APPEND, so one
/// write(2) per line lands whole and survives a SIGKILL right after).
unsafe fn emit(bytes: &[u8]) {
    let Some(write) = real!(Write) else { return };
    for attempt in 0..2 {
        let fd = TRACE_FD.load(Ordering::Acquire);
        if fd < 0 && attempt == 0 {
            open_trace();
            continue;
        }
        let mut done = 0usize;
        while done < bytes.len() {
            let n = write(fd, bytes[done..].as_ptr().cast(), bytes.len() - done);
            if n < 0 {
                let e = errno();
                if e == EINTR {
                    continue;
                }
                break;
            }
            if n == 0 {
                break;
            }
            done += n as usize;
        }
        if done == bytes.len() {
            return;
        }
        if done == 0 && errno() == EBADF && attempt == 0 {
            // The program closed our fd (close_range, closefrom): reopen by path.
            TRACE_FD.store(-1, Ordering::Release);
            open_trace();
            continue;
        }
        break;
    }
    shm(plan::SHM_TRACE_ERRORS).fetch_add(1, Ordering::Relaxed);
}

/// A trace line that is not a call: `loaded` (the load handshake) or `plan-error`.
unsafe fn trace_event(kind: &[u8], path: &[u8], n: i64) {
    if !state().tracing {
        return;
    }
    let mut l = Line::new();
    l.u64("seq", next_seq());
    l.i64("pid", i64::from(getpid()));
    l.i64("tid", gettid());
    l.u64("stream", STREAM.load(Ordering::Relaxed));
    l.str("op", kind);
    l.str("call", b"");
    l.str("path", path);
    l.i64("result", 0);
    l.i64("errno", 0);
    l.str("action", b"none");
    l.i64("rules", n);
    l.bool("shared", SHM.load(Ordering::Relaxed) != 0);
    l.finish();
    emit(l.as_bytes());
}

fn die() -> ! {
    unsafe {
        kill(getpid(), SIGKILL);
        _exit(137)
    }
}

unsafe fn sleep_ms(ms: u64) {
    let mut req = Timespec {
        tv_sec: (ms / 1000) as i64,
        tv_nsec: ((ms % 1000) * 1_000_000) as i64,
    };
    let mut rem = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    while nanosleep(&req, &mut rem) != 0 && errno() == EINTR {
        req = Timespec {
            tv_sec: rem.tv_sec,
            tv_nsec: rem.tv_nsec,
        };
    }
}

/// A short action name for the trace (`EIO`, `short:3`, `crash-after`, …).
fn action_text(a: Action, buf: &mut [u8; 32]) -> usize {
    let (prefix, n): (&[u8], Option<u64>) = match a {
        Action::Errno(e) => (plan::errno_name(e).unwrap_or("errno").as_bytes(), None),
        Action::Short(n) => (b"short:", Some(n)),
        Action::Torn(n) => (b"torn:", Some(n)),
        Action::Crash => (b"crash", None),
        Action::CrashAfter => (b"crash-after", None),
        Action::Delay(n) => (b"delay:", Some(n)),
        Action::Lie => (b"lie", None),
        Action::After(e) => {
            let name = plan::errno_name(e).unwrap_or("errno").as_bytes();
            let mut len = 0;
            for part in [b"after:".as_slice(), name] {
                let take = part.len().min(buf.len() - len);
                buf[len..len + take].copy_from_slice(&part[..take]);
                len += take;
            }
            return len;
        }
    };
    let mut len = prefix.len().min(buf.len());
    buf[..len].copy_from_slice(&prefix[..len]);
    if let Some(mut v) = n {
        let mut d = [0u8; 20];
        let mut i = d.len();
        loop {
            i -= 1;
            d[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let take = (d.len() - i).min(buf.len() - len);
        buf[len..len + take].copy_from_slice(&d[i..i + take]);
        len += take;
    }
    len
}

/// Before a stdio call's process is killed: push what the call accepted into the file
/// (stdio buffers it; SIGKILL would lose it and `torn`/`crash-after` would look like
/// `crash`).
unsafe fn flush_stream(c: &Call) {
    if !c.stream.is_null() {
        if let Some(flush) = real!(Fflush) {
            flush(c.stream);
        }
    }
}

/// Runs a call under the plan.
///
/// `len` is the byte count of a write (for `short`, `torn` and `lie`); `real(limit)`
/// does the call for real with at most `limit` bytes and returns its raw result (-1
/// with errno set on failure). `lie` is the success value for other calls.
#[inline(never)]
unsafe fn run(c: &mut Call, len: usize, lie: i64, real: impl FnMut(usize) -> i64) -> i64 {
    if state()
        .needs_path
        .get(c.op as usize)
        .copied()
        .unwrap_or(true)
    {
        // Built in place without zeroing its 8.7 KB: only the lengths are set; the
        // buffers are MaybeUninit and read only up to their length.
        let mut slot = MaybeUninit::<Paths>::uninit();
        let pp = slot.as_mut_ptr();
        core::ptr::addr_of_mut!((*pp).p1.len).write(0);
        core::ptr::addr_of_mut!((*pp).p2.len).write(0);
        // SAFETY: every field that is not MaybeUninit is now initialised.
        let paths = &mut *pp;
        resolve_target(&c.target, &mut paths.p1);
        if c.has_path2 {
            resolve_target(&c.target2, &mut paths.p2);
        }
        set_errno(c.entry_errno);
        act(c, paths, len, lie, real)
    } else {
        act(c, &NO_PATHS, len, lie, real)
    }
}

#[inline(always)]
unsafe fn act(
    c: &mut Call,
    paths: &Paths,
    len: usize,
    lie: i64,
    mut real: impl FnMut(usize) -> i64,
) -> i64 {
    let action = c.decide(paths);
    let Some(action) = action else {
        if !state().tracing {
            return real(len);
        }
        let r = real(len);
        let e = if r < 0 { errno() } else { 0 };
        c.trace(paths, Some(r), e, b"pass");
        return r;
    };
    let mut abuf = [0u8; 32];
    let an = action_text(action, &mut abuf);
    let atext = &abuf[..an];
    // Does the call for real, traces it and leaves the call's own errno.
    let mut done = |c: &Call, limit: usize| -> i64 {
        let r = real(limit);
        let e = if r < 0 { errno() } else { 0 };
        c.trace(paths, Some(r), e, atext);
        set_errno(if r < 0 { e } else { c.entry_errno });
        r
    };
    match action {
        Action::Errno(e) => {
            c.trace(paths, Some(c.fail), e, atext);
            set_errno(e);
            c.fail
        }
        Action::Short(n) => done(c, len.min(n as usize)),
        Action::Torn(n) => {
            done(c, len.min(n as usize));
            flush_stream(c);
            die()
        }
        Action::Crash => {
            c.trace(paths, None, 0, atext);
            die()
        }
        Action::CrashAfter => {
            done(c, len);
            flush_stream(c);
            die()
        }
        Action::Delay(ms) => {
            sleep_ms(ms);
            set_errno(c.entry_errno);
            done(c, len)
        }
        Action::Lie => {
            c.trace(paths, Some(lie), 0, atext);
            set_errno(c.entry_errno);
            lie
        }
        Action::After(e) => {
            let r = real(len);
            if c.op == Op::Open && r >= 0 {
                // The file was opened (and created); the caller, told it failed, has
                // no fd to close: close it so the error leaks nothing.
                if let Some(close) = real!(Close) {
                    close(r as c_int);
                }
            }
            c.real_result = Some(r);
            c.trace(paths, Some(c.fail), e, atext);
            set_errno(e);
            c.fail
        }
    }
}

/// Total bytes of an iovec array (saturating).
unsafe fn iov_total(iov: *const IoVec, cnt: c_int) -> usize {
    if iov.is_null() || cnt <= 0 {
        return 0;
    }
    let mut t = 0usize;
    for i in 0..cnt as usize {
        t = t.saturating_add((*iov.add(i)).len);
    }
    t
}

const IOV_CAP: usize = 64;

/// Copies the first entries of `iov` covering at most `limit` bytes into `out` (the
/// last one cut to fit). Returns the number of entries.
unsafe fn iov_cut(
    iov: *const IoVec,
    cnt: c_int,
    limit: usize,
    out: &mut [IoVec; IOV_CAP],
) -> c_int {
    let mut left = limit;
    let mut n = 0usize;
    if iov.is_null() || cnt <= 0 {
        return cnt;
    }
    for i in 0..cnt as usize {
        if left == 0 || n == IOV_CAP {
            break;
        }
        let mut v = *iov.add(i);
        v.len = v.len.min(left);
        left -= v.len;
        out[n] = v;
        n += 1;
    }
    n as c_int
}

/// Does a vectored write of at most `limit` bytes.
unsafe fn with_iov(
    iov: *const IoVec,
    cnt: c_int,
    total: usize,
    limit: usize,
    f: impl FnOnce(*const IoVec, c_int) -> i64,
) -> i64 {
    if limit >= total {
        return f(iov, cnt);
    }
    let mut cut = [IoVec {
        base: core::ptr::null_mut(),
        len: 0,
    }; IOV_CAP];
    let n = iov_cut(iov, cnt, limit, &mut cut);
    f(cut.as_ptr(), n)
}

// ---------------------------------------------------------------------------------
// The hooks. Each: fast path if the family is inactive or we are inside a hook.

macro_rules! fast {
    ($op:expr, $call:expr) => {
        if !active($op) {
            return $call;
        }
    };
}

macro_rules! guard {
    ($call:expr) => {
        match Guard::enter() {
            Some(g) => g,
            None => return $call,
        }
    };
}

unsafe fn open_like(
    name: &'static str,
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
    real: impl FnMut(usize) -> i64,
) -> c_int {
    let mut c =
        Call::new(Op::Open, name, Target::At(dirfd, path)).with_detail(Detail::open(flags, mode));
    let fd = run(&mut c, 0, 0, real) as c_int;
    cache_opened(fd);
    fd
}

#[no_mangle]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    let Some(f) = real!(Open) else {
        return enosys();
    };
    fast!(Op::Open, f(path, flags, mode));
    let _g = guard!(f(path, flags, mode));
    open_like("open", AT_FDCWD, path, flags, mode, |_| {
        i64::from(f(path, flags, mode))
    })
}

#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    let Some(f) = real!(Open64) else {
        return enosys();
    };
    fast!(Op::Open, f(path, flags, mode));
    let _g = guard!(f(path, flags, mode));
    open_like("open64", AT_FDCWD, path, flags, mode, |_| {
        i64::from(f(path, flags, mode))
    })
}

#[no_mangle]
pub unsafe extern "C" fn openat(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    let Some(f) = real!(Openat) else {
        return enosys();
    };
    fast!(Op::Open, f(dirfd, path, flags, mode));
    let _g = guard!(f(dirfd, path, flags, mode));
    open_like("openat", dirfd, path, flags, mode, |_| {
        i64::from(f(dirfd, path, flags, mode))
    })
}

#[no_mangle]
pub unsafe extern "C" fn openat64(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    let Some(f) = real!(Openat64) else {
        return enosys();
    };
    fast!(Op::Open, f(dirfd, path, flags, mode));
    let _g = guard!(f(dirfd, path, flags, mode));
    open_like("openat64", dirfd, path, flags, mode, |_| {
        i64::from(f(dirfd, path, flags, mode))
    })
}

#[no_mangle]
pub unsafe extern "C" fn __open_2(path: *const c_char, flags: c_int) -> c_int {
    let Some(f) = real!(Open2) else {
        return enosys();
    };
    fast!(Op::Open, f(path, flags));
    let _g = guard!(f(path, flags));
    open_like("__open_2", AT_FDCWD, path, flags, 0, |_| {
        i64::from(f(path, flags))
    })
}

#[no_mangle]
pub unsafe extern "C" fn __open64_2(path: *const c_char, flags: c_int) -> c_int {
    let Some(f) = real!(Open64_2) else {
        return enosys();
    };
    fast!(Op::Open, f(path, flags));
    let _g = guard!(f(path, flags));
    open_like("__open64_2", AT_FDCWD, path, flags, 0, |_| {
        i64::from(f(path, flags))
    })
}

#[no_mangle]
pub unsafe extern "C" fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    let Some(f) = real!(Openat2) else {
        return enosys();
    };
    fast!(Op::Open, f(dirfd, path, flags));
    let _g = guard!(f(dirfd, path, flags));
    open_like("__openat_2", dirfd, path, flags, 0, |_| {
        i64::from(f(dirfd, path, flags))
    })
}

#[no_mangle]
pub unsafe extern "C" fn __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    let Some(f) = real!(Openat64_2) else {
        return enosys();
    };
    fast!(Op::Open, f(dirfd, path, flags));
    let _g = guard!(f(dirfd, path, flags));
    open_like("__openat64_2", dirfd, path, flags, 0, |_| {
        i64::from(f(dirfd, path, flags))
    })
}

#[no_mangle]
pub unsafe extern "C" fn creat(path: *const c_char, mode: c_uint) -> c_int {
    let Some(f) = real!(Creat) else {
        return enosys();
    };
    fast!(Op::Open, f(path, mode));
    let _g = guard!(f(path, mode));
    open_like(
        "creat",
        AT_FDCWD,
        path,
        O_CREAT | O_WRONLY | O_TRUNC,
        mode,
        |_| i64::from(f(path, mode)),
    )
}

#[no_mangle]
pub unsafe extern "C" fn creat64(path: *const c_char, mode: c_uint) -> c_int {
    let Some(f) = real!(Creat64) else {
        return enosys();
    };
    fast!(Op::Open, f(path, mode));
    let _g = guard!(f(path, mode));
    open_like(
        "creat64",
        AT_FDCWD,
        path,
        O_CREAT | O_WRONLY | O_TRUNC,
        mode,
        |_| i64::from(f(path, mode)),
    )
}

#[no_mangle]
pub unsafe extern "C" fn write(fd: c_int, buf: *const c_void, n: usize) -> isize {
    let Some(f) = real!(Write) else {
        return enosys();
    };
    fast!(Op::Write, f(fd, buf, n));
    let _g = guard!(f(fd, buf, n));
    let mut c = Call::new(Op::Write, "write", Target::Fd(fd));
    run(&mut c, n, n as i64, |lim| f(fd, buf, lim) as i64) as isize
}

#[no_mangle]
pub unsafe extern "C" fn pwrite(fd: c_int, buf: *const c_void, n: usize, off: i64) -> isize {
    let Some(f) = real!(Pwrite) else {
        return enosys();
    };
    fast!(Op::Write, f(fd, buf, n, off));
    let _g = guard!(f(fd, buf, n, off));
    let mut c = Call::new(Op::Write, "pwrite", Target::Fd(fd));
    run(&mut c, n, n as i64, |lim| f(fd, buf, lim, off) as i64) as isize
}

#[no_mangle]
pub unsafe extern "C" fn pwrite64(fd: c_int, buf: *const c_void, n: usize, off: i64) -> isize {
    let Some(f) = real!(Pwrite64) else {
        return enosys();
    };
    fast!(Op::Write, f(fd, buf, n, off));
    let _g = guard!(f(fd, buf, n, off));
    let mut c = Call::new(Op::Write, "pwrite64", Target::Fd(fd));
    run(&mut c, n, n as i64, |lim| f(fd, buf, lim, off) as i64) as isize
}

#[no_mangle]
pub unsafe extern "C" fn writev(fd: c_int, iov: *const IoVec, cnt: c_int) -> isize {
    let Some(f) = real!(Writev) else {
        return enosys();
    };
    fast!(Op::Write, f(fd, iov, cnt));
    let _g = guard!(f(fd, iov, cnt));
    let total = iov_total(iov, cnt);
    let mut c = Call::new(Op::Write, "writev", Target::Fd(fd));
    run(&mut c, total, total as i64, |lim| {
        with_iov(iov, cnt, total, lim, |v, k| f(fd, v, k) as i64)
    }) as isize
}

#[no_mangle]
pub unsafe extern "C" fn pwritev(fd: c_int, iov: *const IoVec, cnt: c_int, off: i64) -> isize {
    let Some(f) = real!(Pwritev) else {
        return enosys();
    };
    fast!(Op::Write, f(fd, iov, cnt, off));
    let _g = guard!(f(fd, iov, cnt, off));
    let total = iov_total(iov, cnt);
    let mut c = Call::new(Op::Write, "pwritev", Target::Fd(fd));
    run(&mut c, total, total as i64, |lim| {
        with_iov(iov, cnt, total, lim, |v, k| f(fd, v, k, off) as i64)
    }) as isize
}

#[no_mangle]
pub unsafe extern "C" fn pwritev64(fd: c_int, iov: *const IoVec, cnt: c_int, off: i64) -> isize {
    let Some(f) = real!(Pwritev64) else {
        return enosys();
    };
    fast!(Op::Write, f(fd, iov, cnt, off));
    let _g = guard!(f(fd, iov, cnt, off));
    let total = iov_total(iov, cnt);
    let mut c = Call::new(Op::Write, "pwritev64", Target::Fd(fd));
    run(&mut c, total, total as i64, |lim| {
        with_iov(iov, cnt, total, lim, |v, k| f(fd, v, k, off) as i64)
    }) as isize
}

#[no_mangle]
pub unsafe extern "C" fn pwritev2(
    fd: c_int,
    iov: *const IoVec,
    cnt: c_int,
    off: i64,
    flags: c_int,
) -> isize {
    let Some(f) = real!(Pwritev2) else {
        return enosys();
    };
    fast!(Op::Write, f(fd, iov, cnt, off, flags));
    let _g = guard!(f(fd, iov, cnt, off, flags));
    let total = iov_total(iov, cnt);
    let mut c = Call::new(Op::Write, "pwritev2", Target::Fd(fd));
    run(&mut c, total, total as i64, |lim| {
        with_iov(iov, cnt, total, lim, |v, k| f(fd, v, k, off, flags) as i64)
    }) as isize
}

macro_rules! fd_hook {
    ($sym:ident, $real:ident, $op:expr, $name:literal, ($fd:ident : c_int $(, $a:ident : $t:ty)*)) => {
        #[no_mangle]
        pub unsafe extern "C" fn $sym($fd: c_int $(, $a: $t)*) -> c_int {
            let Some(f) = real!($real) else { return enosys() };
            fast!($op, f($fd $(, $a)*));
            let _g = guard!(f($fd $(, $a)*));
            let mut c = Call::new($op, $name, Target::Fd($fd)).with_detail(Detail::for_fd_op($op));
            run(&mut c, 0, 0, |_| i64::from(f($fd $(, $a)*))) as c_int
        }
    };
}

fd_hook!(fsync, Fsync, Op::Fsync, "fsync", (fd: c_int));
fd_hook!(fdatasync, Fdatasync, Op::Fsync, "fdatasync", (fd: c_int));
fd_hook!(sync_file_range, SyncFileRange, Op::Fsync, "sync_file_range", (fd: c_int, off: i64, n: i64, flags: c_uint));
fd_hook!(syncfs, Syncfs, Op::Fsync, "syncfs", (fd: c_int));
fd_hook!(ftruncate, Ftruncate, Op::Ftruncate, "ftruncate", (fd: c_int, len: i64));
fd_hook!(ftruncate64, Ftruncate64, Op::Ftruncate, "ftruncate64", (fd: c_int, len: i64));

#[no_mangle]
pub unsafe extern "C" fn flock(fd: c_int, how: c_int) -> c_int {
    let Some(f) = real!(Flock) else {
        return enosys();
    };
    fast!(Op::Flock, f(fd, how));
    let _g = guard!(f(fd, how));
    let mut c = Call::new(Op::Flock, "flock", Target::Fd(fd)).with_detail(Detail::Flock(how));
    run(&mut c, 0, 0, |_| i64::from(f(fd, how))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    let Some(f) = real!(Close) else {
        return enosys();
    };
    fast!(Op::Close, f(fd));
    if fd >= 0 && fd == TRACE_FD.load(Ordering::Relaxed) {
        // Closing every fd (daemonising): keep the trace open, pretend it closed.
        return 0;
    }
    cache_clear(fd);
    let r = match Guard::enter() {
        None => f(fd),
        Some(_g) => {
            let mut c = Call::new(Op::Close, "close", Target::Fd(fd));
            run(&mut c, 0, 0, |_| i64::from(f(fd))) as c_int
        }
    };
    cache_clear(fd);
    r
}

// Calls that close or replace fds without being injection points: they only keep the
// fd cache true.

#[no_mangle]
pub unsafe extern "C" fn dup2(old: c_int, new: c_int) -> c_int {
    let Some(f) = real!(Dup2) else {
        return enosys();
    };
    if !CACHE_ON.load(Ordering::Relaxed) || old == new {
        return f(old, new);
    }
    cache_clear(new);
    let r = f(old, new);
    cache_clear(new);
    r
}

#[no_mangle]
pub unsafe extern "C" fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int {
    let Some(f) = real!(Dup3) else {
        return enosys();
    };
    if !CACHE_ON.load(Ordering::Relaxed) {
        return f(old, new, flags);
    }
    cache_clear(new);
    let r = f(old, new, flags);
    cache_clear(new);
    r
}

fn cache_clear_range(first: c_uint, last: c_uint) {
    let last = (last as usize).min(FD_CACHE - 1);
    let mut fd = first as usize;
    while fd <= last {
        cache_clear(fd as c_int);
        fd += 1;
    }
}

#[no_mangle]
pub unsafe extern "C" fn close_range(first: c_uint, last: c_uint, flags: c_int) -> c_int {
    let Some(f) = real!(CloseRange) else {
        return enosys();
    };
    const CLOSE_RANGE_CLOEXEC: c_int = 4;
    if !CACHE_ON.load(Ordering::Relaxed) || flags & CLOSE_RANGE_CLOEXEC != 0 {
        return f(first, last, flags);
    }
    let r = f(first, last, flags);
    let saved = errno();
    cache_clear_range(first, last);
    set_errno(saved);
    r
}

#[no_mangle]
pub unsafe extern "C" fn closefrom(low: c_int) {
    let Some(f) = real!(Closefrom) else { return };
    f(low);
    if CACHE_ON.load(Ordering::Relaxed) && low >= 0 {
        cache_clear_range(low as c_uint, c_uint::MAX);
    }
}

#[no_mangle]
pub unsafe extern "C" fn fclose(fp: *mut c_void) -> c_int {
    let Some(f) = real!(Fclose) else {
        return enosys();
    };
    if fp.is_null() || (!CACHE_ON.load(Ordering::Relaxed) && !active(Op::Close)) {
        return f(fp);
    }
    let fd = fileno(fp);
    cache_clear(fd);
    let r = match (active(Op::Close), Guard::enter()) {
        (true, Some(_g)) => {
            let mut c = Call::new(Op::Close, "fclose", Target::Fd(fd)).stdio(fp, -1);
            run(&mut c, 0, 0, |_| i64::from(f(fp))) as c_int
        }
        _ => f(fp),
    };
    cache_clear(fd);
    r
}

#[no_mangle]
pub unsafe extern "C" fn dup(old: c_int) -> c_int {
    let Some(f) = real!(Dup) else {
        return enosys();
    };
    let r = f(old);
    // The new number may have been closed behind our back (raw close, freopen):
    // whatever its slot says is not this fd.
    if CACHE_ON.load(Ordering::Relaxed) && r >= 0 {
        cache_clear(r);
    }
    r
}

/// `fopen`'s open is glibc-internal (not seen by the open hooks): cache the new fd's
/// path here so that stdio calls on it are matched without a /proc lookup, and so that
/// a stale slot of a reused number is replaced.
unsafe fn after_fopen(fp: *mut c_void) -> *mut c_void {
    if CACHE_ON.load(Ordering::Relaxed) && !fp.is_null() {
        let fd = fileno(fp);
        cache_clear(fd);
        cache_opened(fd);
    }
    fp
}

#[no_mangle]
pub unsafe extern "C" fn fopen(path: *const c_char, mode: *const c_char) -> *mut c_void {
    let Some(f) = real!(Fopen) else {
        return enosys_ptr();
    };
    after_fopen(f(path, mode))
}

#[no_mangle]
pub unsafe extern "C" fn fopen64(path: *const c_char, mode: *const c_char) -> *mut c_void {
    let Some(f) = real!(Fopen64) else {
        return enosys_ptr();
    };
    after_fopen(f(path, mode))
}

/// `freopen` closes the stream's fd and opens (or dup3s onto the same number) inside
/// glibc, where no hook sees it: clear the old number before and the new one after.
unsafe fn around_freopen(fp: *mut c_void, call: impl FnOnce() -> *mut c_void) -> *mut c_void {
    if !CACHE_ON.load(Ordering::Relaxed) || fp.is_null() {
        return call();
    }
    let old = fileno(fp);
    cache_clear(old);
    let r = call();
    let saved = errno();
    cache_clear(old);
    if !r.is_null() {
        let fd = fileno(r);
        cache_clear(fd);
        cache_opened(fd);
    }
    set_errno(saved);
    r
}

#[no_mangle]
pub unsafe extern "C" fn freopen(
    path: *const c_char,
    mode: *const c_char,
    fp: *mut c_void,
) -> *mut c_void {
    let Some(f) = real!(Freopen) else {
        return enosys_ptr();
    };
    around_freopen(fp, || f(path, mode, fp))
}

#[no_mangle]
pub unsafe extern "C" fn freopen64(
    path: *const c_char,
    mode: *const c_char,
    fp: *mut c_void,
) -> *mut c_void {
    let Some(f) = real!(Freopen64) else {
        return enosys_ptr();
    };
    around_freopen(fp, || f(path, mode, fp))
}

#[no_mangle]
pub unsafe extern "C" fn closedir(dir: *mut c_void) -> c_int {
    let Some(f) = real!(Closedir) else {
        return enosys();
    };
    if !CACHE_ON.load(Ordering::Relaxed) || dir.is_null() {
        return f(dir);
    }
    let fd = dirfd(dir);
    cache_clear(fd);
    let r = f(dir);
    cache_clear(fd);
    r
}

/// After `fcntl(F_DUPFD…)` returned `r`: like `dup`, the new number's slot is not
/// this fd's.
fn dupfd_aware(cmd: c_int, r: c_int) -> c_int {
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && r >= 0 && CACHE_ON.load(Ordering::Relaxed) {
        cache_clear(r);
    }
    r
}

fn is_lock_cmd(cmd: c_int) -> bool {
    matches!(cmd, F_SETLK | F_SETLKW | F_OFD_SETLK | F_OFD_SETLKW)
}

#[no_mangle]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    let Some(f) = real!(Fcntl) else {
        return enosys();
    };
    if !is_lock_cmd(cmd) {
        return dupfd_aware(cmd, f(fd, cmd, arg));
    }
    fast!(Op::Flock, f(fd, cmd, arg));
    let _g = guard!(f(fd, cmd, arg));
    let mut c =
        Call::new(Op::Flock, "fcntl", Target::Fd(fd)).with_detail(Detail::Fcntl { cmd, arg });
    run(&mut c, 0, 0, |_| i64::from(f(fd, cmd, arg))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    let Some(f) = real!(Fcntl64) else {
        return enosys();
    };
    if !is_lock_cmd(cmd) {
        return dupfd_aware(cmd, f(fd, cmd, arg));
    }
    fast!(Op::Flock, f(fd, cmd, arg));
    let _g = guard!(f(fd, cmd, arg));
    let mut c =
        Call::new(Op::Flock, "fcntl64", Target::Fd(fd)).with_detail(Detail::Fcntl { cmd, arg });
    run(&mut c, 0, 0, |_| i64::from(f(fd, cmd, arg))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn rename(old: *const c_char, new: *const c_char) -> c_int {
    let Some(f) = real!(Rename) else {
        return enosys();
    };
    fast!(Op::Rename, f(old, new));
    let _g = guard!(f(old, new));
    let mut c = Call::new(Op::Rename, "rename", Target::At(AT_FDCWD, old))
        .with_second(Target::At(AT_FDCWD, new));
    run(&mut c, 0, 0, |_| i64::from(f(old, new))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn renameat(
    od: c_int,
    old: *const c_char,
    nd: c_int,
    new: *const c_char,
) -> c_int {
    let Some(f) = real!(Renameat) else {
        return enosys();
    };
    fast!(Op::Rename, f(od, old, nd, new));
    let _g = guard!(f(od, old, nd, new));
    let mut c =
        Call::new(Op::Rename, "renameat", Target::At(od, old)).with_second(Target::At(nd, new));
    run(&mut c, 0, 0, |_| i64::from(f(od, old, nd, new))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn renameat2(
    od: c_int,
    old: *const c_char,
    nd: c_int,
    new: *const c_char,
    flags: c_uint,
) -> c_int {
    let Some(f) = real!(Renameat2) else {
        return enosys();
    };
    fast!(Op::Rename, f(od, old, nd, new, flags));
    let _g = guard!(f(od, old, nd, new, flags));
    let mut c =
        Call::new(Op::Rename, "renameat2", Target::At(od, old)).with_second(Target::At(nd, new));
    run(&mut c, 0, 0, |_| i64::from(f(od, old, nd, new, flags))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn unlink(path: *const c_char) -> c_int {
    let Some(f) = real!(Unlink) else {
        return enosys();
    };
    fast!(Op::Unlink, f(path));
    let _g = guard!(f(path));
    let mut c = Call::new(Op::Unlink, "unlink", Target::At(AT_FDCWD, path));
    run(&mut c, 0, 0, |_| i64::from(f(path))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn unlinkat(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    let Some(f) = real!(Unlinkat) else {
        return enosys();
    };
    let op = if flags & AT_REMOVEDIR != 0 {
        Op::Rmdir
    } else {
        Op::Unlink
    };
    fast!(op, f(dirfd, path, flags));
    let _g = guard!(f(dirfd, path, flags));
    let mut c = Call::new(op, "unlinkat", Target::At(dirfd, path));
    run(&mut c, 0, 0, |_| i64::from(f(dirfd, path, flags))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn mkdir(path: *const c_char, mode: c_uint) -> c_int {
    let Some(f) = real!(Mkdir) else {
        return enosys();
    };
    fast!(Op::Mkdir, f(path, mode));
    let _g = guard!(f(path, mode));
    let mut c = Call::new(Op::Mkdir, "mkdir", Target::At(AT_FDCWD, path));
    run(&mut c, 0, 0, |_| i64::from(f(path, mode))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn mkdirat(dirfd: c_int, path: *const c_char, mode: c_uint) -> c_int {
    let Some(f) = real!(Mkdirat) else {
        return enosys();
    };
    fast!(Op::Mkdir, f(dirfd, path, mode));
    let _g = guard!(f(dirfd, path, mode));
    let mut c = Call::new(Op::Mkdir, "mkdirat", Target::At(dirfd, path));
    run(&mut c, 0, 0, |_| i64::from(f(dirfd, path, mode))) as c_int
}

/// `syscall(2)`. Declared with six fixed arguments: on x86_64 and aarch64 Linux a
/// variadic call passes them exactly where a fixed-argument callee reads them (glibc's
/// own `syscall` reads six too).
#[no_mangle]
pub unsafe extern "C" fn syscall(
    n: c_long,
    a1: c_long,
    a2: c_long,
    a3: c_long,
    a4: c_long,
    a5: c_long,
    a6: c_long,
) -> c_long {
    let Some(f) = real!(Syscall) else {
        return enosys();
    };
    let fd = a1 as c_int;
    let p1 = a1 as *const c_char;
    let p2 = a2 as *const c_char;
    let (op, name, target, second): (Op, &'static str, Target, Option<Target>) = match n {
        nr::WRITE => (Op::Write, "syscall:write", Target::Fd(fd), None),
        nr::PWRITE64 => (Op::Write, "syscall:pwrite64", Target::Fd(fd), None),
        nr::WRITEV => (Op::Write, "syscall:writev", Target::Fd(fd), None),
        nr::PWRITEV => (Op::Write, "syscall:pwritev", Target::Fd(fd), None),
        nr::PWRITEV2 => (Op::Write, "syscall:pwritev2", Target::Fd(fd), None),
        nr::OPEN => (Op::Open, "syscall:open", Target::At(AT_FDCWD, p1), None),
        nr::CREAT => (Op::Open, "syscall:creat", Target::At(AT_FDCWD, p1), None),
        nr::OPENAT => (Op::Open, "syscall:openat", Target::At(fd, p2), None),
        nr::CLOSE => {
            if fd >= 0 && fd == TRACE_FD.load(Ordering::Relaxed) {
                return 0;
            }
            (Op::Close, "syscall:close", Target::Fd(fd), None)
        }
        nr::FSYNC => (Op::Fsync, "syscall:fsync", Target::Fd(fd), None),
        nr::FDATASYNC => (Op::Fsync, "syscall:fdatasync", Target::Fd(fd), None),
        nr::SYNC_FILE_RANGE => (Op::Fsync, "syscall:sync_file_range", Target::Fd(fd), None),
        nr::SYNCFS => (Op::Fsync, "syscall:syncfs", Target::Fd(fd), None),
        nr::FLOCK => (Op::Flock, "syscall:flock", Target::Fd(fd), None),
        nr::FCNTL if is_lock_cmd(a2 as c_int) => (Op::Flock, "syscall:fcntl", Target::Fd(fd), None),
        nr::FTRUNCATE => (Op::Ftruncate, "syscall:ftruncate", Target::Fd(fd), None),
        nr::RENAME => (
            Op::Rename,
            "syscall:rename",
            Target::At(AT_FDCWD, p1),
            Some(Target::At(AT_FDCWD, p2)),
        ),
        nr::RENAMEAT => (
            Op::Rename,
            "syscall:renameat",
            Target::At(fd, p2),
            Some(Target::At(a3 as c_int, a4 as *const c_char)),
        ),
        nr::RENAMEAT2 => (
            Op::Rename,
            "syscall:renameat2",
            Target::At(fd, p2),
            Some(Target::At(a3 as c_int, a4 as *const c_char)),
        ),
        nr::UNLINK => (Op::Unlink, "syscall:unlink", Target::At(AT_FDCWD, p1), None),
        nr::UNLINKAT if a3 as c_int & AT_REMOVEDIR != 0 => {
            (Op::Rmdir, "syscall:unlinkat", Target::At(fd, p2), None)
        }
        nr::UNLINKAT => (Op::Unlink, "syscall:unlinkat", Target::At(fd, p2), None),
        nr::RMDIR => (Op::Rmdir, "syscall:rmdir", Target::At(AT_FDCWD, p1), None),
        nr::FALLOCATE => (Op::Fallocate, "syscall:fallocate", Target::Fd(fd), None),
        nr::COPY_FILE_RANGE => (
            Op::Write,
            "syscall:copy_file_range",
            Target::Fd(a3 as c_int),
            None,
        ),
        nr::LINK => (
            Op::Link,
            "syscall:link",
            Target::At(AT_FDCWD, p1),
            Some(Target::At(AT_FDCWD, p2)),
        ),
        nr::LINKAT => (
            Op::Link,
            "syscall:linkat",
            Target::At(fd, p2),
            Some(Target::At(a3 as c_int, a4 as *const c_char)),
        ),
        nr::SYMLINK => (
            Op::Link,
            "syscall:symlink",
            Target::Raw(p1),
            Some(Target::At(AT_FDCWD, p2)),
        ),
        nr::SYMLINKAT => (
            Op::Link,
            "syscall:symlinkat",
            Target::Raw(p1),
            Some(Target::At(a2 as c_int, a3 as *const c_char)),
        ),
        nr::MKDIR => (Op::Mkdir, "syscall:mkdir", Target::At(AT_FDCWD, p1), None),
        nr::MKDIRAT => (Op::Mkdir, "syscall:mkdirat", Target::At(fd, p2), None),
        _ => return f(n, a1, a2, a3, a4, a5, a6),
    };
    fast!(op, f(n, a1, a2, a3, a4, a5, a6));
    if op == Op::Close {
        cache_clear(fd);
    }
    let r = match Guard::enter() {
        None => f(n, a1, a2, a3, a4, a5, a6),
        Some(_g) => syscall_slow(f, n, [a1, a2, a3, a4, a5, a6], op, name, target, second),
    };
    match op {
        Op::Close => cache_clear(fd),
        Op::Open if r >= 0 && r <= c_long::from(c_int::MAX) => cache_opened(r as c_int),
        _ => {}
    }
    r
}

#[inline(never)]
unsafe fn syscall_slow(
    f: ty::Syscall,
    n: c_long,
    a: [c_long; 6],
    op: Op,
    name: &'static str,
    target: Target,
    second: Option<Target>,
) -> c_long {
    let [a1, a2, a3, a4, a5, a6] = a;
    let raw = move |x1: c_long, x3: c_long| f(n, x1, a2, x3, a4, a5, a6);
    let detail = match n {
        nr::OPEN => Detail::open(a2 as c_int, a3 as c_uint),
        nr::OPENAT => Detail::open(a3 as c_int, a4 as c_uint),
        nr::CREAT => Detail::open(O_CREAT | O_WRONLY | O_TRUNC, a2 as c_uint),
        nr::FLOCK => Detail::Flock(a2 as c_int),
        nr::FCNTL => Detail::Fcntl {
            cmd: a2 as c_int,
            arg: a3 as c_ulong,
        },
        _ => Detail::for_fd_op(op),
    };
    let mut c = Call::new(op, name, target).with_detail(detail);
    if let Some(t) = second {
        c = c.with_second(t);
    }
    match n {
        nr::WRITE | nr::PWRITE64 => {
            let len = a3 as usize;
            run(&mut c, len, len as i64, |lim| raw(a1, lim as c_long)) as c_long
        }
        nr::WRITEV | nr::PWRITEV | nr::PWRITEV2 => {
            let (iov, cnt) = (a2 as *const IoVec, a3 as c_int);
            let total = iov_total(iov, cnt);
            run(&mut c, total, total as i64, |lim| {
                with_iov(iov, cnt, total, lim, |v, k| {
                    f(n, a1, v as c_long, c_long::from(k), a4, a5, a6)
                })
            }) as c_long
        }
        nr::COPY_FILE_RANGE => {
            let len = a5 as usize;
            run(&mut c, len, len as i64, |lim| {
                f(n, a1, a2, a3, a4, lim as c_long, a6)
            }) as c_long
        }
        _ => run(&mut c, 0, 0, |_| raw(a1, a3)) as c_long,
    }
}

// The families added by issue 13 (after the macros they use).
mod hooks_new;
