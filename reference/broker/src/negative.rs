//! Negative-control modes of the reference, for the kit's own tests only
//! (`harness/tests/negative_controls_single_writer.rs`): `VXBROKER_NEGATIVE_CONTROL`
//! names one deliberate defect, and the suite must fail exactly the rows that catch
//! it. Unset (the only way the kit's profiles run it), the broker is the reference.
//!
//! - `attach-on-file`: a socket file counts as a live master (no `connect()` probe);
//! - `unlock-after-spawn`: the broker `LOCK_UN`s the lock it handed to the master;
//! - `forward-secondary`: a secondary's input and resizes pass the gate;
//! - `no-recheck`: no re-probe after the acquire (a master that appeared meanwhile is
//!   taken for an orphan: its socket is unlinked and a second master launched);
//! - `lenient-master`: `master --create` replaces whatever is at its path, and
//!   `master --attach` with no master there exits 0 without a word;
//! - `client-forces`: `vxbroker client` sends `force=1` on its automatic reconnects;
//! - `ghost-row`: the session list takes the ids of the engine's index as physical
//!   keys, without resolving them through the aliases (the seed's #64 failure mode);
//! - `reset-on-lock-error`: a lock that cannot be taken for a reason other than
//!   another holder (`unavailable.lock`) drops the connection with no close frame,
//!   as a broker whose handler crashes on the error does;
//! - `busy-on-lock-error`: the same error closes 4409, BUSY, as if another held the
//!   lock (flock's EACCES read as "held elsewhere");
//! - `recheck-first`: the socket re-check runs before the acquire, not after it;
//! - `lock-to-agent`: the master leaves the lock's descriptor open across the exec
//!   into the agent (and so into whatever the agent forks);
//! - `inherit-lock`: the lock file is opened without close-on-exec, so a master
//!   launched for another key meanwhile inherits it;
//! - `gate-text-only`: the input gate holds a secondary's text frames only, not its
//!   raw binary frames;
//! - `retire-keeps-claim`: retire leaves the owner's claim in place (and, under
//!   `--takeover`, the owner file);
//! - `reap-without-lock`: retire unlinks a stale socket without taking the lock;
//! - `any-cwd`: the engine's index is read without the launch's cwd;
//! - `index-read-write`: the engine's index is opened read-write (nothing written);
//! - `snapshot-after-launch`: the index is snapshotted after the launch;
//! - `push-unpersisted`: the real id is pushed even when its alias was not persisted;
//! - `follow-symlink`: the socket path is classified by `stat`, following a symlink.

use std::sync::OnceLock;

/// The variable that selects a defect.
pub const ENV: &str = "VXBROKER_NEGATIVE_CONTROL";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defect {
    AttachOnFile,
    UnlockAfterSpawn,
    ForwardSecondary,
    NoRecheck,
    LenientMaster,
    ClientForces,
    GhostRow,
    ResetOnLockError,
    BusyOnLockError,
    RecheckFirst,
    LockToAgent,
    InheritLock,
    GateTextOnly,
    RetireKeepsClaim,
    ReapWithoutLock,
    AnyCwd,
    IndexReadWrite,
    SnapshotAfterLaunch,
    PushUnpersisted,
    FollowSymlink,
}

/// The selected defect, read once; an unknown name selects none.
pub fn defect() -> Option<Defect> {
    static MODE: OnceLock<Option<Defect>> = OnceLock::new();
    *MODE.get_or_init(|| match std::env::var(ENV).as_deref() {
        Ok("attach-on-file") => Some(Defect::AttachOnFile),
        Ok("unlock-after-spawn") => Some(Defect::UnlockAfterSpawn),
        Ok("forward-secondary") => Some(Defect::ForwardSecondary),
        Ok("no-recheck") => Some(Defect::NoRecheck),
        Ok("lenient-master") => Some(Defect::LenientMaster),
        Ok("client-forces") => Some(Defect::ClientForces),
        Ok("ghost-row") => Some(Defect::GhostRow),
        Ok("reset-on-lock-error") => Some(Defect::ResetOnLockError),
        Ok("busy-on-lock-error") => Some(Defect::BusyOnLockError),
        Ok("recheck-first") => Some(Defect::RecheckFirst),
        Ok("lock-to-agent") => Some(Defect::LockToAgent),
        Ok("inherit-lock") => Some(Defect::InheritLock),
        Ok("gate-text-only") => Some(Defect::GateTextOnly),
        Ok("retire-keeps-claim") => Some(Defect::RetireKeepsClaim),
        Ok("reap-without-lock") => Some(Defect::ReapWithoutLock),
        Ok("any-cwd") => Some(Defect::AnyCwd),
        Ok("index-read-write") => Some(Defect::IndexReadWrite),
        Ok("snapshot-after-launch") => Some(Defect::SnapshotAfterLaunch),
        Ok("push-unpersisted") => Some(Defect::PushUnpersisted),
        Ok("follow-symlink") => Some(Defect::FollowSymlink),
        _ => None,
    })
}

/// Whether `d` is the selected defect.
pub fn is(d: Defect) -> bool {
    defect() == Some(d)
}
