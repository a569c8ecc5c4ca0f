//! The per-key lock: contention, handoff to an inheriting child, release on the lost
//! race, and the lock directory's safety checks (CI runs as root, so a chown'd
//! directory is a real foreign owner).

use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use vx_broker::key::{parse_key, EngineTable, SessionKey};
use vx_broker::lock::{resolve_lock_dir, Acquired, LockDir};
use vx_broker::Rule;

const U: &str = "6a73c0de-1234-4abc-8def-0123456789ab";

fn uid() -> u64 {
    u64::from(nix::unistd::geteuid().as_raw())
}

fn key(id: &str) -> SessionKey {
    parse_key(&format!("opencode:{id}"), &EngineTable::seed(), false).unwrap()
}

fn claude() -> SessionKey {
    parse_key(&format!("claude:{U}"), &EngineTable::seed(), false).unwrap()
}

fn won(acquired: Acquired) -> vx_broker::lock::SessionLock {
    match acquired {
        Acquired::Won(lock) => lock,
        Acquired::Held => panic!("expected to win the lock"),
    }
}

#[test]
fn second_acquire_is_held_and_release_frees() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = LockDir::open(&tmp.path().join("locks"), uid()).unwrap();
    let first = won(dir.acquire(&claude()).unwrap());
    assert!(matches!(dir.acquire(&claude()).unwrap(), Acquired::Held));
    assert!(dir.is_held(&claude()).unwrap());
    // Distinct keys never contend.
    let other = won(dir.acquire(&key("ses_two")).unwrap());
    first.release().unwrap();
    assert!(!dir.is_held(&claude()).unwrap());
    other.release().unwrap();
    let file = tmp.path().join("locks").join(format!("claude@{U}.lock"));
    let meta = std::fs::metadata(file).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o600);
    assert_eq!(
        std::fs::metadata(tmp.path().join("locks")).unwrap().mode() & 0o777,
        0o700
    );
}

#[test]
fn sixteen_concurrent_acquires_have_one_winner() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = Arc::new(LockDir::open(tmp.path(), uid()).unwrap());
    let barrier = Arc::new(Barrier::new(16));
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let (dir, barrier) = (Arc::clone(&dir), Arc::clone(&barrier));
            std::thread::spawn(move || {
                barrier.wait();
                dir.acquire(&claude()).unwrap()
            })
        })
        .collect();
    let results: Vec<Acquired> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners = results
        .iter()
        .filter(|r| matches!(r, Acquired::Won(_)))
        .count();
    assert_eq!(winners, 1);
}

/// A lock that already is descriptor 3, close-on-exec as the broker opens it, still
/// reaches the exec'd master (a dup2 onto itself would keep the flag: the master
/// started without its lock, one CI run in several).
#[test]
fn a_lock_that_already_is_descriptor_3_is_inherited() {
    let tmp = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(tmp.path().join("l")).unwrap();
    let fd = file.as_raw_fd();
    let mut cmd = Command::new("/bin/sh");
    cmd.args(["-c", "test -e /proc/self/fd/3"]);
    // SAFETY: between fork and exec only dup3 and fcntl run, async-signal-safe; they
    // change the child's descriptors only.
    unsafe {
        cmd.pre_exec(move || {
            // The child's lock at 3 with close-on-exec, as the broker's own could be.
            if fd != 3 {
                nix::unistd::dup3(fd, 3, nix::fcntl::OFlag::O_CLOEXEC)
                    .map_err(std::io::Error::from)?;
            }
            nix::fcntl::fcntl(
                3,
                nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC),
            )
            .map_err(std::io::Error::from)?;
            vx_broker::lock::inherit_at_master_fd(3)
        });
    }
    let status = cmd.status().unwrap();
    assert!(status.success(), "descriptor 3 was not inherited: {status}");
}

/// A `sleep` that inherited `fd` as its descriptor 3, the stand-in for a master.
fn inheriting_child(fd: i32) -> Child {
    let mut cmd = Command::new("sleep");
    cmd.arg("30");
    // SAFETY: only dup2 or fcntl runs between fork and exec; both are
    // async-signal-safe. (A lock that is itself descriptor 3 kept close-on-exec
    // through a dup2 onto itself, and the master started without it: a CI flake.)
    unsafe {
        cmd.pre_exec(move || vx_broker::lock::inherit_at_master_fd(fd));
    }
    cmd.spawn().unwrap()
}

fn wait_until_free(dir: &LockDir, key: &SessionKey) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while dir.is_held(key).unwrap() {
        assert!(
            Instant::now() < deadline,
            "lock still held after the child died"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn transfer_hands_the_flock_to_the_inheriting_child() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = LockDir::open(tmp.path(), uid()).unwrap();
    let lock = won(dir.acquire(&claude()).unwrap());
    let mut child = inheriting_child(lock.fd().as_raw_fd());
    lock.transfer();
    assert!(dir.is_held(&claude()).unwrap(), "transfer must not unlock");
    child.kill().unwrap();
    child.wait().unwrap();
    wait_until_free(&dir, &claude());
}

#[test]
fn release_unlocks_even_when_a_child_shares_the_description() {
    // Why transfer never calls LOCK_UN: it unlocks the shared description, the
    // child's copy included.
    let tmp = tempfile::tempdir().unwrap();
    let dir = LockDir::open(tmp.path(), uid()).unwrap();
    let lock = won(dir.acquire(&claude()).unwrap());
    let mut child = inheriting_child(lock.fd().as_raw_fd());
    lock.release().unwrap();
    let free = !dir.is_held(&claude()).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(free);
}

#[test]
fn dropping_an_untransferred_lock_frees_it() {
    // A launch that fails before any master exists: the lock frees at once.
    let tmp = tempfile::tempdir().unwrap();
    let dir = LockDir::open(tmp.path(), uid()).unwrap();
    drop(won(dir.acquire(&claude()).unwrap()));
    assert!(!dir.is_held(&claude()).unwrap());
}

fn open_rule(path: &Path) -> Rule {
    LockDir::open(path, uid()).unwrap_err().rule
}

#[test]
fn unsafe_lock_dirs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();

    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_eq!(open_rule(&link), Rule::LockDirSymlink);

    let file = tmp.path().join("file");
    std::fs::write(&file, b"").unwrap();
    assert_eq!(open_rule(&file), Rule::LockDirNotDir);

    for mode in [0o720, 0o702, 0o777] {
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(mode)).unwrap();
        assert_eq!(open_rule(&real), Rule::LockDirWritable, "{mode:o}");
    }
    // Readable by others is fine: only writing lets anyone else hold or swap keys.
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert!(LockDir::open(&real, uid()).is_ok());

    let err = LockDir::open(&real, uid() + 1).unwrap_err();
    assert_eq!(
        (err.rule, err.code.as_str()),
        (Rule::LockDirForeignOwner, "unavailable.lock_dir")
    );
    assert_eq!(err.code.exit_code(), 6);
}

#[test]
fn a_chowned_lock_dir_is_foreign() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("theirs");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let nobody = if uid() == 65534 { 65533 } else { 65534 };
    match nix::unistd::chown(&dir, Some(nix::unistd::Uid::from_raw(nobody)), None) {
        Ok(()) => assert_eq!(open_rule(&dir), Rule::LockDirForeignOwner),
        // Not root (a developer's machine): the uid-mismatch case above covers it.
        Err(nix::errno::Errno::EPERM) => assert_ne!(uid(), 0, "root must be able to chown"),
        Err(e) => panic!("chown: {e}"),
    }
}

#[test]
fn a_foreign_lock_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = LockDir::open(tmp.path(), uid()).unwrap();
    let name = tmp.path().join(format!("claude@{U}.lock"));
    std::fs::create_dir(&name).unwrap();
    let err = dir.acquire(&claude()).unwrap_err();
    assert_eq!(
        (err.rule, err.code.as_str()),
        (Rule::LockOpen, "unavailable.lock")
    );
    std::fs::remove_dir(&name).unwrap();
    std::os::unix::fs::symlink("/dev/null", &name).unwrap();
    assert_eq!(dir.acquire(&claude()).unwrap_err().rule, Rule::LockOpen);
}

#[test]
fn lock_dir_resolution() {
    use std::ffi::OsStr;
    let os = |s: &'static str| Some(OsStr::new(s));
    assert_eq!(
        resolve_lock_dir(os("/f"), os("/e"), os("/x"), os("/h")).unwrap(),
        Path::new("/f")
    );
    assert_eq!(
        resolve_lock_dir(None, os("/e"), os("/x"), os("/h")).unwrap(),
        Path::new("/e")
    );
    assert_eq!(
        resolve_lock_dir(None, os(""), os("/x"), os("/h")).unwrap(),
        Path::new("/x/venomx/broker/locks")
    );
    assert_eq!(
        resolve_lock_dir(None, None, None, os("/h")).unwrap(),
        Path::new("/h/.local/state/venomx/broker/locks")
    );
    assert_eq!(
        resolve_lock_dir(None, os("rel"), None, None)
            .unwrap_err()
            .rule,
        Rule::LockDirRelative
    );
    assert_eq!(
        resolve_lock_dir(None, None, None, None).unwrap_err().rule,
        Rule::LockDirUnset
    );
    assert_eq!(
        resolve_lock_dir(None, None, os("rel"), os("/h"))
            .unwrap_err()
            .rule,
        Rule::LockDirUnset
    );
}
