//! The small graph the drive runs: nodes with a backend and a session mode, edges
//! whose maps copy a source output key or deliver a literal. Building a node's input
//! also records which edge delivered which `_session_id` (visit-1 provenance rule 1).

use std::collections::BTreeMap;

use serde_json::Value;

use super::output::SESSION_ID_KEY;
use crate::runstore::{valid_graph_id, Output};

/// The seed's session modes. `fresh` is the default; `persist` is the sixth mode of
/// the DSL's iota (the other four modes are outside this kit: they are not
/// persist and behave here as `fresh`, which never resumes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionMode {
    Fresh,
    Persist,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    pub id: String,
    pub backend: String,
    pub mode: SessionMode,
    /// The node's own configuration fingerprint (what its fresh sessions stamp).
    pub fingerprint: String,
    /// Executed inside a fan-out branch (execBranch: no writes; persist illegal).
    pub fan_out: bool,
    /// Merged into the executor's output (shows reserved keys are stripped).
    pub extra_output: Output,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EdgeValue {
    Output(String),
    Literal(Value),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub map: BTreeMap<String, EdgeValue>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    pub run: String,
    pub nodes: Vec<NodeSpec>,
    pub edges: Vec<Edge>,
}

/// Why a graph is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphError {
    Shape(&'static str),
    FanOutPersist,
}

impl GraphError {
    pub fn code(self) -> &'static str {
        match self {
            GraphError::Shape(_) => "invalid_graph.shape",
            GraphError::FanOutPersist => "invalid_graph.fan_out_persist",
        }
    }

    pub fn reason(self) -> &'static str {
        match self {
            GraphError::Shape(r) => r,
            GraphError::FanOutPersist => "session persist is illegal in a fan-out branch",
        }
    }
}

/// One edge's delivery of `_session_id` into a node's input.
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    pub src: String,
    pub value: Value,
}

impl Graph {
    pub fn validate(&self) -> Result<(), GraphError> {
        use crate::limits::{MAX_EDGE_KEYS, MAX_GRAPH_EDGES, MAX_GRAPH_NODES};
        if !valid_graph_id(&self.run) {
            return Err(GraphError::Shape(
                "the run id is not 1-64 bytes of [A-Za-z0-9_-]",
            ));
        }
        if self.nodes.is_empty() || self.nodes.len() > MAX_GRAPH_NODES {
            return Err(GraphError::Shape("a graph has 1-64 nodes"));
        }
        if self.edges.len() > MAX_GRAPH_EDGES {
            return Err(GraphError::Shape("a graph has at most 256 edges"));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if !valid_graph_id(&n.id) {
                return Err(GraphError::Shape(
                    "a node id is not 1-64 bytes of [A-Za-z0-9_-]",
                ));
            }
            if self.nodes[..i].iter().any(|m| m.id == n.id) {
                return Err(GraphError::Shape("two nodes share an id"));
            }
            if crate::Layouts::builtin().lookup(&n.backend).is_none() {
                return Err(GraphError::Shape("a node's backend is not a known backend"));
            }
            if n.fan_out && n.mode == SessionMode::Persist {
                return Err(GraphError::FanOutPersist);
            }
        }
        for e in &self.edges {
            if self.node(&e.from).is_none() || self.node(&e.to).is_none() {
                return Err(GraphError::Shape(
                    "an edge names a node the graph does not have",
                ));
            }
            if e.map.len() > MAX_EDGE_KEYS {
                return Err(GraphError::Shape("an edge map has at most 32 keys"));
            }
        }
        Ok(())
    }

    pub fn node(&self, id: &str) -> Option<&NodeSpec> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// The input of `node`: every edge into it whose source has an output, in
    /// declaration order, a later edge's key replacing an earlier one. Also every
    /// delivery of `_session_id` (the value each edge's mapping produced).
    pub fn build_input(
        &self,
        node: &str,
        outputs: &BTreeMap<String, Output>,
    ) -> (Output, Vec<Delivery>) {
        let mut input = Output::new();
        let mut deliveries = Vec::new();
        for e in self.edges.iter().filter(|e| e.to == node) {
            let Some(src_out) = outputs.get(&e.from) else {
                continue;
            };
            for (key, value) in &e.map {
                let delivered = match value {
                    EdgeValue::Output(k) => src_out.get(k).cloned(),
                    EdgeValue::Literal(v) => Some(v.clone()),
                };
                let Some(delivered) = delivered else {
                    continue;
                };
                if key == SESSION_ID_KEY {
                    deliveries.push(Delivery {
                        src: e.from.clone(),
                        value: delivered.clone(),
                    });
                }
                input.insert(key.clone(), delivered);
            }
        }
        (input, deliveries)
    }
}
