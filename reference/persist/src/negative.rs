//! Deliberate defects of the reference runtime, for the kit's negative controls
//! (harness/tests/negative_controls_session_persist.rs): each makes the suite fail
//! exactly the rows that catch it. Chosen by `VXPERSIST_NEGATIVE_CONTROL`, which no
//! shipped profile sets; unset, the runtime is the reference.

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
}

impl Defect {
    fn name(self) -> &'static str {
        match self {
            Defect::DeleteOnPauseRunError => "delete-on-pause-run-error",
            Defect::TrustUnstampedSource => "trust-unstamped-source",
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
