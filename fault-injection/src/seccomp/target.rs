//! Reading a notified process: its memory (`process_vm_readv`), its fds and working
//! directory (`/proc/TID/…`), its thread group and umask.
//!
//! Everything read here can change between our read and the kernel's (another thread
//! of the process may rewrite a path buffer, rename a directory, dup2 over an fd): the
//! supervisor checks that the call is still pending after reading (`notif::valid`),
//! which rules out a recycled thread id, not a racing thread. A test tool, not a
//! sandbox: docs/fault-injection.md ("TOCTOU").

use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;

/// Longest path read from a process (PATH_MAX).
const PATH_MAX: usize = 4096;

/// Reads `len` bytes at `addr` in thread `tid`'s address space (fewer at an unmapped
/// page).
pub fn read_mem(tid: u32, addr: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    let mut done = 0usize;
    while done < len {
        let local = libc::iovec {
            iov_base: buf[done..].as_mut_ptr().cast(),
            iov_len: len - done,
        };
        let remote = libc::iovec {
            iov_base: (addr + done as u64) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: `local` is our live buffer of `len - done` bytes; the remote range is
        // only read by the kernel, which checks it.
        let n = unsafe { libc::process_vm_readv(tid as libc::pid_t, &local, 1, &remote, 1, 0) };
        if n < 0 {
            if done > 0 {
                break;
            }
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            break;
        }
        done += n as usize;
    }
    buf.truncate(done);
    Ok(buf)
}

/// Reads a NUL-terminated string at `addr` (at most PATH_MAX bytes), a page at a time
/// so that a string near the end of a mapping is still read.
pub fn read_cstr(tid: u32, addr: u64) -> io::Result<Vec<u8>> {
    if addr == 0 {
        return Err(io::Error::from_raw_os_error(libc::EFAULT));
    }
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < PATH_MAX {
        let to_page = 4096 - (at % 4096) as usize;
        let chunk = read_mem(tid, at, to_page)?;
        if chunk.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::EFAULT));
        }
        if let Some(i) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..i]);
            return Ok(out);
        }
        out.extend_from_slice(&chunk);
        at += chunk.len() as u64;
    }
    Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG))
}

/// Reads an array of `struct iovec` and the bytes they point to.
pub fn read_iov(tid: u32, iov: u64, cnt: u64) -> io::Result<Vec<u8>> {
    let cnt = cnt.min(1024) as usize;
    let raw = read_mem(tid, iov, cnt * 16)?;
    let entries: Vec<(u64, usize)> = raw
        .chunks_exact(16)
        .map(|c| {
            let base = u64::from_ne_bytes(c[..8].try_into().unwrap_or([0; 8]));
            let len = u64::from_ne_bytes(c[8..].try_into().unwrap_or([0; 8]));
            (base, len as usize)
        })
        .collect();
    let mut bytes = Vec::new();
    for &(base, len) in &entries {
        if len > 0 {
            bytes.extend(read_mem(tid, base, len)?);
        }
    }
    Ok(bytes)
}

/// The path of fd `fd` in thread `tid`, as the kernel reports it (canonical, or
/// `pipe:[…]`, `socket:[…]`, `… (deleted)`). Empty when it cannot be read.
pub fn fd_path(tid: u32, fd: i64) -> Vec<u8> {
    fs::read_link(format!("/proc/{tid}/fd/{fd}"))
        .map(|p| p.as_os_str().as_bytes().to_vec())
        .unwrap_or_default()
}

/// Whether fd `fd` of `tid` is a directory, and whether it is a regular file.
pub fn fd_kind(tid: u32, fd: i64) -> (bool, bool) {
    match fs::metadata(format!("/proc/{tid}/fd/{fd}")) {
        Ok(m) => (m.is_dir(), m.is_file()),
        Err(_) => (false, false),
    }
}

/// The absolute, lexically normalised form of `path` as thread `tid` names it
/// relative to `dirfd` (`AT_FDCWD`: its working directory). Symlinks are not resolved,
/// as under the preload.
pub fn abs_path(tid: u32, dirfd: i64, path: &[u8]) -> Vec<u8> {
    let mut full = if path.first() == Some(&b'/') {
        path.to_vec()
    } else {
        let base = if dirfd as i32 == libc::AT_FDCWD {
            fs::read_link(format!("/proc/{tid}/cwd"))
                .map(|p| p.as_os_str().as_bytes().to_vec())
                .unwrap_or_default()
        } else {
            fd_path(tid, dirfd)
        };
        let mut b = base;
        b.push(b'/');
        b.extend_from_slice(path);
        b
    };
    let n = crate::planlang::path::normalize(&mut full);
    full.truncate(n);
    if full.is_empty() {
        full.push(b'/');
    }
    full
}

/// `/proc/TID/status` field `key` (`Tgid`, `Umask`), as text.
fn status_field(tid: u32, key: &str) -> Option<String> {
    let text = fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// The process (thread group) thread `tid` belongs to.
pub fn tgid(tid: u32) -> Option<u32> {
    status_field(tid, "Tgid")?.parse().ok()
}

/// The process's umask (for files the supervisor creates on its behalf).
pub fn umask(tid: u32) -> u32 {
    status_field(tid, "Umask")
        .and_then(|v| u32::from_str_radix(&v, 8).ok())
        .unwrap_or(0o022)
}

/// Writes `bytes` at `addr` in thread `tid`'s address space (an offset the call
/// updated, written back as the kernel would have).
pub fn write_mem(tid: u32, addr: u64, bytes: &[u8]) -> io::Result<()> {
    let local = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    let remote = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // SAFETY: `local` is our live buffer, only read; the kernel checks the remote range.
    let n = unsafe { libc::process_vm_writev(tid as libc::pid_t, &local, 1, &remote, 1, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
