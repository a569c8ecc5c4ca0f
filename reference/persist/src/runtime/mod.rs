//! The ADR-089 runtime (seed `shared/seeds/004_f9b2c105e15dcfff.txt`, revision 8),
//! its decisions as code; docs/spec/persist-runtime.md reads each clause.
//!
//! - [`resolve`]: resolution order 0–4 and the visit-1 provenance helper.
//! - [`pause`]: the ask_user transport (blob → Put → PauseRun, never Delete on a
//!   PauseRun error) and the pause resume.
//! - [`commit`]: the success path (take the blob, slot commit fail-stop, reInvoke).
//! - [`lifecycle`]: restore then adopt, buildCheckpoint, rewind, fork.
//!
//! The runtime never reads a CLI root: unpack and HasSession are the executor's
//! packer's (`Executor::unpack_session`, `Executor::has_session`), on the root the
//! next Execute uses.

pub mod commit;
pub mod error;
pub mod graph;
pub mod lifecycle;
pub mod oracle;
pub mod output;
pub mod pause;
pub mod refs;
pub mod resolve;

use std::collections::BTreeMap;
use std::fmt;

pub use error::{Event, EventKind, RuntimeError};
pub use graph::{Delivery, Edge, EdgeValue, Graph, GraphError, NodeSpec, SessionMode};

use crate::error::PersistError;
use crate::runstore::{NodeSessionSlot, Output, PauseInfo, RunStatus, RunStore};
use crate::store::BackendSessionStore;

/// What an Execute is handed. `session_id` is Task.SessionID: set only when
/// resolution left `_session_id` in place (applySessionContinuity runs after it).
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    pub node: String,
    pub backend: String,
    pub session_id: Option<String>,
    pub fingerprint: Option<String>,
    pub input: Output,
    /// The human's answer on a reInvoke after ask_user.
    pub answer: Option<String>,
    /// Make the CLI ask this question (the drive's way to make it ask_user).
    pub ask: Option<String>,
    /// A persist node packs on success (`_session_state_blob`).
    pub pack_on_success: bool,
}

/// ADR-089's `ErrNeedsInteraction`. The blob is transient: it is never logged,
/// encoded or put on an output, so `Debug` shows only its length.
#[derive(Clone, PartialEq, Eq)]
pub struct NeedsInteraction {
    pub node: String,
    pub question: String,
    pub backend: String,
    pub session_id: Option<String>,
    pub fingerprint: Option<String>,
    pub session_state_blob: Option<Vec<u8>>,
    /// Set only when reconstructing from a checkpoint.
    pub session_state_ref: Option<String>,
}

impl fmt::Debug for NeedsInteraction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NeedsInteraction")
            .field("node", &self.node)
            .field("backend", &self.backend)
            .field(
                "session_state_blob_len",
                &self.session_state_blob.as_ref().map(Vec::len),
            )
            .field("session_state_ref", &self.session_state_ref.is_some())
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecError {
    NeedsInteraction(Box<NeedsInteraction>),
    Failed(&'static str),
}

/// The backend side: Execute, and the packer over the root the next Execute uses.
pub trait Executor {
    fn execute(&mut self, task: &Task) -> Result<Output, ExecError>;
    fn unpack_session(&mut self, backend: &str, id: &str, blob: &[u8]) -> Result<(), PersistError>;
    fn has_session(&mut self, backend: &str, id: &str) -> bool;
}

/// The run's state in RAM (`runState`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunState {
    pub outputs: BTreeMap<String, Output>,
    pub visits: BTreeMap<String, u64>,
    pub node_sessions: BTreeMap<String, NodeSessionSlot>,
    pub pause: Option<PauseInfo>,
    pub resume_node: Option<String>,
    /// LoopPreviousOutput: a node's earlier outputs, kept after it moved on.
    pub loop_snapshots: BTreeMap<String, Vec<Output>>,
    pub status: Option<RunStatus>,
}

impl RunState {
    /// `newRunState`: empty nodeSessions.
    pub fn new() -> Self {
        RunState::default()
    }
}

/// How a visit ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    Paused,
    FailedResumable,
    Failed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Paused => "paused",
            Outcome::FailedResumable => "failed_resumable",
            Outcome::Failed => "failed",
        }
    }
}

/// The ask_user error as the runtime received it: the blob by length and digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InteractionSummary {
    pub node: String,
    pub question: String,
    pub backend: String,
    pub session_id: Option<String>,
    pub blob_len: Option<usize>,
    pub blob_sha256: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VisitReport {
    pub outcome: Outcome,
    pub edge_selected: bool,
    pub interaction: Option<InteractionSummary>,
    pub warnings: Vec<&'static str>,
}

/// The runtime of one run: the graph, its stores and its RAM state.
pub struct Runtime {
    pub graph: Graph,
    /// `None`: no BackendSessionStore (warn + fresh, no slots, no pause refs).
    pub store: Option<Box<dyn BackendSessionStore>>,
    pub runs: Box<dyn RunStore>,
    pub rs: RunState,
    pub events: Vec<Event>,
    warnings: Vec<&'static str>,
}

impl Runtime {
    pub fn new(
        graph: Graph,
        store: Option<Box<dyn BackendSessionStore>>,
        runs: Box<dyn RunStore>,
    ) -> Result<Self, GraphError> {
        graph.validate()?;
        Ok(Runtime {
            graph,
            store,
            runs,
            rs: RunState::new(),
            events: Vec::new(),
            warnings: Vec::new(),
        })
    }

    pub fn run(&self) -> &str {
        &self.graph.run
    }

    pub(crate) fn event(&mut self, kind: EventKind, node: &str, code: Option<&'static str>) {
        self.events.push(Event {
            kind,
            node: Some(node.to_owned()),
            code,
            output: None,
        });
    }

    pub(crate) fn warn(&mut self, node: &str, code: &'static str) {
        self.warnings.push(code);
        self.event(EventKind::Warn, node, Some(code));
    }

    /// One visit of `node`: resolution 0–4, Execute, then the success path or the
    /// ask_user pause. `answer` is set on the reInvoke of a paused node.
    pub fn visit(
        &mut self,
        node: &str,
        ask: Option<String>,
        answer: Option<String>,
        exec: &mut dyn Executor,
    ) -> Result<VisitReport, RuntimeError> {
        let spec = self
            .graph
            .node(node)
            .ok_or(RuntimeError::UnknownNode)?
            .clone();
        // execBranch: persist is illegal in fan-out (the graph check already
        // refused it; this is the runtime's own guard).
        if spec.fan_out && spec.mode == SessionMode::Persist {
            return Err(RuntimeError::FanOutPersist);
        }
        self.warnings.clear();
        let reinvoke = answer.is_some();
        let (mut input, deliveries) = self.graph.build_input(node, &self.rs.outputs);
        output::strip_reserved(&mut input);
        self.resolve(&spec, &mut input, &deliveries, reinvoke, exec);
        let task = Task {
            node: spec.id.clone(),
            backend: spec.backend.clone(),
            session_id: output::string_field(&input, output::SESSION_ID_KEY).map(str::to_owned),
            fingerprint: output::string_field(&input, output::SESSION_FINGERPRINT_KEY)
                .map(str::to_owned),
            input,
            answer,
            ask,
            pack_on_success: spec.mode == SessionMode::Persist,
        };
        let (outcome, edge_selected, interaction) = match exec.execute(&task) {
            Ok(out) => {
                let (outcome, edge) = self.complete(&spec, out, reinvoke);
                (outcome, edge, None)
            }
            Err(ExecError::NeedsInteraction(ni)) => {
                let summary = self.pause(&spec, *ni);
                (Outcome::Paused, false, Some(summary))
            }
            Err(ExecError::Failed(_)) => {
                self.warn(node, error::warn::EXECUTE_FAILED);
                self.rs.resume_node = Some(node.to_owned());
                (self.fail_stop(node), false, None)
            }
        };
        Ok(VisitReport {
            outcome,
            edge_selected,
            interaction,
            warnings: std::mem::take(&mut self.warnings),
        })
    }
}
