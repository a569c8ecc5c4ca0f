//! The drive's requests (docs/spec/persist-drive.md): closed shapes, parsed from a
//! line the kit's strict JSON scanner accepted.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};
use vx_format::json::check_document;
use vx_format::Doc;

use crate::limits::MAX_TEXT_BYTES;
use crate::runtime::{Edge, EdgeValue, Graph, NodeSpec, SessionMode};

fn default_run() -> String {
    "r1".to_owned()
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeReq {
    id: String,
    backend: String,
    #[serde(default)]
    session: Option<String>,
    #[serde(default)]
    fingerprint: Option<String>,
    #[serde(default)]
    fan_out: bool,
    #[serde(default)]
    extra_output: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum MapValue {
    Output(String),
    Literal(Value),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EdgeReq {
    from: String,
    to: String,
    #[serde(default)]
    map: BTreeMap<String, MapValue>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    Graph {
        #[serde(default = "default_run")]
        run: String,
        #[serde(default = "yes")]
        store: bool,
        nodes: Vec<NodeReq>,
        #[serde(default)]
        edges: Vec<EdgeReq>,
    },
    RunTo {
        node: String,
        #[serde(default)]
        ask: Option<String>,
    },
    Answer {
        text: String,
        #[serde(default)]
        ask: Option<String>,
    },
    Resume {},
    Rewind {
        to: String,
        #[serde(default)]
        drop: Option<Vec<String>>,
    },
    Fork {
        run: String,
    },
    WipeRoot {
        #[serde(default)]
        pod: Option<String>,
    },
    SwitchPod {
        pod: String,
    },
    Inject {
        op: String,
        #[serde(default)]
        mode: Option<String>,
        #[serde(default)]
        count: Option<u32>,
        #[serde(default)]
        skip: Option<u32>,
    },
    Inspect {
        #[serde(default)]
        run: Option<String>,
    },
}

pub const COMMANDS: [&str; 10] = [
    "graph",
    "run_to",
    "answer",
    "resume",
    "rewind",
    "fork",
    "wipe_root",
    "switch_pod",
    "inject",
    "inspect",
];

/// A refused request: code and fixed reason.
pub type Refusal = (&'static str, &'static str);

pub fn parse(line: &[u8]) -> Result<Request, Refusal> {
    check_document(line, Doc::Frame)
        .map_err(|_| ("invalid_request.json", "the line is not strict JSON"))?;
    let value: Value = serde_json::from_slice(line)
        .map_err(|_| ("invalid_request.json", "the line is not strict JSON"))?;
    let Value::Object(obj) = &value else {
        return Err(("invalid_request.json", "the line is not one JSON object"));
    };
    match obj.get("cmd").and_then(Value::as_str) {
        Some(cmd) if COMMANDS.contains(&cmd) => {}
        _ => return Err(("invalid_request.cmd", "unknown or missing cmd")),
    }
    let req: Request = serde_json::from_value(value).map_err(|_| {
        (
            "invalid_request.field",
            "a field is missing, unknown or mistyped",
        )
    })?;
    let texts: Vec<&str> = match &req {
        Request::RunTo { ask, .. } => ask.iter().map(String::as_str).collect(),
        Request::Answer { text, ask } => std::iter::once(text.as_str())
            .chain(ask.as_deref())
            .collect(),
        _ => Vec::new(),
    };
    if texts.iter().any(|t| t.len() > MAX_TEXT_BYTES) {
        return Err((
            "invalid_request.field",
            "a question or answer is over 4 KiB",
        ));
    }
    Ok(req)
}

/// The runtime's graph from a `graph` request.
pub fn graph(run: String, nodes: Vec<NodeReq>, edges: Vec<EdgeReq>) -> Result<Graph, Refusal> {
    let nodes = nodes
        .into_iter()
        .map(|n| {
            let mode = match n.session.as_deref() {
                None | Some("fresh") => SessionMode::Fresh,
                Some("persist") => SessionMode::Persist,
                Some(_) => {
                    return Err((
                        "invalid_graph.shape",
                        "a session mode is not fresh or persist",
                    ))
                }
            };
            if n.fingerprint
                .as_ref()
                .is_some_and(|f| f.len() > MAX_TEXT_BYTES)
            {
                return Err(("invalid_graph.shape", "a fingerprint is over 4 KiB"));
            }
            Ok(NodeSpec {
                fingerprint: n.fingerprint.unwrap_or_else(|| format!("fp-{}", n.id)),
                id: n.id,
                backend: n.backend,
                mode,
                fan_out: n.fan_out,
                extra_output: n.extra_output,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let edges = edges
        .into_iter()
        .map(|e| Edge {
            from: e.from,
            to: e.to,
            map: e
                .map
                .into_iter()
                .map(|(k, v)| {
                    let v = match v {
                        MapValue::Output(k) => EdgeValue::Output(k),
                        MapValue::Literal(v) => EdgeValue::Literal(v),
                    };
                    (k, v)
                })
                .collect(),
        })
        .collect();
    Ok(Graph { run, nodes, edges })
}
