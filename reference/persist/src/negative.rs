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
    /// The member-path rule refuses `.`, `..` and empty components only as a path's
    /// first component (issue 43's survivor: `<id>/../../../../x` wrote outside).
    PathFirstComponentOnly,
    /// The reader enforces the 16 MiB member cap but not the 32 MiB total.
    NoTotalCapOnRead,
    /// Unpack compares the header's session id with the request, not its backend.
    HeaderBackendUnchecked,
    /// Pack and HasSession enter a symbolic link to a directory (root, project
    /// directory, subtree) as if it were the directory.
    FollowSessionSymlinks,
    /// Unpack over an existing session leaves the old key file in place until the
    /// last rename replaces it.
    KeepOldKeyUntilRename,
    /// Visit-1 provenance counts every output stamped with the id, not only sources
    /// whose edge delivered it.
    ScanEveryOutput,
    /// The HasSession path keeps the inbound fingerprint when the source output
    /// carries none.
    InboundFingerprintFallback,
    /// Going fresh strips `_session_id` but keeps an inbound `_session_fingerprint`.
    FingerprintKeptOnFresh,
    /// A node that is not persist passes an inbound `_session_id` on unchecked.
    NonPersistKeepsInbound,
    /// A reInvoke's success and a rewind delete the refs they drop before the
    /// checkpoint without them is written (the earlier commit taken for it).
    DeleteBeforeCheckpoint,
    /// A failed Get or unpack of the source's slot falls through to HasSession.
    SourceSlotFallsThrough,
    /// Unpack compares the header's backend with the request, not its session id.
    HeaderIdUnchecked,
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
            Defect::PathFirstComponentOnly => "path-first-component-only",
            Defect::NoTotalCapOnRead => "no-total-cap-on-read",
            Defect::HeaderBackendUnchecked => "header-backend-unchecked",
            Defect::FollowSessionSymlinks => "follow-session-symlinks",
            Defect::KeepOldKeyUntilRename => "keep-old-key-until-rename",
            Defect::ScanEveryOutput => "scan-every-output",
            Defect::InboundFingerprintFallback => "inbound-fingerprint-fallback",
            Defect::FingerprintKeptOnFresh => "fingerprint-kept-on-fresh",
            Defect::NonPersistKeepsInbound => "non-persist-keeps-inbound",
            Defect::DeleteBeforeCheckpoint => "delete-before-checkpoint",
            Defect::SourceSlotFallsThrough => "source-slot-falls-through",
            Defect::HeaderIdUnchecked => "header-id-unchecked",
        }
    }
}

/// Whether `d` is the defect this process was started with (or one of them: the
/// variable may name several, separated by commas).
pub fn active(d: Defect) -> bool {
    static CHOSEN: OnceLock<Option<String>> = OnceLock::new();
    CHOSEN
        .get_or_init(|| std::env::var("VXPERSIST_NEGATIVE_CONTROL").ok())
        .as_deref()
        .is_some_and(|chosen| chosen.split(',').any(|name| name == d.name()))
}
