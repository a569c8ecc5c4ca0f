//! The in-memory claim layer of one broker: per physical key, the current claim and
//! the connection that owns it (a watch channel demotes it in place).

use std::collections::HashMap;
use std::sync::Mutex;

use tokio::sync::watch;

use crate::claims::{decide, Claim, Decision, Prior, Viewer};

#[derive(Default)]
struct Slot {
    claim: Option<Claim>,
    /// The owning connection and its demotion signal.
    owner: Option<(u64, watch::Sender<bool>)>,
}

#[derive(Default)]
pub(crate) struct Registry {
    slots: Mutex<HashMap<String, Slot>>,
}

impl Registry {
    /// Decides the role of connection `conn`; the receiver turns `true` when a later
    /// owner demotes it.
    pub(crate) fn attach(
        &self,
        physical: &str,
        conn: u64,
        viewer: Viewer,
        force: bool,
        now_ms: u64,
    ) -> (Decision, watch::Receiver<bool>) {
        let (tx, rx) = watch::channel(false);
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let slot = slots.entry(physical.to_owned()).or_default();
        let prior = slot.claim.map_or(Prior::None, Prior::Held);
        let decision = decide(prior, viewer, force, now_ms);
        if let (Decision::Owner { .. }, Viewer::Tab(key)) = (decision, viewer) {
            // One claimed writer at a time: whoever owned before is demoted in place
            // (a forced take-over, or a stale holder still connected).
            if let Some((_, old)) = slot.owner.take() {
                let _ = old.send(true);
            }
            slot.claim = Some(Claim {
                key,
                last_seen_ms: now_ms,
            });
            slot.owner = Some((conn, tx));
        }
        (decision, rx)
    }

    /// The owner's heartbeat keeps its claim fresh while it is connected.
    pub(crate) fn beat(&self, physical: &str, conn: u64, now_ms: u64) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.get_mut(physical) {
            if slot.owner.as_ref().is_some_and(|(c, _)| *c == conn) {
                if let Some(claim) = &mut slot.claim {
                    claim.last_seen_ms = now_ms;
                }
            }
        }
    }

    /// A connection closed: it no longer owns, but its claim ages from its last beat.
    pub(crate) fn detach(&self, physical: &str, conn: u64) {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.get_mut(physical) {
            if slot.owner.as_ref().is_some_and(|(c, _)| *c == conn) {
                slot.owner = None;
            }
        }
    }

    /// Forgets a retired session's claim.
    pub(crate) fn clear(&self, physical: &str) {
        if crate::negative::is(crate::negative::Defect::RetireKeepsClaim) {
            return;
        }
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(slot) = slots.remove(physical) {
            if let Some((_, tx)) = slot.owner {
                let _ = tx.send(true);
            }
        }
    }
}
