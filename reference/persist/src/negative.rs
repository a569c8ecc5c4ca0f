//! Deliberate defects of the reference, for the kit's negative controls
//! (harness/tests/negative_controls_session_persist.rs): each makes the suite fail
//! exactly the rows that catch it. Chosen by `VXPERSIST_NEGATIVE_CONTROL`, which no
//! shipped profile sets; unset, the packer and the runtime are the reference.

use std::sync::OnceLock;

/// One defect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defect {
    /// A PauseRun that reports an error still deletes the previous pause blob (the
    /// seed: "never delete on PauseRun error").
    DeleteOnPauseRunError,
    /// Visit-1 provenance trusts an inbound id any source's edge delivered, without
    /// the source output's `_session_id`/`_backend` stamp (the seed's revision 8).
    TrustUnstampedSource,
    /// Unpack opens the root and its directories following symbolic links, and
    /// writes a file whose destination is a symbolic link through it.
    FollowDestinationSymlink,
    /// Unpack writes a file whose destination is a regular file with more than one
    /// link in place (through the other names) instead of replacing the entry.
    WriteThroughHardLink,
    /// Unpack first reads an existing destination to compare it, opened without
    /// `O_NONBLOCK`: a FIFO there blocks it for ever.
    BlockOnFifo,
    /// Unpack merges in place: no staging, each file written at its destination, the
    /// key file first, nothing taken back on a failure.
    MergeInPlace,
    /// Pack also collects every regular file under the root whose name carries the
    /// session id (todo lists, shell snapshots, archived and temp copies, …).
    CollectByFileName,
    /// Pack silently leaves out a session file that has more than one link.
    SkipHardLink,
    /// HasSession answers true for any key file of the id, and unpack writes beside
    /// another key file of the id: two key files are not ambiguous to it.
    GuessAmbiguous,
    /// Unpack never calls fsync nor sync_file_range (the seed asks for a temp
    /// extract and an atomic rename, not for fsync): not a violation, but a fault
    /// row that fails each fsync in turn then fails none and shows nothing.
    NoFsync,
}

impl Defect {
    fn name(self) -> &'static str {
        match self {
            Defect::DeleteOnPauseRunError => "delete-on-pause-run-error",
            Defect::TrustUnstampedSource => "trust-unstamped-source",
            Defect::FollowDestinationSymlink => "follow-destination-symlink",
            Defect::WriteThroughHardLink => "write-through-hard-link",
            Defect::BlockOnFifo => "block-on-fifo",
            Defect::MergeInPlace => "merge-in-place",
            Defect::CollectByFileName => "collect-by-file-name",
            Defect::SkipHardLink => "skip-hard-link",
            Defect::GuessAmbiguous => "guess-ambiguous",
            Defect::NoFsync => "no-fsync",
        }
    }
}

/// Whether `d` is the defect this process was started with.
pub fn active(d: Defect) -> bool {
    static CHOSEN: OnceLock<Option<String>> = OnceLock::new();
    CHOSEN
        .get_or_init(|| std::env::var("VXPERSIST_NEGATIVE_CONTROL").ok())
        .as_deref()
        == Some(d.name())
}
