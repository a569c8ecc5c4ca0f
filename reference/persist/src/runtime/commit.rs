//! The success path (seed "Slot commit — fail-stop", "Pause-ref lifecycle" reInvoke
//! rows). The blob is taken off the output before `rs.outputs` is assigned; a
//! persist visit Puts it under a fresh ref, moves memory to the new slot, and only
//! a committed checkpoint lets the edge be selected and the old blobs be deleted.
//! A failed checkpoint is a fail-stop: FailRunResumable with the new slot, then
//! terminal FailRun (still the new slot); the old slot is never written back and
//! every blob stays for DeleteRun.

use super::error::{warn, EventKind};
use super::graph::{NodeSpec, SessionMode};
use super::output::{
    sanitize_output_for_event, string_field, strip_reserved, take_session_state_blob,
    SESSION_FINGERPRINT_KEY, SESSION_ID_KEY,
};
use super::resolve::capable;
use super::{refs, Event, Outcome, Runtime};
use crate::runstore::{NodeSessionSlot, Output, RunStatus};

impl Runtime {
    /// A successful Execute of `spec`. Returns the outcome and whether an edge was
    /// selected.
    pub(crate) fn complete(
        &mut self,
        spec: &NodeSpec,
        mut out: Output,
        reinvoke: bool,
    ) -> (Outcome, bool) {
        let node = spec.id.as_str();
        // takeSessionStateBlob before the rs.outputs assignment (both paths).
        let blob = take_session_state_blob(&mut out);
        strip_reserved(&mut out);
        let pause_ref = if reinvoke {
            self.rs
                .pause
                .take()
                .filter(|p| p.node == node)
                .and_then(|p| p.backend_session_state_ref)
        } else {
            None
        };
        let mut old_slot_ref = None;
        if spec.mode == SessionMode::Persist && capable(&spec.backend) {
            old_slot_ref = self.commit_slot(spec, &out, blob);
        }
        if let Some(previous) = self.rs.outputs.insert(node.to_owned(), out.clone()) {
            self.rs
                .loop_snapshots
                .entry(node.to_owned())
                .or_default()
                .push(previous);
        }
        *self.rs.visits.entry(node.to_owned()).or_insert(0) += 1;
        self.events.push(Event {
            kind: EventKind::NodeCompleted,
            node: Some(node.to_owned()),
            code: None,
            output: Some(sanitize_output_for_event(&out)),
        });
        // The required checkpoint: the new slot (or its deletion), the pause ref cleared.
        self.rs.resume_node = None;
        self.rs.status = Some(RunStatus::Running);
        if crate::negative::active(crate::negative::Defect::DeleteBeforeCheckpoint) {
            for r in [&pause_ref, &old_slot_ref].into_iter().flatten() {
                self.delete_ref(node, r);
            }
        }
        let cp = self.build_checkpoint();
        if self.runs.save_checkpoint(&cp).is_err() {
            self.warn(node, warn::CHECKPOINT_FAILED);
            self.rs.resume_node = Some(node.to_owned());
            return (self.fail_stop(node), false);
        }
        for r in [pause_ref, old_slot_ref].into_iter().flatten() {
            self.delete_ref(node, &r);
        }
        self.event(EventKind::EdgeSelected, node, None);
        (Outcome::Completed, true)
    }

    /// Steps 1–2 of the slot commit: Put the blob under a new ref and move memory to
    /// the new slot, or invalidate the memory slot when Pack or Put failed. Returns
    /// the previous completed ref, to delete once the checkpoint committed.
    fn commit_slot(
        &mut self,
        spec: &NodeSpec,
        out: &Output,
        blob: Option<Vec<u8>>,
    ) -> Option<String> {
        let node = spec.id.as_str();
        let previous = self
            .rs
            .node_sessions
            .get(node)
            .and_then(|s| s.state_ref.clone());
        let Some(store) = &self.store else {
            self.warn(node, warn::NO_STORE);
            self.rs.node_sessions.remove(node);
            return previous;
        };
        let Some(blob) = blob else {
            self.warn(node, warn::SLOT_PACK_FAILED);
            self.rs.node_sessions.remove(node);
            return previous;
        };
        let new_ref = refs::mint(node, false)
            .and_then(|r| store.put(&self.graph.run, &r, &blob).ok().map(|()| r));
        let Some(new_ref) = new_ref else {
            self.warn(node, warn::SLOT_PUT_FAILED);
            self.rs.node_sessions.remove(node);
            return previous;
        };
        let Some(id) = string_field(out, SESSION_ID_KEY).map(str::to_owned) else {
            // A blob without a session id to resume: an orphan for DeleteRun.
            self.warn(node, warn::SLOT_UNUSABLE);
            self.rs.node_sessions.remove(node);
            return previous;
        };
        self.rs.node_sessions.insert(
            node.to_owned(),
            NodeSessionSlot {
                backend: spec.backend.clone(),
                session_id: Some(id),
                fingerprint: string_field(out, SESSION_FINGERPRINT_KEY).map(str::to_owned),
                state_ref: Some(new_ref.to_string()),
                conversation_ref: None,
            },
        );
        previous
    }

    /// Fail-stop with the in-memory state: FailRunResumable, else terminal FailRun.
    /// Never restores an old slot, never deletes a blob.
    pub(crate) fn fail_stop(&mut self, node: &str) -> Outcome {
        self.rs.status = Some(RunStatus::FailedResumable);
        let cp = self.build_checkpoint();
        self.event(EventKind::FailStop, node, None);
        if self.runs.fail_run_resumable(&cp).is_ok() {
            return Outcome::FailedResumable;
        }
        self.warn(node, warn::FAIL_RESUMABLE_FAILED);
        self.rs.status = Some(RunStatus::Failed);
        let cp = self.build_checkpoint();
        if self.runs.fail_run(&cp).is_err() {
            self.warn(node, warn::FAIL_RUN_FAILED);
        }
        self.event(EventKind::Failed, node, None);
        Outcome::Failed
    }
}
