//! ADR-0068 in the reference daemon, under the fault injector: `workspace save
//! --output` publishes atomically (a failed write, fsync or rename leaves the old
//! archive intact, nothing partial under the final name, exit 6 for an error), and a
//! plugin directory that cannot be read on reload makes its integration missing, so a
//! native restore fails before it creates anything.

mod common;

use common::{env_for, Daemon, BIN};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const RECORD: &str = r#"{"plugin_id":"team","integration_id":"stub","native_id":"n-1"}"#;

/// The CLI as the owner, under `plan` when given (its trace in `<dir>/cli-trace.jsonl`).
fn cli(d: &Daemon, args: &[&str], plan: Option<&str>) -> Output {
    let mut cmd = Command::new(BIN);
    env_for(&mut cmd, d.dir.path());
    cmd.env("VENOMX_TOKEN", "@owner");
    if let Some(plan) = plan {
        vxfault::check_plan(plan).expect("plan");
        let lib = vxfault::preload_path().expect("libvxfault.so");
        cmd.env("LD_PRELOAD", lib)
            .env("VXFAULT_PLAN", plan)
            .env("VXFAULT_TRACE", d.dir.path().join("cli-trace.jsonl"));
    }
    cmd.arg("--socket").arg(&d.socket).args(args);
    cmd.stdin(Stdio::null()).output().expect("run vxref")
}

fn pane_with_record(d: &Daemon, name: &str) {
    d.topology(name, "w")
        .pane_with(r#"["sleep","3600"]"#, &["--agent-session", RECORD]);
}

/// Plugin "team" with the resume-only integration "stub" (`sleep`), reloaded.
fn stub_plugin(d: &Daemon) {
    let root = d.dir.path().join("config/venomx/plugins/team");
    std::fs::create_dir_all(root.join("integrations")).unwrap();
    std::fs::write(root.join("plugin.toml"), "id = \"team\"\n").unwrap();
    std::fs::write(
        root.join("integrations/stub.toml"),
        "id = \"stub\"\n[launch]\ncommand = [\"sleep\", \"3600\"]\n[session_identity]\nmode = \"native-or-phux\"\nnative_env = \"PHUX_STUB_SESSION_ID\"\nrestore = \"external-cli\"\nresume_args = [\"--resume\", \"${PHUX_AGENT_SESSION_ID}\"]\n",
    )
    .unwrap();
    d.ok(&["config", "reload"]);
}

fn tmp_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ws-") && n.ends_with(".tmp"))
        .collect()
}

/// Saves once cleanly, changes the topology, then saves again under `plan`.
fn faulty_save(plan: &str) -> (Output, Vec<u8>, Vec<u8>, Vec<String>) {
    let d = Daemon::start();
    pane_with_record(&d, "one");
    let out_dir = d.dir.path().join("archives");
    std::fs::create_dir_all(&out_dir).unwrap();
    let file = out_dir.join("ws.json");
    let f = file.to_str().unwrap();
    let clean = cli(&d, &["workspace", "save", "--output", f], None);
    assert!(clean.status.success(), "{clean:?}");
    let old = std::fs::read(&file).unwrap();
    pane_with_record(&d, "two");
    let out = cli(&d, &["workspace", "save", "--output", f], Some(plan));
    let trace = std::fs::read_to_string(d.dir.path().join("cli-trace.jsonl")).unwrap_or_default();
    assert!(
        trace.contains("\"rule\":1"),
        "the plan never fired: {trace}"
    );
    let now = std::fs::read(&file).unwrap();
    (out, old, now, tmp_files(&out_dir))
}

#[test]
fn a_failed_write_or_fsync_keeps_the_old_archive_and_exits_6() {
    for plan in ["write@*/ws-*.tmp=ENOSPC", "fsync@*/ws-*=EIO"] {
        let (out, old, now, tmps) = faulty_save(plan);
        assert_eq!(out.status.code(), Some(6), "{plan}: {out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
        assert_eq!(v["error"]["code"], "unavailable.file_io", "{plan}");
        assert_eq!(now, old, "{plan}: the old archive changed");
        assert!(tmps.is_empty(), "{plan}: temporary files left: {tmps:?}");
    }
}

#[test]
fn a_crash_at_the_rename_leaves_the_old_archive_under_the_final_name() {
    let (out, old, now, _) = faulty_save("rename@*/ws-*=crash");
    assert_eq!(
        out.status.code(),
        None,
        "the injector kills the client: {out:?}"
    );
    assert_eq!(now, old, "a partial or new archive is under the final name");
}

#[test]
fn an_unreadable_plugin_on_reload_fails_native_restore_before_creating() {
    let d = Daemon::start_faulty(None, "open@*/plugins/*=EACCES");
    stub_plugin(&d);
    let list = d.ok(&["integration", "list"]);
    assert_eq!(list["integrations"], serde_json::json!([]), "{list}");
    assert_eq!(list["problems"][0]["code"], "unavailable.file_io", "{list}");
    let archive = d.dir.path().join("a.json");
    std::fs::write(
        &archive,
        format!(r#"{{"schema_version":2,"sessions":[{{"name":"s","windows":[{{"name":"w","panes":[{{"agent_session":{RECORD}}}]}}]}}]}}"#),
    )
    .unwrap();
    let out = cli(
        &d,
        &[
            "workspace",
            "restore",
            "--archive",
            archive.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["code"], "not_found.integration");
    assert_eq!(
        d.ok(&["session", "list"])["sessions"],
        serde_json::json!([])
    );
}

/// `agent launch` without `--native-id` resumes the id in the integration's
/// `$<native_env>`; `--native-id` wins over it; neither leaves the launch plain.
#[test]
fn agent_launch_takes_the_native_id_from_the_integration_environment() {
    let d = Daemon::start();
    stub_plugin(&d);
    let list = d.ok(&["integration", "list"]);
    assert_eq!(
        list["integrations"][0]["native_env"],
        "PHUX_STUB_SESSION_ID"
    );
    let launch = |flag: Option<&str>, env: Option<&str>| -> Value {
        let s = d.ok(&[
            "session",
            "create",
            "--name",
            &format!("s{}", next_number()),
        ]);
        let w = d.ok(&[
            "window",
            "create",
            "--session",
            s["session"].as_str().unwrap(),
            "--name",
            "w",
        ]);
        let mut cmd = Command::new(BIN);
        env_for(&mut cmd, d.dir.path());
        cmd.env("VENOMX_TOKEN", "@owner");
        if let Some(id) = env {
            cmd.env("PHUX_STUB_SESSION_ID", id);
        }
        cmd.arg("--socket").arg(&d.socket).args([
            "--json",
            "agent",
            "launch",
            "--window",
            w["window"].as_str().unwrap(),
            "--integration",
            "stub",
        ]);
        if let Some(id) = flag {
            cmd.args(["--native-id", id]);
        }
        let out = cmd.stdin(Stdio::null()).output().expect("run vxref");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{out:?}"))
    };
    let native = |v: &Value| -> Value {
        let text = v["agent_session"].as_str().unwrap_or_else(|| panic!("{v}"));
        serde_json::from_str::<Value>(text).unwrap()["native_id"].clone()
    };
    assert_eq!(native(&launch(None, Some("env-1"))), "env-1");
    assert_eq!(native(&launch(Some("flag-1"), Some("env-2"))), "flag-1");
    let plain = launch(None, None);
    assert_eq!(plain["restorable"], false, "{plain}");
    assert!(
        plain.get("agent_session").is_none_or(Value::is_null),
        "{plain}"
    );
    let bad = launch(None, Some("-x"));
    assert_eq!(bad["error"]["code"], "invalid_params.native_id", "{bad}");
}

/// A distinct session name per call.
fn next_number() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}
