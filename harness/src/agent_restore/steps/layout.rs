//! Steps that build nested split trees and compare a daemon's topology before a save
//! and after a restore (issue 15: restore rebuilds each window's split tree). The
//! comparison is of shapes, not ids: a window is its preorder tree with each split's
//! axis and ratio and each leaf labelled by its pane's record's native id ("-"
//! without one); sessions are compared by name, windows in their order.

use crate::agent_restore::live::{Live, RECORD_KEY};
use crate::agent_restore::World;
use crate::verdict::OrHarness;
use cucumber::{then, when};
use serde_json::{json, Value};

/// The daemon's equal split, which a split without a ratio is.
const EQUAL_RATIO: u64 = 5000;

#[when(
    regex = r#"^the pane (\$\w+) is split by (cols|rows)(?: at ratio (\d+))?( before)? as "(\w+)"$"#
)]
async fn split_pane(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let pane = l.subst(&c[1]);
        let mut params = json!({"pane": pane, "axis": c[2], "argv": l.sleeper()});
        if !c[3].is_empty() {
            params["ratio"] = json!(c[3].parse::<u64>().or_harness("a ratio"));
        }
        if !c[4].is_empty() {
            params["before"] = json!(true);
        }
        l.ok("pane.split", params);
        l.keep_pane(&c[5]);
    })
    .await;
}

/// One window's tree, from its preorder `nodes`, leaves labelled.
fn shape(l: &mut Live, nodes: &[Value], at: usize) -> Value {
    let n = nodes
        .get(at)
        .or_harness("a split names a node that is not there");
    match n["kind"].as_str() {
        Some("pane") => {
            let pane = n["pane"].as_str().or_harness("a leaf's pane").to_string();
            let label = l
                .meta(&pane, RECORD_KEY)
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .and_then(|r| r["native_id"].as_str().map(str::to_string))
                .unwrap_or_else(|| "-".into());
            json!(label)
        }
        Some("split") => {
            let first = n["first"].as_u64().or_harness("a split's first") as usize;
            let second = n["second"].as_u64().or_harness("a split's second") as usize;
            json!({
                "axis": n["axis"],
                "ratio": n["ratio"].as_u64().unwrap_or(EQUAL_RATIO),
                "first": shape(l, nodes, first),
                "second": shape(l, nodes, second),
            })
        }
        _ => crate::harness_error!("a node of unknown kind: {n}"),
    }
}

/// Every session by name, each its windows' shapes in order.
fn topology(l: &mut Live) -> Value {
    let listed = l.ok("session.list", json!({}));
    let mut out = serde_json::Map::new();
    for s in listed["sessions"].as_array().into_iter().flatten() {
        let name = s["name"].as_str().or_harness("a session name").to_string();
        let windows: Vec<Value> = s["windows"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|w| {
                let nodes = w["nodes"].as_array().cloned().unwrap_or_default();
                if nodes.is_empty() {
                    Value::Null
                } else {
                    shape(l, &nodes, 0)
                }
            })
            .collect();
        out.insert(name, Value::Array(windows));
    }
    Value::Object(out)
}

#[when(regex = r#"^the layout of every session is remembered as "(\w+)"$"#)]
async fn remember_layout(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let t = topology(l);
        l.s.vars.insert(c[1].to_string(), t.to_string());
    })
    .await;
}

#[then(regex = r#"^the layout of every session is the one remembered as "(\w+)"$"#)]
async fn same_layout(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let remembered =
            l.s.vars
                .get(&c[1])
                .or_harness("no layout remembered by that name");
        let want: Value = serde_json::from_str(remembered).or_harness("a remembered layout");
        let got = topology(l);
        assert_eq!(got, want, "the restored topology is not the saved one");
    })
    .await;
}
