//! Steps of the satellite row (`03_launch`, `@optional-satellite`): a window whose
//! panes an implementation spawns on a satellite, not as local Terminals, made by
//! the profile's `satellite_window` command; a spawn there carrying the local
//! agent-session record must be refused (ADR-0068 §4, docs/spec/agent-session.md).
//! Each refused spawn first runs its valid twin, the same spawn in a local window.

use crate::agent_restore::checks::templates;
use crate::agent_restore::live::record_text;
use crate::agent_restore::World;
use crate::verdict::OrHarness;
use cucumber::{given, when};
use serde_json::json;

#[given(regex = r"^a window on a satellite, from the profile's satellite_window$")]
async fn satellite_window(w: &mut World) {
    w.run(&[], None, |s, _| {
        let l = s.live();
        let t = templates().satellite_window;
        if t.is_empty() {
            crate::harness_error!("the profile's [agent_restore] table needs satellite_window");
        }
        let unused = l.file("satellite.unused");
        let cmd = l.client_command(&t, &unused, None);
        let reply = l.run_client(cmd);
        let v = reply
            .result
            .unwrap_or_else(|e| crate::harness_error!("satellite_window failed: {e}"));
        let window = v["window"]
            .as_str()
            .or_harness("satellite_window must print {\"window\": ID}")
            .to_string();
        l.s.vars.insert("window".into(), window);
    })
    .await;
}

/// A refusal's valid twin runs in a local window (the same spawn, differing only in
/// where its pane lives); `$window` stays the satellite's.
fn local_window(l: &mut crate::agent_restore::live::Live) -> String {
    l.new_window()
}

#[when(
    regex = r#"^pane.create starts a sleeper in the satellite window with the record of "([^"]*)" "([^"]*)" "([^"]*)"$"#
)]
async fn create_on_satellite(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let window = l.subst("$window");
        let argv = l.sleeper();
        let record = record_text(&c[1], &c[2], &c[3]);
        let twin = local_window(l);
        l.control_call(
            "the same pane.create with the same record in a local window",
            "pane.create",
            json!({"window": twin, "argv": argv, "agent_session": record}),
        );
        l.s.vars.insert("window".into(), window.clone());
        l.call(
            "pane.create",
            json!({"window": window, "argv": argv, "agent_session": record}),
        );
    })
    .await;
}

#[when(
    regex = r#"^agent.launch starts "([a-z0-9-]+)" in the satellite window with native id "([^"]*)"$"#
)]
async fn launch_on_satellite(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let l = s.live();
        let window = l.subst("$window");
        let twin = local_window(l);
        l.control_call(
            "the same agent.launch in a local window",
            "agent.launch",
            json!({"window": twin, "integration": c[1], "native_id": c[2]}),
        );
        l.s.vars.insert("window".into(), window.clone());
        l.call(
            "agent.launch",
            json!({"window": window, "integration": c[1], "native_id": c[2]}),
        );
    })
    .await;
}
