//! Calls on names in a directory: rename, renameat, renameat2; unlink, unlinkat (which
//! is `rmdir` with `AT_REMOVEDIR`); rmdir; mkdir, mkdirat; link, linkat, symlink,
//! symlinkat. rename and link calls have two paths; a rule matches either.

use core::ffi::{c_char, c_int, c_uint};

use plan::Op;
use vxfault_plan as plan;

use crate::call::{run, Call, Detail, Target};
use crate::sys::{AT_FDCWD, AT_REMOVEDIR};

hook! {
    fn rename(old: *const c_char, new: *const c_char) -> c_int;
    real Rename;
    op Op::Rename;
    |f| {
        let mut c = Call::new(Op::Rename, "rename", Target::At(AT_FDCWD, old))
            .with_second(Target::At(AT_FDCWD, new));
        run(&mut c, 0, 0, |_| i64::from(f(old, new))) as c_int
    }
}

hook! {
    fn renameat(od: c_int, old: *const c_char, nd: c_int, new: *const c_char) -> c_int;
    real Renameat;
    op Op::Rename;
    |f| {
        let mut c =
            Call::new(Op::Rename, "renameat", Target::At(od, old)).with_second(Target::At(nd, new));
        run(&mut c, 0, 0, |_| i64::from(f(od, old, nd, new))) as c_int
    }
}

hook! {
    fn renameat2(
        od: c_int,
        old: *const c_char,
        nd: c_int,
        new: *const c_char,
        flags: c_uint,
    ) -> c_int;
    real Renameat2;
    op Op::Rename;
    |f| {
        let mut c = Call::new(Op::Rename, "renameat2", Target::At(od, old))
            .with_second(Target::At(nd, new));
        run(&mut c, 0, 0, |_| i64::from(f(od, old, nd, new, flags))) as c_int
    }
}

hook! {
    fn unlink(path: *const c_char) -> c_int;
    real Unlink;
    op Op::Unlink;
    |f| {
        let mut c = Call::new(Op::Unlink, "unlink", Target::At(AT_FDCWD, path));
        run(&mut c, 0, 0, |_| i64::from(f(path))) as c_int
    }
}

/// unlinkat removes a directory with `AT_REMOVEDIR`: that is the `rmdir` family.
fn unlinkat_op(flags: c_int) -> Op {
    if flags & AT_REMOVEDIR != 0 {
        Op::Rmdir
    } else {
        Op::Unlink
    }
}

hook! {
    fn unlinkat(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int;
    real Unlinkat;
    op unlinkat_op(flags);
    |f| {
        let mut c = Call::new(unlinkat_op(flags), "unlinkat", Target::At(dirfd, path));
        run(&mut c, 0, 0, |_| i64::from(f(dirfd, path, flags))) as c_int
    }
}

hook! {
    fn rmdir(path: *const c_char) -> c_int;
    real Rmdir;
    op Op::Rmdir;
    |f| {
        let mut c = Call::new(Op::Rmdir, "rmdir", Target::At(AT_FDCWD, path));
        run(&mut c, 0, 0, |_| i64::from(f(path))) as c_int
    }
}

hook! {
    fn mkdir(path: *const c_char, mode: c_uint) -> c_int;
    real Mkdir;
    op Op::Mkdir;
    |f| {
        let mut c = Call::new(Op::Mkdir, "mkdir", Target::At(AT_FDCWD, path))
            .with_detail(Detail::Mode(mode));
        run(&mut c, 0, 0, |_| i64::from(f(path, mode))) as c_int
    }
}

hook! {
    fn mkdirat(dirfd: c_int, path: *const c_char, mode: c_uint) -> c_int;
    real Mkdirat;
    op Op::Mkdir;
    |f| {
        let mut c = Call::new(Op::Mkdir, "mkdirat", Target::At(dirfd, path))
            .with_detail(Detail::Mode(mode));
        run(&mut c, 0, 0, |_| i64::from(f(dirfd, path, mode))) as c_int
    }
}

hook! {
    fn link(old: *const c_char, new: *const c_char) -> c_int;
    real Link;
    op Op::Link;
    |f| {
        let mut c = Call::new(Op::Link, "link", Target::At(AT_FDCWD, old))
            .with_second(Target::At(AT_FDCWD, new));
        run(&mut c, 0, 0, |_| i64::from(f(old, new))) as c_int
    }
}

hook! {
    fn linkat(od: c_int, old: *const c_char, nd: c_int, new: *const c_char, flags: c_int) -> c_int;
    real Linkat;
    op Op::Link;
    |f| {
        let mut c =
            Call::new(Op::Link, "linkat", Target::At(od, old)).with_second(Target::At(nd, new));
        run(&mut c, 0, 0, |_| i64::from(f(od, old, nd, new, flags))) as c_int
    }
}

hook! {
    fn symlink(target: *const c_char, linkpath: *const c_char) -> c_int;
    real Symlink;
    op Op::Link;
    |f| {
        let mut c = Call::new(Op::Link, "symlink", Target::Raw(target))
            .with_second(Target::At(AT_FDCWD, linkpath));
        run(&mut c, 0, 0, |_| i64::from(f(target, linkpath))) as c_int
    }
}

hook! {
    fn symlinkat(target: *const c_char, nd: c_int, linkpath: *const c_char) -> c_int;
    real Symlinkat;
    op Op::Link;
    |f| {
        let mut c = Call::new(Op::Link, "symlinkat", Target::Raw(target))
            .with_second(Target::At(nd, linkpath));
        run(&mut c, 0, 0, |_| i64::from(f(target, nd, linkpath))) as c_int
    }
}
