//! `vxfault record`: with `VXFAULT_DATA` set (next to `VXFAULT_TRACE`), write-family
//! lines also carry the file offset (`off`), the byte count (`len`) and where the bytes
//! are in the data file (`data`), and ftruncate/fallocate lines their sizes, so the
//! crash explorer can replay the run.
//!
//! The data file is shared by the whole process tree: a writer reserves its range with
//! one `fetch_add` on the shared counter file and `pwrite`s into it, so nothing here
//! allocates, locks or depends on the order in which processes append.

use core::ffi::{c_int, c_uint};
use core::sync::atomic::Ordering;

use plan::line::Line;
use plan::Op;
use vxfault_plan as plan;

use crate::paths::file_type;
use crate::real::real;
use crate::site::{Bytes, Call, Detail};
use crate::state::{shm, DATA_FD};
use crate::sys::{
    errno, getenv, lseek64, IoVec, EINTR, F_DUPFD_CLOEXEC, O_CLOEXEC, O_WRONLY, SEEK_CUR, S_IFREG,
};

/// Opens `VXFAULT_DATA` (created by the runner) and moves its fd out of the way
/// (>= 700). Whether writes are recorded.
pub fn open_data() -> bool {
    // SAFETY: the name is NUL-terminated; the result is null or a NUL-terminated
    // string in the environment, read only here at load time.
    let path = unsafe { getenv(c"VXFAULT_DATA".as_ptr()) };
    if path.is_null() {
        return false;
    }
    let Some(open) = real!(Open) else {
        return false;
    };
    // SAFETY: `path` is NUL-terminated (getenv).
    let fd = unsafe { open(path, O_WRONLY | O_CLOEXEC, 0 as c_uint) };
    if fd < 0 {
        shm(plan::SHM_TRACE_ERRORS).fetch_add(1, Ordering::Relaxed);
        return false;
    }
    let mut fd_final = fd;
    if let (Some(fcntl), Some(close)) = (real!(Fcntl), real!(Close)) {
        // SAFETY: F_DUPFD_CLOEXEC takes an int; `fd` is ours.
        let high = unsafe { fcntl(fd, F_DUPFD_CLOEXEC, 700 as c_int) };
        if high >= 0 {
            // SAFETY: closing our own fd.
            unsafe { close(fd) };
            fd_final = high;
        }
    }
    DATA_FD.store(fd_final, Ordering::Release);
    true
}

/// Writes all of `buf` at `at` in the data file; false if it could not.
fn put(buf: &[u8], at: u64) -> bool {
    let Some(pwrite) = real!(Pwrite64) else {
        return false;
    };
    let fd = DATA_FD.load(Ordering::Acquire);
    let mut done = 0usize;
    while done < buf.len() {
        // SAFETY: a live slice of `buf`; `fd` is the data file's (or invalid, which
        // only fails the call).
        let n = unsafe {
            pwrite(
                fd,
                buf[done..].as_ptr().cast(),
                buf.len() - done,
                (at + done as u64) as i64,
            )
        };
        if n < 0 && errno() == EINTR {
            continue;
        }
        if n <= 0 {
            return false;
        }
        done += n as usize;
    }
    true
}

/// Copies the first `n` bytes the call wrote into the data file; where they are.
fn copy_bytes(bytes: Bytes, n: u64) -> Option<u64> {
    let at = shm(plan::SHM_DATA_BYTES).fetch_add(n, Ordering::Relaxed);
    let ok = match bytes {
        Bytes::None => return None,
        Bytes::Buf(p) => {
            // SAFETY: the call read `n` bytes from `p` (it returned n).
            let s = unsafe { core::slice::from_raw_parts(p.cast::<u8>(), n as usize) };
            put(s, at)
        }
        Bytes::Iov(iov, cnt) => {
            if iov.is_null() || cnt <= 0 {
                return None;
            }
            // SAFETY: the call read `cnt` iovecs (it succeeded).
            let v: &[IoVec] = unsafe { core::slice::from_raw_parts(iov, cnt as usize) };
            let mut left = n;
            let mut off = at;
            let mut ok = true;
            for e in v {
                if left == 0 {
                    break;
                }
                let take = (e.len as u64).min(left);
                // SAFETY: the call read the first `take` bytes of this entry.
                let s = unsafe { core::slice::from_raw_parts(e.base.cast::<u8>(), take as usize) };
                ok &= put(s, off);
                off += take;
                left -= take;
            }
            ok
        }
    };
    if ok {
        Some(at)
    } else {
        shm(plan::SHM_TRACE_ERRORS).fetch_add(1, Ordering::Relaxed);
        None
    }
}

/// The record's fields of a call that returned `result`.
pub fn fields(c: &Call, result: Option<i64>, l: &mut Line) {
    if let Detail::Range { mode, off, len } = c.detail {
        if let Some(m) = mode {
            l.i64("falloc_mode", i64::from(m));
            l.i64("off", off);
        }
        l.i64("len", len);
        return;
    }
    // A stdio call's own line (fwrite, fputs, fflush) carries no bytes: glibc's
    // writes of its buffer are lines of their own (`_IO_file_write`).
    if c.op != Op::Write || !c.stream.is_null() {
        return;
    }
    let Some(n) = result.filter(|&r| r > 0) else {
        return;
    };
    l.i64("len", n);
    if file_type(c.fd) != Some(S_IFREG) {
        // A pipe, socket or terminal: the line marks output (an acknowledgement).
        // Standard output/error redirected to a file keep their bytes: a shell's
        // `> file` writes that file through fd 1, and the explorer decides from the
        // path whether the line is a write under the root or output.
        return;
    }
    let off = match c.at {
        Some(o) => o,
        None => {
            // SAFETY: lseek has no memory preconditions; on a non-seekable fd it fails.
            let pos = unsafe { lseek64(c.fd, 0, SEEK_CUR) };
            if pos < 0 {
                return;
            }
            pos - n
        }
    };
    l.i64("off", off);
    if let Some(at) = copy_bytes(c.bytes, n as u64) {
        l.u64("data", at);
    }
}
