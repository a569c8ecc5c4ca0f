//! Steps of the launch rows (`03_launch`): plugins in the sandbox, `agent.launch`,
//! what the launched program got (its `vxstub argv-dump`), and the spawn turn's
//! atomicity as a subscriber and a racing reader see it.

use crate::agent_restore::live::{record_text, Live, RECORD_KEY};
use crate::agent_restore::World;
use crate::agent_restore::{pins, twins};
use crate::drivers::scaled;
use crate::drivers::wire;
use crate::verdict::OrHarness;
use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[given(
    regex = r#"^the plugin "([a-z0-9-]+)" with id "([^"]+)" has the integration "([a-z0-9-]+)":$"#
)]
async fn plugin_integration(w: &mut World, c: &[String], #[step] step: &Step) {
    w.run(c, step.docstring.as_deref(), |s, c| {
        let text = c.doc().or_harness("the step needs a docstring").to_string();
        s.live().write_plugin(&c[1], &c[2], &c[3], &text);
    })
    .await;
}

fn launch(l: &mut Live, integration: &str, native_id: Option<&str>, name: &str) {
    l.forget_dump(integration);
    let window = l.new_window();
    let mut params = json!({"window": window, "integration": integration});
    if let Some(id) = native_id {
        params["native_id"] = json!(id);
    }
    l.launch_reply = Some(l.call("agent.launch", params));
    l.keep_pane(name);
    l.s.vars.insert("launched".into(), integration.into());
}

#[when(regex = r#"^agent.launch starts "([a-z0-9-]+)" in a new window as "(\w+)"$"#)]
async fn launch_plain(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| launch(s.live(), &c[1], None, &c[2]))
        .await;
}

#[when(
    regex = r#"^agent.launch starts "([a-z0-9-]+)" in a new window with native id "([^"]*)" as "(\w+)"$"#
)]
async fn launch_with_id(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| launch(s.live(), &c[1], Some(&c[2]), &c[3]))
        .await;
}

/// A refused launch after its valid twin, in a window of its own: `twin` says how
/// the twin differs (only in the defect): `with native id "<id>"` (a well-formed id),
/// `without an id` (a plain launch), `whose program exists` (the same template with
/// a program that starts).
#[when(
    regex = r#"^agent.launch starts "([a-z0-9-]+)" in a new window with native id "([^"]*)" as "(\w+)", after its twin (.+)$"#
)]
async fn launch_after_twin(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let (integration, id, twin) = (c[1].to_string(), c[2].to_string(), c[4].to_string());
        let (twin_integration, twin_id) = if twin == "without an id" {
            (integration.clone(), None)
        } else if twin == "whose program exists" {
            let t = twins::integration_with_a_program(l, &integration);
            (t, Some(id.clone()))
        } else if let Some(rest) = twin.strip_prefix("with native id ") {
            (integration.clone(), Some(rest.trim_matches('"').to_string()))
        } else {
            crate::harness_error!("no such twin: {twin}")
        };
        let window = l.new_window();
        let mut params = json!({"window": window, "integration": twin_integration});
        if let Some(id) = &twin_id {
            params["native_id"] = json!(id);
        }
        l.control_call(
            &format!(
                "the same launch, {} (integration {twin_integration:?}, native id {twin_id:?}), in a window of its own",
                twin.trim_start_matches("with ")
            ),
            "agent.launch",
            params,
        );
        launch(l, &integration, Some(&id), &c[3]);
    })
    .await;
}

#[when(
    regex = r#"^the launch client starts "([a-z0-9-]+)" in a new window with native id "([^"]*)" as "(\w+)"$"#
)]
async fn client_launch(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let t = crate::agent_restore::checks::templates().agent_launch;
        if t.is_empty() {
            crate::harness_error!("the profile's [agent_restore] table needs agent_launch");
        }
        let words = |window: &str| -> Vec<String> {
            t.iter()
                .map(|w| {
                    w.replace("{window}", window)
                        .replace("{integration}", &c[1])
                        .replace("{native_id}", &c[2])
                })
                .collect()
        };
        // Through a relay, the valid twin first: the same launch straight to the daemon.
        if let Some(relay) = l.relay.take() {
            let window = l.new_window();
            let cmd = l.client_command(&words(&window), std::path::Path::new(""), None);
            let reply = l.run_client(cmd);
            l.relay = Some(relay);
            twins::record(
                "the same launch client straight to the daemon, without the relay, in a window of its own".into(),
                &reply,
                true,
                |_| reply.exit == Some(0),
            );
            // The twin's program writes its dump after the launch returns: wait for
            // it, so the dump read later is the launch under test's, not the twin's.
            if reply.exit == Some(0) {
                let _ = l.dump(&c[1]);
            }
        }
        l.forget_dump(&c[1]);
        let window = l.new_window();
        let cmd = l.client_command(&words(&window), std::path::Path::new(""), None);
        let reply = l.run_client(cmd);
        l.s.last = Some(reply.clone());
        l.keep_pane(&c[3]);
        l.client_reply = Some(reply);
    })
    .await;
}

#[then(regex = r"^the launch client succeeds$")]
async fn client_launch_succeeds(w: &mut World) {
    w.run(&[], None, |s, _| {
        let l = s.live();
        let reply = l.client_reply.as_ref().or_harness("no launch client ran");
        if let Err(e) = &reply.result {
            panic!("the launch client failed: {e}");
        }
        assert_eq!(reply.exit, Some(0), "the launch client's exit code");
    })
    .await;
}

#[then(regex = r#"^the launch client fails with "([a-z_.]+)" and exit code (\d+)$"#)]
async fn client_launch_fails(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        crate::evidence::require_accepted_control();
        let reply = l.client_reply.as_ref().or_harness("no launch client ran");
        match &reply.result {
            Ok(v) => crate::evidence::fail(
                None,
                "the launch client refused",
                format!("it succeeded: {v}"),
            ),
            Err(e) => pins::judge_error(e, &c[1], None),
        }
        // The refusal is the ADR's; its exit code is the kit's spelling of it.
        let want: i32 = c[2].parse().or_harness("an exit code");
        crate::evidence::ensure(reply.exit.is_some_and(|e| e != 0), None, || {
            (
                "the launch client exits non-zero".into(),
                format!("it exited {:?}", reply.exit),
            )
        });
        if reply.exit != Some(want) {
            crate::evidence::pin(
                "asr-pin-launch-client",
                format!("the launch client's exit code {want}"),
                format!("exit code {:?}", reply.exit),
            );
        }
    })
    .await;
}

#[when(
    regex = r#"^pane.create starts "([^"]+)" in a new window with the record of "([^"]*)" "([^"]*)" "([^"]*)"$"#
)]
async fn create_program_with_record(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let record = record_text(&c[2], &c[3], &c[4]);
        // Its valid twin: the same spawn of a program that starts.
        let window = l.new_window();
        let argv = l.sleeper();
        l.control_call(
            "the same pane.create with the same record, of a program that starts, in a window of its own",
            "pane.create",
            json!({"window": window, "argv": argv, "agent_session": record}),
        );
        let window = l.new_window();
        l.call(
            "pane.create",
            json!({"window": window, "argv": [c[1]], "agent_session": record}),
        );
    })
    .await;
}

/// `pane.split` of a pane (by columns) or `pane.float` in a window, with a record.
#[when(
    regex = r#"^pane.(split|float) on (\$\w+) starts a pane with the record of "([^"]*)" "([^"]*)" "([^"]*)" as "(\w+)"$"#
)]
async fn split_or_float_with_record(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let target = l.subst(&c[2]);
        let record = record_text(&c[3], &c[4], &c[5]);
        let mut params = json!({"argv": l.sleeper(), "agent_session": record});
        let verb = if &c[1] == "split" {
            params["pane"] = json!(target);
            params["axis"] = json!("cols");
            "pane.split"
        } else {
            params["window"] = json!(target);
            "pane.float"
        };
        l.call(verb, params);
        l.keep_pane(&c[6]);
    })
    .await;
}

fn ok_result(l: &Live) -> Value {
    let reply = l
        .launch_reply
        .as_ref()
        .or_harness("no agent.launch was made");
    match &reply.result {
        Ok(v) => v.clone(),
        Err(e) => panic!("the launch failed: {e}"),
    }
}

#[then(regex = r"^the launch reply says restorable (true|false)$")]
async fn reply_restorable(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let v = ok_result(s.live());
        let want = &c[1] == "true";
        assert_eq!(v["restorable"], json!(want), "the reply: {v}");
        assert_eq!(
            v.get("agent_session").is_some(),
            want,
            "a reply carries a record exactly when restorable: {v}"
        );
    })
    .await;
}

#[then(regex = r"^the launch reply's record is the exact text meta.get reads on (\$\w+)$")]
async fn reply_record_exact(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let v = ok_result(l);
        let pane = l.subst(&c[1]);
        let read = l.meta(&pane, RECORD_KEY);
        assert_eq!(v["agent_session"].as_str(), read.as_deref());
    })
    .await;
}

/// The arguments after the template's command (which ends with `--`).
pub(super) fn arguments_after_command(dump: &Value) -> Vec<String> {
    let argv: Vec<String> = dump["argv"]
        .as_array()
        .or_harness("the dump's argv")
        .iter()
        .map(|a| a.as_str().unwrap_or_default().to_string())
        .collect();
    let end = argv
        .iter()
        .position(|a| a == "--")
        .or_harness("the suite's templates end their command with --");
    argv[end + 1..].to_vec()
}

#[then(regex = r#"^the program of "([a-z0-9-]+)" got the arguments '(.*)' after its command$"#)]
async fn program_arguments(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let want: Vec<String> =
            serde_json::from_str(&l.subst(&c[2])).or_harness("a JSON array of strings");
        assert_eq!(arguments_after_command(&l.dump(&c[1])), want);
    })
    .await;
}

#[then(regex = r#"^the program of "([a-z0-9-]+)" has (\w+) set to "([^"]*)"$"#)]
async fn program_env_set(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let want = l.subst(&c[3]);
        assert_eq!(l.dump(&c[1])["env"][&c[2]], json!(want));
    })
    .await;
}

/// The template's `working_directory = "plugin-root"`: the program's cwd (as its
/// dump reports it) is the plugin's directory, both resolved.
#[then(
    regex = r#"^the program of "([a-z0-9-]+)" runs in the directory of the plugin "([a-z0-9-]+)"$"#
)]
async fn program_in_plugin_dir(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let dir = l.plugins_dir().join(&c[2]);
        let want = std::fs::canonicalize(&dir).or_harness("resolve the plugin's directory");
        let cwd = l.dump(&c[1])["cwd"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let got = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone().into());
        assert_eq!(
            got, want,
            "the program ran in {cwd:?}, not its plugin's directory"
        );
    })
    .await;
}

#[then(regex = r#"^the program of "([a-z0-9-]+)" has (\w+) unset$"#)]
async fn program_env_unset(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        assert_eq!(s.live().dump(&c[1])["env"][&c[2]], Value::Null);
    })
    .await;
}

/// Lowercase 8-4-4-4-12 hex with version 4 and the RFC 4122 variant.
/// A UUID in its 8-4-4-4-12 hex text, either case, any version: the ADR says "a UUID
/// is generated", not which version or case.
fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// The kit's own minting: a lowercase random (version 4, RFC 4122 variant) UUID.
fn is_v4_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    is_uuid(s)
        && !b.iter().any(u8::is_ascii_uppercase)
        && b[14] == b'4'
        && matches!(b[19], b'8' | b'9' | b'a' | b'b')
}

#[then(regex = r#"^the record of (\$\w+) holds a minted UUID native id as "(\w+)"$"#)]
async fn record_has_uuid(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let pane = l.subst(&c[1]);
        let text = l
            .meta(&pane, RECORD_KEY)
            .unwrap_or_else(|| panic!("the launched pane has no record"));
        let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
        let id = v["native_id"].as_str().unwrap_or_default().to_string();
        crate::evidence::ensure(is_uuid(&id), None, || {
            (
                "a minted UUID native id".into(),
                format!("native id {id:?}"),
            )
        });
        if !is_v4_uuid(&id) {
            crate::evidence::pin(
                "asr-pin-launch-client",
                "a lowercase version-4 UUID, as the kit mints",
                format!("native id {id:?}"),
            );
        }
        let integration = l.subst("$launched");
        assert_eq!(
            v,
            serde_json::from_str::<Value>(&record_text("team", &integration, &id)).unwrap()
        );
        l.s.vars.insert(c[2].to_string(), id);
    })
    .await;
}

#[given(regex = r"^a subscriber watches the events$")]
async fn subscriber_watches(w: &mut World) {
    w.run(&[], None, |s, _| s.live().subscribe()).await;
}

#[then(regex = r"^the subscriber saw (\$\w+) created, and a meta.get right after read its record$")]
async fn subscriber_saw_record(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let pane = l.subst(&c[1]);
        let sub = l.subscriber.take().or_harness("no subscriber is open");
        let created = |e: &Value| e["type"] == "pane.created" && e["data"]["pane"] == json!(pane);
        sub.wait(
            "pane.created of the launched pane",
            10_000,
            |r| r.events.iter().any(created),
            |_| (),
        );
        assert!(
            l.meta(&pane, RECORD_KEY).is_some(),
            "a pane announced to subscribers had no record"
        );
    })
    .await;
}

#[given(regex = r"^a reader races pane.list and meta.get$")]
async fn racing_reader(w: &mut World) {
    w.run(&[], None, |s, _| {
        let l = s.live();
        l.ensure_running();
        let socket = l.s.ph.socket.clone();
        let token = l.s.owner_token();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let limit = scaled(20_000);
        let handle = std::thread::spawn(move || {
            // Every (pane, had a record) this reader observed.
            let mut seen: Vec<(String, bool)> = Vec::new();
            let start = std::time::Instant::now();
            while !flag.load(Ordering::Relaxed) && start.elapsed() < limit {
                let (list, _) = wire::call(&socket, Some(&token), "pane.list", Map::new());
                let panes = list
                    .result
                    .ok()
                    .and_then(|v| v["panes"].as_array().cloned());
                for p in panes.unwrap_or_default() {
                    let id = p["pane"].as_str().unwrap_or_default().to_string();
                    let mut params = Map::new();
                    params.insert("pane".into(), json!(id));
                    params.insert("key".into(), json!(RECORD_KEY));
                    let (got, _) = wire::call(&socket, Some(&token), "meta.get", params);
                    if let Ok(v) = got.result {
                        seen.push((id, v["value"].is_string()));
                    }
                }
            }
            seen
        });
        l.racer = Some((stop, handle));
    })
    .await;
}

#[then(regex = r"^the racing reader saw (\$\w+), never without its record$")]
async fn racing_reader_saw(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let pane = l.subst(&c[1]);
        let (stop, handle) = l.racer.take().or_harness("no racing reader runs");
        // Let it observe the new pane at least once before it stops.
        crate::drivers::poll("the racing reader", scaled(5_000), || {
            (!handle.is_finished()).then_some(())
        });
        std::thread::sleep(std::time::Duration::from_millis(200));
        stop.store(true, Ordering::Relaxed);
        let seen = handle.join().ok().or_harness("the racing reader panicked");
        let of_pane: Vec<bool> = seen
            .iter()
            .filter(|(p, _)| *p == pane)
            .map(|(_, r)| *r)
            .collect();
        assert!(!of_pane.is_empty(), "the racing reader never saw the pane");
        assert!(
            of_pane.iter().all(|r| *r),
            "a reader saw the pane without its record"
        );
    })
    .await;
}
