//! A naive model of resolution (seed "Resolution order", visit-1 rules 1–7) and a
//! checker that plays a byte-decoded random run state through the real
//! [`Runtime::resolve`] and compares. Used by the `persist_provenance` fuzz target
//! and the property tests; the model is written plainly, rule by rule, and shares
//! nothing with `resolve.rs` but the state it reads.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Value};

use super::graph::{Edge, EdgeValue, Graph, NodeSpec, SessionMode};
use super::output::strip_reserved;
use super::{ExecError, Executor, Runtime, Task};
use crate::error::{ErrorCode, PersistError};
use crate::memory::{MemoryRunStore, MemoryStore};
use crate::runstore::{NodeSessionSlot, Output, PauseInfo};
use crate::store::{BackendSessionStore, StateRef};

const RUN: &str = "fuzz";
const POOL: [&str; 3] = ["sa", "sb", "sc"];
const BACKENDS: [&str; 3] = ["pi", "codex", "kimi"];
const LIE: &str = "fp-lie";
/// Source node names and their fingerprints: fixed tables, not formatted per input
/// (a case has at most four sources).
const SOURCES: [&str; 4] = ["s0", "s1", "s2", "s3"];
const OUT_FPS: [&str; 4] = ["fp-out-0", "fp-out-1", "fp-out-2", "fp-out-3"];
const SLOT_FPS: [&str; 4] = ["fp-slot-0", "fp-slot-1", "fp-slot-2", "fp-slot-3"];
const NODE_FPS: [&str; 4] = ["fp-s0", "fp-s1", "fp-s2", "fp-s3"];

struct Bytes<'a>(&'a [u8], usize);

impl Bytes<'_> {
    fn next(&mut self, modulo: u8) -> u8 {
        let b = self.0.get(self.1).copied().unwrap_or(0);
        self.1 += 1;
        b % modulo
    }
}

/// `node/01J000…k` or `node/pause/01J000…k` (k < 10), built without `format!`.
fn ref_text(node: &str, pause: bool, k: usize) -> String {
    let mut r = String::with_capacity(node.len() + 33);
    r.push_str(node);
    r.push_str(if pause { "/pause/01J" } else { "/01J" });
    r.push_str("0000000000000000000000");
    r.push(char::from(b'0' + k as u8));
    r
}

/// One decoded case: the state resolution reads.
#[derive(Debug, Default)]
pub struct Case {
    backend: String,
    sources: Vec<String>,
    outputs: BTreeMap<String, Output>,
    edges: Vec<Edge>,
    slots: BTreeMap<String, NodeSessionSlot>,
    blobs: BTreeSet<String>,
    has_session: BTreeSet<String>,
    unpack_fails: bool,
    pause: Option<PauseInfo>,
}

impl Case {
    pub fn decode(data: &[u8]) -> Case {
        let mut b = Bytes(data, 0);
        let backend = BACKENDS[b.next(3) as usize].to_owned();
        let mut case = Case {
            backend: backend.clone(),
            ..Case::default()
        };
        let other = |k: u8| ["pi", "codex"][k as usize].to_owned();
        for i in 0..1 + b.next(4) as usize {
            let src = SOURCES[i].to_owned();
            if b.next(4) != 0 {
                let mut out = Output::new();
                if let k @ 1..=3 = b.next(4) {
                    out.insert("_session_id".into(), json!(POOL[k as usize - 1]));
                }
                let be = match b.next(3) {
                    0 => backend.clone(),
                    k => other(k - 1),
                };
                out.insert("_backend".into(), json!(be));
                if b.next(2) == 1 {
                    out.insert("_session_fingerprint".into(), json!(OUT_FPS[i]));
                }
                case.outputs.insert(src.clone(), out);
            }
            let mut map = BTreeMap::new();
            match b.next(3) {
                1 => {
                    map.insert(
                        "_session_id".into(),
                        EdgeValue::Output("_session_id".into()),
                    );
                }
                2 => {
                    let v = json!(POOL[b.next(3) as usize]);
                    map.insert("_session_id".into(), EdgeValue::Literal(v));
                }
                _ => {}
            }
            if b.next(2) == 1 {
                map.insert(
                    "_session_fingerprint".into(),
                    EdgeValue::Literal(json!(LIE)),
                );
            }
            case.edges.push(Edge {
                from: src.clone(),
                to: "w".into(),
                map,
            });
            if b.next(3) == 1 {
                let r = ref_text(&src, false, i);
                if b.next(2) == 1 {
                    case.blobs.insert(r.clone());
                }
                let be = match b.next(2) {
                    0 => backend.clone(),
                    k => other(k - 1),
                };
                case.slots.insert(
                    src.clone(),
                    NodeSessionSlot {
                        backend: be,
                        session_id: Some(POOL[b.next(3) as usize].to_owned()),
                        fingerprint: Some(SLOT_FPS[i].to_owned()),
                        state_ref: Some(r),
                        conversation_ref: None,
                    },
                );
            }
            case.sources.push(src);
        }
        let own = b.next(4);
        if own == 1 || own == 2 {
            let r = ref_text("w", false, 9);
            if b.next(2) == 1 {
                case.blobs.insert(r.clone());
            }
            case.slots.insert(
                "w".into(),
                NodeSessionSlot {
                    backend: backend.clone(),
                    session_id: Some(POOL[b.next(3) as usize].to_owned()),
                    fingerprint: Some("fp-own".into()),
                    state_ref: (own == 1).then_some(r),
                    conversation_ref: None,
                },
            );
        }
        for id in POOL {
            if b.next(2) == 1 {
                case.has_session.insert(id.to_owned());
            }
        }
        case.unpack_fails = b.next(4) == 0;
        if b.next(3) == 0 {
            let r = ref_text("w", true, 8);
            if b.next(2) == 1 {
                case.blobs.insert(r.clone());
            }
            case.pause = Some(PauseInfo {
                node: "w".into(),
                question: "q".into(),
                backend: backend.clone(),
                session_id: Some(POOL[b.next(3) as usize].to_owned()),
                fingerprint: Some("fp-pause".into()),
                backend_session_state_ref: (b.next(3) != 0).then_some(r),
            });
        }
        case
    }

    /// What edge `e` delivers as `_session_id`, if its source has an output.
    fn delivered(&self, e: &Edge) -> Option<Value> {
        let out = self.outputs.get(&e.from)?;
        match e.map.get("_session_id")? {
            EdgeValue::Output(k) => out.get(k).cloned(),
            EdgeValue::Literal(v) => Some(v.clone()),
        }
    }

    fn restorable(&self, r: Option<&String>) -> bool {
        r.is_some_and(|r| self.blobs.contains(r)) && !self.unpack_fails
    }

    /// The model: what Task.SessionID and the fingerprint must be.
    pub fn expected(&self) -> (Option<String>, Option<String>) {
        let none = (None, None);
        if self.backend == "kimi" {
            return none; // rule 0
        }
        if let Some(p) = &self.pause {
            // rule 1: only the pause ref, never NodeSessions[self]
            return match self.restorable(p.backend_session_state_ref.as_ref()) {
                true => (p.session_id.clone(), p.fingerprint.clone()),
                false => none,
            };
        }
        if let Some(own) = self.slots.get("w").filter(|s| s.state_ref.is_some()) {
            // rule 2, no fall-through
            return match self.restorable(own.state_ref.as_ref()) {
                true => (own.session_id.clone(), own.fingerprint.clone()),
                false => none,
            };
        }
        // The final inbound id: edges in order, a later one replacing.
        let mut last: Option<(String, Value)> = None;
        for e in &self.edges {
            if let Some(v) = self.delivered(e) {
                last = Some((e.from.clone(), v));
            }
        }
        let Some((_, Value::String(id))) = last else {
            return none;
        };
        let mut eligible = BTreeSet::new();
        for e in &self.edges {
            let Some(out) = self.outputs.get(&e.from) else {
                continue;
            };
            if self.delivered(e) == Some(json!(id))
                && out.get("_session_id") == Some(&json!(id))
                && out.get("_backend") == Some(&json!(self.backend))
            {
                eligible.insert(e.from.clone());
            }
        }
        if eligible.len() != 1 {
            return none; // rule 4
        }
        let src = eligible.into_iter().next().unwrap_or_default();
        if let Some(slot) = self.slots.get(&src).filter(|s| {
            s.session_id.as_deref() == Some(id.as_str())
                && s.backend == self.backend
                && s.state_ref.is_some()
        }) {
            return match self.restorable(slot.state_ref.as_ref()) {
                true => (Some(id.clone()), slot.fingerprint.clone()), // rule 5
                false => none,
            };
        }
        if self.has_session.contains(&id) {
            let fp = self.outputs[&src]
                .get("_session_fingerprint")
                .and_then(Value::as_str);
            return (Some(id.clone()), fp.map(str::to_owned)); // rule 6
        }
        none // rule 7
    }
}

struct ModelExecutor<'a> {
    unpack_fails: bool,
    has_session: &'a BTreeSet<String>,
    unpacked: Vec<String>,
}

impl Executor for ModelExecutor<'_> {
    fn execute(&mut self, _task: &Task) -> Result<Output, ExecError> {
        Err(ExecError::Failed("the oracle never executes"))
    }

    fn unpack_session(
        &mut self,
        _backend: &str,
        id: &str,
        _blob: &[u8],
    ) -> Result<(), PersistError> {
        if self.unpack_fails {
            return Err(PersistError::new(
                ErrorCode::BlobCorrupt,
                "oracle unpack failure",
            ));
        }
        self.unpacked.push(id.to_owned());
        Ok(())
    }

    fn has_session(&mut self, _backend: &str, id: &str) -> bool {
        self.has_session.contains(id)
    }
}

/// Plays `data` through the runtime and the model; `Err` describes a mismatch or
/// a broken invariant (a SessionID without an unpack or HasSession; the inbound
/// fingerprint lie reaching the task).
///
/// The model runs first, so the decoded state is moved into the runtime, not cloned
/// (this runs once per fuzz input: only `resolve` is the code under test).
pub fn check(data: &[u8]) -> Result<(), String> {
    let mut case = Case::decode(data);
    let want = case.expected();
    let mut nodes: Vec<NodeSpec> = case
        .sources
        .iter()
        .enumerate()
        .map(|(i, s)| NodeSpec {
            id: s.clone(),
            backend: "pi".into(),
            mode: SessionMode::Fresh,
            fingerprint: NODE_FPS[i].to_owned(),
            fan_out: false,
            extra_output: Output::new(),
        })
        .collect();
    let spec = NodeSpec {
        id: "w".into(),
        backend: case.backend.clone(),
        mode: SessionMode::Persist,
        fingerprint: "fp-w".into(),
        fan_out: false,
        extra_output: Output::new(),
    };
    nodes.push(spec.clone());
    let graph = Graph {
        run: RUN.into(),
        nodes,
        edges: std::mem::take(&mut case.edges),
    };
    let store = MemoryStore::default();
    for r in &case.blobs {
        let r = StateRef::parse(r).map_err(|_| "oracle ref".to_owned())?;
        store
            .put(RUN, &r, b"blob")
            .map_err(|_| "oracle put".to_owned())?;
    }
    let mut rt = Runtime::new(
        graph,
        Some(Box::new(store)),
        Box::new(MemoryRunStore::default()),
    )
    .map_err(|e| format!("graph refused: {}", e.reason()))?;
    rt.rs.outputs = std::mem::take(&mut case.outputs);
    rt.rs.node_sessions = std::mem::take(&mut case.slots);
    rt.rs.pause = case.pause.take();
    let paused = rt.rs.pause.is_some();
    let (mut input, deliveries) = rt.graph.build_input("w", &rt.rs.outputs);
    strip_reserved(&mut input);
    let mut exec = ModelExecutor {
        unpack_fails: case.unpack_fails,
        has_session: &case.has_session,
        unpacked: Vec::new(),
    };
    rt.resolve(&spec, &mut input, &deliveries, paused, &mut exec);
    let got = (
        input
            .get("_session_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        input
            .get("_session_fingerprint")
            .and_then(Value::as_str)
            .map(str::to_owned),
    );
    if got.0.is_none() && input.contains_key("_session_fingerprint") {
        return Err("a fingerprint without a session id".into());
    }
    if let Some(id) = &got.0 {
        if !exec.unpacked.contains(id) && !case.has_session.contains(id) {
            return Err(format!("session {id} without an unpack or HasSession"));
        }
    }
    if got.1.as_deref() == Some(LIE) {
        return Err("the inbound fingerprint reached the task".into());
    }
    if got != want {
        // Decoded again for the message: the first decoding moved into the runtime.
        let case = Case::decode(data);
        return Err(format!("runtime {got:?} but model {want:?} for {case:?}"));
    }
    Ok(())
}
