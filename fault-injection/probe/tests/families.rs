//! The families added by issue 13 under every action: rmdir, link, fallocate, copies
//! into a file (copy_file_range, sendfile, splice), stdio (fwrite, fputs, fflush,
//! fclose).

#[path = "common/cases.rs"]
mod cases;
mod common;

use std::fs;
use std::path::Path;

use cases::*;
use common::*;

fn size(rel: &'static str, want: u64) -> Effect {
    Box::new(move |d: &Path| fs::metadata(d.join(rel)).map(|m| m.len()).ok() == Some(want))
}

#[test]
fn rmdir_family() {
    let mk = vec!["mkdir:{D}/n", "opendir:{D}"];
    let cases = vec![
        case("rmdir", "n", mk.clone(), "rmdir:{D}/n", Some(gone("n")), 0),
        case(
            "rmdir",
            "n",
            mk.clone(),
            "unlinkat:dir:n:rmdir",
            Some(gone("n")),
            0,
        ),
        #[cfg(target_arch = "x86_64")]
        case(
            "rmdir",
            "n",
            mk.clone(),
            "sys:rmdir:{D}/n",
            Some(gone("n")),
            0,
        ),
        case(
            "rmdir",
            "n",
            mk.clone(),
            "sys:unlinkat_rmdir:dir:n",
            Some(gone("n")),
            0,
        ),
    ];
    check_all(&cases, Act::Errno("ENOTEMPTY", 39), &[Act::Lie]);
    // unlink rules do not see directory removals, and rmdir rules not file unlinks.
    let dir = tempdir();
    let d = dir.path();
    let steps = steps![
        format!("mkdir:{}/n", d.display()),
        format!("creat:{}/f", d.display()),
        format!("opendir:{}", d.display()),
        "unlinkat:dir:n:rmdir",
        "unlinkat:dir:f"
    ];
    let run = run_in("unlink=EIO;rmdir=EBUSY", d, &steps);
    assert_eq!(run.step("unlinkat:dir:n").errno, 16);
    assert_eq!(run.step("unlinkat:dir:f").errno, 5);
}

#[test]
fn link_family() {
    let mk = vec!["creat:{D}/f", "close", "opendir:{D}"];
    let cases = vec![
        case(
            "link",
            "l",
            mk.clone(),
            "link:{D}/f:{D}/l",
            Some(exists("l")),
            0,
        ),
        case(
            "link",
            "l",
            mk.clone(),
            "linkat:dir:f:cwd:l",
            Some(exists("l")),
            0,
        ),
        case(
            "link",
            "l",
            mk.clone(),
            "symlink:f:{D}/l",
            Some(exists("l")),
            0,
        ),
        case(
            "link",
            "l",
            mk.clone(),
            "symlinkat:f:dir:l",
            Some(exists("l")),
            0,
        ),
        case(
            "link",
            "l",
            mk.clone(),
            "sys:linkat:cwd:f:dir:l",
            Some(exists("l")),
            0,
        ),
        case(
            "link",
            "l",
            mk.clone(),
            "sys:symlinkat:f:dir:l",
            Some(exists("l")),
            0,
        ),
    ];
    check_all(&cases, Act::Errno("EMLINK", 31), &[Act::Lie]);
    // Both paths are traced; a symlink's target is given as written.
    let dir = tempdir();
    let d = dir.path();
    let run = run_in(
        "",
        d,
        &steps![
            format!("creat:{}/f", d.display()),
            format!("link:{}/f:{}/h", d.display(), d.display()),
            format!("symlink:../x/f:{}/s", d.display())
        ],
    );
    let links: Vec<(String, Option<String>)> = run
        .calls()
        .iter()
        .filter(|r| r.op == "link")
        .map(|r| (r.path.clone(), r.path2.clone()))
        .collect();
    let p = |n: &str| format!("{}/{n}", d.display());
    assert_eq!(
        links,
        vec![(p("f"), Some(p("h"))), ("../x/f".to_string(), Some(p("s")))]
    );
}

#[test]
fn fallocate_family() {
    let open = vec!["open:{D}/f:rwc"];
    let cases = vec![
        case(
            "fallocate",
            "f",
            open.clone(),
            "fallocate:4096",
            Some(size("f", 4096)),
            0,
        ),
        case(
            "fallocate",
            "f",
            open.clone(),
            "posix_fallocate:4096",
            Some(size("f", 4096)),
            0,
        ),
        case(
            "fallocate",
            "f",
            open.clone(),
            "sys:fallocate:4096",
            Some(size("f", 4096)),
            0,
        ),
    ];
    check_all(&cases, Act::Errno("ENOSPC", 28), &[Act::Lie]);
}

#[test]
fn copies_into_a_file_are_writes() {
    let pre = vec!["open:{D}/src:wc", "write:hello", "close", "open:{D}/f:wct"];
    let cases = vec![
        case(
            "write",
            "f",
            pre.clone(),
            "copy_file_range:{D}/src",
            Some(content("f", b"hello")),
            5,
        ),
        case(
            "write",
            "f",
            pre.clone(),
            "sendfile:{D}/src",
            Some(content("f", b"hello")),
            5,
        ),
        case(
            "write",
            "f",
            pre.clone(),
            "splice:hello",
            Some(content("f", b"hello")),
            5,
        ),
        case(
            "write",
            "f",
            pre.clone(),
            "sys:copy_file_range:{D}/src",
            Some(content("f", b"hello")),
            5,
        ),
    ];
    check_all(
        &cases,
        Act::Errno("ENOSPC", 28),
        &[Act::Lie, Act::Short, Act::Torn],
    );
    // Into a pipe, splice is not a file write: untouched and untraced.
    let dir = tempdir();
    let run = run_in(
        "write=EIO",
        dir.path(),
        &steps!["splicepipe:hi", "open:/dev/null:w", "write:x"],
    );
    assert_eq!(run.step("splicepipe").ret, 2);
    assert!(run.calls().iter().all(|r| r.call != "splice"));
}

#[test]
fn stdio_entry_points() {
    let pre = vec!["open:{D}/f:wct", "fdopen"];
    let cases = vec![
        case(
            "write",
            "f",
            pre.clone(),
            "fwrite:hello",
            Some(content("f", b"hello")),
            5,
        ),
        case(
            "write",
            "f",
            pre.clone(),
            "fwrite_unlocked:hello",
            Some(content("f", b"hello")),
            5,
        ),
        case(
            "write",
            "f",
            pre.clone(),
            "fputs_unlocked:hello",
            Some(content("f", b"hello")),
            5,
        ),
        case(
            "write",
            "f",
            pre.clone(),
            "fputs:hello",
            Some(content("f", b"hello")),
            5,
        ),
    ];
    check_all(
        &cases,
        Act::Errno("ENOSPC", 28),
        &[Act::Lie, Act::Short, Act::Torn],
    );
    let close = vec![case("close", "f", pre.clone(), "fclose", None, 0)];
    check_all(&close, Act::Errno("EIO", 5), &[Act::Lie]);
    // fflush is a write too: the second write-family call on f here; ferror() is set.
    let dir = tempdir();
    let d = dir.path();
    let steps = steps![
        format!("open:{}/f:wct", d.display()),
        "fdopen",
        "fwrite:abc",
        "fflush",
        "ferror",
        "fflush_unlocked"
    ];
    let run = run_in(&format!("write@{}#2=EIO", glob(&d.join("f"))), d, &steps);
    assert_eq!((run.step("fwrite").ret, run.step("fflush").ret), (3, -1));
    assert_eq!(run.step("fflush").errno, 5);
    assert_eq!(run.step("ferror").ret, 1);
    let fired = run.fired(1);
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].call, "fflush");
    let run = run_in(&format!("write@{}#3=EIO", glob(&d.join("f"))), d, &steps);
    assert_eq!(run.step("fflush_unlocked").errno, 5);
    assert_eq!(run.fired(1)[0].call, "fflush_unlocked");
}
