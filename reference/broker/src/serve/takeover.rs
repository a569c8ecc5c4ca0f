//! `--takeover`: the claim lives in the owner file `<runtime>/<physical>.owner`, so
//! brokers sharing a runtime directory arbitrate one writer (docs/spec/single-writer.md
//! "Takeover"). Every read-modify-write holds an exclusive flock on the sibling
//! `<physical>.owner.lock` (never unlinked: unlinking races the flock).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{open, FlockArg, OFlag};
use nix::sys::stat::Mode;

use crate::claims::{decide, ClaimKey, Decision, Prior, Viewer};
use crate::error::{BrokerError, Result, Rule};
use crate::owner::{self, OwnerRecord};

fn owner_name(physical: &str) -> String {
    format!("{physical}{}", crate::files::OWNER_SUFFIX)
}

/// Runs `f` holding the owner lock of `physical`.
fn locked<T>(runtime: &Path, physical: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    let path = runtime.join(format!("{}.lock", owner_name(physical)));
    let flags = OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
    let fd = open(&path, flags, Mode::from_bits_truncate(0o600))
        .map_err(|_| BrokerError::new(Rule::LockOpen))?;
    // SAFETY: `open` just returned this descriptor and nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    loop {
        #[allow(deprecated)]
        match nix::fcntl::flock(fd.as_raw_fd(), FlockArg::LockExclusive) {
            Ok(()) => break,
            Err(Errno::EINTR) => continue,
            Err(_) => return Err(Rule::LockFlock.into()),
        }
    }
    // Closing the descriptor at the end of this scope releases the lock.
    f()
}

/// The owner file as the claim layer sees it: absent, held, or unreadable.
fn read(runtime: &Path, physical: &str) -> (Prior, Option<OwnerRecord>) {
    let path = runtime.join(owner_name(physical));
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Prior::None, None),
        _ => match crate::small_file::read_capped(&path).and_then(|b| owner::decode(&b)) {
            Ok(rec) => (Prior::Held(rec.claim()), Some(rec)),
            Err(_) => (Prior::Unreadable, None),
        },
    }
}

/// Decides one attach against the owner file; an owner (re)writes it. Returns the
/// decision and, for a secondary, the holder's record (its `label` and `since`).
pub(crate) fn claim(
    runtime: &Path,
    physical: &str,
    viewer: Viewer,
    label: &str,
    force: bool,
    now_ms: u64,
) -> Result<(Decision, Option<OwnerRecord>)> {
    let Viewer::Tab(key) = viewer else {
        return Ok((Decision::LegacyOwner, None));
    };
    locked(runtime, physical, || {
        let (prior, current) = read(runtime, physical);
        let decision = decide(prior, viewer, force, now_ms);
        match decision {
            Decision::Owner { .. } => {
                let since_ms = current
                    .filter(|c| c.key == key)
                    .map_or(now_ms, |c| c.since_ms);
                let rec = OwnerRecord {
                    key,
                    label: label.to_owned(),
                    since_ms: since_ms.min(now_ms),
                    heartbeat_ms: now_ms,
                };
                crate::small_file::publish(runtime, &owner_name(physical), &owner::encode(&rec)?)?;
                Ok((decision, None))
            }
            // A secondary, the same browser's second tab included, never writes.
            _ => Ok((decision, current)),
        }
    })
}

/// Retire: forget the lease (best effort, under the owner lock).
pub(crate) fn clear(runtime: &Path, physical: &str) {
    if crate::negative::is(crate::negative::Defect::RetireKeepsClaim) {
        return;
    }
    let _ = locked(runtime, physical, || {
        let _ = std::fs::remove_file(runtime.join(owner_name(physical)));
        Ok(())
    });
}

/// The owner's 1 s heartbeat: `Ok(None)` while the file still names `key` (it is
/// refreshed), `Ok(Some(holder))` once another viewer took over (the caller demotes
/// itself in place).
pub(crate) fn heartbeat(
    runtime: &Path,
    physical: &str,
    key: ClaimKey,
    now_ms: u64,
) -> Result<Option<OwnerRecord>> {
    locked(runtime, physical, || match read(runtime, physical) {
        (_, Some(mut rec)) if rec.key == key => {
            rec.heartbeat_ms = now_ms.max(rec.since_ms);
            crate::small_file::publish(runtime, &owner_name(physical), &owner::encode(&rec)?)?;
            Ok(None)
        }
        (_, Some(holder)) => Ok(Some(holder)),
        // Gone or unreadable: nobody verifiable holds it, and this viewer no longer
        // can show that it does: demoted, with no holder to name.
        (_, None) => Err(Rule::FileIo.into()),
    })
}
