//! Steps that put the suite's wire relay (`drivers::meta_relay`) between the
//! workspace clients and the daemon, and what the clients must do when it lies:
//! restore's confirmation (ADR-0068 §6) must refuse, and remove, the pane it
//! launched.

use crate::agent_restore::World;
use crate::drivers::meta_relay::{MetaRelay, RelayMode};
use crate::drivers::{poll, scaled};
use crate::verdict::OrHarness;
use cucumber::{given, then};
use serde_json::json;

#[given(
    regex = r#"^the (?:workspace clients reach|launch client reaches) the daemon through the relay in mode "([a-z-]+)"$"#
)]
async fn through_relay(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let mode = RelayMode::parse(&c[1])
            .unwrap_or_else(|| crate::harness_error!("no relay mode {:?}", &c[1]));
        l.ensure_running();
        let socket = l.file("relay.sock");
        let spare = l.sleeper();
        let relay =
            MetaRelay::start(mode, &socket, &l.s.ph.socket, &spare).or_harness("start the relay");
        l.relay = Some(relay);
    })
    .await;
}

#[then(regex = r"^the relay altered at least one record on its way$")]
async fn relay_altered(w: &mut World) {
    w.run(&[], None, |s, _| {
        let l = s.live();
        let n = l.relay.as_ref().or_harness("no relay runs").altered();
        assert!(
            n > 0,
            "the client never read the record back through the relay"
        );
    })
    .await;
}

#[then(regex = r"^no pane exists$")]
async fn no_pane(w: &mut World) {
    w.run(&[], None, |s, _| {
        let panes = s.live().ok("pane.list", json!({}))["panes"].clone();
        assert_eq!(panes, json!([]), "panes left behind");
    })
    .await;
}

#[then(regex = r#"^the program of "([a-z0-9-]+)", if it started, is no longer running$"#)]
async fn program_gone(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let path = l.dump_path(&c[1]);
        // The pane may be killed before its program wrote the dump: give it a moment.
        std::thread::sleep(scaled(300));
        let Ok(bytes) = std::fs::read(&path) else {
            return;
        };
        let dump: serde_json::Value =
            serde_json::from_slice(&bytes).or_harness("the program's argv dump");
        let pid = dump["pid"].as_i64().or_harness("the dump's pid") as i32;
        poll(
            "the unconfirmed pane's program to end",
            scaled(5_000),
            || (!crate::drivers::process::alive(pid)).then_some(()),
        );
    })
    .await;
}
