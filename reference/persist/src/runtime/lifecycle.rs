//! runState plumbing (seed "runState plumbing", "Rewind"): buildCheckpoint copies
//! the slots and takes the pause ref from pauseInfo; restoreCheckpointState is the
//! only restorer and adoptCheckpointSessions the only adopter (it evicts whatever
//! RAM held); both Resume paths restore then adopt. Rewind checkpoints without the
//! dropped refs first, then deletes their blobs. Fork omits both refs.

use super::error::EventKind;
use super::output::strip_reserved;
use super::{Executor, RunState, Runtime, RuntimeError, VisitReport};
use crate::runstore::{Checkpoint, RunStatus, CHECKPOINT_VERSION};

impl Runtime {
    /// `buildCheckpoint`.
    pub fn build_checkpoint(&self) -> Checkpoint {
        Checkpoint {
            version: CHECKPOINT_VERSION,
            run: self.graph.run.clone(),
            status: self.rs.status.unwrap_or(RunStatus::Running),
            outputs: self.rs.outputs.clone(),
            visits: self.rs.visits.clone(),
            node_sessions: self.rs.node_sessions.clone(),
            pause: self.rs.pause.clone(),
            resume_node: self.rs.resume_node.clone(),
        }
    }

    /// `restoreCheckpointState` then `adoptCheckpointSessions`: RAM becomes the
    /// checkpoint's, stale slots and snapshots evicted. A slot without a ref is not
    /// a slot and is not adopted.
    pub fn restore_then_adopt(&mut self, cp: &Checkpoint) {
        let mut rs = RunState::new();
        rs.outputs = cp.outputs.clone();
        rs.visits = cp.visits.clone();
        rs.pause = cp.pause.clone();
        rs.resume_node = cp.resume_node.clone();
        rs.status = Some(cp.status);
        rs.node_sessions = cp
            .node_sessions
            .iter()
            .filter(|(_, s)| s.state_ref.as_deref().is_some_and(|r| !r.is_empty()))
            .map(|(n, s)| (n.clone(), s.clone()))
            .collect();
        self.rs = rs;
        self.events.push(super::Event {
            kind: EventKind::Restored,
            node: None,
            code: None,
            output: None,
        });
    }

    /// A run continuing on another process (after a completed visit): load it if it
    /// was ever checkpointed, and it must be running.
    pub fn reload_running(&mut self) -> Result<(), RuntimeError> {
        match self.runs.load_run(&self.graph.run) {
            Ok(cp) if cp.status == RunStatus::Running => {
                self.restore_then_adopt(&cp);
                Ok(())
            }
            Ok(_) => Err(RuntimeError::RunState(
                "the run is paused, failed or rewound: answer or resume it",
            )),
            Err(e) if e.code == crate::runstore::RunStoreCode::RunNotFound => {
                self.rs = RunState::new();
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// `resumeFromFailure`: LoadRun, restore then adopt, re-execute the node whose
    /// visit failed (or that a rewind named), if any.
    pub fn resume(&mut self, exec: &mut dyn Executor) -> Result<Option<VisitReport>, RuntimeError> {
        let cp = self.runs.load_run(&self.graph.run)?;
        if !matches!(cp.status, RunStatus::FailedResumable | RunStatus::Rewound) {
            return Err(RuntimeError::RunState(
                "the run is not resumable from a failure",
            ));
        }
        self.restore_then_adopt(&cp);
        self.rs.status = Some(RunStatus::Running);
        match cp.resume_node {
            Some(node) => self.visit(&node, None, None, exec).map(Some),
            None => Ok(None),
        }
    }

    /// Rewind the durable run to before `to`: the checkpoint without the dropped
    /// nodes' outputs, slots and the pause ref first, then Delete those blobs. RAM
    /// is left as it was (the next Resume evicts it). Returns the deleted refs.
    pub fn rewind(&mut self, to: &str, drop: &[String]) -> Result<Vec<String>, RuntimeError> {
        if self.graph.node(to).is_none() || drop.iter().any(|n| self.graph.node(n).is_none()) {
            return Err(RuntimeError::UnknownNode);
        }
        let mut cp = self.runs.load_run(&self.graph.run)?;
        let mut dropped = Vec::new();
        for n in drop {
            cp.outputs.remove(n);
            cp.visits.remove(n);
            if let Some(r) = cp.node_sessions.remove(n).and_then(|s| s.state_ref) {
                dropped.push(r);
            }
        }
        if let Some(r) = cp.pause.take().and_then(|p| p.backend_session_state_ref) {
            dropped.push(r);
        }
        if crate::negative::active(crate::negative::Defect::DeleteBeforeCheckpoint) {
            for r in &dropped {
                self.delete_ref(to, r);
            }
        }
        cp.status = RunStatus::Rewound;
        cp.resume_node = Some(to.to_owned());
        self.runs.save_checkpoint(&cp)?;
        for r in &dropped {
            self.delete_ref(to, r);
        }
        self.event(EventKind::Rewound, to, None);
        Ok(dropped)
    }

    /// Fork the durable run into `new_run`: outputs copied (reserved keys
    /// stripped), NodeSessions and the pause ref omitted.
    pub fn fork(&mut self, new_run: &str) -> Result<Checkpoint, RuntimeError> {
        let cp = self.runs.load_run(&self.graph.run)?;
        let mut outputs = cp.outputs.clone();
        outputs.values_mut().for_each(strip_reserved);
        let fork = Checkpoint {
            version: CHECKPOINT_VERSION,
            run: new_run.to_owned(),
            status: RunStatus::Running,
            outputs,
            visits: cp.visits.clone(),
            node_sessions: Default::default(),
            pause: None,
            resume_node: None,
        };
        self.runs.save_checkpoint(&fork)?;
        self.events.push(super::Event {
            kind: EventKind::Forked,
            node: None,
            code: None,
            output: None,
        });
        Ok(fork)
    }
}
