//! Steps for the families added by issue 13: rmdir, link/linkat/symlinkat, fallocate,
//! copies into a file (copy_file_range, sendfile, splice) and stdio (fdopen, fwrite,
//! fputs, fflush and their `_unlocked` forms; fclose is in main.rs), and their `sys:`
//! forms.

use libc::{c_int, c_long};

use crate::{arg, cstr, fail, num, Probe};

extern "C" {
    fn fwrite_unlocked(
        ptr: *const libc::c_void,
        size: usize,
        n: usize,
        fp: *mut libc::FILE,
    ) -> usize;
    fn fputs_unlocked(s: *const libc::c_char, fp: *mut libc::FILE) -> c_int;
    fn fflush_unlocked(fp: *mut libc::FILE) -> c_int;
}

/// Opens `path` read-only (through glibc; the open is traced like any other).
fn open_src(path: &str) -> c_int {
    let c = cstr(path);
    unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) }
}

fn file_len(fd: c_int) -> usize {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        fail("fstat of the source failed");
    }
    st.st_size as usize
}

/// Runs one of this module's steps; unknown names end the probe.
pub fn step(p: &mut Probe, name: &str, a: &[&str]) -> i64 {
    unsafe {
        match name {
            "rmdir" => i64::from(libc::rmdir(cstr(arg(a, 0, name)).as_ptr())),
            "link" => {
                let (x, y) = (cstr(arg(a, 0, name)), cstr(arg(a, 1, name)));
                i64::from(libc::link(x.as_ptr(), y.as_ptr()))
            }
            "linkat" => {
                let d1 = p.dirfd(arg(a, 0, name));
                let x = cstr(arg(a, 1, name));
                let d2 = p.dirfd(arg(a, 2, name));
                let y = cstr(arg(a, 3, name));
                i64::from(libc::linkat(d1, x.as_ptr(), d2, y.as_ptr(), 0))
            }
            "symlinkat" => {
                let t = cstr(arg(a, 0, name));
                let d = p.dirfd(arg(a, 1, name));
                let l = cstr(arg(a, 2, name));
                i64::from(libc::symlinkat(t.as_ptr(), d, l.as_ptr()))
            }
            "fallocate" => i64::from(libc::fallocate(p.fd, 0, 0, num(arg(a, 0, name)))),
            "posix_fallocate" => {
                // Returns the error number instead of setting errno: report it as errno.
                let e = libc::posix_fallocate(p.fd, 0, num(arg(a, 0, name)));
                if e == 0 {
                    0
                } else {
                    *libc::__errno_location() = e;
                    -1
                }
            }
            "copy_file_range" => {
                let src = open_src(arg(a, 0, name));
                let n = file_len(src);
                let r = libc::copy_file_range(
                    src,
                    std::ptr::null_mut(),
                    p.fd,
                    std::ptr::null_mut(),
                    n,
                    0,
                );
                r as i64
            }
            "sendfile" => {
                let src = open_src(arg(a, 0, name));
                let n = file_len(src);
                libc::sendfile(p.fd, src, std::ptr::null_mut(), n) as i64
            }
            "splice" => {
                // TEXT into a pipe (raw write: not a file write), then spliced into
                // the current fd.
                let t = arg(a, 0, name);
                let mut fds = [0 as c_int; 2];
                if libc::pipe(fds.as_mut_ptr()) != 0 {
                    fail("pipe");
                }
                crate::raw_write_all(fds[1], t.as_bytes());
                libc::splice(
                    fds[0],
                    std::ptr::null_mut(),
                    p.fd,
                    std::ptr::null_mut(),
                    t.len(),
                    0,
                ) as i64
            }
            "splicepipe" => {
                // A splice into a pipe: not an injection point.
                let t = arg(a, 0, name);
                let (mut i, mut o) = ([0 as c_int; 2], [0 as c_int; 2]);
                if libc::pipe(i.as_mut_ptr()) != 0 || libc::pipe(o.as_mut_ptr()) != 0 {
                    fail("pipe");
                }
                crate::raw_write_all(i[1], t.as_bytes());
                libc::splice(
                    i[0],
                    std::ptr::null_mut(),
                    o[1],
                    std::ptr::null_mut(),
                    t.len(),
                    0,
                ) as i64
            }
            "fdopen" => {
                p.fp = libc::fdopen(p.fd, c"w".as_ptr());
                if p.fp.is_null() {
                    -1
                } else {
                    0
                }
            }
            "fwrite" | "fwrite_unlocked" => {
                let t = arg(a, 0, name);
                let r = if name == "fwrite" {
                    libc::fwrite(t.as_ptr().cast(), 1, t.len(), p.fp)
                } else {
                    fwrite_unlocked(t.as_ptr().cast(), 1, t.len(), p.fp)
                };
                if r < t.len() && libc::ferror(p.fp) != 0 {
                    -1
                } else {
                    r as i64
                }
            }
            "fputs" => {
                let t = cstr(arg(a, 0, name));
                i64::from(libc::fputs(t.as_ptr(), p.fp))
            }
            "fputs_unlocked" => {
                let t = cstr(arg(a, 0, name));
                i64::from(fputs_unlocked(t.as_ptr(), p.fp))
            }
            "fflush" => i64::from(libc::fflush(p.fp)),
            "fflush_unlocked" => i64::from(fflush_unlocked(p.fp)),
            "ferror" => i64::from(libc::ferror(p.fp)),
            _ => fail(&format!("unknown step {name}")),
        }
    }
}

/// The `sys:` forms of this module's calls; `None` if `name` is not one.
pub fn sys_step(p: &mut Probe, name: &str, a: &[&str]) -> Option<c_long> {
    let s = |v: &std::ffi::CString| v.as_ptr() as c_long;
    unsafe {
        Some(match name {
            #[cfg(target_arch = "x86_64")]
            "rmdir" => libc::syscall(libc::SYS_rmdir, s(&cstr(arg(a, 0, name)))),
            "fallocate" => libc::syscall(libc::SYS_fallocate, p.fd, 0, 0, num(arg(a, 0, name))),
            "linkat" => {
                let d1 = p.dirfd(arg(a, 0, name));
                let x = cstr(arg(a, 1, name));
                let d2 = p.dirfd(arg(a, 2, name));
                let y = cstr(arg(a, 3, name));
                libc::syscall(libc::SYS_linkat, d1, s(&x), d2, s(&y), 0)
            }
            "symlinkat" => {
                let t = cstr(arg(a, 0, name));
                let d = p.dirfd(arg(a, 1, name));
                let l = cstr(arg(a, 2, name));
                libc::syscall(libc::SYS_symlinkat, s(&t), d, s(&l))
            }
            "unlinkat_rmdir" => {
                let d = p.dirfd(arg(a, 0, name));
                libc::syscall(
                    libc::SYS_unlinkat,
                    d,
                    s(&cstr(arg(a, 1, name))),
                    libc::AT_REMOVEDIR,
                )
            }
            "copy_file_range" => {
                let src = open_src(arg(a, 0, name));
                let n = file_len(src);
                libc::syscall(libc::SYS_copy_file_range, src, 0usize, p.fd, 0usize, n, 0)
            }
            _ => return None,
        })
    }
}
