//! The runtime rows' actions, through the drive protocol: a graph, visits of its
//! nodes, pauses answered, pods switched and roots wiped, failures injected, resume,
//! rewind and fork.

use crate::session_persist::drive::parse_graph;
use crate::session_persist::World;
use crate::verdict::OrHarness;
use cucumber::gherkin::Step;
use cucumber::{given, when};
use serde_json::json;

fn graph_request(doc: Option<&str>, store: bool) -> serde_json::Value {
    let (nodes, edges) = parse_graph(doc.or_harness("the graph is the step's docstring"));
    json!({"cmd": "graph", "run": "r1", "store": store, "nodes": nodes, "edges": edges})
}

#[given(regex = r"^the graph(, without a store)?:$")]
async fn the_graph(w: &mut World, c: &[String], #[step] step: &Step) {
    w.run(c, step.docstring.as_deref(), |s, c| {
        let req = graph_request(c.doc(), c.get(1).is_none());
        s.drive().ok(req);
    })
    .await;
}

#[when(regex = r"^the graph is offered:$")]
async fn graph_offered(w: &mut World, #[step] step: &Step) {
    w.run(&[], step.docstring.as_deref(), |s, c| {
        let req = graph_request(c.doc(), true);
        s.drive().send(req);
    })
    .await;
}

#[given(regex = r#"^pod "([a-z0-9-]+)" holds a pi session "([A-Za-z0-9_-]+)"$"#)]
async fn pod_holds_pi_session(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        // Where the kit's executor (vxstub cli) keeps a pi transcript in a pod's root
        // (docs/spec/persist-drive.md): what a live config dir would hold.
        let root = s.drive().state.join("pods").join(&c[1]).join("pi");
        let key = format!("sessions/vx/20260101_{}.jsonl", &c[2]);
        crate::session_persist::pods::plant(&root, &key, b"{\"turn\":1,\"marker\":\"planted\"}\n");
    })
    .await;
}

#[when(regex = r#"^node "(\w+)" runs(?: and asks "([^"]+)")?$"#)]
async fn node_runs(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let mut req = json!({"cmd": "run_to", "node": &c[1]});
        if let Some(q) = c.get(2) {
            req["ask"] = json!(q.as_str());
        }
        s.drive().visit(req);
    })
    .await;
}

#[when(regex = r#"^the pause is answered "([^"]+)"(?: and it asks "([^"]+)")?$"#)]
async fn pause_answered(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let ask = c.get(2).map(|q| q.as_str().to_string());
        s.drive()
            .visit(json!({"cmd": "answer", "text": &c[1], "ask": ask}));
    })
    .await;
}

#[when(regex = r"^the run is resumed$")]
async fn run_resumed(w: &mut World) {
    w.run(&[], None, |s, _| {
        s.drive().visit(json!({"cmd": "resume"}));
    })
    .await;
}

#[when(regex = r#"^the run is rewound to "(\w+)"$"#)]
async fn run_rewound(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        s.drive().ok(json!({"cmd": "rewind", "to": &c[1]}));
    })
    .await;
}

/// A rewind the scenario expects may be refused (its checkpoint was made to fail).
#[when(regex = r#"^the run is asked to rewind to "(\w+)"$"#)]
async fn asked_to_rewind(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        s.drive().send(json!({"cmd": "rewind", "to": &c[1]}));
    })
    .await;
}

#[when(regex = r#"^the run is forked as "(\w+)"$"#)]
async fn run_forked(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let reply = s.drive().ok(json!({"cmd": "fork", "run": &c[1]}));
        s.forked = Some(reply["checkpoint"].clone());
    })
    .await;
}

#[when(regex = r"^the pod's roots are wiped$")]
async fn roots_wiped(w: &mut World) {
    w.run(&[], None, |s, _| {
        s.drive().ok(json!({"cmd": "wipe_root"}));
    })
    .await;
}

#[when(regex = r#"^the run moves to pod "([a-z0-9-]+)"$"#)]
async fn run_moves(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        s.drive().ok(json!({"cmd": "switch_pod", "pod": &c[1]}));
    })
    .await;
}

#[when(
    regex = r"^the (next|second) (store_put|store_get|store_delete|save_checkpoint|pause_run|fail_run_resumable|fail_run|load_run|pack|unpack) (fails|fails after it lands)$"
)]
async fn next_call_fails(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let skip = if &c[1] == "second" { 1 } else { 0 };
        let mode = if &c[3] == "fails" { "before" } else { "after" };
        s.drive()
            .ok(json!({"cmd": "inject", "op": &c[2], "mode": mode, "count": 1, "skip": skip}));
    })
    .await;
}

#[when(regex = r#"^(?:node "(\w+)" is asked to run|the run is asked to resume)$"#)]
async fn asked(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let req = match c.get(1) {
            Some(node) => json!({"cmd": "run_to", "node": node.as_str()}),
            None => json!({"cmd": "resume"}),
        };
        s.drive().send(req);
    })
    .await;
}
