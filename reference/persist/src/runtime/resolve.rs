//! Resolution order 0–4 (seed "Resolution order") and the visit-1 helper (seed
//! "Inbound visit-1 seed", rules 1–7). Every path that does not end in a successful
//! unpack, or in HasSession with exactly one stamp-eligible source, strips both
//! session keys: the CLI is never `--resume`d on a hope.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::{warn, EventKind};
use super::graph::{Delivery, NodeSpec, SessionMode};
use super::output::{
    string_field, strip_session_keys, BACKEND_KEY, SESSION_FINGERPRINT_KEY, SESSION_ID_KEY,
};
use super::{Executor, Runtime};
use crate::runstore::{NodeSessionSlot, Output};
use crate::store::StateRef;

/// Which rule gave the task its session (the `session` event's code).
pub mod chose {
    pub const FRESH: &str = "fresh";
    pub const PAUSE: &str = "pause";
    pub const OWN_SLOT: &str = "own_slot";
    pub const SOURCE_SLOT: &str = "source_slot";
    pub const HAS_SESSION: &str = "has_session";
}

/// Rule 0: the backends wired with a packer.
pub fn capable(backend: &str) -> bool {
    crate::Layouts::builtin().capable(backend).is_ok()
}

/// Visit-1 rules 1–3: the sources whose edge delivered `id` (1), whose output
/// served `id` (2) on `backend` (3). Each source counts once however many of its
/// edges delivered the id.
pub fn eligible_sources(
    id: &str,
    backend: &str,
    deliveries: &[Delivery],
    outputs: &BTreeMap<String, Output>,
) -> Vec<String> {
    let mut eligible: Vec<String> = Vec::new();
    if crate::negative::active(crate::negative::Defect::ScanEveryOutput) {
        let stamped = |o: &&Output| {
            string_field(o, SESSION_ID_KEY) == Some(id)
                && string_field(o, BACKEND_KEY) == Some(backend)
        };
        return outputs
            .iter()
            .filter(|(_, o)| stamped(o))
            .map(|(src, _)| src.clone())
            .collect();
    }
    for d in deliveries {
        if d.value.as_str() != Some(id) || eligible.contains(&d.src) {
            continue;
        }
        let Some(out) = outputs.get(&d.src) else {
            continue;
        };
        let stamped = string_field(out, SESSION_ID_KEY) == Some(id)
            && string_field(out, BACKEND_KEY) == Some(backend);
        if stamped || crate::negative::active(crate::negative::Defect::TrustUnstampedSource) {
            eligible.push(d.src.clone());
        }
    }
    eligible
}

/// Rule 5's match: the source's slot is this session on this backend, with a ref.
fn slot_matches(slot: Option<&NodeSessionSlot>, id: &str, backend: &str) -> Option<StateRef> {
    let slot = slot?;
    if slot.session_id.as_deref() != Some(id) || slot.backend != backend {
        return None;
    }
    StateRef::parse(slot.state_ref.as_deref()?).ok()
}

/// The inbound-fingerprint-fallback negative control (`None` in the reference).
fn inbound_fingerprint_fallback(input: &Output) -> Option<String> {
    crate::negative::active(crate::negative::Defect::InboundFingerprintFallback)
        .then(|| string_field(input, SESSION_FINGERPRINT_KEY).map(str::to_owned))
        .flatten()
}

/// The source-slot-falls-through negative control: after a failed Get or unpack of
/// the source's slot, HasSession decides (never in the reference).
fn falls_through(exec: &mut dyn Executor, backend: &str, id: &str) -> bool {
    crate::negative::active(crate::negative::Defect::SourceSlotFallsThrough)
        && exec.has_session(backend, id)
}

fn set_session(input: &mut Output, id: &str, fingerprint: Option<&str>) {
    input.insert(SESSION_ID_KEY.to_owned(), Value::String(id.to_owned()));
    match fingerprint {
        Some(f) => input.insert(
            SESSION_FINGERPRINT_KEY.to_owned(),
            Value::String(f.to_owned()),
        ),
        None => input.remove(SESSION_FINGERPRINT_KEY),
    };
}

impl Runtime {
    /// Get `r` and unpack it as session `id` of `backend` into the executor's root.
    /// `Err` carries the warning: which step failed.
    fn restore_blob(
        &self,
        r: &StateRef,
        backend: &str,
        id: &str,
        exec: &mut dyn Executor,
        codes: (&'static str, &'static str),
    ) -> Result<(), &'static str> {
        let store = self.store.as_ref().ok_or(warn::NO_STORE)?;
        let blob = store.get(&self.graph.run, r).map_err(|_| codes.0)?;
        exec.unpack_session(backend, id, &blob).map_err(|_| codes.1)
    }

    fn fresh(&mut self, node: &str, input: &mut Output, why: Option<&'static str>) {
        strip_session_keys(input);
        if let Some(code) = why {
            self.warn(node, code);
        }
        self.event(EventKind::Session, node, Some(chose::FRESH));
    }

    fn resumed(&mut self, node: &str, rule: &'static str) {
        self.event(EventKind::Session, node, Some(rule));
    }

    /// Resolution order 0–4 for one visit of `spec`. Leaves `_session_id` (and
    /// `_session_fingerprint`) in `input` only when the CLI may resume it.
    pub fn resolve(
        &mut self,
        spec: &NodeSpec,
        input: &mut Output,
        deliveries: &[Delivery],
        reinvoke: bool,
        exec: &mut dyn Executor,
    ) {
        let node = spec.id.as_str();
        let backend = spec.backend.as_str();
        // 0. Capability.
        if !capable(backend) {
            let why = (input.contains_key(SESSION_ID_KEY) || spec.mode == SessionMode::Persist)
                .then_some(warn::NO_CAPABILITY);
            return self.fresh(node, input, why);
        }
        // 1. Mid-node pause: only the pause ref; NodeSessions[self] is never overlaid.
        if reinvoke {
            let pause = self.rs.pause.clone().filter(|p| p.node == node);
            let Some(pause) = pause else {
                return self.fresh(node, input, Some(warn::PAUSE_NO_REF));
            };
            let (Some(r), Some(id)) = (
                pause
                    .backend_session_state_ref
                    .as_deref()
                    .and_then(|r| StateRef::parse(r).ok()),
                pause.session_id.as_deref(),
            ) else {
                return self.fresh(node, input, Some(warn::PAUSE_NO_REF));
            };
            let codes = (warn::PAUSE_GET_FAILED, warn::PAUSE_UNPACK_FAILED);
            return match self.restore_blob(&r, backend, id, exec, codes) {
                Ok(()) => {
                    set_session(input, id, pause.fingerprint.as_deref());
                    self.resumed(node, chose::PAUSE)
                }
                Err(code) => self.fresh(node, input, Some(code)),
            };
        }
        if spec.mode != SessionMode::Persist
            && crate::negative::active(crate::negative::Defect::NonPersistKeepsInbound)
        {
            return;
        }
        if spec.mode != SessionMode::Persist {
            return self.fresh(node, input, None);
        }
        // 2. The node's own completed-visit slot wins over anything inbound.
        if let Some(slot) = self.rs.node_sessions.get(node).cloned() {
            if slot.state_ref.as_deref().is_some_and(|r| !r.is_empty()) {
                return self.own_slot(node, backend, &slot, input, exec);
            }
        }
        // 3. Visit-1 inbound.
        match input.get(SESSION_ID_KEY).cloned() {
            None => self.fresh(node, input, None),
            Some(Value::String(id)) => self.inbound(node, backend, &id, input, deliveries, exec),
            Some(_) => self.fresh(node, input, Some(warn::INBOUND_NOT_STRING)),
        }
    }

    fn own_slot(
        &mut self,
        node: &str,
        backend: &str,
        slot: &NodeSessionSlot,
        input: &mut Output,
        exec: &mut dyn Executor,
    ) {
        let usable = (slot.backend == backend)
            .then(|| slot.session_id.clone())
            .flatten()
            .zip(
                slot.state_ref
                    .as_deref()
                    .and_then(|r| StateRef::parse(r).ok()),
            );
        let Some((id, r)) = usable else {
            return self.fresh(node, input, Some(warn::SLOT_UNUSABLE));
        };
        let codes = (warn::SLOT_GET_FAILED, warn::SLOT_UNPACK_FAILED);
        match self.restore_blob(&r, backend, &id, exec, codes) {
            Ok(()) => {
                set_session(input, &id, slot.fingerprint.as_deref());
                self.resumed(node, chose::OWN_SLOT)
            }
            // No fall-through to an inbound id or HasSession.
            Err(code) => self.fresh(node, input, Some(code)),
        }
    }

    /// Visit-1 rules 4–7 after the stamp check.
    fn inbound(
        &mut self,
        node: &str,
        backend: &str,
        id: &str,
        input: &mut Output,
        deliveries: &[Delivery],
        exec: &mut dyn Executor,
    ) {
        let eligible = eligible_sources(id, backend, deliveries, &self.rs.outputs);
        let src = match eligible.as_slice() {
            [one] => one.clone(),
            [] => return self.fresh(node, input, Some(warn::PROVENANCE_NONE)),
            _ => return self.fresh(node, input, Some(warn::PROVENANCE_MANY)),
        };
        let slot = self.rs.node_sessions.get(&src).cloned();
        if let Some(r) = slot_matches(slot.as_ref(), id, backend) {
            let codes = (
                warn::SOURCE_SLOT_GET_FAILED,
                warn::SOURCE_SLOT_UNPACK_FAILED,
            );
            return match self.restore_blob(&r, backend, id, exec, codes) {
                Ok(()) => {
                    let fp = slot.as_ref().and_then(|s| s.fingerprint.as_deref());
                    set_session(input, id, fp);
                    self.resumed(node, chose::SOURCE_SLOT)
                }
                Err(code) if !falls_through(exec, backend, id) => {
                    self.fresh(node, input, Some(code))
                }
                Err(_) => {
                    set_session(input, id, None);
                    self.resumed(node, chose::HAS_SESSION)
                }
            };
        }
        if exec.has_session(backend, id) {
            let fp = self
                .rs
                .outputs
                .get(&src)
                .and_then(|o| string_field(o, SESSION_FINGERPRINT_KEY))
                .map(str::to_owned);
            let fp = fp.or_else(|| inbound_fingerprint_fallback(input));
            set_session(input, id, fp.as_deref());
            return self.resumed(node, chose::HAS_SESSION);
        }
        self.fresh(node, input, Some(warn::NO_SESSION))
    }
}
