//! Topology verbs through the CLI: shapes, ratios, place, resize, floats, tags, kills.

mod common;
use common::*;
use serde_json::{json, Value};

const IDLE: &str = r#"["sh","-c","while :; do sleep 1; done"]"#;

fn window_of(d: &Daemon, w: &str) -> Value {
    let sessions = d.ok(&["session", "list"]);
    for s in sessions["sessions"].as_array().unwrap() {
        for win in s["windows"].as_array().unwrap() {
            if win["window"] == w {
                return win.clone();
            }
        }
    }
    panic!("window {w} not listed");
}

fn pane_size(d: &Daemon, p: &str) -> (u64, u64) {
    let list = d.ok(&["pane", "list"]);
    let pane = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["pane"] == p)
        .unwrap()
        .clone();
    (
        pane["cols"].as_u64().unwrap(),
        pane["rows"].as_u64().unwrap(),
    )
}

#[test]
fn nested_splits_have_the_rfc_node_shape_and_sizes() {
    let d = Daemon::start();
    let p0 = d.pane(IDLE);
    let p1 = d.ok(&[
        "pane", "split", "--pane", &p0, "--axis", "cols", "--ratio", "6250", "--argv", IDLE,
    ]);
    assert_eq!(p1["pane"], "p1");
    let p2 = d.ok(&[
        "pane", "split", "--pane", "p1", "--axis", "rows", "--argv", IDLE,
    ]);
    assert_eq!(p2["pane"], "p2");
    let w = window_of(&d, "w0");
    assert_eq!(
        w["nodes"],
        json!([
            {"kind":"split","axis":"cols","first":1,"second":2,"ratio":6250},
            {"kind":"pane","pane":"p0"},
            {"kind":"split","axis":"rows","first":3,"second":4},
            {"kind":"pane","pane":"p1"},
            {"kind":"pane","pane":"p2"}
        ])
    );
    assert_eq!(pane_size(&d, "p0"), (50, 24));
    assert_eq!(pane_size(&d, "p1"), (29, 12));
    assert_eq!(pane_size(&d, "p2"), (29, 11));
    // Each layout change moved the revision on.
    assert_eq!(w["revision"], 4);
}

#[test]
fn ratio_changes_resize_panes_and_check_the_revision() {
    let d = Daemon::start();
    let p0 = d.pane(IDLE);
    d.ok(&[
        "pane", "split", "--pane", &p0, "--axis", "cols", "--argv", IDLE,
    ]);
    let rev = window_of(&d, "w0")["revision"].as_i64().unwrap();
    let (code, v) = d.owner(&[
        "window",
        "ratio",
        "--window",
        "w0",
        "--node",
        "0",
        "--ratio",
        "2500",
        "--revision",
        &(rev - 1).to_string(),
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (5, Some("conflict.revision"))
    );
    let r = d.ok(&[
        "window",
        "ratio",
        "--window",
        "w0",
        "--node",
        "0",
        "--ratio",
        "2500",
        "--revision",
        &rev.to_string(),
    ]);
    assert_eq!(r["revision"], rev + 1);
    assert_eq!(pane_size(&d, "p0"), (20, 24));
    assert_eq!(pane_size(&d, "p1"), (59, 24));
    let (code, v) = d.owner(&[
        "window", "ratio", "--window", "w0", "--node", "1", "--ratio", "10",
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (2, Some("invalid_params.node"))
    );
    let (code, _) = d.owner(&[
        "window", "ratio", "--window", "w0", "--node", "0", "--ratio", "10000",
    ]);
    assert_eq!(code, 2);
    d.ok(&["window", "ratio", "--window", "w0", "--node", "0"]);
    assert!(window_of(&d, "w0")["nodes"][0].get("ratio").is_none());
}

#[test]
fn pane_resize_moves_the_nearest_split() {
    let d = Daemon::start();
    let p0 = d.pane(IDLE);
    d.ok(&[
        "pane", "split", "--pane", &p0, "--axis", "cols", "--argv", IDLE,
    ]);
    let r = d.ok(&["pane", "resize", "--pane", "p1", "--cols", "30"]);
    assert_eq!(r["cols"], 30);
    assert_eq!(pane_size(&d, "p0"), (49, 24));
    // No split along rows: the window's area changes.
    let r = d.ok(&["pane", "resize", "--pane", "p0", "--rows", "30"]);
    assert_eq!(r["rows"], 30);
    assert_eq!(window_of(&d, "w0")["rows"], 30);
}

#[test]
fn place_moves_a_pane_within_and_across_windows() {
    let d = Daemon::start();
    let p0 = d.pane(IDLE);
    d.ok(&[
        "pane", "split", "--pane", &p0, "--axis", "cols", "--argv", IDLE,
    ]);
    d.ok(&[
        "pane", "split", "--pane", "p1", "--axis", "rows", "--argv", IDLE,
    ]);
    d.ok(&[
        "pane", "place", "--pane", "p2", "--target", "p0", "--axis", "rows", "--before",
    ]);
    let nodes = window_of(&d, "w0")["nodes"].clone();
    assert_eq!(
        nodes[1],
        json!({"kind":"split","axis":"rows","first":2,"second":3})
    );
    assert_eq!(nodes[2]["pane"], "p2");
    assert_eq!(nodes[3]["pane"], "p0");
    assert_eq!(nodes[4]["pane"], "p1");
    d.ok(&["window", "create", "--session", "s0", "--name", "other"]);
    let r = d.ok(&["pane", "place", "--pane", "p1", "--window", "w1"]);
    assert_eq!(r["window"], "w1");
    assert_eq!(
        window_of(&d, "w1")["nodes"],
        json!([{"kind":"pane","pane":"p1"}])
    );
    let list = d.ok(&["pane", "list", "--window", "w1"]);
    assert_eq!(list["panes"][0]["pane"], "p1");
    let (code, v) = d.owner(&["pane", "place", "--pane", "p0", "--window", "w1"]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (5, Some("conflict.not_empty"))
    );
    let (code, _) = d.owner(&["pane", "place", "--pane", "p0", "--target", "p0"]);
    assert_eq!(code, 2);
}

#[test]
fn floats_resolve_presets_and_geometry_with_increasing_z() {
    let config = r#".{ .floats = .{ .presets = .{ .@"venom.settings" = .{ .width = "64", .height = "19" } } } }"#;
    let d = Daemon::start_with_config(Some(config));
    d.pane(IDLE);
    let a = d.ok(&[
        "pane",
        "float",
        "--window",
        "w0",
        "--argv",
        IDLE,
        "--preset",
        "venom.settings",
    ]);
    let b = d.ok(&[
        "pane",
        "float",
        "--window",
        "w0",
        "--argv",
        IDLE,
        "--width",
        "60%",
        "--height",
        "12",
        "--anchor",
        "bottom_right",
        "--x=-1",
        "--y=-1",
        "--border",
        "single",
        "--title",
        "build log",
    ]);
    assert!(b["z"].as_u64() > a["z"].as_u64());
    assert_eq!(pane_size(&d, a["pane"].as_str().unwrap()), (64, 19));
    assert_eq!(pane_size(&d, b["pane"].as_str().unwrap()), (48, 12));
    let list = d.ok(&["pane", "list"]);
    let fb = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pane"] == b["pane"])
        .unwrap()
        .clone();
    assert_eq!(fb["layer"], "float");
    assert_eq!(fb["float"]["width"], "60%");
    assert_eq!(fb["float"]["title"], "build log");
    assert_eq!(
        fb["float"]["geometry"],
        json!({"col": 31, "row": 11, "cols": 48, "rows": 12})
    );
    // Floats are not in the tree and cannot be split or placed.
    assert_eq!(window_of(&d, "w0")["nodes"].as_array().unwrap().len(), 1);
    let (code, v) = d.owner(&[
        "pane",
        "split",
        "--pane",
        b["pane"].as_str().unwrap(),
        "--axis",
        "cols",
        "--argv",
        IDLE,
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (5, Some("conflict.layer"))
    );
    // An unknown preset falls back to .floats.default (80% x 60%).
    let c = d.ok(&[
        "pane",
        "float",
        "--window",
        "w0",
        "--argv",
        IDLE,
        "--preset",
        "nobody.unknown",
    ]);
    assert_eq!(pane_size(&d, c["pane"].as_str().unwrap()), (64, 14));
    let (code, _) = d.owner(&[
        "pane", "float", "--window", "w0", "--argv", IDLE, "--anchor", "middle",
    ]);
    assert_eq!(code, 2);
}

#[test]
fn tags_have_a_daemon_set_owner() {
    let d = Daemon::start();
    let p = d.pane(IDLE);
    d.ok(&[
        "pane", "tag", "--pane", &p, "--key", "role", "--value", "agent",
    ]);
    let list = d.ok(&["pane", "list"]);
    assert_eq!(
        list["panes"][0]["tags"],
        json!([{"key":"owner","value":"venomx"},{"key":"role","value":"agent"}])
    );
    let (code, v) = d.owner(&[
        "pane", "tag", "--pane", &p, "--key", "owner", "--value", "me",
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (2, Some("invalid_params.key"))
    );
    d.ok(&["pane", "tag", "--pane", &p, "--key", "role"]);
    assert_eq!(
        d.ok(&["pane", "list"])["panes"][0]["tags"],
        json!([{"key":"owner","value":"venomx"}])
    );
    for i in 0..15 {
        d.ok(&[
            "pane",
            "tag",
            "--pane",
            &p,
            "--key",
            &format!("k{i}"),
            "--value",
            "v",
        ]);
    }
    let (code, v) = d.owner(&[
        "pane", "tag", "--pane", &p, "--key", "one-more", "--value", "v",
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (5, Some("conflict.tag_limit"))
    );
}

#[test]
fn kills_renames_and_ids_never_reused() {
    let d = Daemon::start();
    let p0 = d.pane(IDLE);
    d.ok(&[
        "pane", "split", "--pane", &p0, "--axis", "cols", "--argv", IDLE,
    ]);
    d.ok(&["pane", "kill", "--pane", "p1"]);
    assert_eq!(
        window_of(&d, "w0")["nodes"],
        json!([{"kind":"pane","pane":"p0"}])
    );
    assert_eq!(pane_size(&d, "p0"), (80, 24));
    let again = d.ok(&[
        "pane", "split", "--pane", "p0", "--axis", "rows", "--argv", IDLE,
    ]);
    assert_eq!(again["pane"], "p2");
    d.ok(&["session", "rename", "--session", "s0", "--name", "renamed"]);
    d.ok(&["window", "rename", "--window", "w0", "--name", "renamed-w"]);
    let s = d.ok(&["session", "list"]);
    assert_eq!(s["sessions"][0]["name"], "renamed");
    assert_eq!(s["sessions"][0]["windows"][0]["name"], "renamed-w");
    d.ok(&["window", "kill", "--window", "w0"]);
    assert_eq!(d.ok(&["pane", "list"])["panes"], json!([]));
    d.ok(&["session", "kill", "--session", "s0"]);
    assert_eq!(d.ok(&["session", "list"])["sessions"], json!([]));
    assert_eq!(d.ok(&["session", "create", "--name", "n"])["session"], "s1");
    let (code, v) = d.owner(&["pane", "capture", "--pane", "p0"]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (3, Some("not_found.pane"))
    );
    let (code, _) = d.owner(&["session", "create", "--name", "bad\u{7}name"]);
    assert_eq!(code, 2);
}

#[test]
fn create_on_a_nonempty_window_conflicts_and_empty_containers_persist() {
    let d = Daemon::start();
    d.pane(IDLE);
    let (code, v) = d.owner(&["pane", "create", "--window", "w0", "--argv", IDLE]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (5, Some("conflict.not_empty"))
    );
    d.ok(&["window", "create", "--session", "s0", "--name", "empty"]);
    d.ok(&["session", "create", "--name", "empty-session"]);
    let s = d.ok(&["session", "list"]);
    assert_eq!(s["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(s["sessions"][0]["windows"][1]["nodes"], json!([]));
}
