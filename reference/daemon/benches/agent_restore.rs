//! `cargo bench -p vxref --bench agent_restore`: the agent-restore figures for
//! `docs/performance.md`, each a ratio against a floor measured in the same run.
//!
//! 1. `vxref workspace save --output` of 200 panes that each carry an agent-session
//!    record vs 200 panes without (target ≤ 1.1×): two daemons, same topology,
//!    alternated rounds, median wall time of the CLI process.
//! 2. `vxref workspace restore` of 20 native sessions (each `agent.launch` of the
//!    current template + the read-back) vs 20 fallback sessions (`pane.create` of the
//!    same program) (target ≤ 1.2×); sessions are killed between rounds (not timed).
//!
//! Environment: `VXBENCH_ROUNDS` (default 9).

use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;

use common::{Served, VXREF};

const SAVE_PANES: usize = 200;
const RESTORE_SESSIONS: usize = 20;

fn rounds() -> usize {
    std::env::var("VXBENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(9)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A plugin whose program is a fixed plugin-owned script that sleeps (the identity
/// arguments after it are ignored).
fn plugin(config_home: &Path) -> String {
    let root = config_home.join("venomx/plugins/bench");
    std::fs::create_dir_all(root.join("integrations")).unwrap();
    std::fs::write(root.join("plugin.toml"), "id = \"bench\"\n").unwrap();
    std::fs::write(root.join("agent.sh"), "exec sleep 3600\n").unwrap();
    std::fs::write(
        root.join("integrations/agent.toml"),
        r#"id = "agent"
[launch]
command = ["/bin/sh", "${PHUX_PLUGIN_ROOT}/agent.sh"]
[session_identity]
mode = "native-or-phux"
native_env = "PHUX_AGENT_SESSION_ID"
restore = "external-cli"
resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]
"#,
    )
    .unwrap();
    root.join("agent.sh").display().to_string()
}

fn cli(served: &Served, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(VXREF)
        .arg("--socket")
        .arg(&served.socket)
        .args(args)
        .env("VENOMX_TOKEN", served.owner_token())
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    took
}

fn populate(served: &Served, with_records: bool) {
    let mut c = served.connect();
    for i in 0..SAVE_PANES {
        let s = c.call("session.create", json!({"name": format!("s{i}")}));
        let w = c.call(
            "window.create",
            json!({"session": s["session"], "name": "w"}),
        );
        let mut params = json!({"window": w["window"], "argv": ["sleep", "3600"]});
        if with_records {
            params["agent_session"] = json!(format!(
                "{{\"plugin_id\":\"bench\",\"integration_id\":\"agent\",\"native_id\":\"native-{i:04}\"}}"
            ));
        }
        c.call("pane.create", params);
    }
}

fn bench_save() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let with = Served::start(VXREF, dirs[0].path(), None);
    let without = Served::start(VXREF, dirs[1].path(), None);
    populate(&with, true);
    populate(&without, false);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for r in 0..rounds() {
        let out_a = dirs[0].path().join("ws.json");
        let out_b = dirs[1].path().join("ws.json");
        let (fa, fb) = (out_a.to_str().unwrap(), out_b.to_str().unwrap());
        // Alternate which goes first, so load drift hits both.
        if r % 2 == 0 {
            a.push(cli(&with, &["workspace", "save", "--output", fa]));
            b.push(cli(&without, &["workspace", "save", "--output", fb]));
        } else {
            b.push(cli(&without, &["workspace", "save", "--output", fb]));
            a.push(cli(&with, &["workspace", "save", "--output", fa]));
        }
    }
    let (ma, mb) = (median(a), median(b));
    println!(
        "workspace save, {SAVE_PANES} panes: with records {:.1} ms, without {:.1} ms, ratio {:.3}x (target <= 1.1x)",
        ma.as_secs_f64() * 1e3,
        mb.as_secs_f64() * 1e3,
        ma.as_secs_f64() / mb.as_secs_f64()
    );
}

fn archive(native: bool) -> String {
    let sessions: Vec<Value> = (0..RESTORE_SESSIONS)
        .map(|i| {
            let mut pane = json!({});
            if native {
                pane["agent_session"] = json!({"plugin_id": "bench", "integration_id": "agent", "native_id": format!("n-{i}")});
            }
            json!({"name": format!("r{i}"), "windows": [{"name": "w", "panes": [pane]}]})
        })
        .collect();
    json!({"schema_version": if native { 2 } else { 1 }, "sessions": sessions}).to_string()
}

fn kill_all(served: &Served) {
    let mut c = served.connect();
    let list = c.call("session.list", json!({}));
    for s in list["sessions"].as_array().unwrap() {
        c.call("session.kill", json!({"session": s["session"]}));
    }
}

fn bench_restore() {
    let dir = tempfile::tempdir().unwrap();
    let script = plugin(&dir.path().join("config"));
    let served = Served::start(VXREF, dir.path(), None);
    let native = dir.path().join("native.json");
    let fallback = dir.path().join("fallback.json");
    std::fs::write(&native, archive(true)).unwrap();
    std::fs::write(&fallback, archive(false)).unwrap();
    let argv = json!(["/bin/sh", script]).to_string();
    let run = |file: &Path| {
        let took = cli(
            &served,
            &[
                "workspace",
                "restore",
                "--archive",
                file.to_str().unwrap(),
                "--fallback-argv",
                &argv,
            ],
        );
        kill_all(&served);
        took
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for r in 0..rounds() {
        if r % 2 == 0 {
            a.push(run(&native));
            b.push(run(&fallback));
        } else {
            b.push(run(&fallback));
            a.push(run(&native));
        }
    }
    let (ma, mb) = (median(a), median(b));
    println!(
        "workspace restore, {RESTORE_SESSIONS} sessions: native {:.1} ms, fallback {:.1} ms, ratio {:.3}x (target <= 1.2x)",
        ma.as_secs_f64() * 1e3,
        mb.as_secs_f64() * 1e3,
        ma.as_secs_f64() / mb.as_secs_f64()
    );
}

fn main() {
    bench_save();
    bench_restore();
}
