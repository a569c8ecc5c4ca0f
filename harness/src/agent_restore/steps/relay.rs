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
        let launch = crate::agent_restore::checks::templates().launch_verbs();
        let relay = MetaRelay::start(mode, &socket, &l.s.ph.socket, &spare, &launch)
            .or_harness("start the relay");
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

/// The plugin-change row's relay (`reload-before-launch`) acts before the restoring
/// client's first launch verb: the profile's `restore_launch_verbs`, or the kit's
/// `agent.launch`. ADR-0068 names no launch verb, so a client that crossed the relay
/// but sent none of those gives the row nothing to judge (does not apply); one that
/// never crossed the relay at all fails, as in the other relay rows; one whose
/// valid twin was refused too is inconclusive.
#[then(regex = r"^the relay reloaded the plugins before the restore's launch$")]
async fn relay_reloaded(w: &mut World) {
    w.run(&[], None, |s, _| {
        let l = s.live();
        let relay = l.relay.as_ref().or_harness("no relay runs");
        if relay.altered() > 0 {
            return;
        }
        // A restore refused before any launch proves nothing unless its valid twin
        // (the same restore before the change) was accepted.
        crate::evidence::require_accepted_control();
        let verbs = crate::agent_restore::checks::templates().launch_verbs();
        assert!(
            relay.requests() > 0,
            "the restore never crossed the relay: expected it to reach the daemon through it"
        );
        crate::does_not_apply!(
            "the restore sent none of the launch verbs {verbs:?} (the profile's \
             restore_launch_verbs, else the kit's; ADR-0068 names none): the relay had no \
             launch to reload the plugins before"
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
