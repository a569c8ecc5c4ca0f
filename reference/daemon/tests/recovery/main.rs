//! Recovery against real daemons, one module per flow: `capture` (checkpoints, list,
//! inspect, forget), `restore`, `relaunch`, `store_faults` (the injector, unsafe
//! stores) and `text`. The helpers below are shared by them.

mod capture;
#[path = "../common/mod.rs"]
mod common;
mod relaunch;
mod restore;
mod store_faults;
mod text;

use common::*;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::time::Duration;

const ENABLED: &str = ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000 } }";
const PLAIN: &str =
    ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000, .terminal_text = .plain } }";

/// The store directory of the daemon's socket (XDG_STATE_HOME is `<dir>/state`).
fn store_dir(d: &Daemon) -> PathBuf {
    let loc = vx_store::StoreLocation::resolve(
        Some(d.dir.path().join("state").as_os_str()),
        None,
        &d.socket,
    )
    .expect("store location");
    loc.dir()
}

fn checkpoint_files(d: &Daemon) -> Vec<PathBuf> {
    match std::fs::read_dir(store_dir(d)) {
        Err(_) => Vec::new(),
        Ok(rd) => {
            let mut v: Vec<PathBuf> = rd
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .collect();
            v.sort();
            v
        }
    }
}

/// Kills the daemon with SIGKILL (no cleanup at all) and starts a new one on the same
/// socket and directories.
fn crash_and_restart(d: &mut Daemon) {
    let mut child = d.child.take().expect("running");
    signal(child.id(), "KILL");
    let _ = child.wait();
    d.child = Some(d.spawn_serve(&[]));
    d.wait_ready();
}

fn err_code(v: &Value) -> &str {
    v["error"]["code"].as_str().unwrap_or("")
}

/// Checkpoints a tiled pane and a float in an enabled daemon, crashes it and restores
/// into a fresh one. Returns (tiled archive, float archive, window).
fn restored_archives(d: &mut Daemon) -> (String, String, String) {
    let s = d.ok(&["session", "create", "--name", "s"])["session"]
        .as_str()
        .unwrap()
        .to_string();
    let w = d.ok(&["window", "create", "--session", &s, "--name", "w"])["window"]
        .as_str()
        .unwrap()
        .to_string();
    d.ok(&[
        "pane",
        "create",
        "--window",
        &w,
        "--argv",
        r#"["/bin/sh","-c","exit 0"]"#,
    ]);
    d.ok(&[
        "pane",
        "float",
        "--window",
        &w,
        "--width",
        "20",
        "--argv",
        r#"["/bin/sh","-c","exit 0"]"#,
    ]);
    let id = d.ok(&["recovery", "checkpoint"])["checkpoint"]
        .as_str()
        .unwrap()
        .to_string();
    crash_and_restart(d);
    let r = d.ok(&["recovery", "restore", "--checkpoint", &id]);
    let cur = |i: usize| r["panes"][i]["current"].as_str().unwrap().to_string();
    (
        cur(0),
        cur(1),
        r["windows"][0]["current"].as_str().unwrap().to_string(),
    )
}

/// Writes `cp` (socket and uid filled in for this daemon's store) as a 0600 file.
fn plant(d: &Daemon, mut cp: vx_format::Checkpoint, format: vx_format::Format) -> String {
    let loc = vx_store::StoreLocation::resolve(
        Some(d.dir.path().join("state").as_os_str()),
        None,
        &d.socket,
    )
    .unwrap();
    cp.socket = loc.socket.clone();
    cp.uid = vx_store::current_uid();
    let bytes = vx_format::write(&cp, format).expect("fixture encodes");
    let path = store_dir(d).join(cp.file_name());
    std::fs::write(&path, bytes).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    cp.checkpoint
}

fn fixture(panes: Vec<vx_format::Pane>, nodes: Vec<vx_format::Node>) -> vx_format::Checkpoint {
    vx_format::Checkpoint {
        checkpoint: "c0123abcd-89ab-4cde-8fab-0123456789ab".into(),
        generation: 7,
        socket: String::new(),
        uid: 0,
        captured_at: vx_store::clock::now(),
        shutdown: vx_format::Shutdown::Open,
        sessions: vec![vx_format::Session {
            id: 4,
            name: "old".into(),
        }],
        windows: vec![vx_format::Window {
            id: 9,
            session: 4,
            name: "win".into(),
            revision: 12,
            nodes,
        }],
        panes,
    }
}

fn record(id: u64, float_z: Option<u64>, tags: &[(&str, &str)]) -> vx_format::Pane {
    vx_format::Pane {
        id,
        window: 9,
        session: 4,
        cols: 40,
        rows: 10,
        state: vx_format::PaneState::Running,
        previous_state: None,
        float: float_z.map(|z| vx_format::FloatSpec {
            preset: Some("nobody.unknown".into()),
            z,
            ..Default::default()
        }),
        tags: tags
            .iter()
            .map(|(k, v)| vx_format::Tag {
                key: k.to_string(),
                value: v.to_string(),
            })
            .collect(),
        text: vx_format::Text::Omitted,
    }
}
