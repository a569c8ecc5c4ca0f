//! libc, declared by hand (the preload has no dependencies): the types, constants and
//! functions it uses that it does not itself define, so calling them never re-enters a
//! hook; and the system call numbers `syscall()` is watched for.

use core::ffi::{c_char, c_int, c_uint, c_void};

#[repr(C)]
#[derive(Clone, Copy)]
pub struct IoVec {
    pub base: *mut c_void,
    pub len: usize,
}

#[repr(C)]
pub struct Timespec {
    pub tv_sec: i64,
    pub tv_nsec: i64,
}

extern "C" {
    pub fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    pub fn getenv(name: *const c_char) -> *const c_char;
    pub fn __errno_location() -> *mut c_int;
    pub fn readlink(path: *const c_char, buf: *mut c_char, len: usize) -> isize;
    pub fn getcwd(buf: *mut c_char, size: usize) -> *mut c_char;
    pub fn getpid() -> c_int;
    pub fn kill(pid: c_int, sig: c_int) -> c_int;
    pub fn nanosleep(req: *const Timespec, rem: *mut Timespec) -> c_int;
    pub fn mmap(
        addr: *mut c_void,
        len: usize,
        prot: c_int,
        flags: c_int,
        fd: c_int,
        off: i64,
    ) -> *mut c_void;
    pub fn pthread_atfork(
        prepare: Option<extern "C" fn()>,
        parent: Option<extern "C" fn()>,
        child: Option<extern "C" fn()>,
    ) -> c_int;
    pub fn _exit(code: c_int) -> !;
    pub fn fileno(fp: *mut c_void) -> c_int;
    pub fn statx(
        dirfd: c_int,
        path: *const c_char,
        flags: c_int,
        mask: c_uint,
        buf: *mut c_void,
    ) -> c_int;
    pub fn dirfd(dir: *mut c_void) -> c_int;
    pub fn lseek64(fd: c_int, off: i64, whence: c_int) -> i64;
    pub fn mprotect(addr: *mut c_void, len: usize, prot: c_int) -> c_int;
    pub fn sysconf(name: c_int) -> i64;
}

pub const SC_PAGESIZE: c_int = 30;

pub const RTLD_NEXT: *mut c_void = -1isize as *mut c_void;
pub const AT_FDCWD: c_int = -100;
pub const O_WRONLY: c_int = 0o1;
pub const O_RDWR: c_int = 0o2;
pub const O_CREAT: c_int = 0o100;
pub const O_APPEND: c_int = 0o2000;
pub const O_TRUNC: c_int = 0o1000;
#[cfg(target_arch = "x86_64")]
pub const O_TMPFILE: c_int = 0o20200000;
#[cfg(target_arch = "aarch64")]
pub const O_TMPFILE: c_int = 0o20040000;
pub const AT_EMPTY_PATH: c_int = 0x1000;
pub const STATX_TYPE: c_uint = 1;
pub const S_IFMT: u32 = 0o170000;
pub const S_IFDIR: u32 = 0o040000;
pub const S_IFREG: u32 = 0o100000;
pub const AT_REMOVEDIR: c_int = 0x200;
pub const O_CLOEXEC: c_int = 0o2000000;
pub const SEEK_CUR: c_int = 1;
pub const F_DUPFD: c_int = 0;
pub const F_DUPFD_CLOEXEC: c_int = 1030;
pub const F_SETLK: c_int = 6;
pub const F_SETLKW: c_int = 7;
pub const F_OFD_SETLK: c_int = 37;
pub const F_OFD_SETLKW: c_int = 38;
pub const EBADF: c_int = 9;
pub const EINTR: c_int = 4;
pub const ENOSYS: c_int = 38;
pub const SIGKILL: c_int = 9;
pub const PROT_READ: c_int = 1;
pub const PROT_WRITE: c_int = 2;
pub const MAP_SHARED: c_int = 1;
pub const MAP_ANONYMOUS: c_int = 0x20;
pub const MAP_FAILED: *mut c_void = !0usize as *mut c_void;

/// System call numbers of the calls `syscall()` is watched for.
#[cfg(target_arch = "x86_64")]
pub mod nr {
    use core::ffi::c_long;

    pub const WRITE: c_long = 1;
    pub const OPEN: c_long = 2;
    pub const CLOSE: c_long = 3;
    pub const PWRITE64: c_long = 18;
    pub const WRITEV: c_long = 20;
    pub const FCNTL: c_long = 72;
    pub const FLOCK: c_long = 73;
    pub const FSYNC: c_long = 74;
    pub const FDATASYNC: c_long = 75;
    pub const FTRUNCATE: c_long = 77;
    pub const RENAME: c_long = 82;
    pub const MKDIR: c_long = 83;
    pub const CREAT: c_long = 85;
    pub const UNLINK: c_long = 87;
    pub const GETTID: c_long = 186;
    pub const OPENAT: c_long = 257;
    pub const MKDIRAT: c_long = 258;
    pub const UNLINKAT: c_long = 263;
    pub const RENAMEAT: c_long = 264;
    pub const SYNC_FILE_RANGE: c_long = 277;
    pub const PWRITEV: c_long = 296;
    pub const SYNCFS: c_long = 306;
    pub const RENAMEAT2: c_long = 316;
    pub const PWRITEV2: c_long = 328;
    pub const RMDIR: c_long = 84;
    pub const LINK: c_long = 86;
    pub const SYMLINK: c_long = 88;
    pub const LINKAT: c_long = 265;
    pub const SYMLINKAT: c_long = 266;
    pub const FALLOCATE: c_long = 285;
    pub const COPY_FILE_RANGE: c_long = 326;
}

/// System call numbers of the calls `syscall()` is watched for (asm-generic: no
/// open, creat, rename, mkdir, unlink, rmdir, link or symlink).
#[cfg(target_arch = "aarch64")]
pub mod nr {
    use core::ffi::c_long;

    pub const WRITE: c_long = 64;
    pub const OPEN: c_long = -1001;
    pub const CLOSE: c_long = 57;
    pub const PWRITE64: c_long = 68;
    pub const WRITEV: c_long = 66;
    pub const FCNTL: c_long = 25;
    pub const FLOCK: c_long = 32;
    pub const FSYNC: c_long = 82;
    pub const FDATASYNC: c_long = 83;
    pub const FTRUNCATE: c_long = 46;
    pub const RENAME: c_long = -1002;
    pub const MKDIR: c_long = -1003;
    pub const CREAT: c_long = -1004;
    pub const UNLINK: c_long = -1005;
    pub const GETTID: c_long = 178;
    pub const OPENAT: c_long = 56;
    pub const MKDIRAT: c_long = 34;
    pub const UNLINKAT: c_long = 35;
    pub const RENAMEAT: c_long = 38;
    pub const SYNC_FILE_RANGE: c_long = 84;
    pub const PWRITEV: c_long = 70;
    pub const SYNCFS: c_long = 267;
    pub const RENAMEAT2: c_long = 276;
    pub const PWRITEV2: c_long = 287;
    pub const RMDIR: c_long = -1006;
    pub const LINK: c_long = -1007;
    pub const SYMLINK: c_long = -1008;
    pub const LINKAT: c_long = 37;
    pub const SYMLINKAT: c_long = 36;
    pub const FALLOCATE: c_long = 47;
    pub const COPY_FILE_RANGE: c_long = 285;
}

/// The calling thread's errno.
#[inline(always)]
pub fn errno() -> c_int {
    // SAFETY: __errno_location returns the calling thread's errno, valid for the
    // thread's lifetime.
    unsafe { *__errno_location() }
}

/// Sets the calling thread's errno.
#[inline(always)]
pub fn set_errno(e: c_int) {
    // SAFETY: as in `errno`.
    unsafe { *__errno_location() = e };
}

/// The calling process's pid.
pub fn pid() -> c_int {
    // SAFETY: getpid has no preconditions.
    unsafe { getpid() }
}
