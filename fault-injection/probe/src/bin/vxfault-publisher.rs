//! Small publishers for the crash explorer's tests: one correct (temp file, write,
//! fsync, rename, directory fsync: vx-store's order) and three deliberately wrong,
//! plus the checker their states are judged by.
//!
//! ```text
//! vxfault-publisher MODE DIR    publish generation "new" of DIR/gen, then print "published"
//!   MODE: correct | no-dir-fsync | no-file-fsync | in-place
//! vxfault-publisher check DIR   exit 0 if DIR/gen is the old or the whole new generation,
//!                               and the new one once "published" was printed
//! ```
//!
//! Every call goes through glibc (`libc`), so the preload sees it.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The generation before the run (tests create it).
const OLD: &[u8] = b"generation 1\n";

/// The new generation: several sectors, so a tear is visible.
fn new_generation() -> Vec<u8> {
    let mut v = b"generation 2\n".to_vec();
    while v.len() < 6000 {
        v.extend_from_slice(b"payload line of generation 2\n");
    }
    v
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).expect("no NUL in the path")
}

fn check(r: i64, what: &str) -> i64 {
    if r < 0 {
        eprintln!(
            "vxfault-publisher: {what} failed: {}",
            std::io::Error::last_os_error()
        );
        std::process::exit(3);
    }
    r
}

fn open(p: &Path, flags: i32) -> i32 {
    let c = cpath(p);
    // SAFETY: a NUL-terminated path; the mode argument is read only with O_CREAT.
    check(
        i64::from(unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, 0o600) }),
        "open",
    ) as i32
}

fn write_all(fd: i32, data: &[u8]) {
    let mut done = 0;
    while done < data.len() {
        // SAFETY: a live slice.
        let n = unsafe { libc::write(fd, data[done..].as_ptr().cast(), data.len() - done) };
        done += check(n as i64, "write") as usize;
    }
}

fn fsync(fd: i32) {
    // SAFETY: plain fd call.
    check(i64::from(unsafe { libc::fsync(fd) }), "fsync");
}

fn close(fd: i32) {
    // SAFETY: our own fd.
    unsafe { libc::close(fd) };
}

fn publish(mode: &str, dir: &Path) {
    let data = new_generation();
    let fin = dir.join("gen");
    if mode == "in-place" {
        let fd = open(&fin, libc::O_WRONLY | libc::O_TRUNC);
        write_all(fd, &data);
        fsync(fd);
        close(fd);
        return;
    }
    let tmp = dir.join(".gen.tmp");
    let fd = open(&tmp, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL);
    write_all(fd, &data);
    if mode != "no-file-fsync" {
        fsync(fd);
    }
    close(fd);
    let (a, b) = (cpath(&tmp), cpath(&fin));
    // SAFETY: NUL-terminated paths.
    check(
        i64::from(unsafe { libc::rename(a.as_ptr(), b.as_ptr()) }),
        "rename",
    );
    if mode != "no-dir-fsync" {
        let d = open(dir, libc::O_RDONLY | libc::O_DIRECTORY);
        fsync(d);
        close(d);
    }
}

/// The checker: old or whole new; new once acknowledged (every output made).
fn judge(dir: &Path) -> i32 {
    let got = std::fs::read(dir.join("gen")).unwrap_or_default();
    let acked = std::env::var("VXFAULT_OUTPUTS").ok()
        == std::env::var("VXFAULT_OUTPUTS_TOTAL").ok()
        && std::env::var("VXFAULT_OUTPUTS_TOTAL").is_ok_and(|n| n != "0");
    if got == new_generation() {
        return 0;
    }
    if got == OLD {
        if acked {
            println!("acknowledged generation lost: the old one is back");
            return 1;
        }
        return 0;
    }
    println!("corrupt: neither generation ({} bytes)", got.len());
    1
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(mode), Some(dir)) = (args.first(), args.get(1)) else {
        eprintln!("usage: vxfault-publisher correct|no-dir-fsync|no-file-fsync|in-place|check DIR");
        std::process::exit(2);
    };
    let dir = Path::new(dir);
    match mode.as_str() {
        "check" => std::process::exit(judge(dir)),
        "correct" | "no-dir-fsync" | "no-file-fsync" | "in-place" => {
            publish(mode, dir);
            // The acknowledgement, after the publish returned.
            write_all(1, b"published\n");
        }
        _ => {
            eprintln!("vxfault-publisher: unknown mode");
            std::process::exit(2);
        }
    }
}
