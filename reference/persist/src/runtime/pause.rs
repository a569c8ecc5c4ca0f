//! ask_user (seed "ask_user transport", "Pause-ref lifecycle"): the executor packed
//! before returning; the runtime Puts the blob under a fresh pause ref, drops the
//! bytes, and PauseRuns a checkpoint holding the ref. A PauseRun error keeps every
//! blob: no LoadRun, no Delete (the write may have landed; DeleteRun collects
//! orphans). Only a successful PauseRun(B) deletes the previous pause blob A.

use sha2::{Digest, Sha256};

use super::error::{warn, EventKind};
use super::graph::NodeSpec;
use super::resolve::capable;
use super::{refs, VisitReport};
use super::{Executor, InteractionSummary, NeedsInteraction, Runtime, RuntimeError};
use crate::runstore::{PauseInfo, RunStatus};
use crate::store::StateRef;

impl Runtime {
    /// The runtime's side of `ErrNeedsInteraction`.
    pub(crate) fn pause(
        &mut self,
        spec: &NodeSpec,
        mut ni: NeedsInteraction,
    ) -> InteractionSummary {
        let node = spec.id.as_str();
        let blob = ni.session_state_blob.take();
        let summary = InteractionSummary {
            node: node.to_owned(),
            question: ni.question.clone(),
            backend: ni.backend.clone(),
            session_id: ni.session_id.clone(),
            blob_len: blob.as_ref().map(Vec::len),
            blob_sha256: blob.as_ref().map(|b| {
                Sha256::digest(b)
                    .iter()
                    .map(|x| format!("{x:02x}"))
                    .collect()
            }),
        };
        let mut pause_ref = None;
        match (blob, capable(&spec.backend)) {
            (Some(blob), true) => match (&self.store, refs::mint(node, true)) {
                (None, _) => self.warn(node, warn::NO_STORE),
                (Some(store), Some(r)) => match store.put(&self.graph.run, &r, &blob) {
                    Ok(()) => pause_ref = Some(r),
                    // Put fail: pause without a CLI ref; ask_user is not blocked.
                    Err(_) => self.warn(node, warn::PAUSE_PUT_FAILED),
                },
                (Some(_), None) => self.warn(node, warn::PAUSE_PUT_FAILED),
            },
            (None, true) => self.warn(node, warn::PAUSE_NO_BLOB),
            (_, false) => {}
        }
        // The slice is dropped here; only the ref goes on.
        let previous = self
            .rs
            .pause
            .as_ref()
            .filter(|p| p.node == node)
            .and_then(|p| p.backend_session_state_ref.clone());
        self.rs.pause = Some(PauseInfo {
            node: node.to_owned(),
            question: ni.question,
            backend: ni.backend,
            session_id: ni.session_id,
            fingerprint: ni.fingerprint,
            backend_session_state_ref: pause_ref.as_ref().map(StateRef::to_string),
        });
        self.rs.status = Some(RunStatus::Paused);
        let cp = self.build_checkpoint();
        match self.runs.pause_run(&cp) {
            Ok(()) => {
                if let Some(prev) = previous {
                    self.delete_ref(node, &prev);
                }
            }
            Err(_) => {
                self.warn(node, warn::PAUSE_RUN_FAILED);
                if crate::negative::active(crate::negative::Defect::DeleteOnPauseRunError) {
                    if let Some(prev) = previous {
                        self.delete_ref(node, &prev);
                    }
                }
            }
        }
        self.event(EventKind::Paused, node, None);
        summary
    }

    /// Pause resume: LoadRun, restore then adopt, reInvoke the paused node with the
    /// answer (rule 1 Gets and unpacks the pause ref).
    pub fn answer(
        &mut self,
        text: String,
        ask: Option<String>,
        exec: &mut dyn Executor,
    ) -> Result<VisitReport, RuntimeError> {
        let cp = self.runs.load_run(&self.graph.run)?;
        if cp.status != RunStatus::Paused || cp.pause.is_none() {
            return Err(RuntimeError::RunState("the run is not paused on ask_user"));
        }
        self.restore_then_adopt(&cp);
        let node = cp
            .pause
            .as_ref()
            .map(|p| p.node.clone())
            .unwrap_or_default();
        self.visit(&node, ask, Some(text), exec)
    }

    /// Best-effort Delete of a ref (only ever after a checkpoint that no longer
    /// names it committed).
    pub(crate) fn delete_ref(&mut self, node: &str, text: &str) {
        let Ok(r) = StateRef::parse(text) else {
            return;
        };
        let failed = match &self.store {
            Some(store) => store.delete(&self.graph.run, &r).is_err(),
            None => false,
        };
        if failed {
            self.warn(node, warn::DELETE_FAILED);
        }
    }
}
