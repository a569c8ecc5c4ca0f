//! Steps: Starting, stopping, killing and restarting the implementation; configuration.

use super::*;

pub(super) fn dispatch(w: &mut Inner, t: &str, doc: Option<&str>) -> bool {
    if step!(t, r"^a daemon started with the default configuration$").is_some() {
        w.start();
        return true;
    }
    if step!(t, r"^a daemon started with recovery enabled$").is_some() {
        w.write_config(ENABLED);
        w.start();
        return true;
    }
    if step!(t, r"^a daemon started with the configuration:$").is_some() {
        w.write_config(doc.expect("harness-error: step needs a docstring"));
        w.start();
        return true;
    }
    if step!(
        t,
        r"^a daemon is started with recovery enabled, or refuses to start$"
    )
    .is_some()
    {
        w.write_config(ENABLED);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.start()));
        if let Err(p) = r {
            let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
            if !msg.starts_with("the implementation exited before becoming ready") {
                std::panic::resume_unwind(p);
            }
            w.vars.insert("refused".into(), "yes".into());
        }
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the owner's "([a-z_.]+)" fails with "([a-z_.]+)" unless the daemon refused to start$"#
    ) {
        if w.vars.contains_key("refused") {
            return true;
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
        return true;
    }
    if step!(t, r"^the daemon is stopped with SIGTERM$").is_some() {
        w.stop(Signal::SIGTERM);
        return true;
    }
    if step!(t, r"^the daemon is killed with SIGKILL$").is_some() {
        w.stop(Signal::SIGKILL);
        return true;
    }
    if step!(t, r"^the daemon is restarted on the same socket$").is_some() {
        if w.daemon.is_some() {
            w.stop(Signal::SIGTERM);
        }
        w.start();
        return true;
    }
    if step!(t, r"^the owner token is remembered as \$(\w+)$").is_some() {
        let c = step!(t, r"^the owner token is remembered as \$(\w+)$").unwrap();
        let tok = w.owner_token();
        w.vars.insert(c[1].to_string(), tok);
        return true;
    }
    if step!(t, r"^a second daemon is started on the same socket$").is_some() {
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
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the pane has printed a process ID after "([^"]+)", saved as \$(\w+)$"#
    ) {
        let pane = w.vars.get("pane").cloned().expect("harness-error: no pane");
        let token = w.owner_token();
        let pattern = regex::Regex::new(&format!("{}([0-9]+)", regex::escape(&c[1])))
            .expect("harness-error: marker");
        let limit = scaled(10_000);
        let start = std::time::Instant::now();
        let pid = loop {
            let mut p = Map::new();
            p.insert("pane".into(), Value::String(pane.clone()));
            if let Ok(v) = &w.wire(Some(&token), "pane.capture", p).result {
                let text = v.to_string();
                if let Some(m) = pattern.captures(&text) {
                    break m[1].parse::<i32>().expect("harness-error: pid");
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
        return true;
    }
    if let Some(c) = step!(t, r#"^the pane has printed "([^"]+)"$"#) {
        let pane = w
            .vars
            .get("pane")
            .cloned()
            .expect("harness-error: no pane was created");
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
                    return true;
                }
            }
            if start.elapsed() > limit {
                panic!("timeout: pane {pane} never printed {want:?}");
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }
    if let Some(c) = step!(t, r"^(\d+) ms pass$") {
        std::thread::sleep(Duration::from_millis(c[1].parse().unwrap()));
        return true;
    }

    if step!(t, r"^an on-demand daemon started with recovery enabled$").is_some() {
        w.write_config(ENABLED);
        w.start_on_demand();
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^a daemon started with recovery enabled under the fault plan "([^"]+)"$"#
    ) {
        let lib = super::super::world::fault_preload(w);
        w.extra_env.push(("LD_PRELOAD".into(), lib));
        w.extra_env.push(("VXFAULT_PLAN".into(), c[1].to_string()));
        w.write_config(ENABLED);
        w.start();
        return true;
    }
    if let Some(c) = step!(t, r#"^the fault plan "([^"]+)" applies to the next start$"#) {
        let lib = super::super::world::fault_preload(w);
        w.extra_env.push(("LD_PRELOAD".into(), lib));
        w.extra_env.push(("VXFAULT_PLAN".into(), c[1].to_string()));
        return true;
    }
    if let Some(c) = step!(
        t,
        r"^the daemon's clock runs (\d+) (days|hours) (behind|ahead)$"
    ) {
        let lib = super::super::world::faketime_preload()
            .unwrap_or_else(|| panic!("harness-error: libfaketime not found"));
        let unit = if &c[2] == "days" { "d" } else { "h" };
        let sign = if &c[3] == "behind" { "-" } else { "+" };
        w.extra_env.push(("LD_PRELOAD".into(), lib));
        w.extra_env
            .push(("FAKETIME".into(), format!("{sign}{}{unit}", &c[1])));
        // Timers and deadlines keep real time; only the wall clock moves.
        w.extra_env
            .push(("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()));
        w.extra_env.push(("FAKETIME_DONT_RESET".into(), "1".into()));
        return true;
    }
    if step!(
        t,
        r"^a daemon started with recovery enabled and its file calls traced$"
    )
    .is_some()
    {
        let lib = super::super::world::fault_preload(w);
        let trace = w.dir.path().join("trace.jsonl");
        w.extra_env.push(("LD_PRELOAD".into(), lib));
        w.extra_env
            .push(("VXFAULT_TRACE".into(), trace.to_string_lossy().into_owned()));
        w.vars
            .insert("trace".into(), trace.to_string_lossy().into_owned());
        w.write_config(ENABLED);
        w.start();
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^the trace shows "([^"]+)" written, synced, renamed into place and its directory synced, in that order$"#
    ) {
        let path = w
            .vars
            .get("trace")
            .cloned()
            .expect("harness-error: no trace");
        let text = std::fs::read_to_string(&path).expect("harness-error: trace unreadable");
        let calls: Vec<Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        check_publication(&calls, &c[1]);
        return true;
    }
    if let Some(c) = step!(t, r"^the daemon environment has (\w+)=(.*)$") {
        w.extra_env.push((c[1].to_string(), c[2].to_string()));
        return true;
    }
    if step!(t, r"^the configuration file is replaced by:$").is_some() {
        w.write_config(doc.expect("harness-error: step needs a docstring"));
        return true;
    }
    if let Some(c) = step!(t, r"^the owner token differs from (.+)$") {
        let now = w.owner_token();
        assert_ne!(
            now,
            c[1].trim(),
            "the restarted daemon kept the old owner token"
        );
        return true;
    }
    if let Some(c) = step!(
        t,
        r#"^an executable "(\w+)" in a directory named "([\w-]+)"$"#
    ) {
        let dir = w.dir.path().join(&c[2]);
        std::fs::create_dir_all(&dir).expect("harness-error: mkdir");
        let exe = dir.join(&c[1]);
        std::os::unix::fs::symlink("/bin/sh", &exe).expect("harness-error: symlink");
        w.vars
            .insert("exe".into(), exe.to_string_lossy().into_owned());
        return true;
    }
    false
}
