//! Steps of the save and restore rows (`05_restore`): the profile's workspace_save
//! and workspace_restore commands, archives written by the scenario, the plugin
//! changes restore must notice, and the processes restore starts (or must not).

use crate::agent_restore::checks::templates;
use crate::agent_restore::live::{record_text, Live};
use crate::agent_restore::World;
use crate::agent_restore::{pins, twins};
use crate::drivers::wire::Reply;
use crate::verdict::OrHarness;
use cucumber::gherkin::Step;
use cucumber::{given, then, when};
use serde_json::{json, Value};

pub(super) fn save(l: &mut Live, name: &str) {
    let file = l.file(name);
    let t = templates().workspace_save;
    if t.is_empty() {
        crate::harness_error!("the profile's [agent_restore] table needs workspace_save");
    }
    let cmd = l.client_command(&t, &file, None);
    l.client_reply = Some(l.run_client(cmd));
    l.saved = Some(name.to_string());
}

/// The fallback program: an argv dump named "fallback" (nothing the archive says).
fn fallback(l: &Live) -> String {
    let dump = l.dump_path("fallback").to_string_lossy().into_owned();
    json!([l.vxstub(), "argv-dump", dump, "--"]).to_string()
}

fn restore_command(l: &mut Live, name: &str, with_fallback: bool) -> std::process::Command {
    let file = l.file(name);
    let t = templates().workspace_restore;
    if t.is_empty() {
        crate::harness_error!("the profile's [agent_restore] table needs workspace_restore");
    }
    let fb = with_fallback.then(|| fallback(l));
    l.client_command(&t, &file, fb.as_deref())
}

pub(super) fn client_ok(l: &Live) -> Value {
    match &l
        .client_reply
        .as_ref()
        .or_harness("no save or restore ran")
        .result
    {
        Ok(v) => v.clone(),
        Err(e) => panic!("the workspace command failed: {e}"),
    }
}

pub(super) fn archive_of(l: &Live, name: &str) -> Value {
    let bytes = std::fs::read(l.file(name)).unwrap_or_else(|e| panic!("no archive {name}: {e}"));
    serde_json::from_slice(&bytes).unwrap_or_else(|_| panic!("the archive {name} is not JSON"))
}

pub(super) fn panes_of_archive(a: &Value) -> Vec<Value> {
    a["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|s| s["windows"].as_array().cloned().unwrap_or_default())
        .flat_map(|w| w["panes"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[given(regex = r#"^a pane "(\w+)" in a new window without a record$"#)]
async fn pane_without_record(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let window = l.new_window();
        let argv = l.sleeper();
        l.ok("pane.create", json!({"window": window, "argv": argv}));
        l.keep_pane(&c[1]);
    })
    .await;
}

#[when(regex = r#"^the workspace is saved to "([\w.-]+)"$"#)]
async fn saved_to(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| save(s.live(), &c[1])).await;
}

#[when(
    regex = r#"^the workspace is saved to "([\w.-]+)" under the fault plan "([^"]+)" while (\$\w+) is killed$"#
)]
async fn saved_while_killed(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let pane = l.subst(&c[3]);
        let file = l.file(&c[1]);
        let trace = l.file("save-trace.jsonl");
        let save = templates().workspace_save.clone();
        let inj = crate::drivers::fault::Injection::plan(&l.s.ph, &save, &c[2], Some(&trace));
        let mut cmd = l.client_command(&save, &file, None);
        let mut sup = inj.apply(&mut cmd);
        cmd.stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let child = cmd.spawn();
        if let Some(s) = sup.as_mut() {
            s.spawned();
        }
        let child = child.or_harness("start the save");
        // Inside the plan's delay: the save has listed the panes and holds a read.
        std::thread::sleep(crate::drivers::scaled(250));
        l.ok("pane.kill", json!({"pane": pane}));
        let out = child.wait_with_output().or_harness("wait for the save");
        if let Some(s) = sup {
            // Under seccomp the trace is the supervisor's: complete once the save is gone.
            let _ = s.finish_within(crate::drivers::scaled(5_000));
        }
        let fired = crate::drivers::fault::read_trace(&trace)
            .iter()
            .any(|call| {
                call["action"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("delay"))
            });
        if !fired {
            crate::harness_error!("the fault plan's delay never fired in the save client");
        }
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|_| panic!("the save printed no JSON"));
        let result = match v.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(v),
        };
        l.client_reply = Some(Reply {
            result,
            exit: out.status.code(),
        });
    })
    .await;
}

#[then(regex = r#"^every pane of the archive "([\w.-]+)" has a record$"#)]
async fn every_pane_has_record(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let a = archive_of(s.live(), &c[1]);
        for p in panes_of_archive(&a) {
            assert!(
                p.get("agent_session").is_some(),
                "a pane whose record was reaped mid-save was archived without it: {a}"
            );
        }
    })
    .await;
}

#[then(regex = r#"^the archive "([\w.-]+)" holds the native ids "([^"]+)" and "([^"]+)"$"#)]
async fn archive_holds_ids(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let a = archive_of(s.live(), &c[1]);
        let ids: Vec<Value> = panes_of_archive(&a)
            .iter()
            .map(|p| p["agent_session"]["native_id"].clone())
            .collect();
        for want in [&c[2], &c[3]] {
            assert!(
                ids.contains(&json!(want)),
                "the archive lacks {want}: {ids:?}"
            );
        }
    })
    .await;
}

#[then(regex = r"^the save succeeds$")]
async fn save_succeeds(w: &mut World) {
    w.run(&[], None, |s, _| {
        client_ok(s.live());
    })
    .await;
}

/// ADR-0068 §5: save "verifies that the local Terminal set did not change during those
/// reads rather than silently archiving": refusing the save is one way to do so, and
/// then the rows about the archive's content have nothing to judge, if no archive was
/// left behind.
#[then(regex = r#"^the save succeeds, or is refused and leaves no archive "([\w.-]+)"$"#)]
async fn save_succeeds_or_refused(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let reply = l.client_reply.as_ref().or_harness("no save ran");
        if let Err(e) = &reply.result {
            let left = l.file(&c[1]);
            crate::evidence::ensure(!left.exists(), None, || {
                (
                    format!("a refused save leaves no archive {}", &c[1]),
                    format!("it failed ({e}) and left {}", left.display()),
                )
            });
            crate::does_not_apply!(
                "the save was refused ({e}) while the pane set changed, which the ADR allows, and left no archive"
            );
        }
    })
    .await;
}

#[then(regex = r#"^the archive "([\w.-]+)" has schema_version (\d)$"#)]
async fn archive_schema(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let a = archive_of(s.live(), &c[1]);
        assert_eq!(a["schema_version"].to_string(), c[2]);
    })
    .await;
}

#[then(regex = r#"^the archive "([\w.-]+)" has (\d+) panes$"#)]
async fn archive_pane_count(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let a = archive_of(s.live(), &c[1]);
        assert_eq!(panes_of_archive(&a).len().to_string(), c[2]);
    })
    .await;
}

#[then(
    regex = r#"^the archive "([\w.-]+)" holds exactly the records of "([^"]*)" "([^"]*)" "([^"]*)" and "([^"]*)" "([^"]*)" "([^"]*)"$"#
)]
async fn archive_records(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let a = archive_of(s.live(), &c[1]);
        let mut got: Vec<Value> = panes_of_archive(&a)
            .into_iter()
            .filter_map(|p| p.get("agent_session").cloned())
            .collect();
        let mut want: Vec<Value> = [(2, 3, 4), (5, 6, 7)]
            .iter()
            .map(|&(i, j, k)| serde_json::from_str(&record_text(&c[i], &c[j], &c[k])).unwrap())
            .collect();
        let key = |v: &Value| v.to_string();
        got.sort_by_key(key);
        want.sort_by_key(key);
        assert_eq!(got, want);
    })
    .await;
}

#[given(regex = r#"^the archive "([\w.-]+)":$"#)]
async fn archive_doc(w: &mut World, c: &[String], #[step] step: &Step) {
    w.run(c, step.docstring.as_deref(), |s, c| {
        let l = s.live();
        let doc = c.doc().or_harness("the step needs a docstring");
        let text = doc
            .trim()
            .replace("{vxstub}", &l.vxstub())
            .replace("{dir}", &l.s.dir.path().to_string_lossy());
        std::fs::write(l.file(&c[1]), text).or_harness("write the archive");
    })
    .await;
}

#[given(
    regex = r#"^the archive "([\w.-]+)" holds the session "(\w+)" natively resumed as "([^"]*)" "([^"]*)" "([^"]*)"$"#
)]
async fn archive_native(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let record: Value = serde_json::from_str(&record_text(&c[3], &c[4], &c[5])).unwrap();
        let a = json!({"schema_version": 2, "sessions": [{"name": c[2], "windows": [
            {"name": "w", "panes": [{"agent_session": record}]}]}]});
        std::fs::write(s.live().file(&c[1]), a.to_string()).or_harness("write the archive");
    })
    .await;
}

#[when(regex = r#"^the workspace is restored from "([\w.-]+)"$"#)]
async fn restored_from(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        // A restore whose defect is the way to the daemon (a relay) or the daemon
        // itself (the older server) first runs its valid twin without it.
        if let Some(relay) = l.relay.take() {
            let cmd = restore_command(l, &c[1], true);
            let what = format!(
                "the same restore of {} straight to the daemon, without the relay",
                &c[1]
            );
            twins::restore(l, what, cmd);
            l.relay = Some(relay);
            // What the twin created is no event of the restore under test.
            if l.subscriber.is_some() {
                l.subscribe();
            }
        } else if l.legacy {
            twins::restore_on_current_server(l, &c[1]);
        }
        l.forget_dump("stub");
        // The last launched integration's dump too: the restore must write its own.
        if let Some(launched) = l.s.vars.get("launched").cloned() {
            l.forget_dump(&launched);
        }
        let cmd = restore_command(l, &c[1], true);
        let before = crate::agent_restore::restored::sessions(l);
        l.restoring = Some((c[1].to_string(), before));
        l.client_reply = Some(l.run_client(cmd));
    })
    .await;
}

#[when(regex = r#"^the workspace is restored from "([\w.-]+)" without a fallback argv$"#)]
async fn restored_without_fallback(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let twin = restore_command(l, &c[1], true);
        let what = format!("the same restore of {} with a fallback argv", &c[1]);
        twins::restore(l, what, twin);
        // A subscriber that watches what the refused restore creates starts after
        // the twin, whose sessions are created (and removed) by design.
        if l.subscriber.is_some() {
            l.subscribe();
        }
        let cmd = restore_command(l, &c[1], false);
        l.client_reply = Some(l.run_client(cmd));
    })
    .await;
}

#[when(regex = r#"^the workspace is restored from "([\w.-]+)" and from "([\w.-]+)" at once$"#)]
async fn restored_racing(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let before = crate::agent_restore::restored::sessions(l);
        l.restoring = Some((c[1].to_string(), before));
        let mut started = Vec::new();
        for name in [&c[1], &c[2]] {
            let mut cmd = restore_command(l, name, true);
            cmd.stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null());
            started.push((name.to_string(), cmd.spawn().or_harness("start a restore")));
        }
        for (name, child) in started {
            let out = child.wait_with_output().or_harness("wait for a restore");
            let v: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|_| panic!("the restore of {name} printed no JSON"));
            let result = match v.get("error") {
                Some(e) => Err(e.clone()),
                None => Ok(v),
            };
            l.raced.push((
                name,
                Reply {
                    result,
                    exit: out.status.code(),
                },
            ));
        }
    })
    .await;
}

/// The error of the last restore, which must have failed after its valid twin (run
/// by the restore or plugin-change step) was accepted, else the row is
/// `inconclusive`.
fn restore_error(l: &Live) -> Value {
    crate::evidence::require_accepted_control();
    match &l.client_reply.as_ref().or_harness("no restore ran").result {
        Ok(v) => crate::evidence::fail(None, "the restore refused", format!("it succeeded: {v}")),
        Err(e) => e.clone(),
    }
}

#[then(regex = r#"^the restore fails with "([a-z_.]+)"$"#)]
async fn restore_fails(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let e = restore_error(s.live());
        pins::judge_error(&e, &c[1], None);
    })
    .await;
}

#[then(regex = r#"^the restore fails with "([a-z_.]+)" by rule "([a-z0-9_.]+)"$"#)]
async fn restore_fails_by_rule(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let e = restore_error(s.live());
        pins::judge_error(&e, &c[1], Some(&c[2]));
    })
    .await;
}

#[then(regex = r#"^no session is named "(\w+)"$"#)]
async fn no_session_named(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let names = s.live().session_names();
        assert!(!names.iter().any(|n| *n == c[1]), "sessions: {names:?}");
    })
    .await;
}

#[then(regex = r"^no session exists$")]
async fn no_session(w: &mut World) {
    w.run(&[], None, |s, _| {
        let names = s.live().session_names();
        assert!(names.is_empty(), "sessions: {names:?}");
    })
    .await;
}

#[when(regex = r"^every session is killed$")]
async fn kill_sessions(w: &mut World) {
    w.run(&[], None, |s, _| {
        let l = s.live();
        let v = l.ok("session.list", json!({}));
        for id in v["sessions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["session"].as_str())
        {
            l.ok("session.kill", json!({"session": id}));
        }
    })
    .await;
}

#[when(regex = r#"^the PID of the program of "([a-z0-9-]+)" is remembered as "(\w+)"$"#)]
async fn remember_pid(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let pid = l.dump(&c[1])["pid"].to_string();
        l.s.vars.insert(c[2].to_string(), pid);
    })
    .await;
}

#[then(regex = r#"^the program of "([a-z0-9-]+)" runs with a PID other than (\$\w+)$"#)]
async fn new_pid(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let old = l.subst(&c[2]);
        let pid = l.dump(&c[1])["pid"].to_string();
        assert_ne!(
            pid, old,
            "restore must start a new process, not resurrect one"
        );
    })
    .await;
}

#[then(regex = r#"^the program of "([a-z0-9-]+)" still runs as (\$\w+)$"#)]
async fn same_pid(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let old: i32 = l.subst(&c[2]).parse().or_harness("a remembered PID");
        assert!(
            crate::drivers::process::alive(old),
            "the existing session's process was replaced"
        );
        assert!(
            !l.dump_path(&c[1]).exists() || l.dump(&c[1])["pid"] == json!(old),
            "a new program started"
        );
    })
    .await;
}

#[then(regex = r#"^no program wrote the dump "([a-z0-9-]+)"$"#)]
async fn no_dump(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        // The fallback dump exists by now; the archived program gets as long, longer
        // when this scenario's replies were slow (named in the evidence).
        crate::evidence::settle(
            "a program the refused restore might have started",
            crate::drivers::scaled(300),
        );
        if l.dump_path(&c[1]).exists() {
            let pid = l.dump(&c[1])["pid"].clone();
            panic!(
                "a program (PID {pid}) wrote the dump {}: it was started",
                &c[1]
            );
        }
    })
    .await;
}

#[when(regex = r#"^the integration "([a-z0-9-]+)" of plugin "([a-z0-9-]+)" is (.+)$"#)]
async fn integration_changed(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| change_after_twin(s.live(), &c, true))
        .await;
}

/// The change written to the plugins directory only: the daemon reads it when the
/// relay in mode `reload-before-launch` reloads, after restore's plan.
#[when(
    regex = r#"^the integration "([a-z0-9-]+)" of plugin "([a-z0-9-]+)" changes on disk only: (.+)$"#
)]
async fn integration_changed_on_disk(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| change_after_twin(s.live(), &c, false))
        .await;
}

/// The valid twin first: the last saved archive restored while the integration still
/// resolves (what it restores is removed again); then the change, reloaded by the
/// daemon at once or left on disk.
fn change_after_twin(l: &mut Live, c: &crate::drivers::step::Caps, reload: bool) {
    let saved = l
        .saved
        .clone()
        .or_harness("a plugin change follows a save, whose restore is its twin");
    let twin = restore_command(l, &saved, true);
    let what = format!("the same restore of {saved} before the integration was changed");
    twins::restore(l, what, twin);
    l.forget_dump("stub");
    super::owners::apply_change(l, &c[1], &c[2], &c[3], reload);
}

#[given(regex = r"^the daemon is restarted as an older server$")]
async fn restart_legacy(w: &mut World) {
    w.run(&[], None, |s, _| {
        let l = s.live();
        let t = templates().legacy_serve;
        if t.is_empty() {
            crate::harness_error!("the profile's [agent_restore] table needs legacy_serve");
        }
        if l.s.daemon.is_some() {
            l.s.stop(nix::sys::signal::Signal::SIGTERM);
        }
        l.s.start_with(&t);
        l.legacy = true;
    })
    .await;
}
