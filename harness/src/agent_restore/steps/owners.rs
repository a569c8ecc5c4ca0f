//! Plugin changes restore must notice (an integration removed, disabled, renamed, no
//! longer restorable, declared by a rival plugin that sorts before or after its
//! owner, or moved to another plugin), and the observation that a refused restore
//! created nothing at all: not "nothing is left", but no `session.created`,
//! `window.created` or `pane.created` event before a barrier the suite creates
//! itself afterwards (ADR-0068 §6: they "fail before creating that session").

use crate::agent_restore::live::Live;
use crate::agent_restore::World;
use crate::verdict::OrHarness;
use cucumber::then;
use serde_json::{json, Value};

/// Applies `change` to integration `id` of the plugin in directory `dir`, then
/// (with `reload`) reloads the daemon's plugins.
pub(super) fn apply_change(l: &mut Live, id: &str, dir: &str, change: &str, reload: bool) {
    let root = l.plugins_dir().join(dir);
    let file = root.join(format!("integrations/{id}.toml"));
    let text = std::fs::read_to_string(&file).or_harness("read the template");
    let quoted = |rest: &str| rest.trim_matches('"').to_string();
    match change {
        "removed" => std::fs::remove_file(&file).or_harness("remove the template"),
        "disabled" => std::fs::write(root.join("disabled"), "").or_harness("disable"),
        "renamed" => {
            // Renamed: the file and the id it declares, so a reader that resolves by
            // the declared id finds no "stub" either (§6 resolves "by integration_id").
            let out: Vec<String> = text
                .lines()
                .map(|line| {
                    let t = line.trim_start();
                    if t.starts_with("id") && !t.starts_with("id_") && t.contains('=') {
                        "id = \"renamed\"".to_string()
                    } else {
                        line.to_string()
                    }
                })
                .collect();
            std::fs::write(
                root.join("integrations/renamed.toml"),
                out.join("\n") + "\n",
            )
            .or_harness("write the renamed template");
            std::fs::remove_file(&file).or_harness("remove the old template")
        }
        "no longer restorable" => {
            let cut = text
                .find("[session_identity]")
                .or_harness("a session_identity");
            std::fs::write(&file, &text[..cut]).or_harness("write the template")
        }
        other => {
            if let Some(rival) = other.strip_prefix("also declared by the plugin ") {
                // A rival that sorts before or after the owner (by directory and id).
                let rival = quoted(rival);
                l.write_plugin_files(&rival, &rival, id, &text);
            } else if let Some(owner) = other.strip_prefix("now owned by the plugin id ") {
                std::fs::write(
                    root.join("plugin.toml"),
                    format!("id = {:?}\n", quoted(owner)),
                )
                .or_harness("write plugin.toml");
            } else if let Some(to) = other.strip_prefix("moved to the plugin ") {
                // The old owner disabled, the new one enabled: one enabled owner,
                // not the archived one.
                std::fs::write(root.join("disabled"), "").or_harness("disable");
                let to = quoted(to);
                l.write_plugin_files(&to, &to, id, &text);
            } else {
                crate::harness_error!("no such change: {other}");
            }
        }
    }
    if reload {
        l.ok("config.reload", json!({}));
    }
}

const CREATED: [&str; 3] = ["session.created", "window.created", "pane.created"];

/// The barrier: a session the suite creates after the step under test, whose
/// `session.created` the subscriber must see (positive); only then are the events
/// before it read for anything created (only panes, when the step says "no pane":
/// a program spawned and killed again leaves no dump, but its `pane.created`). The
/// barrier session is removed again.
#[then(
    regex = r"^the subscriber saw no (session, window or pane|pane) created before a barrier session$"
)]
async fn nothing_created(w: &mut World, c: &[String]) {
    w.run(c, None, |s, c| {
        let kinds: &[&str] = if &c[1] == "pane" {
            &CREATED[2..]
        } else {
            &CREATED
        };
        let l = s.live();
        let sub = l.subscriber.take().or_harness("no subscriber is open");
        let name = "vxcert-barrier";
        let created = l.ok("session.create", json!({"name": name}));
        let barrier = created["session"].clone();
        let is_barrier =
            |e: &Value| e["type"] == "session.created" && e["data"]["session"] == barrier;
        let events = sub.wait(
            "session.created of the barrier session",
            10_000,
            |r| r.events.iter().any(is_barrier),
            |r| r.events.clone(),
        );
        let before: Vec<&Value> = events.iter().take_while(|e| !is_barrier(e)).collect();
        if before.len() == events.len() {
            crate::harness_error!("the subscriber never saw the barrier session created");
        }
        l.ok("session.kill", json!({"session": barrier}));
        let made: Vec<String> = before
            .iter()
            .filter(|e| kinds.contains(&e["type"].as_str().unwrap_or("")))
            .map(|e| format!("{} {}", e["type"].as_str().unwrap_or("?"), e["data"]))
            .collect();
        assert!(
            made.is_empty(),
            "the refused restore created, then removed: expected nothing created; observed {}",
            made.join("; ")
        );
    })
    .await;
}
