//! The trace fields a harness checks contracts with: open flags and mode, the lock
//! operation of flock and fcntl locks, both paths of a rename, fsync of a directory.

mod common;

use common::*;
use vxfault::TraceRecord;

fn by_call<'a>(run: &'a Run, op: &str) -> Vec<&'a TraceRecord> {
    run.calls().into_iter().filter(|r| r.op == op).collect()
}

#[test]
fn open_flags_and_mode() {
    let dir = tempdir();
    let d = dir.path();
    let steps = steps![
        format!("open:{}/ck.tmp:wcxn:600", d.display()),
        "close",
        format!("openat:cwd:{}/ro:rc:640", d.display()),
        format!("open_2:{}/ro:r", d.display()),
        "sys:openat:cwd:ro:rw",
        format!("creat:{}/cr", d.display()),
    ];
    let run = run_in("", d, &steps);
    let opens = by_call(&run, "open");
    let got: Vec<(&str, Option<&str>, Option<&str>)> = opens
        .iter()
        .map(|r| (r.call.as_str(), r.flags.as_deref(), r.mode.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "open",
                Some("O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC"),
                Some("0600")
            ),
            ("openat", Some("O_RDONLY|O_CREAT|O_CLOEXEC"), Some("0640")),
            ("__open_2", Some("O_RDONLY|O_CLOEXEC"), None),
            ("syscall:openat", Some("O_RDWR|O_CLOEXEC"), None),
            ("creat", Some("O_WRONLY|O_CREAT|O_TRUNC"), Some("0644")),
        ],
        "{:#?}",
        run.trace
    );
}

#[test]
fn lock_operations() {
    let dir = tempdir();
    let d = dir.path();
    let steps = steps![
        format!("open:{}/lk:rwc", d.display()),
        "flock:ex",
        "flock:un",
        "flock:exnb",
        "flock:sh",
        "fcntl:setlk:w",
        "fcntl:setlkw:r",
        "fcntl:ofd_setlk:w",
        "fcntl:ofd_setlkw:u",
        "sys:flock:un",
        "sys:fcntl:setlk:u",
    ];
    let run = run_in("", d, &steps);
    let locks: Vec<(&str, &str)> = by_call(&run, "flock")
        .iter()
        .map(|r| (r.call.as_str(), r.lock.as_deref().unwrap_or("-")))
        .collect();
    assert_eq!(
        locks,
        vec![
            ("flock", "EX"),
            ("flock", "UN"),
            ("flock", "EX|NB"),
            ("flock", "SH"),
            ("fcntl", "SETLK F_WRLCK"),
            ("fcntl", "SETLKW F_RDLCK"),
            ("fcntl", "OFD_SETLK F_WRLCK"),
            ("fcntl", "OFD_SETLKW F_UNLCK"),
            ("syscall:flock", "UN"),
            ("syscall:fcntl", "SETLK F_UNLCK"),
        ]
    );
    // A rule can single out the unlock that must never happen, and the trace says
    // which operation was refused.
    let run = run_in(&format!("flock@{}#2=EPERM", glob(&d.join("lk"))), d, &steps);
    let fired = run.fired(1);
    assert_eq!(fired.len(), 1);
    assert_eq!(fired[0].lock.as_deref(), Some("UN"));
}

#[test]
fn rename_has_both_paths_and_directory_fsyncs_are_marked() {
    let dir = tempdir();
    let d = dir.path();
    let steps = steps![
        format!("open:{}/a:wc", d.display()),
        "fsync",
        format!("rename:{}/a:{}/b", d.display(), d.display()),
        format!("opendir:{}", d.display()),
        "fsync:dir",
        "fdatasync:dir",
    ];
    let run = run_in("", d, &steps);
    let rn = by_call(&run, "rename");
    assert_eq!(rn.len(), 1);
    assert_eq!(rn[0].path, format!("{}/a", d.display()));
    assert_eq!(
        rn[0].path2.as_deref(),
        Some(format!("{}/b", d.display()).as_str())
    );
    let syncs: Vec<(&str, Option<bool>)> = by_call(&run, "fsync")
        .iter()
        .map(|r| (r.call.as_str(), r.dir))
        .collect();
    assert_eq!(
        syncs,
        vec![
            ("fsync", None),
            ("fsync", Some(true)),
            ("fdatasync", Some(true))
        ]
    );
}
