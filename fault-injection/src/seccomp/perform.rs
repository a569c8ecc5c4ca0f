//! Making a call on the process's behalf, for the actions that need its result or a
//! part of it (`short:N`, `torn:N`, `crash-after`, `after:ERRNO`) and for `record`
//! (which needs each write's offset and bytes): the process's fds come over with
//! `pidfd_getfd` (the same open file description: offsets, `O_APPEND` and `flock`
//! locks are shared), its buffers with `process_vm_readv`, and path calls are made
//! relative to its own directory fd (or its working directory, `/proc/TID/cwd`) with
//! the path exactly as it passed it.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use rustix::process::{pidfd_getfd, pidfd_open, Pid, PidfdFlags, PidfdGetfdFlags};

use crate::planlang::attrs::{self, Times};
use crate::planlang::syscalls::Args;
use crate::Op;

use super::decode::{Call, Detail};
use super::target::{read_iov, read_mem};

/// What a call made on the process's behalf did.
#[derive(Default)]
pub struct Done {
    /// The return value, or -1 with `errno`.
    pub result: i64,
    pub errno: i32,
    /// A write's file offset and the bytes it wrote (regular files).
    pub off: Option<i64>,
    pub bytes: Vec<u8>,
    /// The fd an `open` made, in our process.
    pub opened: Option<OwnedFd>,
}

fn ret(r: i64) -> Done {
    if r < 0 {
        Done {
            result: -1,
            errno: io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
            ..Done::default()
        }
    } else {
        Done {
            result: r,
            ..Done::default()
        }
    }
}

fn errno_of(e: io::Error) -> Done {
    Done {
        result: -1,
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        ..Done::default()
    }
}

/// The process's fd `fd`, duplicated into ours.
fn their_fd(tgid: u32, fd: i64) -> io::Result<OwnedFd> {
    let pid =
        Pid::from_raw(tgid as i32).ok_or_else(|| io::Error::from_raw_os_error(libc::ESRCH))?;
    let pidfd = pidfd_open(pid, PidfdFlags::empty())?;
    Ok(pidfd_getfd(&pidfd, fd as i32, PidfdGetfdFlags::empty())?)
}

/// The directory a path argument is relative to: the process's `dirfd`, or its
/// working directory for `AT_FDCWD`.
fn their_dir(tid: u32, tgid: u32, dirfd: i64) -> io::Result<OwnedFd> {
    if dirfd as i32 != libc::AT_FDCWD {
        return their_fd(tgid, dirfd);
    }
    let p = CString::new(format!("/proc/{tid}/cwd")).map_err(io::Error::other)?;
    // SAFETY: `p` is NUL-terminated; the result is a new fd we own or -1.
    let fd = unsafe {
        libc::open(
            p.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh fd nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn cstr(b: &Option<Vec<u8>>) -> io::Result<CString> {
    CString::new(b.clone().unwrap_or_default())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Whether this backend can make calls of `op` on a process's behalf with their
/// effect landing in that process: not `close` (our copy of an fd is not theirs) nor
/// `flock` (a POSIX `fcntl` lock would belong to the supervisor).
pub fn can_perform(op: Op) -> bool {
    !matches!(op, Op::Close | Op::Flock)
}

/// The lock a `crash-after` takes before the kill, when it can be taken on the
/// process's behalf: `flock`, or `fcntl`'s `F_OFD_SETLK[W]` (both belong to the open
/// file description, which the copy of the fd shares). Returns the copy, holding the
/// lock until the caller drops it after the kill, and what the call returned. `None`
/// for a POSIX `fcntl` lock (it would be the supervisor's) or an fd that cannot be
/// copied. A blocking lock blocks the caller as it would have blocked the process.
pub fn ofd_lock(c: &Call, tgid: u32) -> Option<(OwnedFd, Done)> {
    let a = c.args;
    let fd = match c.sys.name {
        "flock" => their_fd(tgid, a[0] as i64).ok()?,
        "fcntl" | "fcntl64" if matches!(a[1] as i32, libc::F_OFD_SETLK | libc::F_OFD_SETLKW) => {
            their_fd(tgid, a[0] as i64).ok()?
        }
        _ => return None,
    };
    let f = fd.as_raw_fd();
    let r = if c.sys.name == "flock" {
        // SAFETY: flock takes our fd and an integer.
        i64::from(unsafe { libc::flock(f, a[1] as i32) })
    } else {
        let raw = read_mem(c.tid, a[2], std::mem::size_of::<libc::flock>()).ok()?;
        // SAFETY: `raw` holds exactly one `struct flock` as the process passed it;
        // read unaligned into a value of that plain-data type.
        let mut lock: libc::flock = unsafe { std::ptr::read_unaligned(raw.as_ptr().cast()) };
        // SAFETY: fcntl takes our fd, an OFD lock command and a pointer to our struct.
        i64::from(unsafe { libc::fcntl(f, a[1] as i32, &mut lock as *mut libc::flock) })
    };
    Some((fd, ret(r)))
}

/// Makes call `c` of thread `tid` (process `tgid`) on its behalf, writing at most
/// `limit` bytes. `None` for calls that cannot be made so ([`can_perform`]).
pub fn perform(c: &Call, tgid: u32, limit: u64) -> Option<Done> {
    if !can_perform(c.op) {
        return None;
    }
    let a = c.args;
    let tid = c.tid;
    let r = (|| -> io::Result<Done> {
        Ok(match c.sys.args {
            Args::Buf { off } => {
                let bytes = read_mem(tid, a[1], a[2].min(limit) as usize)?;
                write_at(
                    tgid,
                    a[0] as i64,
                    bytes,
                    off.then_some(a[3] as i64),
                    c.regular,
                )?
            }
            Args::Iov { off } => {
                let mut bytes = read_iov(tid, a[1], a[2])?;
                bytes.truncate(limit.min(bytes.len() as u64) as usize);
                // pwritev2's offset -1 is the fd's position.
                let at = (off && a[3] as i64 != -1).then_some(a[3] as i64);
                write_at(tgid, a[0] as i64, bytes, at, c.regular)?
            }
            Args::Range | Args::Sendfile => range(c, tgid, limit)?,
            Args::Open { .. } | Args::Openat2 => open(c, tgid)?,
            Args::Fd => {
                let fd = their_fd(tgid, a[0] as i64)?;
                let f = fd.as_raw_fd();
                // SAFETY: each call takes our fd and integers only.
                ret(unsafe {
                    match c.sys.name {
                        "fsync" => i64::from(libc::fsync(f)),
                        "fdatasync" => i64::from(libc::fdatasync(f)),
                        "syncfs" => i64::from(libc::syncfs(f)),
                        "sync_file_range" => i64::from(libc::sync_file_range(
                            f,
                            a[1] as i64,
                            a[2] as i64,
                            a[3] as u32,
                        )),
                        "ftruncate" => i64::from(libc::ftruncate(f, a[1] as i64)),
                        "fchmod" => i64::from(libc::fchmod(f, a[1] as u32 & 0o7777)),
                        "fallocate" => {
                            i64::from(libc::fallocate(f, a[1] as i32, a[2] as i64, a[3] as i64))
                        }
                        _ => return Ok(Done::default()),
                    }
                })
            }
            Args::Path { .. } | Args::Unlinkat => {
                let at = matches!(c.sys.args, Args::Path { at: true } | Args::Unlinkat);
                let dirfd = if at {
                    a[0] as i64
                } else {
                    libc::AT_FDCWD as i64
                };
                let dir = their_dir(tid, tgid, dirfd)?;
                let path = cstr(&c.raw)?;
                let d = dir.as_raw_fd();
                // SAFETY: `path` is NUL-terminated; `d` is our directory fd.
                ret(i64::from(unsafe {
                    match c.op {
                        Op::Unlink => libc::unlinkat(d, path.as_ptr(), 0),
                        Op::Rmdir => libc::unlinkat(d, path.as_ptr(), libc::AT_REMOVEDIR),
                        Op::Mkdir if c.sys.name.starts_with("mknod") => {
                            let (mode, dev) = if at { (a[2], a[3]) } else { (a[1], a[2]) };
                            mknod_as(d, &path, mode as u32, dev, super::target::umask(tid))
                        }
                        Op::Mkdir => {
                            let mode = if at { a[2] } else { a[1] } as u32;
                            mkdir_as(d, &path, mode, super::target::umask(tid))
                        }
                        Op::Chmod => {
                            let mode = if at { a[2] } else { a[1] } as u32;
                            let flags = if c.sys.name == "fchmodat2" { a[3] } else { 0 };
                            libc::fchmodat(d, path.as_ptr(), mode & 0o7777, flags as i32)
                        }
                        // truncate(2) has no `at` form: the name below our fd of the
                        // process's directory.
                        Op::Ftruncate => match below(d, &path) {
                            Some(p) => libc::truncate(p.as_ptr(), a[1] as i64),
                            None => {
                                return Ok(errno_of(io::Error::from_raw_os_error(libc::EINVAL)))
                            }
                        },
                        _ => return Ok(Done::default()),
                    }
                }))
            }
            Args::Path2 { at } => {
                let (d1, d2) = if at {
                    (a[0] as i64, a[2] as i64)
                } else {
                    (libc::AT_FDCWD as i64, libc::AT_FDCWD as i64)
                };
                let (dir1, dir2) = (their_dir(tid, tgid, d1)?, their_dir(tid, tgid, d2)?);
                let (p1, p2) = (cstr(&c.raw)?, cstr(&c.raw2)?);
                let flags = if at { a[4] } else { 0 };
                let (f1, f2) = (dir1.as_raw_fd(), dir2.as_raw_fd());
                // SAFETY: NUL-terminated paths, our directory fds.
                ret(unsafe {
                    match c.op {
                        Op::Rename => libc::syscall(
                            libc::SYS_renameat2,
                            f1,
                            p1.as_ptr(),
                            f2,
                            p2.as_ptr(),
                            if c.sys.name == "renameat2" { flags } else { 0 },
                        ),
                        _ => {
                            i64::from(libc::linkat(f1, p1.as_ptr(), f2, p2.as_ptr(), flags as i32))
                        }
                    }
                })
            }
            Args::Symlink { at } => {
                let dir = their_dir(
                    tid,
                    tgid,
                    if at {
                        a[1] as i64
                    } else {
                        libc::AT_FDCWD as i64
                    },
                )?;
                let (t, p) = (cstr(&c.raw)?, cstr(&c.raw2)?);
                // SAFETY: NUL-terminated strings, our directory fd.
                ret(i64::from(unsafe {
                    libc::symlinkat(t.as_ptr(), dir.as_raw_fd(), p.as_ptr())
                }))
            }
            Args::Times { at, times } => utimens(c, tgid, at, times)?,
            Args::FcntlLock | Args::CloseRange => return Ok(Done::default()),
        })
    })();
    Some(r.unwrap_or_else(errno_of))
}

/// `path` as seen from directory fd `dir`: itself when absolute, else below
/// `/proc/self/fd/DIR` (for calls with no `at` form).
fn below(dir: i32, path: &CString) -> Option<CString> {
    let b = path.as_bytes();
    if b.first() == Some(&b'/') {
        return Some(path.clone());
    }
    let mut p = format!("/proc/self/fd/{dir}/").into_bytes();
    p.extend_from_slice(b);
    CString::new(p).ok()
}

/// mknodat with the process's umask rather than ours.
///
/// # Safety
/// `path` is NUL-terminated and `dir` a directory fd.
unsafe fn mknod_as(dir: i32, path: &CString, mode: u32, dev: u64, umask: u32) -> i32 {
    // SAFETY: the caller's guarantee.
    let r = unsafe { libc::mknodat(dir, path.as_ptr(), mode, dev) };
    if r == 0 {
        // SAFETY: as above.
        unsafe { libc::fchmodat(dir, path.as_ptr(), (mode & !umask) & 0o7777, 0) };
    }
    r
}

/// A timestamp call made on the process's behalf: its times read from its memory
/// (as `timespec`s whatever the layout), the path relative to its directory fd, or
/// its fd itself for a null path.
fn utimens(c: &Call, tgid: u32, at: bool, times: Times) -> io::Result<Done> {
    let a = c.args;
    let (dirfd, p) = if at {
        (a[0] as i64, 1)
    } else {
        (libc::AT_FDCWD as i64, 0)
    };
    let ptr = a[p + 1];
    let ts = if ptr == 0 {
        None
    } else {
        let raw = read_mem(c.tid, ptr, attrs::times_size(times))?;
        let w = |i: usize| -> io::Result<i64> {
            raw.get(i * 8..i * 8 + 8)
                .and_then(|b| b.try_into().ok())
                .map(i64::from_ne_bytes)
                .ok_or_else(|| io::Error::from_raw_os_error(libc::EFAULT))
        };
        let t = |sec: i64, nsec: i64| libc::timespec {
            tv_sec: sec,
            tv_nsec: nsec,
        };
        Some(match times {
            Times::Timespec => [t(w(0)?, w(1)?), t(w(2)?, w(3)?)],
            Times::Timeval => [t(w(0)?, w(1)? * 1000), t(w(2)?, w(3)? * 1000)],
            Times::Utimbuf => [t(w(0)?, 0), t(w(1)?, 0)],
        })
    };
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
    let flags = if c.sys.name == "utimensat" { a[3] } else { 0 } as i32;
    let fd_only = at && a[1] == 0;
    let dir = if fd_only {
        their_fd(tgid, dirfd)?
    } else {
        their_dir(c.tid, tgid, dirfd)?
    };
    let path = if fd_only { None } else { Some(cstr(&c.raw)?) };
    let pp = path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr());
    // SAFETY: our fd, a NUL-terminated path or null (the fd itself, as futimens
    // does), and a pointer to our two timespecs or null.
    let r = unsafe { libc::syscall(libc::SYS_utimensat, dir.as_raw_fd(), pp, tsp, flags) };
    Ok(ret(r))
}

/// mkdirat with the process's umask rather than ours.
///
/// # Safety
/// `path` is NUL-terminated and `dir` a directory fd.
unsafe fn mkdir_as(dir: i32, path: &CString, mode: u32, umask: u32) -> i32 {
    // SAFETY: the caller's guarantee.
    let r = unsafe { libc::mkdirat(dir, path.as_ptr(), mode & 0o7777) };
    if r == 0 {
        // Our umask applied; theirs is what counts.
        // SAFETY: as above; fchmodat takes no pointer but the path.
        unsafe { libc::fchmodat(dir, path.as_ptr(), (mode & !umask) & 0o7777, 0) };
    }
    r
}

fn write_at(
    tgid: u32,
    fd: i64,
    bytes: Vec<u8>,
    at: Option<i64>,
    regular: bool,
) -> io::Result<Done> {
    let f = their_fd(tgid, fd)?;
    let raw = f.as_raw_fd();
    // SAFETY: `bytes` is our live buffer; `raw` our fd.
    let n = unsafe {
        match at {
            Some(off) => libc::pwrite(raw, bytes.as_ptr().cast(), bytes.len(), off),
            None => libc::write(raw, bytes.as_ptr().cast(), bytes.len()),
        }
    } as i64;
    let mut d = ret(n);
    if n > 0 && regular {
        d.off = match at {
            Some(off) => Some(off),
            // The shared position after the write, less what it wrote (as under the
            // preload; an O_APPEND write lands at the end).
            // SAFETY: lseek takes our fd and integers.
            None => Some(unsafe { libc::lseek(raw, 0, libc::SEEK_CUR) } - n),
        };
        d.bytes = bytes;
        d.bytes.truncate(n as usize);
    }
    Ok(d)
}

/// copy_file_range, splice and sendfile, with the caller's offset pointers read
/// before and written back after.
fn range(c: &Call, tgid: u32, limit: u64) -> io::Result<Done> {
    let a = c.args;
    let read_off = |p: u64| -> io::Result<Option<i64>> {
        if p == 0 {
            return Ok(None);
        }
        let b = read_mem(c.tid, p, 8)?;
        Ok(Some(i64::from_ne_bytes(b.as_slice().try_into().map_err(
            |_| io::Error::from_raw_os_error(libc::EFAULT),
        )?)))
    };
    let (in_fd, out_fd, p_in, p_out, len) = if c.sys.args == Args::Sendfile {
        (a[1], a[0], a[2], 0, a[3])
    } else {
        (a[0], a[2], a[1], a[3], a[4])
    };
    let (fi, fo) = (
        their_fd(tgid, in_fd as i64)?,
        their_fd(tgid, out_fd as i64)?,
    );
    let (mut oi, mut oo) = (read_off(p_in)?, read_off(p_out)?);
    let ptr = |o: &mut Option<i64>| o.as_mut().map_or(std::ptr::null_mut(), |v| v as *mut i64);
    let len = len.min(limit) as usize;
    // SAFETY: our fds, offset pointers to our locals or null.
    let n = unsafe {
        match c.sys.name {
            "copy_file_range" => libc::copy_file_range(
                fi.as_raw_fd(),
                ptr(&mut oi),
                fo.as_raw_fd(),
                ptr(&mut oo),
                len,
                a[5] as u32,
            ) as i64,
            "splice" => libc::splice(
                fi.as_raw_fd(),
                ptr(&mut oi),
                fo.as_raw_fd(),
                ptr(&mut oo),
                len,
                a[5] as u32,
            ) as i64,
            _ => libc::sendfile(fo.as_raw_fd(), fi.as_raw_fd(), ptr(&mut oi), len) as i64,
        }
    };
    let d = ret(n);
    for (p, v) in [(p_in, oi), (p_out, oo)] {
        if let (true, Some(v)) = (p != 0, v) {
            super::target::write_mem(c.tid, p, &v.to_ne_bytes())?;
        }
    }
    Ok(d)
}

/// Opens the file as the process asked, with its umask on a new file.
fn open(c: &Call, tgid: u32) -> io::Result<Done> {
    let Detail::Open { flags, mode } = c.detail else {
        return Ok(Done::default());
    };
    let dirfd = match c.sys.args {
        Args::Open { at: true, .. } | Args::Openat2 => c.args[0] as i64,
        _ => libc::AT_FDCWD as i64,
    };
    let dir = their_dir(c.tid, tgid, dirfd)?;
    let path = cstr(&c.raw)?;
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: NUL-terminated path, our dir fd; fstatat writes a whole `stat` into `st`.
    let existed = unsafe { libc::fstatat(dir.as_raw_fd(), path.as_ptr(), st.as_mut_ptr(), 0) } == 0;
    let mode = mode.unwrap_or(0);
    // SAFETY: as above; the result is a new fd or -1.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            path.as_ptr(),
            flags | libc::O_CLOEXEC,
            mode,
        )
    };
    if fd < 0 {
        return Ok(ret(-1));
    }
    // SAFETY: a fresh fd we own.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    if !existed && flags & libc::O_CREAT != 0 {
        let m = mode & !super::target::umask(c.tid) & 0o7777;
        // SAFETY: our fd.
        unsafe { libc::fchmod(fd, m) };
    }
    Ok(Done {
        result: i64::from(fd),
        opened: Some(owned),
        ..Done::default()
    })
}
