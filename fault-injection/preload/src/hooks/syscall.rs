//! `syscall(2)`: the numbers of every intercepted call are classified and handled like
//! the named call (`"call":"syscall:fsync"`); other numbers are forwarded.

use core::ffi::{c_char, c_int, c_long, c_uint};

use plan::Op;
use vxfault_plan as plan;

use crate::call::{iov_total, run, with_iov, Call, Detail, Target};
use crate::gate::active;
use crate::hooks::close::is_trace_fd;
use crate::hooks::lock::is_lock_cmd;
use crate::paths::{cache_clear, cache_opened};
use crate::real::{enosys, real, ty};
use crate::state::Guard;
use crate::sys::{nr, IoVec, AT_FDCWD, AT_REMOVEDIR, O_CREAT, O_TRUNC, O_WRONLY};

/// A watched system call: its family, trace name and targets.
struct Watched {
    op: Op,
    name: &'static str,
    target: Target,
    second: Option<Target>,
}

fn at(dirfd: c_long, path: c_long) -> Target {
    Target::At(dirfd as c_int, path as *const c_char)
}

fn cwd(path: c_long) -> Target {
    Target::At(AT_FDCWD, path as *const c_char)
}

/// Classifies system call `n` with arguments `a`; `None`: not watched.
fn classify(n: c_long, a: &[c_long; 6]) -> Option<Watched> {
    let fd = Target::Fd(a[0] as c_int);
    let w = |op, name, target, second| {
        Some(Watched {
            op,
            name,
            target,
            second,
        })
    };
    match n {
        nr::WRITE => w(Op::Write, "syscall:write", fd, None),
        nr::PWRITE64 => w(Op::Write, "syscall:pwrite64", fd, None),
        nr::WRITEV => w(Op::Write, "syscall:writev", fd, None),
        nr::PWRITEV => w(Op::Write, "syscall:pwritev", fd, None),
        nr::PWRITEV2 => w(Op::Write, "syscall:pwritev2", fd, None),
        nr::COPY_FILE_RANGE => w(
            Op::Write,
            "syscall:copy_file_range",
            Target::Fd(a[2] as c_int),
            None,
        ),
        nr::OPEN => w(Op::Open, "syscall:open", cwd(a[0]), None),
        nr::CREAT => w(Op::Open, "syscall:creat", cwd(a[0]), None),
        nr::OPENAT => w(Op::Open, "syscall:openat", at(a[0], a[1]), None),
        nr::CLOSE => w(Op::Close, "syscall:close", fd, None),
        nr::FSYNC => w(Op::Fsync, "syscall:fsync", fd, None),
        nr::FDATASYNC => w(Op::Fsync, "syscall:fdatasync", fd, None),
        nr::SYNC_FILE_RANGE => w(Op::Fsync, "syscall:sync_file_range", fd, None),
        nr::SYNCFS => w(Op::Fsync, "syscall:syncfs", fd, None),
        nr::FLOCK => w(Op::Flock, "syscall:flock", fd, None),
        nr::FCNTL if is_lock_cmd(a[1] as c_int) => w(Op::Flock, "syscall:fcntl", fd, None),
        nr::FTRUNCATE => w(Op::Ftruncate, "syscall:ftruncate", fd, None),
        nr::FALLOCATE => w(Op::Fallocate, "syscall:fallocate", fd, None),
        nr::RENAME => w(Op::Rename, "syscall:rename", cwd(a[0]), Some(cwd(a[1]))),
        nr::RENAMEAT => w(
            Op::Rename,
            "syscall:renameat",
            at(a[0], a[1]),
            Some(at(a[2], a[3])),
        ),
        nr::RENAMEAT2 => w(
            Op::Rename,
            "syscall:renameat2",
            at(a[0], a[1]),
            Some(at(a[2], a[3])),
        ),
        nr::UNLINK => w(Op::Unlink, "syscall:unlink", cwd(a[0]), None),
        nr::UNLINKAT if a[2] as c_int & AT_REMOVEDIR != 0 => {
            w(Op::Rmdir, "syscall:unlinkat", at(a[0], a[1]), None)
        }
        nr::UNLINKAT => w(Op::Unlink, "syscall:unlinkat", at(a[0], a[1]), None),
        nr::RMDIR => w(Op::Rmdir, "syscall:rmdir", cwd(a[0]), None),
        nr::MKDIR => w(Op::Mkdir, "syscall:mkdir", cwd(a[0]), None),
        nr::MKDIRAT => w(Op::Mkdir, "syscall:mkdirat", at(a[0], a[1]), None),
        nr::LINK => w(Op::Link, "syscall:link", cwd(a[0]), Some(cwd(a[1]))),
        nr::LINKAT => w(
            Op::Link,
            "syscall:linkat",
            at(a[0], a[1]),
            Some(at(a[2], a[3])),
        ),
        nr::SYMLINK => w(
            Op::Link,
            "syscall:symlink",
            Target::Raw(a[0] as *const c_char),
            Some(cwd(a[1])),
        ),
        nr::SYMLINKAT => w(
            Op::Link,
            "syscall:symlinkat",
            Target::Raw(a[0] as *const c_char),
            Some(at(a[1], a[2])),
        ),
        _ => None,
    }
}

/// `syscall(2)`. Declared with six fixed arguments: on x86_64 and aarch64 Linux a
/// variadic call passes them exactly where a fixed-argument callee reads them (glibc's
/// own `syscall` reads six too).
///
/// # Safety
/// As `syscall(2)`: the arguments are what system call `n` requires.
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
    let a = [a1, a2, a3, a4, a5, a6];
    let Some(w) = classify(n, &a) else {
        // SAFETY: the caller's arguments, unchanged.
        return unsafe { f(n, a1, a2, a3, a4, a5, a6) };
    };
    if !active(w.op) {
        // SAFETY: as above.
        return unsafe { f(n, a1, a2, a3, a4, a5, a6) };
    }
    let fd = a1 as c_int;
    let op = w.op;
    if op == Op::Close {
        if is_trace_fd(fd) {
            return 0;
        }
        cache_clear(fd);
    }
    let r = match Guard::enter() {
        // SAFETY: as above.
        None => unsafe { f(n, a1, a2, a3, a4, a5, a6) },
        // SAFETY: the caller's guarantee covers the arguments `slow` reads.
        Some(_g) => unsafe { slow(f, n, a, w) },
    };
    match op {
        Op::Close => cache_clear(fd),
        Op::Open if r >= 0 && r <= c_long::from(c_int::MAX) => cache_opened(r as c_int),
        _ => {}
    }
    r
}

/// # Safety
/// As [`syscall`].
#[inline(never)]
unsafe fn slow(f: ty::Syscall, n: c_long, a: [c_long; 6], w: Watched) -> c_long {
    let [a1, a2, a3, a4, a5, a6] = a;
    let detail = match n {
        nr::OPEN => Detail::open(a2 as c_int, a3 as c_uint),
        nr::OPENAT => Detail::open(a3 as c_int, a4 as c_uint),
        nr::CREAT => Detail::open(O_CREAT | O_WRONLY | O_TRUNC, a2 as c_uint),
        nr::FLOCK => Detail::Flock(a2 as c_int),
        // SAFETY: a lock command's third argument is a `struct flock *`.
        nr::FCNTL => unsafe { Detail::fcntl(a2 as c_int, a3 as usize) },
        _ => Detail::for_op(w.op),
    };
    let mut c = Call::new(w.op, w.name, w.target).with_detail(detail);
    if let Some(t) = w.second {
        c = c.with_second(t);
    }
    // SAFETY: the targets are the caller's path arguments, and each closure makes the
    // caller's call with at most the caller's length.
    unsafe {
        match n {
            nr::WRITE | nr::PWRITE64 => {
                let len = a3 as usize;
                run(&mut c, len, len as i64, |lim| {
                    f(n, a1, a2, lim as c_long, a4, a5, a6)
                })
            }
            nr::WRITEV | nr::PWRITEV | nr::PWRITEV2 => {
                let (iov, cnt) = (a2 as *const IoVec, a3 as c_int);
                let total = iov_total(iov, cnt);
                run(&mut c, total, total as i64, |lim| {
                    with_iov(iov, cnt, total, lim, |v, k| {
                        f(n, a1, v as c_long, c_long::from(k), a4, a5, a6)
                    })
                })
            }
            nr::COPY_FILE_RANGE => {
                let len = a5 as usize;
                run(&mut c, len, len as i64, |lim| {
                    f(n, a1, a2, a3, a4, lim as c_long, a6)
                })
            }
            _ => run(&mut c, 0, 0, |_| f(n, a1, a2, a3, a4, a5, a6)),
        }
    }
}
