//! Steps: Starting, stopping, killing and restarting the implementation; configuration.

use super::prelude::*;
use crate::drivers::{clock, fault};
use crate::recovery::scenario::faketime_preload;

#[given(regex = r"^a daemon started with the default configuration$")]
async fn daemon_started_with_default_configuration(w: &mut World) {
    w.run(&[], None, |w, _| {
        w.start();
    })
    .await;
}

#[given(regex = r"^a daemon started with recovery enabled$")]
async fn daemon_started_with_recovery_enabled(w: &mut World) {
    w.run(&[], None, |w, _| {
        w.write_config(ENABLED);
        w.start();
    })
    .await;
}

#[given(regex = r"^a daemon started with the configuration:$")]
async fn daemon_started_with_configuration(w: &mut World, #[step] step: &Step) {
    w.run(&[], step.docstring.as_deref(), |w, c| {
        w.write_config(c.doc().or_harness("step needs a docstring"));
        w.start();
    })
    .await;
}

#[when(regex = r"^a daemon is started with recovery enabled, or refuses to start$")]
async fn daemon_started_with_recovery_enabled_or_refuses(w: &mut World) {
    w.run(&[], None, |w, _| {
        w.write_config(ENABLED);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.start()));
        if let Err(p) = r {
            let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
            if !msg.starts_with("the implementation exited before becoming ready") {
                std::panic::resume_unwind(p);
            }
            w.vars.insert("refused".into(), "yes".into());
        }
    })
    .await;
}

#[then(
    regex = r#"^the owner's "([a-z_.]+)" fails with "([a-z_.]+)" unless the daemon refused to start$"#
)]
async fn owner_fails_with_unless_daemon_refused_start(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        if w.vars.contains_key("refused") {
            return;
        }
        let token = w.owner_token();
        let verb = c[1].to_string();
        let r = w.wire(Some(&token), &verb, Map::new());
        match &r.result {
            Ok(v) => panic!("expected error {}, got ok {v}", &c[2]),
            Err(e) => assert_eq!(
                e.get("code").and_then(Value::as_str),
                Some(&c[2]),
                "wrong error code: {e}"
            ),
        }
        w.last = Some(r);
    })
    .await;
}

#[when(regex = r"^the daemon is stopped with SIGTERM$")]
async fn daemon_stopped_with_sigterm(w: &mut World) {
    w.run(&[], None, |w, _| {
        w.stop(Signal::SIGTERM);
    })
    .await;
}

#[when(regex = r"^the daemon is killed with SIGKILL$")]
async fn daemon_killed_with_sigkill(w: &mut World) {
    w.run(&[], None, |w, _| {
        w.stop(Signal::SIGKILL);
    })
    .await;
}

#[given(regex = r"^the daemon is restarted on the same socket$")]
#[when(regex = r"^the daemon is restarted on the same socket$")]
async fn daemon_restarted_on_same_socket(w: &mut World) {
    w.run(&[], None, |w, _| {
        if w.daemon.is_some() {
            w.stop(Signal::SIGTERM);
        }
        w.start();
    })
    .await;
}

#[given(regex = r"^the owner token is remembered as \$(\w+)$")]
async fn owner_token_remembered_as(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let tok = w.owner_token();
        w.vars.insert(c[1].to_string(), tok);
    })
    .await;
}

#[when(regex = r"^a second daemon is started on the same socket$")]
async fn second_daemon_started_on_same_socket(w: &mut World) {
    w.run(&[], None, |w, _| {
        let mut child = w.spawn_daemon();
        let start = std::time::Instant::now();
        let limit = scaled(5_000);
        let status = loop {
            if let Ok(Some(s)) = child.try_wait() {
                break Some(s);
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        w.second = Some((status, start.elapsed()));
    })
    .await;
}

#[given(regex = r#"^the pane has printed a process ID after "([^"]+)", saved as \$(\w+)$"#)]
async fn pane_has_printed_process_id_after_saved(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let pane = w.vars.get("pane").cloned().or_harness("no pane");
        let token = w.owner_token();
        let pattern =
            regex::Regex::new(&format!("{}([0-9]+)", regex::escape(&c[1]))).or_harness("marker");
        let limit = scaled(10_000);
        let start = std::time::Instant::now();
        let pid = loop {
            let mut p = Map::new();
            p.insert("pane".into(), Value::String(pane.clone()));
            if let Ok(v) = &w.wire(Some(&token), "pane.capture", p).result {
                let text = v.to_string();
                if let Some(m) = pattern.captures(&text) {
                    break m[1].parse::<i32>().or_harness("pid");
                }
            }
            assert!(
                start.elapsed() < limit,
                "timeout: the pane never printed {:?}",
                &c[1]
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        // Escaped descendants have their own group: the World must clean them up too.
        w.pane_pids.push(pid);
        w.vars.insert(c[2].to_string(), pid.to_string());
    })
    .await;
}

#[given(regex = r#"^the pane has printed "([^"]+)"$"#)]
async fn pane_has_printed(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let pane = w
            .vars
            .get("pane")
            .cloned()
            .or_harness("no pane was created");
        let token = w.owner_token();
        let want = c[1].to_string();
        let limit = scaled(10_000);
        let start = std::time::Instant::now();
        loop {
            let mut p = Map::new();
            p.insert("pane".into(), Value::String(pane.clone()));
            let r = w.wire(Some(&token), "pane.capture", p);
            if let Ok(v) = &r.result {
                if v.to_string().contains(&want) {
                    return;
                }
            }
            if start.elapsed() > limit {
                crate::timed_out!("pane {pane} never printed {want:?}");
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    })
    .await;
}

#[given(regex = r"^(\d+) ms pass$")]
#[when(regex = r"^(\d+) ms pass$")]
async fn ms_pass(w: &mut World, c: &[String]) {
    w.run(c, None, |_, c| {
        std::thread::sleep(Duration::from_millis(
            c[1].parse().or_harness("a number in the step"),
        ));
    })
    .await;
}

#[given(regex = r"^an on-demand daemon started with recovery enabled$")]
async fn on_demand_daemon_started_with_recovery_enabled(w: &mut World) {
    w.run(&[], None, |w, _| {
        w.write_config(ENABLED);
        w.start_on_demand();
    })
    .await;
}

#[given(regex = r#"^a daemon started with recovery enabled under the fault plan "([^"]+)"$"#)]
async fn daemon_started_with_recovery_enabled_under_fault(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        w.inject(&c[1], None);
        w.write_config(ENABLED);
        w.start();
    })
    .await;
}

#[given(regex = r#"^the fault plan "([^"]+)" applies to the next start$"#)]
async fn fault_plan_applies_next_start(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        w.inject(&c[1], None);
    })
    .await;
}

#[given(regex = r"^the daemon's clock runs (\d+) (days|hours) (behind|ahead)$")]
async fn daemon_clock_runs(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let lib = faketime_preload().or_harness("libfaketime is not installed");
        let amount: u64 = c[1].parse().or_harness("the amount of time");
        w.extra_env.push(("LD_PRELOAD".into(), lib));
        w.extra_env.push((
            "FAKETIME".into(),
            clock::faketime_offset(amount, &c[2], &c[3] == "behind"),
        ));
        // Timers and deadlines keep real time; only the wall clock moves.
        w.extra_env
            .push(("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()));
        w.extra_env.push(("FAKETIME_DONT_RESET".into(), "1".into()));
    })
    .await;
}

#[given(regex = r"^a daemon started with recovery enabled and its file calls traced$")]
async fn daemon_started_with_file_calls_traced(w: &mut World) {
    w.run(&[], None, |w, _| {
        let trace = w.dir.path().join("trace.jsonl");
        // An empty plan injects nothing: the backend only traces.
        w.inject("", Some(&trace));
        w.vars
            .insert("trace".into(), trace.to_string_lossy().into_owned());
        w.write_config(ENABLED);
        w.start();
    })
    .await;
}

#[then(
    regex = r#"^the trace shows "([^"]+)" written, synced, renamed into place and its directory synced, in that order$"#
)]
async fn trace_shows_written_synced_renamed_into_place(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let path = w.vars.get("trace").cloned().or_harness("no trace");
        let calls = fault::read_trace(std::path::Path::new(&path));
        check_publication(&calls, &c[1]);
    })
    .await;
}

#[given(regex = r"^the daemon environment has (\w+)=(.*)$")]
async fn daemon_environment_has(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        w.extra_env.push((c[1].to_string(), c[2].to_string()));
    })
    .await;
}

#[given(regex = r"^the configuration file is replaced by:$")]
#[when(regex = r"^the configuration file is replaced by:$")]
async fn configuration_file_replaced_by(w: &mut World, #[step] step: &Step) {
    w.run(&[], step.docstring.as_deref(), |w, c| {
        w.write_config(c.doc().or_harness("step needs a docstring"));
    })
    .await;
}

#[then(regex = r"^the owner token differs from (.+)$")]
async fn owner_token_differs_from(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let now = w.owner_token();
        assert_ne!(
            now,
            c[1].trim(),
            "the restarted daemon kept the old owner token"
        );
    })
    .await;
}

#[given(regex = r#"^an executable "(\w+)" in a directory named "([\w-]+)"$"#)]
async fn executable_directory_named(w: &mut World, c: &[String]) {
    w.run(c, None, |w, c| {
        let dir = w.dir.path().join(&c[2]);
        std::fs::create_dir_all(&dir).or_harness("mkdir");
        let exe = dir.join(&c[1]);
        std::os::unix::fs::symlink("/bin/sh", &exe).or_harness("symlink");
        w.vars
            .insert("exe".into(), exe.to_string_lossy().into_owned());
    })
    .await;
}
