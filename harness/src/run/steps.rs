//! The step vocabulary. Every step of every feature is matched here, by text; a step
//! that matches nothing is a harness error, never a silent skip.

use super::world::{at, mode_of, scaled, Inner, World};
use nix::sys::signal::Signal;
use serde_json::{Map, Value};
use std::os::unix::fs::MetadataExt;
use std::sync::OnceLock;
use std::time::Duration;

struct Re(regex::Regex);

fn re(cell: &'static OnceLock<Re>, pat: &str) -> &'static regex::Regex {
    &cell
        .get_or_init(|| Re(regex::Regex::new(pat).expect("step regex")))
        .0
}

macro_rules! step {
    ($text:expr, $pat:literal) => {{
        static CELL: OnceLock<Re> = OnceLock::new();
        re(&CELL, $pat).captures($text)
    }};
}

const ENABLED: &str = ".{ .recovery = .{ .enabled = true } }\n";

/// Runs one step's text against a scenario's state.
pub fn dispatch(w: &mut Inner, raw: &str, doc: Option<&str>) {
    let text = w.subst(raw);
    let t = text.as_str();

    // ---- lifecycle
    if step!(t, r"^a daemon started with the default configuration$").is_some() {
        return w.start();
    }
    if step!(t, r"^a daemon started with recovery enabled$").is_some() {
        w.write_config(ENABLED);
        return w.start();
    }
    if step!(t, r"^a daemon started with the configuration:$").is_some() {
        w.write_config(doc.expect("harness-error: step needs a docstring"));
        return w.start();
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
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the owner's "([a-z_.]+)" fails with "([a-z_.]+)" unless the daemon refused to start$"#
    ) {
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
        return;
    }
    if step!(t, r"^the daemon is stopped with SIGTERM$").is_some() {
        return w.stop(Signal::SIGTERM);
    }
    if step!(t, r"^the daemon is killed with SIGKILL$").is_some() {
        return w.stop(Signal::SIGKILL);
    }
    if step!(t, r"^the daemon is restarted on the same socket$").is_some() {
        if w.daemon.is_some() {
            w.stop(Signal::SIGTERM);
        }
        return w.start();
    }
    if step!(t, r"^the owner token is remembered as \$(\w+)$").is_some() {
        let c = step!(t, r"^the owner token is remembered as \$(\w+)$").unwrap();
        let tok = w.owner_token();
        w.vars.insert(c[1].to_string(), tok);
        return;
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
        return;
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
        return;
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
                    return;
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
        return;
    }

    if step!(t, r"^an on-demand daemon started with recovery enabled$").is_some() {
        w.write_config(ENABLED);
        return w.start_on_demand();
    }
    if let Some(c) = step!(
        t,
        r#"^a daemon started with recovery enabled under the fault plan "([^"]+)"$"#
    ) {
        let lib = super::world::fault_preload(w);
        w.extra_env.push(("LD_PRELOAD".into(), lib));
        w.extra_env.push(("VXFAULT_PLAN".into(), c[1].to_string()));
        w.write_config(ENABLED);
        return w.start();
    }
    if let Some(c) = step!(t, r#"^the fault plan "([^"]+)" applies to the next start$"#) {
        let lib = super::world::fault_preload(w);
        w.extra_env.push(("LD_PRELOAD".into(), lib));
        w.extra_env.push(("VXFAULT_PLAN".into(), c[1].to_string()));
        return;
    }
    if let Some(c) = step!(
        t,
        r"^the daemon's clock runs (\d+) (days|hours) (behind|ahead)$"
    ) {
        let lib = super::world::faketime_preload()
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
        return;
    }
    if step!(
        t,
        r"^a daemon started with recovery enabled and its file calls traced$"
    )
    .is_some()
    {
        let lib = super::world::fault_preload(w);
        let trace = w.dir.path().join("trace.jsonl");
        w.extra_env.push(("LD_PRELOAD".into(), lib));
        w.extra_env
            .push(("VXFAULT_TRACE".into(), trace.to_string_lossy().into_owned()));
        w.vars
            .insert("trace".into(), trace.to_string_lossy().into_owned());
        w.write_config(ENABLED);
        return w.start();
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
        return;
    }
    if let Some(c) = step!(t, r"^the daemon environment has (\w+)=(.*)$") {
        w.extra_env.push((c[1].to_string(), c[2].to_string()));
        return;
    }
    if step!(t, r"^the configuration file is replaced by:$").is_some() {
        w.write_config(doc.expect("harness-error: step needs a docstring"));
        return;
    }
    if let Some(c) = step!(t, r"^the owner token differs from (.+)$") {
        let now = w.owner_token();
        assert_ne!(
            now,
            c[1].trim(),
            "the restarted daemon kept the old owner token"
        );
        return;
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
        return;
    }

    // ---- resources through the wire, as the owner
    if let Some(c) = step!(
        t,
        r#"^the owner has created session "([^"]+)" with a pane running "([^"]*)"$"#
    ) {
        let name = c[1].to_string();
        let cmd = c[2].to_string();
        return create_pane(w, &name, vec!["/bin/sh".into(), "-c".into(), cmd]);
    }
    if let Some(c) = step!(
        t,
        r#"^the owner has created session "([^"]+)" with an empty window$"#
    ) {
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
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the owner has created session "([^"]+)" with a pane running argv (\[.*\])$"#
    ) {
        let name = c[1].to_string();
        let argv: Vec<String> =
            serde_json::from_str(&c[2]).expect("harness-error: argv in the step is not JSON");
        return create_pane(w, &name, argv);
    }

    // ---- calls
    if let Some(c) = step!(
        t,
        r#"^(the owner|an unauthenticated client|a client with token "([^"]*)") calls "([a-z_.]+)"(?: with (\{.*\}))?$"#
    ) {
        let token = match &c[1] {
            "the owner" => Some(w.owner_token()),
            "an unauthenticated client" => None,
            _ => Some(c[2].to_string()),
        };
        let verb = c[3].to_string();
        let params = parse_params(c.get(4).map(|m| m.as_str()));
        let r = w.wire(token.as_deref(), &verb, params);
        w.last = Some(r);
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the owner calls "([a-z_.]+)" and the reply may be lost$"#
    ) {
        let verb = c[1].to_string();
        let token = w.owner_token();
        // The call may kill the implementation (a crash fault): a missing reply is
        // the point of the scenario, not a failure of the step.
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            w.wire(Some(&token), &verb, Map::new())
        }));
        w.last = r.ok();
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^(\d+) owner connections call "([a-z_.]+)" at once with (\{.*\})$"#
    ) {
        let n: usize = c[1].parse().unwrap();
        let verb = c[2].to_string();
        let params = parse_params(Some(&c[3]));
        let token = w.owner_token();
        let socket = w.ph.socket.clone();
        let barrier = std::sync::Barrier::new(n);
        let results: Vec<(super::world::Reply, Vec<u8>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..n)
                .map(|_| {
                    let (barrier, socket, token, verb, params) =
                        (&barrier, &socket, &token, &verb, params.clone());
                    scope.spawn(move || {
                        barrier.wait();
                        super::world::wire_call(socket, Some(token), verb, params)
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
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^exactly one of them succeeds and the others fail with "([a-z_.]+)"(?: or "([a-z_.]+)")?$"#
    ) {
        let ok: Vec<&super::world::Reply> = w.burst.iter().filter(|r| r.result.is_ok()).collect();
        assert_eq!(ok.len(), 1, "successes among {:?}", w.burst);
        for r in &w.burst {
            if let Err(e) = &r.result {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("");
                let alt = c.get(2).map(|m| m.as_str());
                assert!(code == &c[1] || Some(code) == alt, "wrong error code: {e}");
            }
        }
        w.last = Some(ok[0].clone());
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^restoring "([^"]+)" either fails with "([a-z_.]+)" or gives archives without text$"#
    ) {
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
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^(the owner|an unauthenticated client) runs the CLI "([^"]*)"$"#
    ) {
        let token = (&c[1] == "the owner").then(|| "@owner".to_string());
        let words: Vec<String> = c[2].split_whitespace().map(String::from).collect();
        let r = w.cli(token.as_deref(), &words);
        w.last = Some(r);
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the owner runs the CLI "([^"]*)" with no daemon listening$"#
    ) {
        assert!(!w.daemon_alive(), "harness-error: a daemon is running");
        let words: Vec<String> = c[1].split_whitespace().map(String::from).collect();
        let r = w.cli(None, &words);
        w.last = Some(r);
        return;
    }

    // ---- store planting and tampering
    if let Some(c) = step!(
        t,
        r#"^checkpoint "(\w+)" of format (\d) with generation (\d+)(?: captured (\d+) s ago| captured (\d+) s in the future)? is planted in the store(?: as "([^"]+)")?$"#
    ) {
        let name = c[1].to_string();
        let format: u32 = c[2].parse().unwrap();
        let gen: u64 = c[3].parse().unwrap();
        let offset = match (c.get(4), c.get(5)) {
            (Some(ago), _) => -ago.as_str().parse::<i64>().unwrap(),
            (_, Some(ahead)) => ahead.as_str().parse::<i64>().unwrap(),
            _ => -60,
        };
        let defect = c.get(6).map_or("intact", |m| m.as_str()).to_string();
        let f = w.fixture(format, gen, offset);
        w.plant(&name, &f, &defect);
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^checkpoint "(\w+)" of format (\d) with generation (\d+) is planted in the store of another socket$"#
    ) {
        let other = w.ph.runtime_dir.join("venomx/other.sock");
        let store =
            w.ph.state_home
                .join("venomx/recovery")
                .join(super::world::socket_key(&other));
        let mut f = w.fixture(c[2].parse().unwrap(), c[3].parse().unwrap(), -60);
        f.socket = other.to_string_lossy().into_owned();
        let name = c[1].to_string();
        w.plant_in(&store, &name, &f, "intact");
        return;
    }
    if let Some(c) = step!(t, r#"^the store file of "(\w+)" is chmod (0[0-7]{3})$"#) {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        let mode = u32::from_str_radix(&c[2], 8).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(mode))
            .expect("harness-error: chmod");
        return;
    }
    if let Some(c) = step!(t, r#"^the store file of "(\w+)" is owned by uid (\d+)$"#) {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        let uid: u32 = c[2].parse().unwrap();
        std::os::unix::fs::lchown(&path, Some(uid), None).expect("harness-error: chown needs root");
        return;
    }
    if let Some(c) = step!(t, r#"^the store file of "(\w+)" gets a second hard link$"#) {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        std::fs::hard_link(&path, w.dir.path().join("second-link")).expect("harness-error: link");
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the store file of "(\w+)" is replaced by a symlink to a valid checkpoint outside the store$"#
    ) {
        let path = w.vars[&format!("{}_file", &c[1])].clone();
        let outside = w.dir.path().join("outside.json");
        std::fs::copy(&path, &outside).expect("harness-error: copy");
        std::fs::remove_file(&path).expect("harness-error: unlink");
        std::os::unix::fs::symlink(&outside, &path).expect("harness-error: symlink");
        return;
    }
    if step!(t, r"^the store directory is chmod 0755$").is_some() {
        std::fs::set_permissions(
            &w.ph.store,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("harness-error: chmod store");
        return;
    }

    // ---- processes
    if step!(t, r"^an unrelated process is running$").is_some() {
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("300")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().expect("harness-error: spawn sleep");
        w.vars
            .insert("unrelated_pid".into(), child.id().to_string());
        w.unrelated = Some(child);
        return;
    }

    if step!(
        t,
        r"^the pane's process is killed and an unrelated process takes its PID$"
    )
    .is_some()
    {
        let pid: i32 = w.vars["pid"].parse().expect("harness-error: no pane pid");
        let reused = super::pids::kill_and_free(pid, scaled(5_000))
            .and_then(|()| super::pids::spawn_with_pid(pid));
        let child = match reused {
            Ok(child) => child,
            Err(why) => {
                // Still meaningful (nothing may touch an unrelated process), but say
                // that the PID itself could not be reused here.
                w.transcript.extend_from_slice(
                    format!("harness-note: PID reuse unavailable ({why:?}); using a stand-in\n")
                        .as_bytes(),
                );
                let mut cmd = std::process::Command::new("sleep");
                cmd.arg("300")
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null());
                std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
                cmd.spawn().expect("harness-error: spawn sleep")
            }
        };
        w.vars
            .insert("unrelated_pid".into(), child.id().to_string());
        w.unrelated = Some(child);
        return;
    }

    // ---- outcomes
    if step!(t, r"^the call succeeds$").is_some() {
        if let Err(e) = &w.last().result {
            panic!("expected success, got error {e}");
        }
        return;
    }
    if step!(t, r"^the call fails$").is_some() {
        if let Ok(v) = &w.last().result {
            panic!("expected an error, got ok {v}");
        }
        return;
    }
    if let Some(c) = step!(t, r#"^the call fails with "([a-z_.]+)"$"#) {
        match &w.last().result {
            Ok(v) => panic!("expected error {}, got ok {v}", &c[1]),
            Err(e) => assert_eq!(
                e.get("code").and_then(Value::as_str),
                Some(&c[1]),
                "wrong error code: {e}"
            ),
        }
        return;
    }
    if let Some(c) = step!(t, r#"^the call fails with "([a-z_.]+)" or "([a-z_.]+)"$"#) {
        match &w.last().result {
            Ok(v) => panic!("expected error {} or {}, got ok {v}", &c[1], &c[2]),
            Err(e) => {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("");
                assert!(code == &c[1] || code == &c[2], "wrong error code: {e}")
            }
        }
        return;
    }
    if let Some(c) = step!(t, r#"^the call fails with a code starting "([a-z_.]+)"$"#) {
        match &w.last().result {
            Ok(v) => panic!("expected an error {}…, got ok {v}", &c[1]),
            Err(e) => {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("");
                assert!(code.starts_with(&c[1]), "wrong error code: {e}")
            }
        }
        return;
    }
    if let Some(c) = step!(t, r"^the CLI exits with code (\d+)$") {
        let want: i32 = c[1].parse().unwrap();
        assert_eq!(w.last().exit, Some(want), "CLI exit code");
        return;
    }
    if step!(t, r"^the CLI exits with a nonzero code$").is_some() {
        let exit = w.last().exit.expect("harness-error: not a CLI reply");
        assert_ne!(exit, 0, "CLI exit code");
        return;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" is absent$"#) {
        let got = ok_value(w);
        assert_eq!(at(&got, &c[1]), None, "result {:?} in {got}", &c[1]);
        return;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" is saved as \$(\w+)$"#) {
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        let s = v.as_str().map_or_else(|| v.to_string(), String::from);
        w.vars.insert(c[2].to_string(), s);
        return;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" has JSON type "(\w+)"$"#) {
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        let ok = match &c[2] {
            "string" => v.is_string(),
            "integer" => v.is_i64() || v.is_u64(),
            "boolean" => v.is_boolean(),
            "object" => v.is_object(),
            "array" => v.is_array(),
            other => panic!("harness-error: unknown JSON type {other}"),
        };
        assert!(ok, "{:?} is {v}, not of type {}", &c[1], &c[2]);
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the result "([^"]*)" has exactly the keys "([^"]*)"$"#
    ) {
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        let mut keys: Vec<&str> = v
            .as_object()
            .unwrap_or_else(|| panic!("{:?} is not an object: {v}", &c[1]))
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        let mut want: Vec<&str> = c[2].split(',').collect();
        want.sort_unstable();
        assert_eq!(keys, want, "keys of {:?}", &c[1]);
        return;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" is not (.+)$"#) {
        let unwanted: Value = serde_json::from_str(&c[2])
            .unwrap_or_else(|_| panic!("harness-error: value is not JSON: {}", &c[2]));
        let got = ok_value(w);
        let v = at(&got, &c[1]).unwrap_or_else(|| panic!("no {:?} in {got}", &c[1]));
        assert_ne!(v, &unwanted, "result {:?}", &c[1]);
        return;
    }
    if let Some(c) = step!(t, r#"^the result "([^"]*)" is (.+)$"#) {
        let want: Value = serde_json::from_str(&c[2])
            .unwrap_or_else(|_| panic!("harness-error: expected value is not JSON: {}", &c[2]));
        let got = ok_value(w);
        assert_eq!(at(&got, &c[1]), Some(&want), "result {:?} in {got}", &c[1]);
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the result lists checkpoint "([^"]+)" with status "(\w+)"$"#
    ) {
        let got = ok_value(w);
        let list = got
            .get("checkpoints")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("no checkpoints array in {got}"));
        let entry = list
            .iter()
            .find(|e| e.get("checkpoint").and_then(Value::as_str) == Some(&c[1]))
            .unwrap_or_else(|| panic!("checkpoint {} not listed in {got}", &c[1]));
        assert_eq!(
            entry.get("status").and_then(Value::as_str),
            Some(&c[2]),
            "status of {}",
            &c[1]
        );
        return;
    }
    if let Some(c) = step!(t, r#"^the result lists (\d+) checkpoints?$"#) {
        let got = ok_value(w);
        let n = got
            .get("checkpoints")
            .and_then(Value::as_array)
            .map_or(usize::MAX, Vec::len);
        assert_eq!(n.to_string(), &c[1], "checkpoints in {got}");
        return;
    }
    if step!(t, r"^no checkpoint or temporary file exists in the store$").is_some() {
        let entries = w.store_entries();
        assert!(
            entries.is_empty(),
            "the store has entries: {:?}",
            entries.iter().map(|e| &e.0).collect::<Vec<_>>()
        );
        let recovery = w.ph.state_home.join("venomx/recovery");
        let mut found = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&recovery) {
            for e in rd.flatten() {
                if let Ok(inner) = std::fs::read_dir(e.path()) {
                    found.extend(inner.flatten().map(|x| x.path()));
                }
            }
        }
        assert!(found.is_empty(), "recovery files written: {found:?}");
        return;
    }
    if let Some(c) = step!(t, r#"^the store still holds the file of "(\w+)"$"#) {
        let m = w.meta_of(&c[1]);
        assert!(m.is_file() || m.file_type().is_symlink());
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the store file of "(\w+)" still has mode (0[0-7]{3})$"#
    ) {
        let m = w.meta_of(&c[1]);
        let want = u32::from_str_radix(&c[2], 8).unwrap();
        assert_eq!(mode_of(&m), want, "mode was changed");
        return;
    }
    if step!(
        t,
        r"^every store directory has mode 0700 and every store file mode 0600, owned by the daemon UID$"
    )
    .is_some()
    {
        let uid = nix::unistd::geteuid().as_raw();
        let entries = w.store_entries();
        assert!(!entries.is_empty(), "the store is empty");
        let dm = std::fs::symlink_metadata(&w.ph.store).expect("store dir");
        assert_eq!(mode_of(&dm), 0o700, "store directory mode");
        for (name, m) in entries {
            assert!(m.is_file(), "{name} is not a regular file");
            assert_eq!(mode_of(&m), 0o600, "{name} mode");
            assert_eq!(m.uid(), uid, "{name} owner");
            assert_eq!(m.nlink(), 1, "{name} link count");
        }
        return;
    }
    if let Some(c) = step!(
        t,
        r"^the daemon exited (successfully|with a failure status) within (\d+) ms$"
    ) {
        let (status, took) = w
            .stopped
            .expect("harness-error: the daemon was not stopped");
        let limit = Duration::from_millis(c[2].parse().unwrap());
        match &c[1] {
            "successfully" => assert!(status.success(), "exit status {status}"),
            _ => assert!(!status.success(), "exit status {status}"),
        }
        assert!(took <= limit, "shutdown took {took:?}, more than {limit:?}");
        return;
    }
    if step!(t, r"^the second daemon exits with a failure status$").is_some() {
        let (status, _) = w.second.expect("harness-error: no second daemon");
        let status = status.expect("the second daemon kept running on a locked socket");
        assert!(!status.success(), "second daemon exit status {status}");
        return;
    }
    if step!(t, r"^the first daemon is still serving$").is_some() {
        assert!(w.daemon_alive(), "the first daemon died");
        let token = w.owner_token();
        let r = w.wire(Some(&token), "session.list", Map::new());
        assert!(r.result.is_ok(), "session.list failed: {:?}", r.result);
        return;
    }
    if step!(t, r"^no daemon is listening on the socket$").is_some() {
        // Nothing may answer now or appear shortly after; a daemon on its way out
        // gets a moment to close its socket.
        let start = std::time::Instant::now();
        while std::os::unix::net::UnixStream::connect(&w.ph.socket).is_ok() {
            assert!(
                start.elapsed() < scaled(2_000),
                "something answers on the socket"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(scaled(300));
        assert!(
            std::os::unix::net::UnixStream::connect(&w.ph.socket).is_err(),
            "something answers on the socket"
        );
        return;
    }
    if step!(t, r"^the unrelated process is still alive$").is_some() {
        let child = w
            .unrelated
            .as_mut()
            .expect("harness-error: no unrelated process");
        assert!(
            matches!(child.try_wait(), Ok(None)),
            "the unrelated process was killed"
        );
        return;
    }
    if let Some(c) = step!(t, r#"^no reply, error or written file contains "([^"]+)"$"#) {
        let needle = c[1].as_bytes().to_vec();
        assert!(
            !contains(&w.transcript, &needle),
            "a reply or error contains {:?}",
            &c[1]
        );
        for f in w.all_files() {
            let bytes = std::fs::read(&f).unwrap_or_default();
            assert!(
                !contains(&bytes, &needle),
                "{} contains {:?}",
                f.display(),
                &c[1]
            );
        }
        return;
    }
    if let Some(c) = step!(t, r"^the process (\d+) is gone$") {
        let pid: i32 = c[1].parse().unwrap();
        let limit = scaled(3_000);
        let start = std::time::Instant::now();
        while super::world::process_alive(pid) {
            assert!(
                start.elapsed() < limit,
                "process {pid} survived the shutdown"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        return;
    }
    if let Some(c) = step!(t, r"^the process (\d+) is still alive$") {
        let pid: i32 = c[1].parse().unwrap();
        assert!(super::world::process_alive(pid), "process {pid} was killed");
        return;
    }
    if let Some(c) = step!(t, r"^the daemon has exactly (\d+) child process(?:es)?$") {
        let pid = w
            .daemon
            .as_ref()
            .expect("harness-error: no daemon is running")
            .id();
        let kids = super::world::children_of(pid);
        assert_eq!(
            kids.len().to_string(),
            &c[1],
            "the daemon's children: {kids:?}"
        );
        return;
    }
    if let Some(c) = step!(t, r"^the daemon's peak memory is remembered as \$(\w+)$") {
        let kib = peak_kib(w);
        w.vars.insert(c[1].to_string(), kib.to_string());
        return;
    }
    if let Some(c) = step!(
        t,
        r"^the daemon's peak memory grew by less than (\d+) MiB since (\d+) KiB$"
    ) {
        let before: u64 = c[2].parse().unwrap();
        let limit: u64 = c[1].parse::<u64>().unwrap() * 1024;
        let now = peak_kib(w);
        assert!(
            now.saturating_sub(before) < limit,
            "peak memory grew from {before} KiB to {now} KiB"
        );
        return;
    }
    if step!(t, r"^the daemon has no child processes$").is_some() {
        let pid = w
            .daemon
            .as_ref()
            .expect("harness-error: no daemon is running")
            .id();
        let kids = super::world::children_of(pid);
        assert!(kids.is_empty(), "the daemon has child processes {kids:?}");
        return;
    }
    if let Some(c) = step!(t, r"^the store holds exactly (\d+) checkpoint files?$") {
        let n = w
            .store_entries()
            .iter()
            .filter(|(name, _)| name.starts_with('c') && name.ends_with(".json"))
            .count();
        assert_eq!(n.to_string(), &c[1], "checkpoint files in the store");
        return;
    }
    if let Some(c) = step!(t, r#"^no store file contains "([^"]+)"$"#) {
        let needle = c[1].trim().as_bytes().to_vec();
        let recovery = w.ph.state_home.join("venomx");
        let mut files = Vec::new();
        walk_files(&recovery, &mut files);
        for f in files {
            let bytes = std::fs::read(&f).unwrap_or_default();
            assert!(
                !contains(&bytes, &needle),
                "{} contains {:?}",
                f.display(),
                &c[1]
            );
        }
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the newest checkpoint in the store is valid with (shutdown "(\w+)"|format (\d))$"#
    ) {
        let (format, payload) = newest_checkpoint(w);
        if let Some(sd) = c.get(2) {
            assert_eq!(payload["shutdown"], sd.as_str(), "shutdown marker");
            if sd.as_str() == "clean" {
                for p in payload["panes"].as_array().unwrap() {
                    assert_ne!(
                        p["state"], "running",
                        "a clean checkpoint has a running pane"
                    );
                }
            }
        }
        if let Some(f) = c.get(3) {
            assert_eq!(format.to_string(), f.as_str(), "format written");
        }
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^the newest checkpoint in the store keeps the planted text timestamps of "(\w+)"$"#
    ) {
        let (_, payload) = newest_checkpoint(w);
        let text = &payload["panes"][0]["text"];
        assert_eq!(
            text["availability"], "plain",
            "text of the rewritten archive: {text}"
        );
        for k in ["saved_at", "expires_at"] {
            let planted = w
                .vars
                .get(&format!("{}_{k}", &c[1]))
                .unwrap_or_else(|| panic!("harness-error: {} has no planted text", &c[1]));
            assert_eq!(text[k].as_str(), Some(planted.as_str()), "{k} was changed");
        }
        return;
    }
    if let Some(c) = step!(
        t,
        r"^the newest checkpoint in the store has a split with ratio (\d+)$"
    ) {
        let (_, payload) = newest_checkpoint(w);
        let want: u64 = c[1].parse().unwrap();
        let found = payload["windows"].as_array().unwrap().iter().any(|win| {
            win["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n["ratio"].as_u64() == Some(want))
        });
        assert!(found, "no split with ratio {want} in {payload}");
        return;
    }
    if let Some(c) = step!(t, r#"^the result field of the error "([^"]*)" is (.+)$"#) {
        let want: Value = serde_json::from_str(&c[2])
            .unwrap_or_else(|_| panic!("harness-error: expected value is not JSON: {}", &c[2]));
        match &w.last().result {
            Ok(v) => panic!("expected an error, got {v}"),
            Err(e) => assert_eq!(at(e, &c[1]), Some(&want), "error {e}"),
        }
        return;
    }
    if let Some(c) = step!(
        t,
        r#"^nothing exists at "([^"]+)" under the daemon's working directory$"#
    ) {
        let p = w.dir.path().join(&c[1]);
        assert!(
            std::fs::symlink_metadata(&p).is_err(),
            "{} was created",
            p.display()
        );
        return;
    }
    if let Some(c) = step!(t, r#"^some doctor check has status "(\w+)" or "(\w+)"$"#) {
        let got = ok_value(w);
        let checks = got
            .get("checks")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("no checks array in {got}"));
        assert!(
            checks
                .iter()
                .any(|k| k["status"] == c[1] || k["status"] == c[2]),
            "no doctor check is {} or {}: {got}",
            &c[1],
            &c[2]
        );
        return;
    }
    if let Some(c) = step!(t, r#"^no doctor check claims "([^"]+)"$"#) {
        let got = ok_value(w);
        let text = got.to_string().to_lowercase();
        assert!(
            !text.contains(&c[1].to_lowercase()),
            "doctor claims {:?}: {got}",
            &c[1]
        );
        return;
    }
    if let Some(c) = step!(t, r#"^no reply or error contains "([^"]+)"$"#) {
        assert!(
            !contains(&w.transcript, c[1].as_bytes()),
            "a reply or error contains {:?}",
            &c[1]
        );
        return;
    }
    if let Some(c) = step!(t, r#"^the transcript contains "([^"]+)"$"#) {
        assert!(
            contains(&w.transcript, c[1].as_bytes()),
            "no reply contains {:?}",
            &c[1]
        );
        return;
    }
    if super::steps_streams::dispatch(w, t) {
        return;
    }
    panic!("harness-error: undefined step: {raw}");
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The daemon's peak resident set (VmHWM), in KiB.
fn peak_kib(w: &Inner) -> u64 {
    let pid = w
        .daemon
        .as_ref()
        .expect("harness-error: no daemon is running")
        .id();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("harness-error: /proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("harness-error: no VmHWM")
}

/// RFC §3's publication, as the injector traced it: the temporary file is written
/// and fsynced, renamed to `<checkpoint>.json`, then the store directory is fsynced,
/// every call really done (`action` "pass") and successful.
fn check_publication(calls: &[Value], checkpoint: &str) {
    let done = |c: &Value| c["action"] == "pass" && c["errno"] == 0;
    let final_name = format!("/{checkpoint}.json");
    let (ri, rename) = calls
        .iter()
        .enumerate()
        .find(|(_, c)| {
            c["op"] == "rename"
                && c["path2"]
                    .as_str()
                    .is_some_and(|p| p.ends_with(&final_name))
        })
        .unwrap_or_else(|| panic!("no rename to {checkpoint}.json in the trace"));
    assert!(done(rename), "the rename was not done: {rename}");
    let tmp = rename["path"].as_str().unwrap_or("");
    let dest = rename["path2"].as_str().unwrap_or("");
    let dir = dest.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let before = &calls[..ri];
    let last_write = before
        .iter()
        .rposition(|c| c["op"] == "write" && c["path"] == tmp)
        .unwrap_or_else(|| panic!("no write of {tmp} before the rename"));
    let synced = before[last_write..]
        .iter()
        .find(|c| c["op"] == "fsync" && c["path"] == tmp)
        .unwrap_or_else(|| panic!("the temporary file was not fsynced after its last write"));
    assert!(
        done(synced),
        "the temporary file's fsync was not done: {synced}"
    );
    let dir_sync = calls[ri..]
        .iter()
        .find(|c| c["op"] == "fsync" && c["path"] == dir)
        .unwrap_or_else(|| panic!("the store directory was not fsynced after the rename"));
    assert!(
        done(dir_sync),
        "the store directory's fsync was not done: {dir_sync}"
    );
}

fn walk_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.is_dir() => walk_files(&p, out),
                Ok(m) if m.is_file() => out.push(p),
                _ => {}
            }
        }
    }
}

/// The highest-generation file of the store, validated by the kit's strict reader:
/// (format, decoded payload).
fn newest_checkpoint(w: &Inner) -> (u64, Value) {
    let mut best: Option<(u64, u64, Value)> = None;
    for (name, m) in w.store_entries() {
        if !(name.starts_with('c') && name.ends_with(".json")) {
            continue;
        }
        assert!(m.is_file(), "{name} is not a regular file");
        let bytes = std::fs::read(w.ph.store.join(&name)).expect("read checkpoint");
        let ctx = vx_format::ReadContext {
            file_name: Some(&name),
            socket: None,
            uid: Some(u64::from(nix::unistd::geteuid().as_raw())),
            max_bytes: vx_format::limits::DEFAULT_MAX_CHECKPOINT_BYTES,
        };
        if let Err(e) = vx_format::read(&bytes, &ctx) {
            panic!(
                "{name} written by the implementation is invalid: {}",
                e.reason()
            );
        }
        let env: Value = serde_json::from_slice(&bytes).expect("envelope");
        let payload: Value =
            serde_json::from_str(env["payload"].as_str().expect("payload")).expect("payload");
        let gen = payload["generation"].as_u64().expect("generation");
        let format = env["format"].as_u64().expect("format");
        if best.as_ref().is_none_or(|b| gen > b.0) {
            best = Some((gen, format, payload));
        }
    }
    let (_, format, payload) = best.expect("the store holds no checkpoint file");
    (format, payload)
}

fn ok_value(w: &Inner) -> Value {
    match &w.last().result {
        Ok(v) => v.clone(),
        Err(e) => panic!("the call failed: {e}"),
    }
}

fn parse_params(text: Option<&str>) -> Map<String, Value> {
    match text {
        None => Map::new(),
        Some(t) => match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => m,
            _ => panic!("harness-error: params are not a JSON object: {t}"),
        },
    }
}

fn create_pane(w: &mut Inner, name: &str, argv: Vec<String>) {
    let token = w.owner_token();
    let call = |w: &mut Inner, verb: &str, params: Value| -> Value {
        let Value::Object(p) = params else {
            unreachable!()
        };
        match w.wire(Some(&token), verb, p).result {
            Ok(v) => v,
            Err(e) => panic!("{verb} failed: {e}"),
        }
    };
    let s = call(w, "session.create", serde_json::json!({"name": name}));
    let session = s["session"].as_str().expect("session id").to_string();
    let win = call(
        w,
        "window.create",
        serde_json::json!({"session": session, "name": "main"}),
    );
    let window = win["window"].as_str().expect("window id").to_string();
    let p = call(
        w,
        "pane.create",
        serde_json::json!({"window": window, "argv": argv}),
    );
    let pane = p["pane"].as_str().expect("pane id").to_string();
    if let Some(pid) = p["pid"].as_i64() {
        w.vars.insert("pid".into(), pid.to_string());
    }
    w.vars.insert("session".into(), session);
    w.vars.insert("window".into(), window);
    w.vars.insert("pane".into(), pane);
}

/// The async step registered with cucumber for every keyword: moves the work onto a
/// blocking thread and bounds it by the scenario deadline.
pub fn run_step<'a>(
    world: &'a mut World,
    ctx: cucumber::step::Context,
) -> futures::future::LocalBoxFuture<'a, ()> {
    Box::pin(async move {
        let inner = world.inner.clone();
        let text = ctx.step.value.clone();
        let doc = ctx.step.docstring.clone();
        let limit = scaled(60_000);
        let handle = tokio::task::spawn_blocking(move || {
            let mut g = inner.lock().unwrap_or_else(|p| p.into_inner());
            dispatch(&mut g, &text, doc.as_deref().map(str::trim_start));
        });
        match tokio::time::timeout(limit, handle).await {
            Err(_) => panic!("timeout: step did not finish in {limit:?}"),
            Ok(Ok(())) => {}
            Ok(Err(e)) => match e.try_into_panic() {
                Ok(p) => std::panic::resume_unwind(p),
                Err(e) => panic!("harness-error: step task: {e}"),
            },
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_finds_only_real_occurrences() {
        assert!(contains(b"abcCANARYdef", b"CANARY"));
        assert!(!contains(b"abcCANARdef", b"CANARY"));
        assert!(!contains(b"abc", b""));
    }

    #[test]
    fn params_must_be_objects() {
        assert!(parse_params(Some("{\"a\":1}")).contains_key("a"));
        assert!(parse_params(None).is_empty());
        assert!(std::panic::catch_unwind(|| parse_params(Some("[1]"))).is_err());
    }
}
