//! Steps: Resources made through the wire as the owner, and calls through the wire and the CLI.

use super::prelude::*;
use crate::recovery::twins::Request;

#[given(regex = r#"^the owner has created session "([^"]+)" with a pane running "([^"]*)"$"#)]
async fn owner_has_created_session_with_pane_running(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let name = c[1].to_string();
        let cmd = c[2].to_string();
        create_pane(w, &name, vec!["/bin/sh".into(), "-c".into(), cmd]);
    })
    .await;
}

#[given(regex = r#"^the owner has created session "([^"]+)" with an empty window$"#)]
async fn owner_has_created_session_with_empty_window(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let token = w.owner_token();
        let mut p = Map::new();
        p.insert("name".into(), Value::String(c[1].to_string()));
        let session = match w.wire(Some(&token), "session.create", p).result {
            Ok(v) => v["session"].as_str().expect("session id").to_string(),
            Err(e) => panic!("session.create failed: {e}"),
        };
        let mut p = Map::new();
        p.insert("session".into(), Value::String(session.clone()));
        p.insert("name".into(), Value::String("main".into()));
        let window = match w.wire(Some(&token), "window.create", p).result {
            Ok(v) => v["window"].as_str().expect("window id").to_string(),
            Err(e) => panic!("window.create failed: {e}"),
        };
        w.vars.insert("session".into(), session);
        w.vars.insert("window".into(), window);
    })
    .await;
}

#[given(regex = r#"^the owner has created session "([^"]+)" with a pane running argv (\[.*\])$"#)]
async fn owner_has_created_session_with_pane_running_argv(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let name = c[1].to_string();
        let argv: Vec<String> =
            serde_json::from_str(&c[2]).or_harness("argv in the step is not JSON");
        create_pane(w, &name, argv);
    })
    .await;
}

// ---- calls
#[when(
    regex = r#"^(the owner|an unauthenticated client|a client with token "([^"]*)") calls "([a-z_.]+)"(?: with (\{.*\}))?$"#
)]
async fn client_calls_verb(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let token = match &c[1] {
            "the owner" => Some(w.owner_token()),
            "an unauthenticated client" => None,
            _ => Some(c[2].to_string()),
        };
        let verb = c[3].to_string();
        let params = parse_params(c.get(4).map(|m| m.as_str()));
        w.before_request(&verb, &Value::Object(params.clone()).to_string());
        let r = w.wire(token.as_deref(), &verb, params.clone());
        w.last = Some(r);
        w.last_request = Some(Request::Wire {
            token,
            verb,
            params,
        });
    })
    .await;
}

#[when(regex = r#"^the owner calls "([a-z_.]+)" and the reply may be lost$"#)]
async fn owner_calls_reply_may_be_lost(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let verb = c[1].to_string();
        let token = w.owner_token();
        // The call may kill the implementation (a crash fault): a missing reply is
        // the point of the scenario, not a failure of the step.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            w.wire(Some(&token), &verb, Map::new())
        }));
        w.last = r.ok();
    })
    .await;
}

#[when(regex = r#"^(\d+) owner connections call "([a-z_.]+)" at once with (\{.*\})$"#)]
async fn owner_connections_call_at_once_with(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let n: usize = c[1].parse().or_harness("a number in the step");
        let verb = c[2].to_string();
        let params = parse_params(Some(&c[3]));
        let token = w.owner_token();
        let socket = w.ph.socket.clone();
        let barrier = std::sync::Barrier::new(n);
        let results: Vec<(crate::drivers::wire::Reply, Vec<u8>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..n)
                .map(|_| {
                    let (barrier, socket, token, verb, params) =
                        (&barrier, &socket, &token, &verb, params.clone());
                    scope.spawn(move || {
                        barrier.wait();
                        crate::drivers::wire::call(socket, Some(token), verb, params)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        w.burst.clear();
        for (r, bytes) in results {
            w.transcript.extend_from_slice(&bytes);
            w.note_pid(&r);
            w.burst.push(r);
        }
    })
    .await;
}

#[then(
    regex = r#"^exactly one of them succeeds and the others fail with "([a-z_.]+)"(?: or "([a-z_.]+)")?$"#
)]
async fn exactly_one_them_succeeds_others_fail_with(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let ok: Vec<&crate::drivers::wire::Reply> =
            w.burst.iter().filter(|r| r.result.is_ok()).collect();
        assert_eq!(ok.len(), 1, "successes among {:?}", w.burst);
        for r in &w.burst {
            if let Err(e) = &r.result {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("");
                let alt = c.get(2).map(|m| m.as_str());
                assert!(code == &c[1] || Some(code) == alt, "wrong error code: {e}");
            }
        }
        w.last = Some(ok[0].clone());
    })
    .await;
}

#[when(
    regex = r#"^restoring "([^"]+)" either fails with "([a-z_.]+)" or gives archives without text$"#
)]
async fn restoring_either_fails_with_or_gives_archives(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let token = w.owner_token();
        let mut p = Map::new();
        p.insert("checkpoint".into(), Value::String(c[1].to_string()));
        let r = w.wire(Some(&token), "recovery.restore", p);
        match &r.result {
            Err(e) => assert_eq!(
                e.get("code").and_then(Value::as_str),
                Some(&c[2]),
                "wrong error code: {e}"
            ),
            Ok(v) => {
                let panes = v["panes"].as_array().cloned().unwrap_or_default();
                assert!(!panes.is_empty(), "restore mapped no pane: {v}");
                for m in panes {
                    let mut p = Map::new();
                    p.insert("pane".into(), m["current"].clone());
                    let cap = w.wire(Some(&token), "pane.capture", p);
                    let cap = cap.result.unwrap_or_else(|e| panic!("capture failed: {e}"));
                    assert_eq!(cap["recovery"]["text_state"], "expired", "capture {cap}");
                }
            }
        }
        w.last = Some(r);
    })
    .await;
}

#[when(regex = r#"^(the owner|an unauthenticated client) runs the CLI "([^"]*)"$"#)]
async fn client_runs_cli(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let token = (&c[1] == "the owner").then(|| "@owner".to_string());
        let words: Vec<String> = c[2].split_whitespace().map(String::from).collect();
        let verb = words.iter().take(2).cloned().collect::<Vec<_>>().join(".");
        let text = w.subst(&c[2]);
        w.before_request(&verb, &text);
        let r = w.cli(token.as_deref(), &words);
        w.last = Some(r);
        w.last_request = Some(Request::Cli { token, words });
    })
    .await;
}

#[when(regex = r#"^the owner runs the CLI "([^"]*)" with no daemon listening$"#)]
async fn owner_runs_cli_with_no_daemon_listening(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        assert!(!w.daemon_alive(), "harness-error: a daemon is running");
        let words: Vec<String> = c[1].split_whitespace().map(String::from).collect();
        let run = w.cli_run(None, &words);
        // How a CLI reports that nothing answers is RFC-0001/0002's: a failure that
        // is no `{"error":…}` on stdout is the pin's; its exit code stays judged.
        let reply = run.reply().unwrap_or_else(|stdout| {
            crate::evidence::pin(
                "rfc-pin-cli-no-daemon-json",
                "with no daemon listening, the CLI prints one JSON value, {\"error\":…}",
                format!("it printed {stdout:?} and exited {}", run.exit),
            );
            crate::drivers::wire::Reply {
                result: Err(serde_json::Value::Null),
                exit: Some(run.exit),
            }
        });
        w.last = Some(reply);
    })
    .await;
}
