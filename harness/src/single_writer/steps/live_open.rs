//! Live steps of opening sessions: brokers starting and going down, viewers opening
//! keys (one, or many at once), BUSY and refusals, and the probes from outside:
//! agents per key by PID, the lock from the suite's flock, the session socket.

use cucumber::{given, then, when};
use nix::sys::signal::Signal;

use crate::drivers::broker::LockState;
use crate::drivers::{poll, scaled, wait_until};
use crate::single_writer::live::{stub_name, WAIT_MS};
use crate::single_writer::World;
use crate::verdict::OrHarness;

/// How long a count must stay as expected to count (agents that would violate the
/// invariant start within this after an open returns).
const STABLE_MS: u64 = 400;

#[given(regex = r"^a broker is running$")]
async fn broker_running(w: &mut World) {
    w.run(&[], None, |s, _| s.live().start_broker(0)).await;
}

#[when(regex = r"^a second broker shares the lock directory$")]
async fn second_broker(w: &mut World) {
    w.run(&[], None, |s, _| s.live().start_broker(1)).await;
}

#[when(regex = r"^a new broker starts on the same runtime directory$")]
async fn broker_restarts(w: &mut World) {
    w.run(&[], None, |s, _| s.live().start_broker(0)).await;
}

#[when(regex = r"^the broker goes down by (SIGTERM|SIGKILL|a reboot)$")]
async fn broker_down(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let at = *live.brokers.get(&0).or_harness("no broker");
        // The viewers of a broker that goes away are gone with it.
        live.viewers.clear();
        match &c[1] {
            "SIGTERM" => live.sb.stop(at, Signal::SIGTERM),
            "SIGKILL" => live.sb.stop(at, Signal::SIGKILL),
            _ => {
                live.sb.stop(at, Signal::SIGKILL);
                live.sb.kill_sessions();
            }
        }
    })
    .await;
}

#[given(regex = r#"^viewer (\w+) opens "([^"]+)"(?: with "([^"]*)")?( on the second broker)?$"#)]
#[when(regex = r#"^viewer (\w+) opens "([^"]+)"(?: with "([^"]*)")?( on the second broker)?$"#)]
async fn viewer_opens(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let query = c.get(3).map_or("", |q| q.as_str()).to_string();
        let role = usize::from(c.get(4).is_some());
        s.live().open(&c[1], &c[2], &query, role, 0);
    })
    .await;
}

#[when(regex = r#"^(\d+) viewers open "([^"]+)" at once$"#)]
async fn crowd_opens(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let n: usize = c[1].parse().or_harness("a count");
        let live = s.live();
        let socket = live.broker_socket(0);
        let route = live.t.ws_path.clone();
        let (engine, id) = c[2].split_once(':').or_harness("a key is engine:id");
        let path = format!(
            "{}?new=1",
            route.replace("{engine}", engine).replace("{id}", id)
        );
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(n));
        let threads: Vec<_> = (0..n)
            .map(|_| {
                let (socket, path, barrier) = (socket.clone(), path.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    let mut v = crate::drivers::broker_ws::Viewer::open(&socket, &path);
                    if let Ok(v) = &mut v {
                        v.pump(scaled(WAIT_MS), |v| {
                            v.close.is_some() || !v.frames("seq").is_empty()
                        });
                    }
                    v
                })
            })
            .collect();
        let mut crowd = Vec::new();
        for t in threads {
            crowd.push(
                t.join()
                    .unwrap_or_else(|_| crate::harness_error!("a viewer thread panicked")),
            );
        }
        live.crowd = crowd;
    })
    .await;
}

#[then(regex = r"^every one of the (\d+) viewers streams or was told to retry$")]
async fn crowd_streams(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let crowd = &s.live().crowd;
        assert_eq!(crowd.len(), c[1].parse::<usize>().or_harness("a count"));
        for (i, v) in crowd.iter().enumerate() {
            match v {
                Ok(v) => assert!(
                    v.close.is_none() && !v.frames("seq").is_empty()
                        || matches!(v.close, Some(4409)),
                    "viewer {i} neither streams nor was told to retry (close {:?})",
                    v.close
                ),
                Err(e) => panic!("viewer {i} was refused: {e}"),
            }
        }
    })
    .await;
}

#[given(regex = r#"^the suite holds the lock of "([^"]+)"$"#)]
async fn suite_holds_lock(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let file = live.lock_file(&c[1]);
        live.held = Some(live.sb.hold_lock(&file));
    })
    .await;
}

#[given(regex = r"^viewer (\w+) sees the agent ready$")]
#[when(regex = r"^viewer (\w+) sees the agent ready$")]
#[then(regex = r"^viewer (\w+) sees the agent ready$")]
async fn sees_ready(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        let ready = t.viewer.pump(scaled(WAIT_MS), |v| {
            crate::drivers::probe::contains(&v.output, b"vxstub agent ready")
        });
        assert!(
            ready,
            "viewer {} never saw the agent (close {:?})",
            &c[1], t.viewer.close
        );
    })
    .await;
}

#[then(regex = r"^viewer (\w+) is closed with code (\d+)$")]
async fn closed_with(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let code: u16 = c[2].parse().or_harness("a close code");
        let t = s.live().viewer(&c[1]);
        t.viewer.pump(scaled(WAIT_MS), |v| v.close.is_some());
        assert_eq!(t.viewer.close, Some(code), "close code of viewer {}", &c[1]);
    })
    .await;
}

#[when(regex = r#"^the suite notes the agent of "([^"]+)"$"#)]
async fn note_agent(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let p = stub_name(&c[1]);
        let pids = poll("the session's agent", scaled(WAIT_MS), || {
            let pids = live.sb.agents_of(&p);
            (!pids.is_empty()).then_some(pids)
        });
        assert_eq!(pids.len(), 1, "agents of {}: {pids:?}", &c[1]);
        live.noted.insert(c[1].to_string(), pids[0]);
    })
    .await;
}

#[then(regex = r#"^"([^"]+)" is served by (the noted|a new) agent$"#)]
async fn served_by(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let noted = *live.noted.get(&c[1]).or_harness("no agent was noted");
        if &c[2] == "the noted" {
            // "Still served by the same agent" is a negative observation (nothing
            // killed or relaunched it) after an event the broker reacts to in its
            // own time (a viewer leaving, a reconnect): barrier first.
            crate::evidence::settle(
                "\"the session is still served by the noted agent\"",
                scaled(STABLE_MS),
            );
        }
        let pids = live.sb.agents_of(&stub_name(&c[1]));
        if &c[2] == "the noted" {
            assert_eq!(pids, vec![noted], "the agent was relaunched or duplicated");
        } else {
            assert_eq!(pids.len(), 1, "agents: {pids:?}");
            assert_ne!(pids[0], noted, "the killed agent still serves");
        }
    })
    .await;
}

#[then(regex = r#"^"([^"]+)" has (no|exactly one) running agents?$"#)]
async fn agent_count(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want = usize::from(&c[2] == "exactly one");
        let live = s.live();
        let p = stub_name(&c[1]);
        poll("the session's agent count", scaled(WAIT_MS), || {
            (live.sb.agents_of(&p).len() == want).then_some(())
        });
        // The count was reached; it must also hold (no late second launch).
        crate::evidence::settle("\"the agent count holds\"", scaled(STABLE_MS));
        let pids = live.sb.agents_of(&p);
        assert_eq!(pids.len(), want, "agents of {}: {pids:?}", &c[1]);
    })
    .await;
}

#[then(regex = r"^no agent reported a second writer$")]
async fn no_violation(w: &mut World) {
    w.run(&[], None, |s, _| {
        crate::evidence::settle("\"no agent reported a second writer\"", scaled(STABLE_MS));
        let v = s.live().sb.violations();
        assert!(v.is_empty(), "second writers: {v:?}");
    })
    .await;
}

#[then(regex = r#"^the lock of "([^"]+)" is (held|free)$"#)]
async fn lock_is(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let want = if &c[2] == "held" {
            LockState::Held
        } else {
            LockState::Free
        };
        let live = s.live();
        let p = live.lock_file(&c[1]);
        // A lock frees when the last holder's descriptor closes, a moment after its
        // process exits: wait for it, bounded.
        let got = wait_until(scaled(WAIT_MS), || {
            let st = live.sb.lock_state(&p);
            (st == want || want == LockState::Held, st)
        });
        assert_eq!(got, want, "the lock of {}", &c[1]);
    })
    .await;
}

#[then(regex = r#"^the agent of "([^"]+)" started by (launch|resume)$"#)]
async fn started_by(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let p = stub_name(&c[1]);
        let mode = poll("the agent's start turn", scaled(WAIT_MS), || {
            let turns = live.sb.turns(&p);
            let pids = live.sb.agents_of(&p);
            turns
                .iter()
                .rev()
                .find(|t| t["turn"] == "start")
                .filter(|t| pids.iter().any(|p| t["pid"] == i64::from(*p)))
                .map(|t| t["mode"].as_str().unwrap_or_default().to_string())
        });
        assert_eq!(mode, c[2], "how the running agent of {} started", &c[1]);
    })
    .await;
}

#[given(regex = r#"^a broker is running under the fault plan "([^"]+)"$"#)]
async fn broker_running_under_plan(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        // `{alias_sidecar}`: the profile's alias sidecar of this broker.
        let sidecar = live
            .t
            .alias_sidecar
            .replace("{runtime_dir}", &live.sb.ph.runtime_dir.to_string_lossy());
        // `{lock_file}`, `{session_socket}`: the profile's templates of any session's
        // lock file and master socket under this broker, as globs.
        let runtime = live.sb.ph.runtime_dir.to_string_lossy().into_owned();
        let lock_dir = live.sb.lock_dir.to_string_lossy().into_owned();
        let any = |template: &str| {
            crate::single_writer::templates::session_path(
                template,
                "*:*",
                "*",
                &[("lock_dir", &lock_dir), ("runtime_dir", &runtime)],
            )
        };
        // `{engine_index}`: the self-minting engine's index the suite wrote.
        let plan = c[1]
            .replace("{alias_sidecar}", &sidecar)
            .replace("{engine_index}", &live.sb.engine_index().to_string_lossy())
            .replace("{lock_file}", &any(&live.t.lock_path))
            .replace("{session_socket}", &any(&live.t.session_socket));
        let template = live.t.broker.clone();
        let rules = vxfault::check_plan(&plan).or_harness("the fault plan");
        let counters = vxfault::Counters::create(&live.sb.root.join("fault-counters"), &plan)
            .or_harness("the fault plan's counter file");
        let injection = crate::drivers::fault::Injection::plan(&live.sb.ph, &template, &plan, None)
            .counted(&counters);
        live.fault_counts = Some((counters, rules));
        live.sb.next_fault = Some(injection);
        live.start_broker(0);
    })
    .await;
}

#[then(regex = r"^the broker is gone$")]
async fn broker_gone(w: &mut World) {
    w.run(&[], None, |s, _| {
        let live = s.live();
        let at = *live.brokers.get(&0).or_harness("no broker");
        // The viewers stay connected until the broker is gone: what a viewer typed
        // last must reach the broker, which a viewer gone with unread output does not
        // promise (the broker may fail its next write before it reads the input).
        let exit = wait_until(scaled(WAIT_MS), || {
            let exit = live.sb.instance(at).child.try_wait();
            (!matches!(exit, Ok(None)), exit)
        });
        match exit {
            Ok(Some(status)) => {
                live.viewers.clear();
                assert!(!status.success(), "the broker exited cleanly: {status}");
            }
            Ok(None) => {
                let seen = live.what_the_broker_left();
                live.viewers.clear();
                crate::timed_out!(
                    "the broker still runs {} ms after the step before ({seen})",
                    scaled(WAIT_MS).as_millis()
                )
            }
            Err(e) => crate::harness_error!("reading the broker's exit: {e}"),
        }
    })
    .await;
}
