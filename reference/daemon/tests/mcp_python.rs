//! `vxref mcp` driven by a client nobody here wrote: the official MCP Python SDK
//! (`mcp` on PyPI, which `.ci/run` installs at a pinned version). tests/mcp_client.py
//! lists the tools and calls nearly every one against a daemon started here; the SDK
//! validates each result against the tool's output schema. Without the package the
//! test says so and passes, unless `VXREF_REQUIRE_MCP=1` (CI) makes that a failure.

mod common;
use common::*;
use std::io::Read as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Recovery on (the script checkpoints, restores and forgets), no periodic capture.
const CONFIG: &str = ".{ .recovery = .{ .enabled = true, .interval_ms = 3600000 } }";
/// The script's own bound is 120 s; this one catches a hung interpreter.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(180);

fn python_mcp() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import mcp.client.stdio"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found && std::env::var("VXREF_REQUIRE_MCP").is_ok_and(|v| v == "1") {
        panic!("the Python `mcp` package is required here (.ci/run pip-installs it)");
    }
    found
}

#[test]
fn the_official_python_sdk_lists_and_calls_the_tools() {
    if !python_mcp() {
        eprintln!("skipped: python3 has no `mcp` package (pip install mcp); set VXREF_REQUIRE_MCP=1 to fail instead");
        return;
    }
    let d = Daemon::start_with_config(Some(CONFIG));
    // One plugin for agent.launch; the script's config.reload loads it.
    let plugin = d.dir.path().join("config/venomx/plugins/team");
    std::fs::create_dir_all(plugin.join("integrations")).unwrap();
    std::fs::write(plugin.join("plugin.toml"), "id = \"team\"\n").unwrap();
    std::fs::write(
        plugin.join("integrations/stub.toml"),
        "id = \"stub\"\n[launch]\ncommand = [\"sleep\", \"3600\"]\n[session_identity]\nmode = \"native-or-phux\"\nnative_env = \"PHUX_STUB_SESSION_ID\"\nrestore = \"external-cli\"\nresume_args = [\"--resume\", \"${PHUX_AGENT_SESSION_ID}\"]\n",
    )
    .unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let mut cmd = Command::new("python3");
    env_for(&mut cmd, d.dir.path());
    cmd.arg(&script)
        .env("VXREF_BIN", BIN)
        .env("VENOMX_SOCKET", &d.socket)
        .env("VENOMX_TOKEN", "@owner")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn python3");
    // Drained while it runs, so a chatty run cannot fill a pipe and stall.
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > SCRIPT_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("tests/mcp_client.py did not finish in {SCRIPT_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = stdout.join().unwrap();
    let stderr = stderr.join().unwrap();
    assert!(
        status.success(),
        "mcp_client.py failed ({status}):\n{stdout}\n{stderr}"
    );
    eprint!("{stdout}");
    let expected_tools = vxref::manifest::VERBS
        .iter()
        .filter(|v| !v.streaming())
        .count();
    assert!(
        stdout.contains(&format!("mcp client: {expected_tools} tools listed")),
        "{stdout}"
    );
    let passed = stdout
        .lines()
        .find_map(|l| {
            l.strip_prefix("mcp client: ")?
                .strip_suffix(" checks passed")
        })
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or_else(|| panic!("no check count in:\n{stdout}"));
    assert!(passed >= 100, "only {passed} checks ran:\n{stdout}");
}
