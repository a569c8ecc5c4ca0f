//! rmdir, link/linkat/symlink/symlinkat, fallocate, copy_file_range/sendfile/splice into
//! a file, and the stdio entry points a program calls itself (fwrite, fputs, fflush,
//! fclose is with the close hooks).

use super::*;

#[no_mangle]
pub unsafe extern "C" fn rmdir(path: *const c_char) -> c_int {
    let Some(f) = real!(Rmdir) else {
        return enosys();
    };
    fast!(Op::Rmdir, f(path));
    let _g = guard!(f(path));
    let mut c = Call::new(Op::Rmdir, "rmdir", Target::At(AT_FDCWD, path));
    run(&mut c, 0, 0, |_| i64::from(f(path))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn link(old: *const c_char, new: *const c_char) -> c_int {
    let Some(f) = real!(Link) else {
        return enosys();
    };
    fast!(Op::Link, f(old, new));
    let _g = guard!(f(old, new));
    let mut c = Call::new(Op::Link, "link", Target::At(AT_FDCWD, old))
        .with_second(Target::At(AT_FDCWD, new));
    run(&mut c, 0, 0, |_| i64::from(f(old, new))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn linkat(
    od: c_int,
    old: *const c_char,
    nd: c_int,
    new: *const c_char,
    flags: c_int,
) -> c_int {
    let Some(f) = real!(Linkat) else {
        return enosys();
    };
    fast!(Op::Link, f(od, old, nd, new, flags));
    let _g = guard!(f(od, old, nd, new, flags));
    let mut c = Call::new(Op::Link, "linkat", Target::At(od, old)).with_second(Target::At(nd, new));
    run(&mut c, 0, 0, |_| i64::from(f(od, old, nd, new, flags))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn symlink(target: *const c_char, linkpath: *const c_char) -> c_int {
    let Some(f) = real!(Symlink) else {
        return enosys();
    };
    fast!(Op::Link, f(target, linkpath));
    let _g = guard!(f(target, linkpath));
    let mut c = Call::new(Op::Link, "symlink", Target::Raw(target))
        .with_second(Target::At(AT_FDCWD, linkpath));
    run(&mut c, 0, 0, |_| i64::from(f(target, linkpath))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn symlinkat(
    target: *const c_char,
    nd: c_int,
    linkpath: *const c_char,
) -> c_int {
    let Some(f) = real!(Symlinkat) else {
        return enosys();
    };
    fast!(Op::Link, f(target, nd, linkpath));
    let _g = guard!(f(target, nd, linkpath));
    let mut c =
        Call::new(Op::Link, "symlinkat", Target::Raw(target)).with_second(Target::At(nd, linkpath));
    run(&mut c, 0, 0, |_| i64::from(f(target, nd, linkpath))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn fallocate(fd: c_int, mode: c_int, off: i64, len: i64) -> c_int {
    let Some(f) = real!(Fallocate) else {
        return enosys();
    };
    fast!(Op::Fallocate, f(fd, mode, off, len));
    let _g = guard!(f(fd, mode, off, len));
    let mut c = Call::new(Op::Fallocate, "fallocate", Target::Fd(fd));
    run(&mut c, 0, 0, |_| i64::from(f(fd, mode, off, len))) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn fallocate64(fd: c_int, mode: c_int, off: i64, len: i64) -> c_int {
    let Some(f) = real!(Fallocate64) else {
        return enosys();
    };
    fast!(Op::Fallocate, f(fd, mode, off, len));
    let _g = guard!(f(fd, mode, off, len));
    let mut c = Call::new(Op::Fallocate, "fallocate64", Target::Fd(fd));
    run(&mut c, 0, 0, |_| i64::from(f(fd, mode, off, len))) as c_int
}

/// posix_fallocate returns the error number instead of setting errno.
unsafe fn posix_fallocate_like(
    name: &'static str,
    f: unsafe extern "C" fn(c_int, i64, i64) -> c_int,
    fd: c_int,
    off: i64,
    len: i64,
) -> c_int {
    let mut c = Call::new(Op::Fallocate, name, Target::Fd(fd));
    let entry = c.entry_errno;
    let r = run(&mut c, 0, 0, |_| {
        let e = f(fd, off, len);
        if e == 0 {
            0
        } else {
            set_errno(e);
            -1
        }
    });
    let e = if r < 0 { errno() } else { 0 };
    set_errno(entry);
    e
}

#[no_mangle]
pub unsafe extern "C" fn posix_fallocate(fd: c_int, off: i64, len: i64) -> c_int {
    let Some(f) = real!(PosixFallocate) else {
        return ENOSYS;
    };
    fast!(Op::Fallocate, f(fd, off, len));
    let _g = guard!(f(fd, off, len));
    posix_fallocate_like("posix_fallocate", f, fd, off, len)
}

#[no_mangle]
pub unsafe extern "C" fn posix_fallocate64(fd: c_int, off: i64, len: i64) -> c_int {
    let Some(f) = real!(PosixFallocate64) else {
        return ENOSYS;
    };
    fast!(Op::Fallocate, f(fd, off, len));
    let _g = guard!(f(fd, off, len));
    posix_fallocate_like("posix_fallocate64", f, fd, off, len)
}

#[no_mangle]
pub unsafe extern "C" fn copy_file_range(
    fd_in: c_int,
    off_in: *mut i64,
    fd_out: c_int,
    off_out: *mut i64,
    len: usize,
    flags: c_uint,
) -> isize {
    let Some(f) = real!(CopyFileRange) else {
        return enosys();
    };
    fast!(Op::Write, f(fd_in, off_in, fd_out, off_out, len, flags));
    let _g = guard!(f(fd_in, off_in, fd_out, off_out, len, flags));
    let mut c = Call::new(Op::Write, "copy_file_range", Target::Fd(fd_out));
    run(&mut c, len, len as i64, |lim| {
        f(fd_in, off_in, fd_out, off_out, lim, flags) as i64
    }) as isize
}

/// Whether `fd` is a regular file: sendfile and splice are writes only into files
/// (into a pipe or socket they are not an injection point).
unsafe fn into_file(fd: c_int) -> bool {
    file_type(fd) == Some(S_IFREG)
}

#[no_mangle]
pub unsafe extern "C" fn sendfile(out: c_int, inp: c_int, off: *mut i64, n: usize) -> isize {
    let Some(f) = real!(Sendfile) else {
        return enosys();
    };
    fast!(Op::Write, f(out, inp, off, n));
    let _g = guard!(f(out, inp, off, n));
    if !into_file(out) {
        return f(out, inp, off, n);
    }
    let mut c = Call::new(Op::Write, "sendfile", Target::Fd(out));
    run(&mut c, n, n as i64, |lim| f(out, inp, off, lim) as i64) as isize
}

#[no_mangle]
pub unsafe extern "C" fn sendfile64(out: c_int, inp: c_int, off: *mut i64, n: usize) -> isize {
    let Some(f) = real!(Sendfile64) else {
        return enosys();
    };
    fast!(Op::Write, f(out, inp, off, n));
    let _g = guard!(f(out, inp, off, n));
    if !into_file(out) {
        return f(out, inp, off, n);
    }
    let mut c = Call::new(Op::Write, "sendfile64", Target::Fd(out));
    run(&mut c, n, n as i64, |lim| f(out, inp, off, lim) as i64) as isize
}

#[no_mangle]
pub unsafe extern "C" fn splice(
    fd_in: c_int,
    off_in: *mut i64,
    fd_out: c_int,
    off_out: *mut i64,
    len: usize,
    flags: c_uint,
) -> isize {
    let Some(f) = real!(Splice) else {
        return enosys();
    };
    fast!(Op::Write, f(fd_in, off_in, fd_out, off_out, len, flags));
    let _g = guard!(f(fd_in, off_in, fd_out, off_out, len, flags));
    if !into_file(fd_out) {
        return f(fd_in, off_in, fd_out, off_out, len, flags);
    }
    let mut c = Call::new(Op::Write, "splice", Target::Fd(fd_out));
    run(&mut c, len, len as i64, |lim| {
        f(fd_in, off_in, fd_out, off_out, lim, flags) as i64
    }) as isize
}

/// glibc's `_IO_ERR_SEEN` in `FILE::_flags` (the first field of the public
/// `struct _IO_FILE`): what makes `ferror()` true after an injected failure.
const IO_ERR_SEEN: c_int = 0x20;

unsafe fn mark_error(fp: *mut c_void) {
    if !fp.is_null() {
        let flags = fp.cast::<c_int>();
        flags.write(flags.read() | IO_ERR_SEEN);
    }
}

unsafe fn stream_fd(fp: *mut c_void) -> c_int {
    if fp.is_null() {
        -1
    } else {
        fileno(fp)
    }
}

#[no_mangle]
pub unsafe extern "C" fn fwrite(
    ptr: *const c_void,
    size: usize,
    nmemb: usize,
    fp: *mut c_void,
) -> usize {
    let Some(f) = real!(Fwrite) else {
        set_errno(ENOSYS);
        return 0;
    };
    fast!(Op::Write, f(ptr, size, nmemb, fp));
    let _g = guard!(f(ptr, size, nmemb, fp));
    let total = size.saturating_mul(nmemb);
    let mut c = Call::new(Op::Write, "fwrite", Target::Fd(stream_fd(fp))).stdio(fp, 0);
    // short:N / torn:N write the whole items that fit in N bytes.
    let r = run(&mut c, total, nmemb as i64, |lim| {
        let items = if lim >= total || size == 0 {
            nmemb
        } else {
            lim / size
        };
        f(ptr, size, items, fp) as i64
    });
    if r == 0 && total > 0 && c.rule > 0 {
        mark_error(fp);
    }
    r.max(0) as usize
}

#[no_mangle]
pub unsafe extern "C" fn fputs(s: *const c_char, fp: *mut c_void) -> c_int {
    let Some(f) = real!(Fputs) else {
        return enosys();
    };
    fast!(Op::Write, f(s, fp));
    let _g = guard!(f(s, fp));
    let len = if s.is_null() {
        0
    } else {
        core::ffi::CStr::from_ptr(s).to_bytes().len()
    };
    let mut c = Call::new(Op::Write, "fputs", Target::Fd(stream_fd(fp))).stdio(fp, -1);
    let fwrite = real!(Fwrite);
    // fputs cannot report a short write: short:N writes N bytes and returns N.
    let r = run(
        &mut c,
        len,
        len.min(c_int::MAX as usize) as i64,
        |lim| match fwrite {
            Some(w) if lim < len => w(s.cast(), 1, lim, fp) as i64,
            _ => i64::from(f(s, fp)),
        },
    );
    if r < 0 && c.rule > 0 {
        mark_error(fp);
    }
    r.clamp(-1, c_int::MAX as i64) as c_int
}

#[no_mangle]
pub unsafe extern "C" fn fflush(fp: *mut c_void) -> c_int {
    let Some(f) = real!(Fflush) else {
        return enosys();
    };
    fast!(Op::Write, f(fp));
    let _g = guard!(f(fp));
    let mut c = Call::new(Op::Write, "fflush", Target::Fd(stream_fd(fp))).stdio(fp, -1);
    let r = run(&mut c, 0, 0, |_| i64::from(f(fp)));
    if r < 0 && c.rule > 0 {
        mark_error(fp);
    }
    r as c_int
}
