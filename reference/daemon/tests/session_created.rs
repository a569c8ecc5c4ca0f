//! The one-shot `session.created/v1/<token>` result on a running daemon (ADR-0068 §6,
//! seed point 6): only the creating connection, as the creating principal, reads it,
//! once; a losing create leaves none; the namespace stays unwritable. (That a closed
//! connection drops its unread results is not observable from outside: the unit
//! tests of `agent::created` and `server.rs`'s `ConnectionClosed` cover it.)

mod common;
use common::{Daemon, Wire};
use serde_json::{json, Value};

const TOKEN: &str = "wire-0123456789abcdef";

fn call(w: &mut Wire, verb: &str, params: Value) -> Value {
    w.request(json!({"id": 1, "verb": verb, "params": params}))
}

fn owner(d: &Daemon) -> Wire {
    let mut w = d.wire();
    w.login_owner(d);
    w
}

fn read(w: &mut Wire, token: &str) -> Value {
    let key = format!("session.created/v1/{token}");
    let r = call(w, "meta.get", json!({"pane": "p1", "key": key}));
    r["ok"]["value"].clone()
}

fn create(w: &mut Wire, name: &str, token: &str) -> Value {
    let params = json!({"name": name, "unique": true, "request_token": token});
    call(w, "session.create", params)
}

#[test]
fn only_the_creating_connection_reads_the_result_and_only_once() {
    let d = Daemon::start();
    let (mut a, mut b) = (owner(&d), owner(&d));
    let caps = call(&mut a, "server.info", json!({}))["ok"]["capabilities"].clone();
    assert!(caps
        .as_array()
        .unwrap()
        .contains(&json!("session_created_result")));
    let sid = create(&mut a, "dup", TOKEN)["ok"]["session"].clone();
    assert_eq!(
        read(&mut b, TOKEN),
        Value::Null,
        "another connection saw it"
    );
    let text = read(&mut a, TOKEN);
    let result: Value = serde_json::from_str(text.as_str().expect("the result")).unwrap();
    assert_eq!(
        result,
        json!({"session": sid, "name": "dup", "request_token": TOKEN})
    );
    assert_eq!(read(&mut a, TOKEN), Value::Null, "read twice");
}

#[test]
fn a_losing_create_leaves_nothing_and_the_namespace_stays_the_servers() {
    let d = Daemon::start();
    let (mut a, mut b) = (owner(&d), owner(&d));
    create(&mut a, "dup", TOKEN);
    let lost = create(&mut b, "dup", "loser-0123456789abcdef");
    assert_eq!(lost["error"]["code"], "conflict.exists");
    assert_eq!(read(&mut b, "loser-0123456789abcdef"), Value::Null);
    let key = format!("session.created/v1/{TOKEN}");
    let set = call(
        &mut b,
        "meta.set",
        json!({"pane": "p1", "key": key, "value": "x"}),
    );
    assert_eq!(set["error"]["code"], "denied.reserved_key");
    let del = call(&mut b, "meta.delete", json!({"pane": "p1", "key": key}));
    assert_eq!(del["error"]["code"], "denied.reserved_key");
    let bad = create(&mut b, "other", "too-short");
    assert_eq!(bad["error"]["code"], "invalid_params.request_token");
    // The winner's result is still there, and unaltered.
    assert!(read(&mut a, TOKEN).as_str().unwrap().contains("\"dup\""));
}

#[test]
fn another_principal_on_the_same_connection_sees_nothing() {
    let d = Daemon::start();
    let mut a = owner(&d);
    let issued = call(
        &mut a,
        "grant.issue",
        json!({"grants": ["read@server:root"]}),
    );
    let other = issued["ok"]["token"].as_str().unwrap().to_string();
    create(&mut a, "mine", TOKEN);
    let login = call(&mut a, "auth.login", json!({"token": other}));
    assert!(login["ok"]["principal"].is_string(), "{login}");
    assert_eq!(read(&mut a, TOKEN), Value::Null);
    a.login_owner(&d);
    assert!(
        read(&mut a, TOKEN).is_string(),
        "the other principal consumed it"
    );
}
