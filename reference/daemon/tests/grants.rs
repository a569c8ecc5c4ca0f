//! Principals and grants: owner, unknown, issued and pane principals.

mod common;
use common::*;
use serde_json::json;

const IDLE: &str = r#"["sh","-c","while :; do sleep 1; done"]"#;

#[test]
fn unknown_reads_but_never_writes() {
    let d = Daemon::start();
    let p = d.pane(IDLE);
    let (code, v) = d.anon(&["pane", "list"]);
    assert_eq!(code, 0);
    assert_eq!(v["panes"][0]["pane"], p.as_str());
    for args in [
        vec!["session", "create", "--name", "x"],
        vec!["pane", "send", "--pane", &p, "--text", "x"],
        vec!["pane", "kill", "--pane", &p],
        vec!["config", "reload"],
    ] {
        let (code, v) = d.anon(&args);
        assert_eq!(code, 4, "{args:?}: {v}");
        assert!(v["error"]["code"].as_str().unwrap().starts_with("denied."));
    }
}

#[test]
fn unknown_read_scope_is_configurable() {
    let d = Daemon::start_with_config(Some(".{ .principals = .{ .unknown_read = .none } }"));
    let p = d.pane(IDLE);
    assert_eq!(d.anon(&["pane", "list"]).1, json!({"panes": []}));
    assert_eq!(d.anon(&["session", "list"]).1, json!({"sessions": []}));
    let (code, v) = d.anon(&["pane", "capture", "--pane", &p]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (4, Some("denied.read"))
    );
}

#[test]
fn issued_grants_are_scoped_and_denials_reveal_nothing() {
    let d = Daemon::start();
    d.pane(IDLE);
    let other = d.topology("other", "w").pane(IDLE).reply;
    let issued = d.ok(&[
        "grant",
        "issue",
        "--grants",
        r#"["write@session:s0","spawn@window:w0"]"#,
        "--namespace",
        "agent",
    ]);
    let token = issued["token"].as_str().unwrap();
    let as_agent = |args: &[&str]| parse(d.cli_as(Some(token), args));

    assert_eq!(
        as_agent(&["auth", "whoami"]).1["grants"],
        json!(["write@session:s0", "spawn@window:w0"])
    );
    assert_eq!(
        as_agent(&["pane", "tag", "--pane", "p0", "--key", "k", "--value", "v"]).0,
        0
    );
    // Only what it may read is listed.
    let listed = as_agent(&["pane", "list"]).1;
    assert_eq!(listed["panes"].as_array().unwrap().len(), 1);
    // An existing pane it may not touch and a pane that never existed look the same.
    let existing = as_agent(&["pane", "kill", "--pane", other["pane"].as_str().unwrap()]);
    let missing = as_agent(&["pane", "kill", "--pane", "p999"]);
    assert_eq!(existing.0, 4);
    assert_eq!(missing.0, 4);
    assert_eq!(existing.1["error"]["code"], missing.1["error"]["code"]);
    assert_eq!(
        existing.1["error"]["message"],
        missing.1["error"]["message"]
    );
    // The owner, authorized for everything, learns that p999 does not exist.
    assert_eq!(d.owner(&["pane", "kill", "--pane", "p999"]).0, 3);
    // A new pane spawned by the agent is owned by its namespace.
    let spawned = as_agent(&[
        "pane", "split", "--pane", "p0", "--axis", "cols", "--argv", IDLE,
    ]);
    assert_eq!(spawned.0, 0, "{}", spawned.1);
    let list = d.ok(&["pane", "list"]);
    let new = list["panes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pane"] == spawned.1["pane"])
        .unwrap()
        .clone();
    assert_eq!(new["tags"], json!([{"key":"owner","value":"agent"}]));
    // Grants beyond its own are refused.
    let (code, v) = as_agent(&[
        "pane",
        "split",
        "--pane",
        "p0",
        "--axis",
        "rows",
        "--argv",
        IDLE,
        "--grants",
        r#"["admin@server:root"]"#,
    ]);
    assert_eq!(
        (code, v["error"]["code"].as_str()),
        (4, Some("denied.delegation"))
    );
    assert_eq!(as_agent(&["grant", "issue", "--grants", "[]"]).0, 4);
    // Revocation ends the token.
    d.ok(&[
        "grant",
        "revoke",
        "--principal",
        issued["principal"].as_str().unwrap(),
    ]);
    assert_eq!(
        as_agent(&["session", "list"]).1["error"]["code"],
        "denied.token"
    );
}

#[test]
fn each_child_gets_a_fresh_token_with_exactly_the_grants_asked() {
    let d = Daemon::start();
    let t = d.topology("t", "w");
    let created = d.ok(&[
        "pane", "create", "--window", &t.window,
        "--argv", r#"["sh","-c","echo token=$VENOMX_TOKEN; echo pane=$VENOMX_PANE; while :; do sleep 1; done"]"#,
        "--grants", r#"["write@pane:self"]"#,
    ]);
    let pane = created["pane"].as_str().unwrap();
    // `pane=` is echoed after `token=`: waiting for it sees both (a capture taken
    // between the two echoes raced here under load).
    let c = d.wait_text(pane, |r| r.starts_with("pane="));
    let token = c["screen"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|r| r.as_str().unwrap().strip_prefix("token="))
        .unwrap()
        .to_string();
    assert!(c["screen"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r == &json!(format!("pane={pane}"))));
    let as_child = |args: &[&str]| parse(d.cli_as(Some(&token), args));
    let who = as_child(&["auth", "whoami"]).1;
    assert_eq!(who["principal"], created["principal"]);
    assert_eq!(who["grants"], json!([format!("write@pane:{pane}")]));
    assert_eq!(
        as_child(&["pane", "tag", "--pane", pane, "--key", "self", "--value", "ok"]).0,
        0
    );
    assert_eq!(as_child(&["session", "create", "--name", "no"]).0, 4);
    // A second child gets a different token.
    let second = d.ok(&[
        "pane",
        "split",
        "--pane",
        pane,
        "--axis",
        "cols",
        "--argv",
        r#"["sh","-c","echo token=$VENOMX_TOKEN; sleep 300"]"#,
    ]);
    let c2 = d.wait_text(second["pane"].as_str().unwrap(), |r| {
        r.starts_with("token=vxt_")
    });
    assert!(!c2.to_string().contains(&token));
    // Killing the pane revokes its principal.
    d.ok(&["pane", "kill", "--pane", pane]);
    assert_eq!(
        as_child(&["auth", "whoami"]).1["error"]["code"],
        "denied.token"
    );
}
