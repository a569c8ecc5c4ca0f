//! One agent-restore scenario's state: a sandbox for the inputs it writes, the
//! profile's offline checkers, and the last verdict line one of them printed.

pub use super::templates::{corpus_dir, templates, Templates};
use std::path::PathBuf;

/// One agent-restore scenario: the offline checkers' sandbox, and the live
/// implementation of the server rows, started on first use.
pub struct Checks {
    pub offline: super::offline::Offline,
    pub(crate) live: Option<super::live::Live>,
}

/// A failed server row shows the daemon as it stands (argv, exit or still running,
/// its stderr's end); the offline rows record their commands as they run.
impl crate::drivers::step::OnFailure for Checks {
    fn on_failure(&mut self) {
        if let Some(live) = self.live.as_mut() {
            live.s.on_failure();
        }
    }
}

impl Checks {
    pub fn new(bin_dir: PathBuf) -> Checks {
        Checks {
            offline: super::offline::Offline::new(bin_dir),
            live: None,
        }
    }

    /// The server rows' state (a sandbox; no daemon runs until a step starts it).
    pub fn live(&mut self) -> &mut super::live::Live {
        self.live.get_or_insert_with(super::live::Live::new)
    }
}
