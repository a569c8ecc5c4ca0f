//! `checkpoint.json`: the run's durable state (docs/spec/persist-drive.md). The
//! reader is strict: bounded before parsing, the kit's JSON scanner (UTF-8, no
//! duplicate keys, depth 32, safe integers), a closed shape, then every id and ref
//! checked. The writer is canonical (sorted maps, no whitespace), so an accepted
//! document re-encodes to bytes that read back equal.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use vx_format::json::check_document;
use vx_format::Doc;

use super::{RunStoreCode, RunStoreError};
use crate::header::{valid_backend_name, valid_session_id};
use crate::limits::{
    MAX_CHECKPOINT_BYTES, MAX_CHECKPOINT_NODES, MAX_CHECKPOINT_STRING_BYTES, MAX_GRAPH_ID_BYTES,
    MAX_TEXT_BYTES,
};
use crate::store::StateRef;

/// A node's output map (reserved keys already stripped).
pub type Output = Map<String, Value>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    Paused,
    FailedResumable,
    Failed,
    Rewound,
}

impl RunStatus {
    /// The status `save_checkpoint` stamps: running, unless a rewind writes it.
    pub fn saved(self) -> RunStatus {
        match self {
            RunStatus::Rewound => RunStatus::Rewound,
            _ => RunStatus::Running,
        }
    }
}

/// ADR-089's `NodeSessionSlot`: the last completed persist visit of a node.
/// An empty `state_ref` is not a slot (adopt skips it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSessionSlot {
    pub backend: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_ref: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation_ref: Option<String>,
}

/// The in-flight ask_user of a paused run. `backend_session_state_ref` is
/// `Checkpoint.BackendSessionStateRef`: a ref, never the blob.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PauseInfo {
    pub node: String,
    pub question: String,
    pub backend: String,
    pub session_id: Option<String>,
    pub fingerprint: Option<String>,
    pub backend_session_state_ref: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    pub version: u32,
    pub run: String,
    pub status: RunStatus,
    pub outputs: BTreeMap<String, Output>,
    pub visits: BTreeMap<String, u64>,
    pub node_sessions: BTreeMap<String, NodeSessionSlot>,
    pub pause: Option<PauseInfo>,
    pub resume_node: Option<String>,
}

pub const CHECKPOINT_VERSION: u32 = 1;

fn corrupt(rule: &'static str, reason: &'static str) -> RunStoreError {
    RunStoreError::rule(RunStoreCode::CheckpointCorrupt, rule, reason)
}

/// A node id, run id or pod name: 1–64 bytes of `[A-Za-z0-9_-]`.
pub fn valid_graph_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_GRAPH_ID_BYTES
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The node part of a ref (refs are `<node>/<ulid>` or `<node>/pause/<ulid>`).
pub fn ref_node(r: &StateRef) -> String {
    let text = r.to_string();
    text.split('/').next().unwrap_or_default().to_owned()
}

fn check_text(s: &str, max: usize) -> Result<(), RunStoreError> {
    if s.len() > max {
        return Err(corrupt("checkpoint.bounds", "a string is over its cap"));
    }
    Ok(())
}

fn check_value(v: &Value) -> Result<(), RunStoreError> {
    match v {
        Value::String(s) => check_text(s, MAX_CHECKPOINT_STRING_BYTES),
        Value::Array(items) => items.iter().try_for_each(check_value),
        Value::Object(map) => map.iter().try_for_each(|(k, v)| {
            check_text(k, MAX_CHECKPOINT_STRING_BYTES)?;
            check_value(v)
        }),
        _ => Ok(()),
    }
}

fn check_node_key(node: &str) -> Result<(), RunStoreError> {
    if valid_graph_id(node) {
        Ok(())
    } else {
        Err(corrupt(
            "checkpoint.id",
            "a node id is not 1-64 bytes of [A-Za-z0-9_-]",
        ))
    }
}

fn check_session_id(id: &Option<String>) -> Result<(), RunStoreError> {
    match id {
        Some(id) if !valid_session_id(id) => Err(corrupt(
            "checkpoint.id",
            "a session id is not a valid session id",
        )),
        _ => Ok(()),
    }
}

fn check_backend(b: &str) -> Result<(), RunStoreError> {
    if valid_backend_name(b) {
        Ok(())
    } else {
        Err(corrupt("checkpoint.id", "a backend is not a backend name"))
    }
}

fn check_ref(text: &str, node: &str, pause: bool) -> Result<(), RunStoreError> {
    let r = StateRef::parse(text).map_err(|_| {
        corrupt(
            "checkpoint.ref",
            "a ref is not <node>/<ulid> or <node>/pause/<ulid>",
        )
    })?;
    if r.is_pause() != pause || ref_node(&r) != node {
        return Err(corrupt(
            "checkpoint.ref",
            "a ref is not of its node or of the wrong kind",
        ));
    }
    Ok(())
}

fn check_optional(text: &Option<String>) -> Result<(), RunStoreError> {
    text.as_deref()
        .map_or(Ok(()), |t| check_text(t, MAX_TEXT_BYTES))
}

impl Checkpoint {
    /// The semantic checks the reader applies after the shape; the writer applies
    /// them too, so nothing unreadable is ever published.
    pub fn validate(&self) -> Result<(), RunStoreError> {
        if self.version != CHECKPOINT_VERSION {
            return Err(corrupt("checkpoint.version", "unknown checkpoint version"));
        }
        if !valid_graph_id(&self.run) {
            return Err(corrupt(
                "checkpoint.id",
                "the run id is not 1-64 bytes of [A-Za-z0-9_-]",
            ));
        }
        if self.outputs.len() > MAX_CHECKPOINT_NODES
            || self.visits.len() > MAX_CHECKPOINT_NODES
            || self.node_sessions.len() > MAX_CHECKPOINT_NODES
        {
            return Err(corrupt("checkpoint.bounds", "more nodes than the cap"));
        }
        for (node, out) in &self.outputs {
            check_node_key(node)?;
            out.iter().try_for_each(|(k, v)| {
                check_text(k, MAX_CHECKPOINT_STRING_BYTES)?;
                check_value(v)
            })?;
        }
        self.visits.keys().try_for_each(|n| check_node_key(n))?;
        for (node, slot) in &self.node_sessions {
            check_node_key(node)?;
            check_backend(&slot.backend)?;
            check_session_id(&slot.session_id)?;
            check_optional(&slot.fingerprint)?;
            check_optional(&slot.conversation_ref)?;
            if let Some(r) = &slot.state_ref {
                check_ref(r, node, false)?;
            }
        }
        if let Some(p) = &self.pause {
            check_node_key(&p.node)?;
            check_backend(&p.backend)?;
            check_session_id(&p.session_id)?;
            check_text(&p.question, MAX_TEXT_BYTES)?;
            check_optional(&p.fingerprint)?;
            if let Some(r) = &p.backend_session_state_ref {
                check_ref(r, &p.node, true)?;
            }
        }
        if let Some(n) = &self.resume_node {
            check_node_key(n)?;
        }
        Ok(())
    }

    /// Canonical bytes: sorted maps, no whitespace, a final newline.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = serde_json::to_vec(self).expect("a checkpoint always encodes");
        out.push(b'\n');
        out
    }
}

/// The strict reader of checkpoint.json. First failure wins: length, JSON, shape,
/// semantics.
pub fn read_checkpoint(bytes: &[u8]) -> Result<Checkpoint, RunStoreError> {
    if bytes.len() as u64 > MAX_CHECKPOINT_BYTES {
        return Err(corrupt(
            "checkpoint.size",
            "checkpoint.json is over its cap",
        ));
    }
    check_document(bytes, Doc::File)
        .map_err(|_| corrupt("checkpoint.json", "checkpoint.json is not strict JSON"))?;
    let cp: Checkpoint = serde_json::from_slice(bytes).map_err(|_| {
        corrupt(
            "checkpoint.shape",
            "checkpoint.json does not have the closed shape",
        )
    })?;
    cp.validate()?;
    Ok(cp)
}

/// The `persist_checkpoint` property: an accepted document re-encodes to bytes the
/// reader accepts as the same checkpoint, and encoding those again is stable.
pub fn reencode_is_stable(bytes: &[u8]) -> Result<(), &'static str> {
    let Ok(cp) = read_checkpoint(bytes) else {
        return Ok(());
    };
    let once = cp.encode();
    let again = read_checkpoint(&once).map_err(|_| "the re-encoded checkpoint is refused")?;
    if again != cp {
        return Err("the re-encoded checkpoint reads back different");
    }
    if again.encode() != once {
        return Err("encoding is not stable");
    }
    Ok(())
}
