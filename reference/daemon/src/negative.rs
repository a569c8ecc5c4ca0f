//! Deliberate defects of the reference daemon, for the kit's negative controls only
//! (`harness/tests/negative_controls.rs`): `VXREF_NEGATIVE_CONTROL` names one, and the
//! recovery suite must fail exactly the scenarios that catch it. No shipped profile
//! sets it; unset (or an unknown name), `vxref` is the reference.
//!
//! - `skill-recommends-owner`: `vxref manifest --skill` tells agents to retry a denied
//!   verb with `VENOMX_TOKEN=@owner` (RFC §1: generated skills must not recommend it).
//! - `created-result-shared`: a one-shot `session.created/v1/<token>` result is
//!   readable by any connection and is not consumed by a read (seed point 6).
//! - `checkpoint-keeps-pid`: every new pane carries a `pid` tag with its child's PID,
//!   so checkpoints hold it (RFC §2/§4: a checkpoint holds no PID).

use std::sync::OnceLock;

/// The variable that selects a defect.
pub const ENV: &str = "VXREF_NEGATIVE_CONTROL";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Defect {
    SkillRecommendsOwner,
    CreatedResultShared,
    CheckpointKeepsPid,
}

impl Defect {
    pub const ALL: [Defect; 3] = [
        Defect::SkillRecommendsOwner,
        Defect::CreatedResultShared,
        Defect::CheckpointKeepsPid,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Defect::SkillRecommendsOwner => "skill-recommends-owner",
            Defect::CreatedResultShared => "created-result-shared",
            Defect::CheckpointKeepsPid => "checkpoint-keeps-pid",
        }
    }
}

/// Whether `d` is the defect this process was started with (read once).
pub fn active(d: Defect) -> bool {
    static CHOSEN: OnceLock<Option<Defect>> = OnceLock::new();
    let chosen = CHOSEN.get_or_init(|| {
        let name = std::env::var(ENV).ok()?;
        Defect::ALL.into_iter().find(|d| d.name() == name)
    });
    *chosen == Some(d)
}
