//! The valid twins of the server rows' refusals (docs/harness.md "Controls"): each
//! refused launch, spawn or restore first runs the same call without its defect, in
//! the same setup, and records it as the scenario's control (kind
//! `agent-restore.server`); the refusal step then requires it accepted, else the row
//! is `inconclusive`. A twin that creates something a later step must not see (a
//! restored session) removes it again, so "no session exists" still holds.

use super::live::Live;
use super::restored;
use super::templates::templates;
pub use super::twin_control::record;
use crate::verdict::OrHarness;
use serde_json::json;

/// Runs a restore command as a refusal's twin, then removes what it restored.
/// Accepted: it succeeded with exit status 0 and `session.list` holds a session it
/// did not before (observed: the reply's member names are the kit's pin
/// `asr-pin-restore-reply`).
pub fn restore(l: &mut Live, what: String, cmd: std::process::Command) {
    let before = restored::sessions(l);
    let reply = l.run_client(cmd);
    let after = restored::sessions(l);
    let new: Vec<String> = restored::new_since(&before, &after)
        .into_iter()
        .map(|s| s.id.clone())
        .collect();
    record(what, &reply, true, |_| {
        reply.exit == Some(0) && !new.is_empty()
    });
    for id in new {
        l.ok("session.kill", json!({"session": id}));
    }
}

/// The restore of `archive` on a second daemon of this scenario, started with the
/// profile's `serve` (the current server) in a sandbox of its own, with the same
/// plugins and archive: the twin of a row whose defect is the older server itself.
pub fn restore_on_current_server(l: &mut Live, archive: &str) {
    let mut twin = Live::new();
    copy_tree(&l.plugins_dir(), &twin.plugins_dir());
    std::fs::copy(l.file(archive), twin.file(archive)).or_harness("copy the archive");
    twin.ensure_running();
    let file = twin.file(archive);
    let fb = json!([l.vxstub(), "argv-dump", twin.dump_path("fallback"), "--"]).to_string();
    let cmd = twin.client_command(&templates().workspace_restore, &file, Some(&fb));
    restore(
        &mut twin,
        format!("the same restore of {archive} on a second daemon of this scenario, the current server (the profile's serve)"),
        cmd,
    );
    twin.s.stop(nix::sys::signal::Signal::SIGTERM);
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).or_harness("mkdir the twin's plugins");
    for e in std::fs::read_dir(from)
        .or_harness("read the plugins")
        .flatten()
    {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).or_harness("copy a plugin file");
        }
    }
}

/// The integration file of `id` in the plugins directory, and its plugin directory.
pub fn integration_file(l: &Live, id: &str) -> std::path::PathBuf {
    let root = l.plugins_dir();
    std::fs::read_dir(&root)
        .or_harness("read the plugins")
        .flatten()
        .map(|e| e.path().join(format!("integrations/{id}.toml")))
        .find(|p| p.exists())
        .unwrap_or_else(|| crate::harness_error!("no plugin declares the integration {id}"))
}

/// Declares `<id>-twin` beside integration `id`: its template with the command
/// replaced by a program that starts (the suite's sleeper). Returns the twin's id.
pub fn integration_with_a_program(l: &mut Live, id: &str) -> String {
    let file = integration_file(l, id);
    let text = std::fs::read_to_string(&file).or_harness("read the template");
    let twin = format!("{id}-twin");
    let sleeper = serde_json::to_string(&l.sleeper()).or_harness("the sleeper argv");
    let out: Vec<String> = text
        .lines()
        .map(|line| {
            let t = line.trim_start();
            if t.starts_with("command") && t.contains('=') {
                format!("command = {sleeper}")
            } else if t.starts_with("id") && t.contains('=') {
                format!("id = {twin:?}")
            } else {
                line.to_string()
            }
        })
        .collect();
    let dir = file.parent().or_harness("the integrations directory");
    std::fs::write(dir.join(format!("{twin}.toml")), out.join("\n") + "\n")
        .or_harness("write the twin template");
    l.ok("config.reload", json!({}));
    twin
}
