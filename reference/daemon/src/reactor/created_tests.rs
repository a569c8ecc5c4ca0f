//! `session.create {request_token}` and the one-shot result, through dispatch: the
//! same checks and handlers a connection's request reaches.

use super::params::Params;
use super::{Outcome, State};
use crate::errors::ErrorCode;
use crate::stream::Answer;
use serde_json::{json, Map, Value};

const TOKEN: &str = "tok-0123456789abcdef";

fn call(state: &mut State, conn: u64, verb: &str, params: Value) -> Result<Value, ErrorCode> {
    let verb = crate::manifest::find(verb).unwrap();
    let params: Map<String, Value> = params.as_object().unwrap().clone();
    let (tx, _rx) = tokio::sync::oneshot::channel();
    let owner = crate::auth::OWNER;
    let (outcome, _) = state
        .decide(owner, Some(conn), verb, &Params(&params), tx)
        .expect("answered in the turn");
    let Outcome { result, .. } = outcome;
    match result {
        Ok(Answer::Value(v)) => Ok(v),
        Ok(Answer::Encoded(_)) => panic!("a listing"),
        Err(e) => Err(e.code),
    }
}

fn result_of(state: &mut State, conn: u64, token: &str) -> Value {
    let key = format!("session.created/v1/{token}");
    let read = call(state, conn, "meta.get", json!({"pane": "p1", "key": key})).unwrap();
    read["value"].clone()
}

fn create(state: &mut State, conn: u64, name: &str, token: &str) -> Result<Value, ErrorCode> {
    let params = json!({"name": name, "unique": true, "request_token": token});
    call(state, conn, "session.create", params)
}

#[test]
fn the_creating_connection_reads_its_result_once_and_no_other_connection_sees_it() {
    let mut state = super::test_state();
    let reply = create(&mut state, 7, "dup", TOKEN).unwrap();
    assert_eq!(result_of(&mut state, 8, TOKEN), Value::Null);
    let read = result_of(&mut state, 7, TOKEN);
    let result: Value = serde_json::from_str(read.as_str().unwrap()).unwrap();
    assert_eq!(
        result,
        json!({"session": reply["session"], "name": "dup", "request_token": TOKEN})
    );
    assert_eq!(result_of(&mut state, 7, TOKEN), Value::Null);
}

#[test]
fn a_create_that_loses_the_name_records_nothing() {
    let mut state = super::test_state();
    create(&mut state, 1, "dup", TOKEN).unwrap();
    let loser_token = "loser-0123456789abcdef";
    assert_eq!(
        create(&mut state, 2, "dup", loser_token),
        Err(ErrorCode::Exists)
    );
    assert_eq!(result_of(&mut state, 2, loser_token), Value::Null);
    // Nor did the loser's attempt touch the winner's result.
    assert!(result_of(&mut state, 1, TOKEN).is_string());
}

#[test]
fn a_bad_or_pending_token_is_refused_before_anything_is_created() {
    let mut state = super::test_state();
    for bad in ["short", "has/a/slash-0123456789", &"x".repeat(65)] {
        assert_eq!(
            create(&mut state, 1, "s", bad),
            Err(ErrorCode::Param("request_token"))
        );
    }
    create(&mut state, 1, "first", TOKEN).unwrap();
    assert_eq!(
        create(&mut state, 1, "second", TOKEN),
        Err(ErrorCode::Param("request_token"))
    );
    let names: Vec<&str> = state
        .topology
        .sessions
        .values()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["first"]);
}

#[test]
fn the_namespace_stays_the_servers_and_a_closed_connection_drops_its_results() {
    let mut state = super::test_state();
    create(&mut state, 1, "s", TOKEN).unwrap();
    let key = format!("session.created/v1/{TOKEN}");
    for verb in ["meta.set", "meta.delete"] {
        let params = json!({"pane": "p1", "key": key, "value": "forged"});
        let mut params = params;
        if verb == "meta.delete" {
            params.as_object_mut().unwrap().remove("value");
        }
        assert_eq!(
            call(&mut state, 1, verb, params),
            Err(ErrorCode::ReservedKey)
        );
    }
    state.created.drop_connection(1);
    assert_eq!(result_of(&mut state, 1, TOKEN), Value::Null);
}

#[test]
fn an_older_server_records_no_result_and_offers_no_capability() {
    let mut state = super::test_state();
    state.identity.legacy_spawn = true;
    create(&mut state, 1, "s", TOKEN).unwrap();
    // (There, the key is ordinary pane metadata: no pane, no value.)
    let key = format!("session.created/v1/{TOKEN}");
    let read = call(&mut state, 1, "meta.get", json!({"pane": "p1", "key": key}));
    assert_eq!(read, Err(ErrorCode::PaneNotFound));
    state.identity.legacy_spawn = false;
    assert_eq!(result_of(&mut state, 1, TOKEN), Value::Null);
    state.identity.legacy_spawn = true;
    assert!(!state.capabilities().contains(&"session_created_result"));
    state.identity.legacy_spawn = false;
    assert!(state.capabilities().contains(&"session_created_result"));
}
