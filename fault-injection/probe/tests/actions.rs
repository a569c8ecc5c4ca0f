//! Every action on every intercepted call: the probe's return value and errno, the
//! bytes on disk and the trace line must match the plan.

#[path = "common/cases.rs"]
mod cases;
mod common;

use cases::*;

#[test]
fn open_family() {
    // The fortified forms cannot take O_CREAT: they truncate an existing file instead.
    let pre = vec![
        "creat:{D}/tmp",
        "write:abc",
        "close",
        "rename:{D}/tmp:{D}/f",
    ];
    let truncated: fn() -> Effect = || content("f", b"");
    let cases = vec![
        case("open", "f", vec![], "open:{D}/f:wc", Some(exists("f")), 0),
        case("open", "f", vec![], "open64:{D}/f:wc", Some(exists("f")), 0),
        case(
            "open",
            "f",
            pre.clone(),
            "open_2:{D}/f:wt",
            Some(truncated()),
            0,
        ),
        case(
            "open",
            "f",
            pre.clone(),
            "open64_2:{D}/f:wt",
            Some(truncated()),
            0,
        ),
        case(
            "open",
            "f",
            vec!["opendir:{D}"],
            "openat:dir:f:wc",
            Some(exists("f")),
            0,
        ),
        case("open", "f", vec![], "openat:cwd:f:wc", Some(exists("f")), 0),
        case(
            "open",
            "f",
            vec!["opendir:{D}"],
            "openat64:dir:f:wc",
            Some(exists("f")),
            0,
        ),
        case(
            "open",
            "f",
            vec![
                "opendir:{D}",
                "creat:{D}/tmp",
                "write:abc",
                "close",
                "rename:{D}/tmp:{D}/f",
            ],
            "openat_2:dir:f:wt",
            Some(truncated()),
            0,
        ),
        case(
            "open",
            "f",
            vec![
                "opendir:{D}",
                "creat:{D}/tmp",
                "write:abc",
                "close",
                "rename:{D}/tmp:{D}/f",
            ],
            "openat64_2:dir:f:wt",
            Some(truncated()),
            0,
        ),
        case("open", "f", vec![], "creat:{D}/f", Some(exists("f")), 0),
        case("open", "f", vec![], "creat64:{D}/f", Some(exists("f")), 0),
        case(
            "open",
            "f",
            vec![],
            "sys:open:{D}/f:wc",
            Some(exists("f")),
            0,
        ),
        case(
            "open",
            "f",
            vec!["opendir:{D}"],
            "sys:openat:dir:f:wc",
            Some(exists("f")),
            0,
        ),
        case("open", "f", vec![], "sys:creat:{D}/f", Some(exists("f")), 0),
    ];
    // `lie` is rejected for open (no fd to return): see plan tests.
    check_all(&cases, Act::Errno("EACCES", 13), &[]);
}

#[test]
fn write_family() {
    let open = vec!["open:{D}/f:wct"];
    let hello = || Some(content("f", b"hello"));
    let cases = vec![
        case("write", "f", open.clone(), "write:hello", hello(), 5),
        case("write", "f", open.clone(), "pwrite:hello:0", hello(), 5),
        case("write", "f", open.clone(), "pwrite64:hello:0", hello(), 5),
        case("write", "f", open.clone(), "writev:he,llo", hello(), 5),
        case("write", "f", open.clone(), "pwritev:h,e,llo:0", hello(), 5),
        case("write", "f", open.clone(), "pwritev64:hel,lo:0", hello(), 5),
        case("write", "f", open.clone(), "pwritev2:hell,o:0", hello(), 5),
        case("write", "f", open.clone(), "sys:write:hello", hello(), 5),
        case(
            "write",
            "f",
            open.clone(),
            "sys:pwrite64:hello:0",
            hello(),
            5,
        ),
        case("write", "f", open.clone(), "sys:writev:he,l,lo", hello(), 5),
    ];
    // "Did nothing" for a write is an empty file.
    check_all(
        &cases,
        Act::Errno("ENOSPC", 28),
        &[Act::Lie, Act::Short, Act::Torn],
    );
}

#[test]
fn fsync_family() {
    let open = vec!["open:{D}/f:wc"];
    let dir = vec!["opendir:{D}"];
    let cases = vec![
        case("fsync", "f", open.clone(), "fsync", None, 0),
        case("fsync", "f", open.clone(), "fdatasync", None, 0),
        case("fsync", "f", open.clone(), "sync_file_range", None, 0),
        case("fsync", "f", open.clone(), "syncfs", None, 0),
        // fsync of a directory is selected by the directory's path.
        case("fsync", "", dir.clone(), "fsync:dir", None, 0),
        case("fsync", "f", open.clone(), "sys:fsync", None, 0),
        case("fsync", "f", open.clone(), "sys:fdatasync", None, 0),
        case("fsync", "f", open.clone(), "sys:sync_file_range", None, 0),
        case("fsync", "", dir.clone(), "sys:syncfs:dir", None, 0),
    ];
    check_all(&cases, Act::Errno("EIO", 5), &[Act::Lie]);
}

#[test]
fn rename_family() {
    let mk = vec!["creat:{D}/a", "close", "opendir:{D}"];
    let cases = vec![
        case(
            "rename",
            "a",
            mk.clone(),
            "rename:{D}/a:{D}/b",
            Some(renamed("a", "b")),
            0,
        ),
        // The glob may name the destination instead.
        case(
            "rename",
            "b",
            mk.clone(),
            "rename:{D}/a:{D}/b",
            Some(renamed("a", "b")),
            0,
        ),
        case(
            "rename",
            "a",
            mk.clone(),
            "renameat:dir:a:dir:b",
            Some(renamed("a", "b")),
            0,
        ),
        case(
            "rename",
            "b",
            mk.clone(),
            "renameat2:dir:a:cwd:b",
            Some(renamed("a", "b")),
            0,
        ),
        case(
            "rename",
            "a",
            mk.clone(),
            "sys:rename:{D}/a:{D}/b",
            Some(renamed("a", "b")),
            0,
        ),
        case(
            "rename",
            "a",
            mk.clone(),
            "sys:renameat:dir:a:dir:b",
            Some(renamed("a", "b")),
            0,
        ),
        case(
            "rename",
            "b",
            mk.clone(),
            "sys:renameat2:cwd:a:dir:b",
            Some(renamed("a", "b")),
            0,
        ),
    ];
    check_all(&cases, Act::Errno("EXDEV", 18), &[Act::Lie]);
}

#[test]
fn unlink_mkdir_families() {
    let mk = vec!["creat:{D}/f", "close", "opendir:{D}"];
    let unlink = vec![
        case(
            "unlink",
            "f",
            mk.clone(),
            "unlink:{D}/f",
            Some(gone("f")),
            0,
        ),
        case(
            "unlink",
            "f",
            mk.clone(),
            "unlinkat:dir:f",
            Some(gone("f")),
            0,
        ),
        case(
            "unlink",
            "f",
            mk.clone(),
            "sys:unlink:{D}/f",
            Some(gone("f")),
            0,
        ),
        case(
            "unlink",
            "f",
            mk.clone(),
            "sys:unlinkat:cwd:f",
            Some(gone("f")),
            0,
        ),
    ];
    check_all(&unlink, Act::Errno("EBUSY", 16), &[Act::Lie]);
    let dir = vec!["opendir:{D}"];
    let mkdir = vec![
        case("mkdir", "n", vec![], "mkdir:{D}/n", Some(exists("n")), 0),
        case(
            "mkdir",
            "n",
            dir.clone(),
            "mkdirat:dir:n",
            Some(exists("n")),
            0,
        ),
        case(
            "mkdir",
            "n",
            vec![],
            "sys:mkdir:{D}/n",
            Some(exists("n")),
            0,
        ),
        case(
            "mkdir",
            "n",
            dir.clone(),
            "sys:mkdirat:dir:n",
            Some(exists("n")),
            0,
        ),
    ];
    check_all(&mkdir, Act::Errno("EDQUOT", 122), &[Act::Lie]);
}

#[test]
fn close_flock_ftruncate_families() {
    let open = vec!["open:{D}/f:rwc"];
    let close = vec![
        case("close", "f", open.clone(), "close", None, 0),
        case("close", "f", open.clone(), "sys:close", None, 0),
    ];
    check_all(&close, Act::Errno("EIO", 5), &[Act::Lie]);
    let flock = vec![
        case("flock", "f", open.clone(), "flock:ex", None, 0),
        case("flock", "f", open.clone(), "fcntl:setlk:w", None, 0),
        case("flock", "f", open.clone(), "fcntl:setlkw:w", None, 0),
        case("flock", "f", open.clone(), "fcntl:ofd_setlk:w", None, 0),
        case("flock", "f", open.clone(), "fcntl:ofd_setlkw:w", None, 0),
        case("flock", "f", open.clone(), "sys:flock:ex", None, 0),
        case("flock", "f", open.clone(), "sys:fcntl:setlk:w", None, 0),
    ];
    check_all(&flock, Act::Errno("EAGAIN", 11), &[Act::Lie]);
    let sized = vec!["open:{D}/f:rwct", "write:hello"];
    let two = || Some(content("f", b"he"));
    let ftruncate = vec![
        case("ftruncate", "f", sized.clone(), "ftruncate:2", two(), 0),
        case("ftruncate", "f", sized.clone(), "ftruncate64:2", two(), 0),
        case("ftruncate", "f", sized.clone(), "sys:ftruncate:2", two(), 0),
    ];
    check_all(&ftruncate, Act::Errno("EFBIG", 27), &[Act::Lie]);
}
