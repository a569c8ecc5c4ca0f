//! The originals: every symbol the hooks forward to, resolved with `dlsym(RTLD_NEXT)`
//! (once at load, or lazily by a hook called before the constructor ran).

use core::ffi::{c_char, c_int, c_long, c_uint, c_void};
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::sys::{dlsym, set_errno, IoVec, ENOSYS, RTLD_NEXT};

macro_rules! reals {
    ($($id:ident = $name:literal : $ty:ty;)*) => {
        /// One original, by index into [`REAL`].
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        #[repr(usize)]
        pub enum R { $($id,)* }
        const REAL_NAMES: &[&[u8]] = &[$(concat!($name, "\0").as_bytes(),)*];
        const REAL_COUNT: usize = REAL_NAMES.len();
        /// The function pointer type of each original.
        #[allow(non_snake_case)]
        pub mod ty {
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
    Send = "send": unsafe extern "C" fn(c_int, *const c_void, usize, c_int) -> isize;
    Sendto = "sendto": unsafe extern "C" fn(c_int, *const c_void, usize, c_int, *const c_void, u32) -> isize;
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
    Truncate = "truncate": unsafe extern "C" fn(*const c_char, i64) -> c_int;
    Truncate64 = "truncate64": unsafe extern "C" fn(*const c_char, i64) -> c_int;
    Mknod = "mknod": unsafe extern "C" fn(*const c_char, c_uint, u64) -> c_int;
    Mknodat = "mknodat": unsafe extern "C" fn(c_int, *const c_char, c_uint, u64) -> c_int;
    Mkfifo = "mkfifo": unsafe extern "C" fn(*const c_char, c_uint) -> c_int;
    Mkfifoat = "mkfifoat": unsafe extern "C" fn(c_int, *const c_char, c_uint) -> c_int;
    Chmod = "chmod": unsafe extern "C" fn(*const c_char, c_uint) -> c_int;
    Fchmod = "fchmod": unsafe extern "C" fn(c_int, c_uint) -> c_int;
    Fchmodat = "fchmodat": unsafe extern "C" fn(c_int, *const c_char, c_uint, c_int) -> c_int;
    Lchmod = "lchmod": unsafe extern "C" fn(*const c_char, c_uint) -> c_int;
    Utimensat = "utimensat": unsafe extern "C" fn(c_int, *const c_char, *const c_void, c_int) -> c_int;
    Futimens = "futimens": unsafe extern "C" fn(c_int, *const c_void) -> c_int;
    Utimes = "utimes": unsafe extern "C" fn(*const c_char, *const c_void) -> c_int;
    Lutimes = "lutimes": unsafe extern "C" fn(*const c_char, *const c_void) -> c_int;
    Futimes = "futimes": unsafe extern "C" fn(c_int, *const c_void) -> c_int;
    Futimesat = "futimesat": unsafe extern "C" fn(c_int, *const c_char, *const c_void) -> c_int;
    Utime = "utime": unsafe extern "C" fn(*const c_char, *const c_void) -> c_int;
    Fwrite = "fwrite": unsafe extern "C" fn(*const c_void, usize, usize, *mut c_void) -> usize;
    Fputs = "fputs": unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;
    Fflush = "fflush": unsafe extern "C" fn(*mut c_void) -> c_int;
    FwriteUnlocked = "fwrite_unlocked": unsafe extern "C" fn(*const c_void, usize, usize, *mut c_void) -> usize;
    FputsUnlocked = "fputs_unlocked": unsafe extern "C" fn(*const c_char, *mut c_void) -> c_int;
    FflushUnlocked = "fflush_unlocked": unsafe extern "C" fn(*mut c_void) -> c_int;
    Fopen = "fopen": unsafe extern "C" fn(*const c_char, *const c_char) -> *mut c_void;
    Fopen64 = "fopen64": unsafe extern "C" fn(*const c_char, *const c_char) -> *mut c_void;
    Freopen = "freopen": unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void) -> *mut c_void;
    Freopen64 = "freopen64": unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void) -> *mut c_void;
}

/// The originals' addresses (0: not resolved yet or missing).
pub static REAL: [AtomicUsize; REAL_COUNT] = [const { AtomicUsize::new(0) }; REAL_COUNT];

/// Resolves original `r` and remembers it; 0 if libc lacks it.
#[cold]
#[inline(never)]
pub fn resolve(r: R) -> usize {
    let i = r as usize;
    let p = match REAL_NAMES.get(i) {
        // SAFETY: the name is a NUL-terminated literal; RTLD_NEXT is a valid handle.
        Some(name) => (unsafe { dlsym(RTLD_NEXT, name.as_ptr().cast()) }) as usize,
        None => 0,
    };
    if let Some(slot) = REAL.get(i) {
        slot.store(p, Ordering::Relaxed);
    }
    p
}

/// Resolves every original that is not resolved yet (the constructor does it once so
/// that hooks never call dlsym later).
pub fn resolve_all() {
    for (slot, name) in REAL.iter().zip(REAL_NAMES) {
        if slot.load(Ordering::Relaxed) == 0 {
            // SAFETY: as in `resolve`.
            let p = unsafe { dlsym(RTLD_NEXT, name.as_ptr().cast()) } as usize;
            slot.store(p, Ordering::Relaxed);
        }
    }
}

/// The original `R::X` as a typed function pointer, or `None` if libc lacks it.
macro_rules! real {
    ($id:ident) => {{
        let mut p = $crate::real::REAL[$crate::real::R::$id as usize]
            .load(core::sync::atomic::Ordering::Relaxed);
        if p == 0 {
            p = $crate::real::resolve($crate::real::R::$id);
        }
        if p == 0 {
            None
        } else {
            // SAFETY: `p` is dlsym's address of the symbol named for `R::$id`, whose
            // C signature is `ty::$id` (the table above pairs them).
            Some(unsafe { core::mem::transmute::<usize, $crate::real::ty::$id>(p) })
        }
    }};
}
pub(crate) use real;

/// A hook whose original is missing: -1 with ENOSYS.
#[cold]
pub fn enosys<T: From<i8>>() -> T {
    set_errno(ENOSYS);
    T::from(-1)
}

/// As [`enosys`] for functions returning a pointer.
#[cold]
pub fn enosys_ptr() -> *mut c_void {
    set_errno(ENOSYS);
    core::ptr::null_mut()
}
