//! Steps of the one-shot creation result (ADR-0068 §6, seed point 6): clients that
//! keep their own connection, `session.create {unique, request_token}` on one, and
//! `meta.get` of `session.created/v1/<token>`, which only the creating connection
//! reads, once; a create that loses the name leaves nothing to read.

use crate::agent_restore::live::Live;
use crate::agent_restore::shapes;
use crate::agent_restore::World;
use crate::drivers::wire::{Connection, Reply};
use crate::verdict::OrHarness;
use cucumber::{given, then, when};
use serde_json::{json, Map, Value};

const RESULT_PREFIX: &str = "session.created/v1/";

fn params(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => crate::harness_error!("params must be an object"),
    }
}

fn client<'a>(l: &'a mut Live, name: &str) -> &'a mut Connection {
    l.clients
        .get_mut(name)
        .unwrap_or_else(|| crate::harness_error!("no client {name:?} keeps a connection"))
}

/// The pane a reserved-key call names: any listed one (the result is no pane's; the
/// pane only routes the dispatch grant), as restore's probe picks it.
fn any_pane(l: &mut Live) -> String {
    let panes = l.ok("pane.list", json!({}));
    panes["panes"][0]["pane"]
        .as_str()
        .unwrap_or("p1")
        .to_string()
}

fn meta(l: &mut Live, name: &str, verb: &str, token: &str, value: Option<&str>) -> Reply {
    let pane = any_pane(l);
    let mut p = json!({"pane": pane, "key": format!("{RESULT_PREFIX}{token}")});
    if let Some(v) = value {
        p["value"] = json!(v);
    }
    client(l, name).call(verb, params(p))
}

/// What `name` reads at the result of `token`: the value (a string) or null.
fn read(l: &mut Live, name: &str, token: &str) -> Value {
    match meta(l, name, "meta.get", token, None).result {
        Ok(v) => v["value"].clone(),
        Err(e) => panic!("meta.get of a creation result failed: {e}"),
    }
}

fn create(c: &mut Connection, name: &str, token: &str) -> Reply {
    let p = json!({"name": name, "unique": true, "request_token": token});
    c.call("session.create", params(p))
}

/// The session id `client` was told it created with `token` (kept by the create step).
fn created_by(l: &Live, client: &str, token: &str) -> Option<String> {
    l.s.vars.get(&format!("created:{client}:{token}")).cloned()
}

fn note_create(l: &mut Live, client: &str, token: &str, reply: &Reply) {
    if let Ok(v) = &reply.result {
        let sid = v["session"].as_str().or_harness("session.create's session");
        l.s.vars
            .insert(format!("created:{client}:{token}"), sid.to_string());
    }
}

#[given(regex = r#"^the clients "(\w+)" and "(\w+)" each keep a connection as the owner$"#)]
async fn keep_connections(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        l.ensure_running();
        let token = l.s.owner_token();
        for name in [&c[1], &c[2]] {
            let conn = Connection::open(&l.s.ph.socket, Some(&token));
            l.clients.insert(name.to_string(), conn);
        }
    })
    .await;
}

#[when(
    regex = r#"^client "(\w+)" creates the session "([\w-]+)" with the request token "([\w-]+)"$"#
)]
async fn creates(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let reply = create(client(l, &c[1]), &c[2], &c[3]);
        assert!(
            reply.result.is_ok(),
            "session.create failed: {:?}",
            reply.result
        );
        note_create(l, &c[1], &c[3], &reply);
    })
    .await;
}

#[when(
    regex = r#"^clients "(\w+)" and "(\w+)" create the session "([\w-]+)" at once with the request tokens "([\w-]+)" and "([\w-]+)"$"#
)]
async fn create_race(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let mut a = l.clients.remove(&c[1]).or_harness("no first client");
        let mut b = l.clients.remove(&c[2]).or_harness("no second client");
        let (ra, rb) = std::thread::scope(|scope| {
            let ta = scope.spawn(|| create(&mut a, &c[3], &c[4]));
            let rb = create(&mut b, &c[3], &c[5]);
            (ta.join().expect("the first create"), rb)
        });
        l.clients.insert(c[1].to_string(), a);
        l.clients.insert(c[2].to_string(), b);
        for (client, token, reply) in [(&c[1], &c[4], &ra), (&c[2], &c[5], &rb)] {
            if let Err(e) = &reply.result {
                crate::agent_restore::pins::judge("error code", "conflict.exists", &e["code"]);
            }
            note_create(l, client, token, reply);
        }
        let wins = [&ra, &rb].iter().filter(|r| r.result.is_ok()).count();
        assert_eq!(wins, 1, "both or neither of the unique creates won");
        let (winner, loser) = if ra.result.is_ok() { (1, 2) } else { (2, 1) };
        let (wt, lt) = if winner == 1 { (4, 5) } else { (5, 4) };
        for (k, v) in [
            ("winner", &c[winner]),
            ("loser", &c[loser]),
            ("winner_token", &c[wt]),
            ("loser_token", &c[lt]),
        ] {
            l.s.vars.insert(k.to_string(), v.to_string());
        }
    })
    .await;
}

fn var(l: &Live, text: &str) -> String {
    l.s.subst(text)
}

#[then(regex = r#"^client "(\$?\w+)" reads nothing at the result of the token "(\$?[\w-]+)"$"#)]
async fn reads_nothing(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let (name, token) = (var(l, &c[1]), var(l, &c[2]));
        let value = read(l, &name, &token);
        assert_eq!(value, Value::Null, "client {name} read a result: {value}");
    })
    .await;
}

#[then(
    regex = r#"^client "(\$?\w+)" reads at the result of the token "(\$?[\w-]+)" the session it created, named "([\w-]+)"$"#
)]
async fn reads_own(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let (name, token) = (var(l, &c[1]), var(l, &c[2]));
        let sid = created_by(l, &name, &token).or_harness("that client created nothing");
        let value = read(l, &name, &token);
        // MUST: the owner reads a result that names its session; its exact content
        // is the kit's pin (or the profile's declared member names).
        let members: Option<Vec<String>> =
            shapes::declared(shapes::CREATED_MEMBERS_KEY).and_then(|v| v.try_into().ok());
        shapes::apply(shapes::judge_created(
            &value,
            &sid,
            &c[3],
            &token,
            members.as_deref(),
        ));
    })
    .await;
}

#[then(
    regex = r#"^client "(\$?\w+)" may neither set nor delete the result of the token "(\$?[\w-]+)"$"#
)]
async fn namespace_refused(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let (name, token) = (var(l, &c[1]), var(l, &c[2]));
        let set = meta(
            l,
            &name,
            "meta.set",
            &token,
            Some("{\"session\":\"forged\"}"),
        );
        let del = meta(l, &name, "meta.delete", &token, None);
        for (verb, reply) in [("meta.set", set), ("meta.delete", del)] {
            match reply.result {
                Err(e) => crate::agent_restore::pins::judge(
                    &format!("{verb}'s error code"),
                    "denied.reserved_key",
                    &e["code"],
                ),
                Ok(v) => panic!("{verb} of a creation result succeeded: {v}"),
            }
        }
    })
    .await;
}

#[then(regex = r#"^server.info lists the capability "(\w+)"$"#)]
async fn lists_capability(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        // The seed names no capability: the kit's name is a pin, the profile may
        // declare its own, or "none".
        if &c[1] != shapes::KIT_CREATED_CAP {
            crate::harness_error!("the row names {:?}, not the kit's capability", &c[1]);
        }
        let declared = shapes::declared(shapes::CREATED_CAP_KEY);
        let declared = declared.as_ref().and_then(toml::Value::as_str);
        if declared == Some("none") {
            crate::evidence::note(format!(
                "the profile declares no capability for the one-shot result ({} = \"none\")",
                shapes::CREATED_CAP_KEY
            ));
            return;
        }
        let info = s.live().ok("server.info", json!({}));
        let caps = info["capabilities"].as_array().cloned().unwrap_or_default();
        shapes::apply(shapes::judge_capability(&caps, declared));
    })
    .await;
}
