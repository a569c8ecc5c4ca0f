//! Live steps of claims and lifecycle: the role frames each viewer gets, time
//! passing for the claim lease, the session list's states, and retire with the
//! agent's history kept.

use std::time::Duration;

use cucumber::{then, when};

use crate::drivers::{scaled, wait_until};
use crate::single_writer::live::{physical, stub_name, WAIT_MS};
use crate::single_writer::pins;
use crate::single_writer::World;
use crate::verdict::OrHarness;

// `, held by "L"` (the take-over rows): the label of the holder a read-only tab
// shows its user, whichever broker the holder came through.
#[when(regex = r#"^viewer (\w+) is told it is (owner|secondary)(?:, held by "([^"]+)")?$"#)]
#[then(regex = r#"^viewer (\w+) is told it is (owner|secondary)(?:, held by "([^"]+)")?$"#)]
async fn told_role(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        let want = c[2].to_string();
        let holder = Some(c[3].to_string()).filter(|h| !h.is_empty());
        // Without a label parameter the viewers are not named: a holder with a label.
        let named = !crate::single_writer::templates::templates()
            .label_param
            .is_empty();
        let told = t.viewer.pump(scaled(WAIT_MS), |v| {
            v.frames("role").last().is_some_and(|f| {
                f["role"] == *want
                    && holder.as_ref().is_none_or(|h| {
                        let label = &f["holder"]["label"];
                        if named {
                            label == h.as_str()
                        } else {
                            label.is_string()
                        }
                    })
            })
        });
        assert!(
            told,
            "viewer {} was told {:?}",
            &c[1],
            t.viewer.frames("role")
        );
    })
    .await;
}

#[then(regex = r"^viewer (\w+) gets no role frame$")]
async fn no_role(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let t = s.live().viewer(&c[1]);
        t.viewer.settle(Duration::from_millis(500));
        let roles = t.viewer.frames("role");
        assert!(roles.is_empty(), "a legacy viewer got {roles:?}");
    })
    .await;
}

#[when(regex = r"^(\d+) seconds pass$")]
async fn seconds_pass(w: &mut World, c: &[String]) {
    w.run(c, None, |_, c| {
        // The contract's own bound (the 5000 ms lease), not a suite deadline: unscaled.
        std::thread::sleep(Duration::from_secs(c[1].parse().or_harness("seconds")));
    })
    .await;
}

#[then(regex = r#"^the session list shows "([^"]+)" as (attached|detached)$"#)]
async fn listed_as(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let rows = wait_until(scaled(WAIT_MS), || {
            let rows = live.rows_of(&c[1]);
            (rows.len() == 1 && rows[0]["state"] == c[2], rows)
        });
        assert!(
            rows.len() == 1 && rows[0]["state"] == c[2],
            "the session list's rows for {}: {rows:?}",
            &c[1]
        );
        // The list's physical key is the pin's spelling, not a file's name: the
        // lock's and socket's own spellings are `lock_path` and `session_socket`.
        let got = rows[0]["physical_key"].as_str().unwrap_or("none");
        let own = pins::declared("physical_key").map(|_| physical(&c[1]));
        pins::judge(
            "physical_key",
            "the session list's physical key",
            &stub_name(&c[1]),
            own.as_deref(),
            got,
        );
        assert_eq!(rows[0]["alive"], true, "an {} session is alive", &c[2]);
    })
    .await;
}

#[then(regex = r#"^the session list shows "([^"]+)" as exited or no longer lists it$"#)]
async fn listed_exited(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let rows = wait_until(scaled(WAIT_MS), || {
            let rows = live.rows_of(&c[1]);
            (
                rows.is_empty() || rows.len() == 1 && rows[0]["state"] == "exited",
                rows,
            )
        });
        assert!(
            rows.is_empty() || rows.len() == 1 && rows[0]["state"] == "exited",
            "the session list's rows for {}: {rows:?}",
            &c[1]
        );
    })
    .await;
}

#[when(regex = r#"^the suite keeps a copy of the history of "([^"]+)"$"#)]
async fn copy_history(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let bytes = std::fs::read(live.sb.history_file(&stub_name(&c[1])))
            .or_harness("the agent's history");
        live.history_copy = Some(bytes);
    })
    .await;
}

#[then(regex = r#"^the history of "([^"]+)" is unchanged$"#)]
async fn history_unchanged(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let copy = live.history_copy.clone().or_harness("no copy was kept");
        let now = std::fs::read(live.sb.history_file(&stub_name(&c[1])))
            .unwrap_or_else(|_| panic!("the history was removed"));
        if now != copy {
            let at = now.iter().zip(&copy).take_while(|(a, b)| a == b).count();
            panic!(
                "the history changed: the kept copy had {} bytes, the file now has {}, \
                 first differing at byte {at}",
                copy.len(),
                now.len()
            );
        }
    })
    .await;
}

#[when(regex = r#"^"([^"]+)" is retired$"#)]
async fn retired(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let live = s.live();
        let (status, body) = live.retire(&c[1]);
        // The seed names the route, not its status: any success is one.
        assert!(
            (200..300).contains(&status),
            "retire answered {status}: {body}"
        );
        // Retire terminates the master; the seed does not say its reply waits for the
        // master's exit, which frees the lock. A step after it (an open) must not meet
        // a BUSY the broker is right to give while the old master exits, so the lock
        // going free is this step's witness (bounded; the rows on retire judge it),
        // unless the suite holds the lock itself.
        if live.held.is_some() {
            return;
        }
        let file = live.lock_file(&c[1]);
        let free = wait_until(scaled(WAIT_MS), || {
            let free = live.sb.lock_state(&file) == crate::drivers::broker::LockState::Free;
            (free, free)
        });
        if !free {
            crate::evidence::note(format!(
                "the lock of {} was still held {} ms after retire answered",
                &c[1],
                scaled(WAIT_MS).as_millis()
            ));
        }
    })
    .await;
}
