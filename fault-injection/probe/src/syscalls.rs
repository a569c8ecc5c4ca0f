//! The `sys:` steps (the same calls through `syscall(SYS_…)`) and the `raw:` steps (a
//! raw system call instruction, invisible to any LD_PRELOAD library).

use std::ffi::CString;

use libc::{c_int, c_long};

use crate::{
    arg, cstr, fail, flags, flock_op, iovecs, lock_cmd, lock_struct, num, raw_syscall, Probe,
};

pub fn sys_step(p: &mut Probe, a: &[&str]) -> i64 {
    let name = arg(a, 0, "sys");
    let a = &a[1..];
    let s = |v: &CString| v.as_ptr() as c_long;
    unsafe {
        let r: c_long = match name {
            "write" => {
                let t = arg(a, 0, name);
                libc::syscall(libc::SYS_write, p.fd, t.as_ptr(), t.len())
            }
            "pwrite64" => {
                let t = arg(a, 0, name);
                libc::syscall(
                    libc::SYS_pwrite64,
                    p.fd,
                    t.as_ptr(),
                    t.len(),
                    num(arg(a, 1, name)),
                )
            }
            "writev" => {
                let parts: Vec<&[u8]> = arg(a, 0, name).split(',').map(str::as_bytes).collect();
                let iov = iovecs(&parts);
                libc::syscall(libc::SYS_writev, p.fd, iov.as_ptr(), iov.len() as c_int)
            }
            #[cfg(target_arch = "x86_64")]
            "open" => {
                let path = cstr(arg(a, 0, name));
                let r = libc::syscall(libc::SYS_open, s(&path), flags(arg(a, 1, name)), 0o644);
                if r >= 0 {
                    p.fd = r as c_int;
                }
                r
            }
            #[cfg(target_arch = "x86_64")]
            "creat" => {
                let path = cstr(arg(a, 0, name));
                let r = libc::syscall(libc::SYS_creat, s(&path), 0o644);
                if r >= 0 {
                    p.fd = r as c_int;
                }
                r
            }
            "openat" => {
                let d = p.dirfd(arg(a, 0, name));
                let path = cstr(arg(a, 1, name));
                let r = libc::syscall(libc::SYS_openat, d, s(&path), flags(arg(a, 2, name)), 0o644);
                if r >= 0 {
                    p.fd = r as c_int;
                }
                r
            }
            "close" => libc::syscall(libc::SYS_close, p.target(a)),
            "fsync" => libc::syscall(libc::SYS_fsync, p.target(a)),
            "fdatasync" => libc::syscall(libc::SYS_fdatasync, p.target(a)),
            "sync_file_range" => libc::syscall(
                libc::SYS_sync_file_range,
                p.target(a),
                0,
                0,
                libc::SYNC_FILE_RANGE_WRITE,
            ),
            "syncfs" => libc::syscall(libc::SYS_syncfs, p.target(a)),
            #[cfg(target_arch = "x86_64")]
            "rename" => {
                let (x, y) = (cstr(arg(a, 0, name)), cstr(arg(a, 1, name)));
                libc::syscall(libc::SYS_rename, s(&x), s(&y))
            }
            "renameat" | "renameat2" => {
                let d1 = p.dirfd(arg(a, 0, name));
                let x = cstr(arg(a, 1, name));
                let d2 = p.dirfd(arg(a, 2, name));
                let y = cstr(arg(a, 3, name));
                if name == "renameat" {
                    libc::syscall(libc::SYS_renameat, d1, s(&x), d2, s(&y))
                } else {
                    libc::syscall(libc::SYS_renameat2, d1, s(&x), d2, s(&y), 0)
                }
            }
            #[cfg(target_arch = "x86_64")]
            "unlink" => libc::syscall(libc::SYS_unlink, s(&cstr(arg(a, 0, name)))),
            "unlinkat" => {
                let d = p.dirfd(arg(a, 0, name));
                libc::syscall(libc::SYS_unlinkat, d, s(&cstr(arg(a, 1, name))), 0)
            }
            #[cfg(target_arch = "x86_64")]
            "mkdir" => libc::syscall(libc::SYS_mkdir, s(&cstr(arg(a, 0, name))), 0o755),
            "mkdirat" => {
                let d = p.dirfd(arg(a, 0, name));
                libc::syscall(libc::SYS_mkdirat, d, s(&cstr(arg(a, 1, name))), 0o755)
            }
            "flock" => libc::syscall(libc::SYS_flock, p.fd, flock_op(arg(a, 0, name))),
            "fcntl" => {
                let cmd = lock_cmd(arg(a, 0, name));
                let mut fl = lock_struct(arg(a, 1, name));
                libc::syscall(libc::SYS_fcntl, p.fd, cmd, &mut fl as *mut libc::flock)
            }
            "ftruncate" => libc::syscall(libc::SYS_ftruncate, p.fd, num(arg(a, 0, name))),
            _ => match crate::families::sys_step(p, name, a) {
                Some(r) => r,
                None => fail(&format!("unknown sys step {name}")),
            },
        };
        r as i64
    }
}

pub fn raw_step(p: &mut Probe, a: &[&str]) -> i64 {
    let name = arg(a, 0, "raw");
    let a = &a[1..];
    let r = unsafe {
        match name {
            "write" => {
                let t = arg(a, 0, name);
                raw_syscall(
                    libc::SYS_write,
                    c_long::from(p.fd),
                    t.as_ptr() as c_long,
                    t.len() as c_long,
                )
            }
            "fsync" => raw_syscall(libc::SYS_fsync, c_long::from(p.target(a)), 0, 0),
            "close" => {
                let fd = a.first().map_or(p.fd, |n| num(n) as c_int);
                raw_syscall(libc::SYS_close, c_long::from(fd), 0, 0)
            }
            "rename" => {
                let (x, y) = (cstr(arg(a, 0, name)), cstr(arg(a, 1, name)));
                // renameat(AT_FDCWD, x, AT_FDCWD, y) needs 4 arguments; use renameat2's
                // sibling through rename where it exists.
                #[cfg(target_arch = "x86_64")]
                {
                    raw_syscall(
                        libc::SYS_rename,
                        x.as_ptr() as c_long,
                        y.as_ptr() as c_long,
                        0,
                    )
                }
                #[cfg(not(target_arch = "x86_64"))]
                {
                    let _ = (x, y);
                    -c_long::from(libc::ENOSYS)
                }
            }
            _ => fail(&format!("unknown raw step {name}")),
        }
    };
    if r < 0 {
        unsafe { *libc::__errno_location() = (-r) as c_int };
        -1
    } else {
        r as i64
    }
}
