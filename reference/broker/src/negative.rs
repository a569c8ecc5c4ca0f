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
//!   lock (flock's EACCES read as "held elsewhere").

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
        _ => None,
    })
}

/// Whether `d` is the selected defect.
pub fn is(d: Defect) -> bool {
    defect() == Some(d)
}
