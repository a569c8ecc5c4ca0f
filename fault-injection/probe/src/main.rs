//! `vxfault-probe`: performs file-system calls named on its command line, exactly
//! through the glibc symbol named, and reports each result as one JSON line on stdout.
//!
//! ```text
//! vxfault-probe STEP...        STEP = name[:arg[:arg...]]
//! ```
//! The "current fd" is the last fd a successful `open*`/`creat` returned; `opendir:P`
//! sets the "dir fd". Where a step takes `DIR`, it is `cwd` (AT_FDCWD) or `dir`.
//! Open flags are letters: r (O_RDONLY), w (O_WRONLY), rw (O_RDWR), c (O_CREAT),
//! t (O_TRUNC), a (O_APPEND), x (O_EXCL), d (O_DIRECTORY), n (O_NOFOLLOW); e.g. `wct`.
//! open/open64 and openat/openat64 take an optional octal MODE after FLAGS (default 644).
//!
//! Results are written with a raw `syscall` instruction (never through glibc), so a
//! plan that fails every `write` does not hide them. Each line is
//! `{"pid":P,"step":"…","ret":R,"errno":E}`.
//!
//! Steps: open, open64, open_2, open64_2 (PATH:FLAGS); openhex (HEXPATH:FLAGS); openat, openat64, openat_2,
//! openat64_2 (DIR:PATH:FLAGS); creat, creat64 (PATH); opendir (PATH);
//! write (TEXT); pwrite, pwrite64 (TEXT:OFF); writev (T1,T2,…); pwritev, pwritev64,
//! pwritev2 (T1,T2,…:OFF); fsync, fdatasync, sync_file_range, syncfs ([dir]);
//! rename (A:B); renameat, renameat2 (DIR:A:DIR:B); unlink (P); unlinkat (DIR:P[:rmdir]);
//! mkdir (P); mkdirat (DIR:P); close ([dir]); flock (ex|sh|un|exnb);
//! fcntl (setlk|setlkw|ofd_setlk|ofd_setlkw|getlk : w|r|u); getfl (fcntl F_GETFL);
//! ftruncate, ftruncate64 (LEN);
//! sys:NAME:… the same through `syscall(SYS_…)` for write, pwrite64, writev, open,
//! openat, creat, close, fsync, fdatasync, sync_file_range, syncfs, rename, renameat,
//! renameat2, unlink, unlinkat, mkdir, mkdirat, flock, fcntl, ftruncate;
//! fclose (fdopen + fclose of the current fd); fopen (PATH, sets the current fd);
//! dup2 (NEWFD: the current fd onto NEWFD, which becomes current); close_range (LO:HI);
//! symlink (TARGET:LINK); and the steps of `families.rs` (rmdir, link, linkat,
//! symlinkat, fallocate, posix_fallocate, copy_file_range, sendfile, splice, fdopen,
//! fwrite, fputs, fflush);
//! freopen (PATH: fdopen + freopen of the current fd, which becomes current);
//! dupfd (MIN: fcntl F_DUPFD of the current fd, which becomes current);
//! raw:write:TEXT, raw:fsync, raw:close[:FD], raw:rename:A:B — a raw syscall instruction (invisible to
//! any LD_PRELOAD library);
//! fork:N (the child runs the next N steps and exits; the parent skips them, waits and
//! reports the child's exit status); exec (re-executes this program with the remaining
//! steps); chdir (P); sleep (MS); exit (CODE).

use std::ffi::{CString, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use libc::{c_char, c_int, c_long};

mod families;
mod syscalls;

use syscalls::{raw_step, sys_step};

extern "C" {
    fn __open_2(path: *const c_char, flags: c_int) -> c_int;
    fn __open64_2(path: *const c_char, flags: c_int) -> c_int;
    fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
    fn __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
}

/// A system call with the `syscall` instruction itself: no libc, no PLT.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn raw_syscall(n: c_long, a1: c_long, a2: c_long, a3: c_long) -> c_long {
    let ret: c_long;
    core::arch::asm!(
        "syscall",
        inlateout("rax") n => ret,
        in("rdi") a1,
        in("rsi") a2,
        in("rdx") a3,
        lateout("rcx") _,
        lateout("r11") _,
        options(nostack)
    );
    ret
}

/// A system call with the `svc` instruction itself: no libc, no PLT.
#[cfg(target_arch = "aarch64")]
pub(crate) unsafe fn raw_syscall(n: c_long, a1: c_long, a2: c_long, a3: c_long) -> c_long {
    let ret: c_long;
    core::arch::asm!(
        "svc 0",
        in("x8") n,
        inlateout("x0") a1 => ret,
        in("x1") a2,
        in("x2") a3,
        options(nostack)
    );
    ret
}

pub(crate) fn raw_write_all(fd: c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let n = unsafe {
            raw_syscall(
                libc::SYS_write,
                c_long::from(fd),
                bytes.as_ptr() as c_long,
                bytes.len() as c_long,
            )
        };
        if n <= 0 {
            if n == -c_long::from(libc::EINTR) {
                continue;
            }
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn report(step: &str, ret: i64, err: c_int) {
    let pid = unsafe { libc::getpid() };
    let e = if ret < 0 { err } else { 0 };
    let step = json_escape(step);
    let line = format!("{{\"pid\":{pid},\"step\":\"{step}\",\"ret\":{ret},\"errno\":{e}}}\n");
    raw_write_all(1, line.as_bytes());
}

fn json_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn fail(msg: &str) -> ! {
    raw_write_all(2, format!("vxfault-probe: {msg}\n").as_bytes());
    unsafe { libc::_exit(2) }
}

pub(crate) fn cstr(s: &str) -> CString {
    CString::new(s).unwrap_or_else(|_| fail("NUL in argument"))
}

pub(crate) fn flags(s: &str) -> c_int {
    let mut f = 0;
    let mut acc = libc::O_RDONLY;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'r' if b.get(i + 1) == Some(&b'w') => {
                acc = libc::O_RDWR;
                i += 1;
            }
            b'r' => acc = libc::O_RDONLY,
            b'w' => acc = libc::O_WRONLY,
            b'c' => f |= libc::O_CREAT,
            b't' => f |= libc::O_TRUNC,
            b'a' => f |= libc::O_APPEND,
            b'x' => f |= libc::O_EXCL,
            b'd' => f |= libc::O_DIRECTORY,
            b'n' => f |= libc::O_NOFOLLOW,
            _ => fail(&format!("bad open flags {s}")),
        }
        i += 1;
    }
    f | acc | libc::O_CLOEXEC
}

fn octal_mode(s: Option<&&str>) -> libc::c_uint {
    s.map_or(0o644, |m| {
        libc::c_uint::from_str_radix(m, 8).unwrap_or_else(|_| fail("MODE must be octal"))
    })
}

pub(crate) struct Probe {
    fd: c_int,
    dir: c_int,
    /// The stdio stream of the `fopen`/`fdopen` steps (null if none).
    fp: *mut libc::FILE,
}

impl Probe {
    pub(crate) fn dirfd(&self, s: &str) -> c_int {
        match s {
            "cwd" => libc::AT_FDCWD,
            "dir" => self.dir,
            _ => fail(&format!("DIR must be cwd or dir, not {s}")),
        }
    }

    pub(crate) fn target(&self, a: &[&str]) -> c_int {
        if a.first() == Some(&"dir") {
            self.dir
        } else {
            self.fd
        }
    }
}

pub(crate) fn arg<'a>(a: &[&'a str], i: usize, step: &str) -> &'a str {
    a.get(i)
        .copied()
        .unwrap_or_else(|| fail(&format!("{step}: missing argument {}", i + 1)))
}

pub(crate) fn num(s: &str) -> i64 {
    s.parse()
        .unwrap_or_else(|_| fail(&format!("not a number: {s}")))
}

pub(crate) fn iovecs(parts: &[&[u8]]) -> Vec<libc::iovec> {
    parts
        .iter()
        .map(|p| libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        })
        .collect()
}

pub(crate) fn lock_struct(kind: &str) -> libc::flock {
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = match kind {
        "w" => libc::F_WRLCK as libc::c_short,
        "r" => libc::F_RDLCK as libc::c_short,
        "u" => libc::F_UNLCK as libc::c_short,
        _ => fail("lock kind must be w, r or u"),
    };
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl
}

pub(crate) fn lock_cmd(s: &str) -> c_int {
    match s {
        "setlk" => libc::F_SETLK,
        "setlkw" => libc::F_SETLKW,
        "ofd_setlk" => libc::F_OFD_SETLK,
        "ofd_setlkw" => libc::F_OFD_SETLKW,
        "getlk" => libc::F_GETLK,
        _ => fail("fcntl command must be setlk, setlkw, ofd_setlk, ofd_setlkw or getlk"),
    }
}

pub(crate) fn flock_op(s: &str) -> c_int {
    match s {
        "ex" => libc::LOCK_EX,
        "sh" => libc::LOCK_SH,
        "un" => libc::LOCK_UN,
        "exnb" => libc::LOCK_EX | libc::LOCK_NB,
        _ => fail("flock op must be ex, sh, un or exnb"),
    }
}

/// Runs one step; returns its result (-1 with errno on failure).
fn step(p: &mut Probe, name: &str, a: &[&str], rest: &[String]) -> i64 {
    let set_fd = |p: &mut Probe, r: c_int| {
        if r >= 0 {
            p.fd = r;
        }
        i64::from(r)
    };
    unsafe {
        match name {
            "open" | "open64" | "open_2" | "open64_2" => {
                let path = cstr(arg(a, 0, name));
                let fl = flags(arg(a, 1, name));
                let mode = octal_mode(a.get(2));
                let r = match name {
                    "open" => libc::open(path.as_ptr(), fl, mode),
                    "open64" => libc::open64(path.as_ptr(), fl, mode),
                    "open_2" => __open_2(path.as_ptr(), fl),
                    _ => __open64_2(path.as_ptr(), fl),
                };
                set_fd(p, r)
            }
            "openat" | "openat64" | "openat_2" | "openat64_2" => {
                let d = p.dirfd(arg(a, 0, name));
                let path = cstr(arg(a, 1, name));
                let fl = flags(arg(a, 2, name));
                let mode = octal_mode(a.get(3));
                let r = match name {
                    "openat" => libc::openat(d, path.as_ptr(), fl, mode),
                    "openat64" => libc::openat64(d, path.as_ptr(), fl, mode),
                    "openat_2" => __openat_2(d, path.as_ptr(), fl),
                    _ => __openat64_2(d, path.as_ptr(), fl),
                };
                set_fd(p, r)
            }
            "openhex" => {
                // A path given in hex, so it can hold bytes that are not UTF-8.
                let hex = arg(a, 0, name);
                let bytes: Vec<u8> = (0..hex.len() / 2)
                    .map(|i| {
                        u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
                            .unwrap_or_else(|_| fail("bad hex"))
                    })
                    .collect();
                let path = CString::new(bytes).unwrap_or_else(|_| fail("NUL in path"));
                set_fd(
                    p,
                    libc::open(path.as_ptr(), flags(arg(a, 1, name)), 0o644 as libc::c_uint),
                )
            }
            "creat" => {
                let path = cstr(arg(a, 0, name));
                set_fd(p, libc::creat(path.as_ptr(), 0o644))
            }
            "creat64" => {
                let path = cstr(arg(a, 0, name));
                set_fd(p, libc::creat64(path.as_ptr(), 0o644))
            }
            "opendir" => {
                let path = cstr(arg(a, 0, name));
                let r = libc::open(
                    path.as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                );
                if r >= 0 {
                    p.dir = r;
                }
                i64::from(r)
            }
            "write" => {
                let t = arg(a, 0, name);
                libc::write(p.fd, t.as_ptr().cast(), t.len()) as i64
            }
            "pwrite" | "pwrite64" => {
                let t = arg(a, 0, name);
                let off = num(arg(a, 1, name));
                if name == "pwrite" {
                    libc::pwrite(p.fd, t.as_ptr().cast(), t.len(), off) as i64
                } else {
                    libc::pwrite64(p.fd, t.as_ptr().cast(), t.len(), off) as i64
                }
            }
            "writev" | "pwritev" | "pwritev64" | "pwritev2" => {
                let parts: Vec<&[u8]> = arg(a, 0, name).split(',').map(str::as_bytes).collect();
                let iov = iovecs(&parts);
                let n = iov.len() as c_int;
                match name {
                    "writev" => libc::writev(p.fd, iov.as_ptr(), n) as i64,
                    "pwritev" => libc::pwritev(p.fd, iov.as_ptr(), n, num(arg(a, 1, name))) as i64,
                    "pwritev64" => {
                        libc::pwritev64(p.fd, iov.as_ptr(), n, num(arg(a, 1, name))) as i64
                    }
                    _ => libc::pwritev2(p.fd, iov.as_ptr(), n, num(arg(a, 1, name)), 0) as i64,
                }
            }
            "fsync" => i64::from(libc::fsync(p.target(a))),
            "fdatasync" => i64::from(libc::fdatasync(p.target(a))),
            "sync_file_range" => i64::from(libc::sync_file_range(
                p.target(a),
                0,
                0,
                libc::SYNC_FILE_RANGE_WRITE,
            )),
            "syncfs" => i64::from(libc::syncfs(p.target(a))),
            "rename" => {
                let (x, y) = (cstr(arg(a, 0, name)), cstr(arg(a, 1, name)));
                i64::from(libc::rename(x.as_ptr(), y.as_ptr()))
            }
            "renameat" | "renameat2" => {
                let d1 = p.dirfd(arg(a, 0, name));
                let x = cstr(arg(a, 1, name));
                let d2 = p.dirfd(arg(a, 2, name));
                let y = cstr(arg(a, 3, name));
                if name == "renameat" {
                    i64::from(libc::renameat(d1, x.as_ptr(), d2, y.as_ptr()))
                } else {
                    i64::from(libc::renameat2(d1, x.as_ptr(), d2, y.as_ptr(), 0))
                }
            }
            "unlink" => i64::from(libc::unlink(cstr(arg(a, 0, name)).as_ptr())),
            "unlinkat" => {
                let d = p.dirfd(arg(a, 0, name));
                let fl = if a.get(2) == Some(&"rmdir") {
                    libc::AT_REMOVEDIR
                } else {
                    0
                };
                i64::from(libc::unlinkat(d, cstr(arg(a, 1, name)).as_ptr(), fl))
            }
            "mkdir" => i64::from(libc::mkdir(cstr(arg(a, 0, name)).as_ptr(), 0o755)),
            "mkdirat" => {
                let d = p.dirfd(arg(a, 0, name));
                i64::from(libc::mkdirat(d, cstr(arg(a, 1, name)).as_ptr(), 0o755))
            }
            "close" => i64::from(libc::close(p.target(a))),
            "flock" => i64::from(libc::flock(p.fd, flock_op(arg(a, 0, name)))),
            "fcntl" => {
                let cmd = lock_cmd(arg(a, 0, name));
                let mut fl = lock_struct(arg(a, 1, name));
                let r = libc::fcntl(p.fd, cmd, &mut fl as *mut libc::flock);
                if cmd == libc::F_GETLK && r == 0 {
                    // Report what F_GETLK found: the lock type (F_UNLCK when free).
                    i64::from(fl.l_type)
                } else {
                    i64::from(r)
                }
            }
            "getfl" => i64::from(libc::fcntl(p.fd, libc::F_GETFL)),
            "ftruncate" => i64::from(libc::ftruncate(p.fd, num(arg(a, 0, name)))),
            "ftruncate64" => i64::from(libc::ftruncate64(p.fd, num(arg(a, 0, name)))),
            "sys" => sys_step(p, a),
            "raw" => raw_step(p, a),
            "chdir" => i64::from(libc::chdir(cstr(arg(a, 0, name)).as_ptr())),
            "sleep" => {
                std::thread::sleep(std::time::Duration::from_millis(num(arg(a, 0, name)) as u64));
                0
            }
            "exec" => {
                let exe = std::fs::read_link("/proc/self/exe")
                    .unwrap_or_else(|e| fail(&format!("exe: {e}")));
                let mut argv: Vec<CString> =
                    vec![CString::new(exe.as_os_str().as_bytes()).unwrap_or_default()];
                argv.extend(rest.iter().map(|s| cstr(s)));
                let mut ptrs: Vec<*const c_char> = argv.iter().map(|c| c.as_ptr()).collect();
                ptrs.push(std::ptr::null());
                libc::execv(argv[0].as_ptr(), ptrs.as_ptr());
                -1
            }
            "exit" => libc::_exit(num(arg(a, 0, name)) as c_int),
            "fclose" => {
                // fdopen + fclose: glibc closes the fd internally, not through close().
                let fp = if p.fp.is_null() {
                    libc::fdopen(p.fd, c"w".as_ptr())
                } else {
                    std::mem::replace(&mut p.fp, std::ptr::null_mut())
                };
                if fp.is_null() {
                    -1
                } else {
                    i64::from(libc::fclose(fp))
                }
            }
            "fopen" => {
                // fopen opens internally, not through open().
                let path = cstr(arg(a, 0, name));
                let fp = libc::fopen(path.as_ptr(), c"w".as_ptr());
                if fp.is_null() {
                    -1
                } else {
                    p.fp = fp;
                    p.fd = libc::fileno(fp);
                    i64::from(p.fd)
                }
            }
            "freopen" => {
                // fdopen the current fd, then freopen PATH on that stream: glibc
                // closes and reopens inside, where no hook sees it.
                let path = cstr(arg(a, 0, name));
                let fp = libc::fdopen(p.fd, c"w".as_ptr());
                if fp.is_null() {
                    return -1;
                }
                let r = libc::freopen(path.as_ptr(), c"w".as_ptr(), fp);
                if r.is_null() {
                    -1
                } else {
                    p.fd = libc::fileno(r);
                    i64::from(p.fd)
                }
            }
            "dupfd" => {
                let r = libc::fcntl(p.fd, libc::F_DUPFD, num(arg(a, 0, name)) as c_int);
                set_fd(p, r)
            }
            "dup2" => {
                let new = num(arg(a, 0, name)) as c_int;
                let r = libc::dup2(p.fd, new);
                if r >= 0 {
                    p.fd = r;
                }
                i64::from(r)
            }
            "close_range" => {
                let (lo, hi) = (
                    num(arg(a, 0, name)) as libc::c_uint,
                    num(arg(a, 1, name)) as libc::c_uint,
                );
                i64::from(libc::close_range(lo, hi, 0))
            }
            "symlink" => {
                let (x, y) = (cstr(arg(a, 0, name)), cstr(arg(a, 1, name)));
                i64::from(libc::symlink(x.as_ptr(), y.as_ptr()))
            }
            "threads" => threads(
                p.fd,
                num(arg(a, 0, name)) as usize,
                num(arg(a, 1, name)) as usize,
            ),
            "alarmwrite" => alarm_write(p.fd, num(arg(a, 0, name)), arg(a, 1, name)),
            _ => families::step(p, name, a),
        }
    }
}

/// T threads each `write` "x" N times to `fd`; returns how many writes failed.
fn threads(fd: c_int, t: usize, n: usize) -> i64 {
    let handles: Vec<_> = (0..t)
        .map(|_| {
            std::thread::spawn(move || {
                (0..n)
                    .filter(|_| unsafe { libc::write(fd, b"x".as_ptr().cast(), 1) } != 1)
                    .count()
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().unwrap_or(n) as i64)
        .sum()
}

static ALARM_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);
static ALARM_TEXT: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

extern "C" fn on_alarm(_: c_int) {
    let fd = ALARM_FD.load(std::sync::atomic::Ordering::SeqCst);
    if let Some(t) = ALARM_TEXT.get() {
        unsafe { libc::write(fd, t.as_ptr().cast(), t.len()) };
    }
}

/// Arms SIGALRM in MS milliseconds; its handler `write`s TEXT to `fd` (so a hook can
/// be entered from inside a hook). Returns 0.
fn alarm_write(fd: c_int, ms: i64, text: &str) -> i64 {
    ALARM_FD.store(fd, std::sync::atomic::Ordering::SeqCst);
    let _ = ALARM_TEXT.set(text.as_bytes().to_vec());
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_alarm as extern "C" fn(c_int) as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigaction(libc::SIGALRM, &sa, std::ptr::null_mut());
        let it = libc::itimerval {
            it_interval: libc::timeval {
                tv_sec: 0,
                tv_usec: 0,
            },
            it_value: libc::timeval {
                tv_sec: (ms / 1000) as libc::time_t,
                tv_usec: ((ms % 1000) * 1000) as libc::suseconds_t,
            },
        };
        i64::from(libc::setitimer(
            libc::ITIMER_REAL,
            &it,
            std::ptr::null_mut(),
        ))
    }
}

fn main() {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a: OsString| {
            String::from_utf8(a.into_vec()).unwrap_or_else(|_| fail("arguments must be UTF-8"))
        })
        .collect();
    let mut p = Probe {
        fd: -1,
        dir: -1,
        fp: std::ptr::null_mut(),
    };
    let mut i = 0;
    while i < args.len() {
        let spec = &args[i];
        let parts: Vec<&str> = spec.split(':').collect();
        let (name, a) = (parts[0], &parts[1..]);
        if name == "fork" {
            let n = num(arg(a, 0, "fork")) as usize;
            let child_steps = args[i + 1..(i + 1 + n).min(args.len())].to_vec();
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let mut j = 0;
                while j < child_steps.len() {
                    let parts: Vec<&str> = child_steps[j].split(':').collect();
                    let r = step(&mut p, parts[0], &parts[1..], &child_steps[j + 1..]);
                    report(&child_steps[j], r, errno());
                    j += 1;
                }
                unsafe { libc::_exit(0) };
            }
            let mut status = 0;
            if pid > 0 {
                unsafe { libc::waitpid(pid, &mut status, 0) };
            }
            let r = if pid < 0 { -1 } else { i64::from(status) };
            report(spec, r, errno());
            i += 1 + n;
            continue;
        }
        let r = step(&mut p, name, a, &args[i + 1..]);
        report(spec, r, errno());
        i += 1;
    }
}
