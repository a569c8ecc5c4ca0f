//! The drive driver: the implementation's runtime behind the drive protocol
//! (docs/spec/persist-drive.md), and the graph notation the scenarios write.
//!
//! A graph in a scenario is one line per node and per edge:
//! ```text
//! w: pi persist                       # id: backend mode [fingerprint F] [fan_out]
//! src: claude_code persist extra {"k":"v"}
//! src -> w: _session_id = output _session_id, topic = literal "x"
//! ```

use crate::drivers::lines::LinesChild;
use crate::drivers::sandbox::Placeholders;
use crate::verdict::OrHarness;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// How long one drive request may take (scaled): a visit runs the executor and
/// packs, puts and publishes a checkpoint.
const REPLY_MS: u64 = 20_000;

pub struct Drive {
    lines: LinesChild,
    /// The drive's state directory (`DIR`): the pods' roots live under `pods/`.
    pub state: PathBuf,
    /// Every `run_to`/`answer`/`resume` reply, in order.
    pub visits: Vec<Value>,
    pub last: Option<Value>,
    /// How many store and run-store calls the drive had made when the last visit
    /// started (`inspect`'s `ops`), to look at that visit's calls alone.
    pub mark: usize,
}

impl Drive {
    pub fn start(ph: &Placeholders, template: &[String], cwd: &Path) -> Drive {
        // `{state_home}`, as the profile names it, is the drive's DIR.
        let state = ph.state_home.clone();
        Drive {
            lines: LinesChild::start("drive", ph, template, &[], cwd),
            state,
            visits: Vec::new(),
            last: None,
            mark: 0,
        }
    }

    /// Any reply.
    pub fn send(&mut self, req: Value) -> Value {
        let reply = self.lines.request(&req, REPLY_MS);
        self.last = Some(reply.clone());
        reply
    }

    /// A reply that must be `ok:true` (a refused request is the implementation's
    /// failure to take a command the protocol defines).
    pub fn ok(&mut self, req: Value) -> Value {
        let reply = self.send(req.clone());
        assert_eq!(
            reply["ok"], true,
            "the drive refused {}: {}",
            req["cmd"], reply["error"]
        );
        reply
    }

    /// A visit (`run_to`, `answer`, `resume`): its reply is kept in order.
    pub fn visit(&mut self, req: Value) -> Value {
        self.mark = self.inspect()["ops"].as_array().map_or(0, Vec::len);
        let reply = self.ok(req);
        self.visits.push(reply.clone());
        reply
    }

    pub fn inspect(&mut self) -> Value {
        self.ok(json!({"cmd": "inspect"}))
    }

    /// The executes of `node` so far, in order (from `inspect`).
    pub fn executes_of(&mut self, node: &str) -> Vec<Value> {
        let i = self.inspect();
        i["executes"]
            .as_array()
            .or_harness("inspect's executes")
            .iter()
            .filter(|e| e["node"] == node)
            .cloned()
            .collect()
    }

    pub fn last(&self) -> &Value {
        self.last
            .as_ref()
            .or_harness("no drive request in this scenario")
    }

    pub fn last_visit(&self) -> &Value {
        self.visits
            .last()
            .or_harness("no node ran in this scenario")
    }
}

fn word_or_err<'a>(words: &mut impl Iterator<Item = &'a str>, what: &str) -> &'a str {
    words
        .next()
        .unwrap_or_else(|| crate::harness_error!("graph notation: {what} missing"))
}

/// Parses the scenario's graph notation into the `graph` request's nodes and edges.
pub fn parse_graph(text: &str) -> (Vec<Value>, Vec<Value>) {
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let (head, rest) = line
            .split_once(':')
            .unwrap_or_else(|| crate::harness_error!("graph notation: no ':' in {line:?}"));
        if let Some((from, to)) = head.split_once("->") {
            let mut map = Map::new();
            for item in rest.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                let (key, source) = item.split_once('=').unwrap_or_else(|| {
                    crate::harness_error!("graph notation: an edge item is KEY = SOURCE")
                });
                let source = source.trim();
                let value = if let Some(k) = source.strip_prefix("output ") {
                    json!({"output": k.trim()})
                } else if let Some(v) = source.strip_prefix("literal ") {
                    let v: Value = serde_json::from_str(v.trim()).unwrap_or_else(|_| {
                        crate::harness_error!("graph notation: a literal is JSON")
                    });
                    json!({ "literal": v })
                } else {
                    crate::harness_error!("graph notation: SOURCE is output K or literal JSON")
                };
                map.insert(key.trim().to_string(), value);
            }
            edges.push(json!({"from": from.trim(), "to": to.trim(), "map": map}));
        } else {
            let mut words = rest.split_whitespace();
            let backend = word_or_err(&mut words, "backend");
            let mode = word_or_err(&mut words, "session mode");
            let mut node = json!({"id": head.trim(), "backend": backend, "session": mode});
            while let Some(w) = words.next() {
                match w {
                    "fan_out" => node["fan_out"] = json!(true),
                    "fingerprint" => {
                        node["fingerprint"] = json!(word_or_err(&mut words, "fingerprint"))
                    }
                    "extra" => {
                        let json_text: Vec<&str> = words.by_ref().collect();
                        let v: Value =
                            serde_json::from_str(&json_text.join(" ")).unwrap_or_else(|_| {
                                crate::harness_error!("graph notation: extra is a JSON object")
                            });
                        node["extra_output"] = v;
                    }
                    other => crate::harness_error!("graph notation: unknown word {other:?}"),
                }
            }
            nodes.push(node);
        }
    }
    (nodes, edges)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_notation_reads_nodes_and_edges() {
        let (nodes, edges) = parse_graph(
            "w: pi persist\n src: claude_code persist fingerprint fp-x extra {\"a\": 1}\n\
             src -> w: _session_id = output _session_id, topic = literal \"x\"\n",
        );
        assert_eq!(
            nodes[0],
            json!({"id":"w","backend":"pi","session":"persist"})
        );
        assert_eq!(nodes[1]["fingerprint"], "fp-x");
        assert_eq!(nodes[1]["extra_output"], json!({"a": 1}));
        assert_eq!(
            edges[0],
            json!({"from":"src","to":"w","map":{"_session_id":{"output":"_session_id"},"topic":{"literal":"x"}}})
        );
    }
}
