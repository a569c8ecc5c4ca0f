//! What `vxcert try` runs for each claimed part: one valid input per command, as
//! the suite's scenarios give it.

use super::{exit_zero, Bench};
use crate::contract::Contract;
use crate::profile::Profile;
use std::path::Path;
use std::time::Duration;

/// Runs every claimed part's commands of contract `c` once.
pub fn run(c: Contract, profile: &Profile, kit: &Path, b: &mut Bench) -> Result<(), String> {
    let ready = Duration::from_millis(
        (profile.readiness.timeout_ms as f64 * profile.timeout_multiplier) as u64,
    );
    match c {
        Contract::Recovery => recovery(profile, b, ready),
        Contract::AgentRestore => agent_restore(profile, kit, b, ready)?,
        Contract::SingleWriter => single_writer(profile, kit, b, ready)?,
        Contract::SessionPersist => persist(profile, kit, b, ready)?,
    }
    Ok(())
}

/// A command template of the contract's table (empty when the table has none).
fn template(profile: &Profile, c: Contract, key: &str) -> Vec<String> {
    profile
        .contract_table(c)
        .and_then(|t| t.get(key))
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|w| w.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Ready when the sandbox's socket accepts a connection.
fn socket_accepts(socket: &Path) -> impl Fn() -> Option<String> + '_ {
    move || {
        std::os::unix::net::UnixStream::connect(socket)
            .ok()
            .map(|_| format!("{} accepts", socket.display()))
    }
}

fn recovery(profile: &Profile, b: &mut Bench, ready: Duration) {
    let socket = b.ph.socket.clone();
    let cmd = b.command(&profile.serve, &[]);
    b.start_and_stop(
        "serve",
        "started in the sandbox",
        cmd,
        ready,
        socket_accepts(&socket),
    );
    if !profile.version.is_empty() {
        let cmd = b.command(&profile.version, &[]);
        b.run("version", "", cmd, exit_zero);
    }
}

fn agent_restore(
    profile: &Profile,
    kit: &Path,
    b: &mut Bench,
    ready: Duration,
) -> Result<(), String> {
    crate::agent_restore::check_profile(profile)?;
    let c = Contract::AgentRestore;
    let t = |key: &str| template(profile, c, key);
    if profile.claims_part(c, "checker") {
        let file = kit.join("corpus/workspace/valid-phux-schema2.json");
        let cmd = b.command(
            &t("archive_check"),
            &[("{file}", file.display().to_string())],
        );
        b.run(
            "[agent_restore] archive_check",
            "the corpus's valid archive valid-phux-schema2.json",
            cmd,
            exit_zero,
        );
        if !t("template_check").is_empty() {
            let file = kit.join("corpus/integrations/valid-peer-claude.toml");
            let cmd = b.command(
                &t("template_check"),
                &[("{file}", file.display().to_string())],
            );
            b.run(
                "[agent_restore] template_check",
                "the corpus's valid template valid-peer-claude.toml",
                cmd,
                exit_zero,
            );
        }
    }
    let socket = b.ph.socket.clone();
    if profile.claims_part(c, "server") && !profile.serve.is_empty() {
        let cmd = b.command(&profile.serve, &[]);
        b.start_and_stop(
            "serve (the server part's daemon)",
            "started in the sandbox",
            cmd,
            ready,
            socket_accepts(&socket),
        );
    }
    if profile.claims_part(c, "legacy") && !t("legacy_serve").is_empty() {
        let cmd = b.command(&t("legacy_serve"), &[]);
        b.start_and_stop(
            "[agent_restore] legacy_serve",
            "started in the sandbox",
            cmd,
            ready,
            socket_accepts(&socket),
        );
    }
    Ok(())
}

fn single_writer(
    profile: &Profile,
    kit: &Path,
    b: &mut Bench,
    ready: Duration,
) -> Result<(), String> {
    crate::single_writer::check_profile(profile)?;
    let c = Contract::SingleWriter;
    let t = |key: &str| template(profile, c, key);
    let corpus = kit.join("corpus/broker");
    let text = |rel: &str| {
        std::fs::read_to_string(corpus.join(rel))
            .map(|s| s.trim().to_string())
            .map_err(|e| format!("the kit's corpus {rel}: {e}"))
    };
    if profile.claims_part(c, "checker") {
        let key = text("keys/claude-uuid.key")?;
        let cmd = b.command(&t("key_check"), &[("{key}", key.clone())]);
        b.run(
            "[single_writer] key_check",
            &format!("the corpus's valid key {key}"),
            cmd,
            exit_zero,
        );
        if !t("key_check_new").is_empty() {
            let key = text("keys/opencode-placeholder-new.key")?;
            let cmd = b.command(&t("key_check_new"), &[("{key}", key.clone())]);
            b.run(
                "[single_writer] key_check_new",
                &format!("the corpus's valid new key {key}"),
                cmd,
                exit_zero,
            );
        }
        let file = corpus.join("sidecar/alias-one/aliases.json");
        let cmd = b.command(
            &t("sidecar_check"),
            &[("{file}", file.display().to_string())],
        );
        b.run(
            "[single_writer] sidecar_check",
            "the corpus's valid sidecar alias-one/aliases.json",
            cmd,
            exit_zero,
        );
        let mut cmd = b.command(&t("resume_plan"), &[]);
        cmd.args([
            "--have",
            "100",
            "--gen",
            "1",
            "--total",
            "150",
            "--ring-len",
            "80",
            "--master-gen",
            "1",
        ]);
        b.run(
            "[single_writer] resume_plan",
            "the corpus's case resume/delta.txt (a delta from 100)",
            cmd,
            exit_zero,
        );
    }
    if profile.claims_part(c, "broker") {
        let lock_dir = b.root.join("locks");
        let engines = b.root.join("engines.toml");
        std::fs::create_dir_all(&lock_dir).map_err(|e| format!("{}: {e}", lock_dir.display()))?;
        // The kit's engines format (engines_format = "vxbroker"): one engine, the
        // suite's stand-in agent.
        let stub = b.ph.bin_dir.join("vxstub");
        let history = b.root.join("history");
        let text = format!(
            "[engine.claude]\npin = \"flag\"\nid = \"uuid\"\n\
             launch = [\"{s}\", \"agent\", \"--engine\", \"claude\", \"--id\", \"{{id}}\", \"--history\", \"{h}\"]\n\
             resume = [\"{s}\", \"agent\", \"--engine\", \"claude\", \"--id\", \"{{id}}\", \"--history\", \"{h}\", \"--resume\"]\n",
            s = stub.display(),
            h = history.display()
        );
        std::fs::create_dir_all(&history).map_err(|e| format!("{}: {e}", history.display()))?;
        std::fs::write(&engines, text).map_err(|e| format!("{}: {e}", engines.display()))?;
        let setup = t("setup");
        if !setup.is_empty() {
            let cmd = b.command(
                &setup,
                &[
                    ("{lock_dir}", lock_dir.display().to_string()),
                    ("{engines}", engines.display().to_string()),
                    ("{history}", history.display().to_string()),
                    ("{agent}", stub.display().to_string()),
                    (
                        "{missing_program}",
                        b.root.join("no-such-program").display().to_string(),
                    ),
                ],
            );
            b.run(
                "[single_writer] setup",
                "the fixture's directories and stand-in agent, before the broker starts",
                cmd,
                exit_zero,
            );
        }
        let cmd = b.command(
            &t("broker"),
            &[
                ("{lock_dir}", lock_dir.display().to_string()),
                ("{engines}", engines.display().to_string()),
            ],
        );
        let socket = b.ph.socket.clone();
        b.start_and_stop(
            "[single_writer] broker",
            "started in the sandbox (one engine: the kit's stand-in agent)",
            cmd,
            ready,
            socket_accepts(&socket),
        );
    }
    if profile.claims_part(c, "master") {
        let socket = b.root.join("master.sock");
        let cmd = b.command(
            &t("master_create"),
            &[("{socket}", socket.display().to_string())],
        );
        b.start_and_stop(
            "[single_writer] master_create",
            "a new session's master socket in the sandbox",
            cmd,
            ready,
            socket_accepts(&socket),
        );
        // A daemonizing master (`master_daemonizes`) outlives its command.
        crate::drivers::broker::kill_naming(&b.root, &[]);
    }
    if profile.claims_part(c, "client") {
        b.not_tried("[single_writer] client", "the client needs the suite's stand-in broker: `vxcert run --contract single-writer --tags @part-client`");
    }
    Ok(())
}

/// The session `try` plants: claude_code's layout from the kit's layouts document
/// (the transcript and one file below its session directory).
const BACKEND: &str = "claude_code";
const SESSION: &str = "try-1";

fn plant(root: &Path, kit: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(kit.join("persist/layouts.toml"))
        .map_err(|e| format!("the kit's persist/layouts.toml: {e}"))?;
    let doc: toml::Table =
        toml::from_str(&text).map_err(|e| format!("persist/layouts.toml: {e}"))?;
    let files = doc
        .get("backend")
        .and_then(|b| b.get(BACKEND))
        .and_then(|b| b.get("files"))
        .and_then(toml::Value::as_array)
        .ok_or("persist/layouts.toml has no claude_code files")?;
    let mut planted = Vec::new();
    for pattern in files.iter().filter_map(toml::Value::as_str) {
        let rel = pattern
            .replace("{dir}", "-work-demo")
            .replace("{id}", SESSION)
            .replace("**", "subagents/agent-a1.jsonl");
        let path = root.join(&rel);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
        std::fs::write(&path, format!("{{\"turn\":1,\"session\":\"{SESSION}\"}}\n"))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        planted.push(rel);
    }
    Ok(planted)
}

fn persist(profile: &Profile, kit: &Path, b: &mut Bench, ready: Duration) -> Result<(), String> {
    crate::session_persist::check_profile(profile)?;
    let c = Contract::SessionPersist;
    let t = |key: &str| template(profile, c, key);
    if profile.claims_part(c, "packer") {
        let (a, z) = (b.root.join("pods/a"), b.root.join("pods/b"));
        std::fs::create_dir_all(&z).map_err(|e| format!("{}: {e}", z.display()))?;
        let planted = plant(&a, kit)?;
        let blob = b.root.join("blob.tar");
        let words = |root: &Path| {
            vec![
                ("{backend}", BACKEND.to_string()),
                ("{root}", root.display().to_string()),
                ("{id}", SESSION.to_string()),
                ("{file}", blob.display().to_string()),
            ]
        };
        let cmd = b.command(&t("pack"), &words(&a));
        let blob_made = blob.clone();
        let packed = b.run(
            "[persist] pack",
            &format!(
                "session {SESSION} of {BACKEND} planted in pods/a ({})",
                planted.join(", ")
            ),
            cmd,
            |r| {
                exit_zero(r)?;
                let len = std::fs::metadata(&blob_made)
                    .map_err(|_| format!("exit 0 but no blob at {}", blob_made.display()))?
                    .len();
                Ok(format!("exit 0; the blob has {len} bytes"))
            },
        );
        if packed {
            let cmd = b.command(&t("unpack"), &words(&z));
            let into = z.clone();
            let first = planted.first().cloned().unwrap_or_default();
            b.run(
                "[persist] unpack",
                "that blob, into the empty pods/b",
                cmd,
                |r| {
                    exit_zero(r)?;
                    into.join(&first)
                        .is_file()
                        .then(|| format!("exit 0; pods/b/{first} is there"))
                        .ok_or_else(|| format!("exit 0 but pods/b/{first} is not there"))
                },
            );
            let cmd = b.command(&t("has_session"), &words(&z));
            b.run(
                "[persist] has_session",
                &format!("session {SESSION} in pods/b"),
                cmd,
                |r| {
                    exit_zero(r)?;
                    match r.stdout_tail.trim() {
                        "true" => Ok("printed true".into()),
                        other => Err(format!(
                            "printed {other:?}; the suite expects \"true\" here"
                        )),
                    }
                },
            );
        } else {
            b.not_tried(
                "[persist] unpack, has_session",
                "pack gave no blob to unpack",
            );
        }
    }
    if profile.claims_part(c, "checker") {
        let file = kit.join("corpus/persist/blobs/valid-claude_code.tar");
        let cmd = b.command(&t("blob_check"), &[("{file}", file.display().to_string())]);
        b.run(
            "[persist] blob_check",
            "the corpus's valid blob valid-claude_code.tar",
            cmd,
            exit_zero,
        );
    }
    for (part, key) in [("store", "store_adapter"), ("runtime", "drive")] {
        if profile.claims_part(c, part) {
            let spec = profile
                .persist
                .as_ref()
                .and_then(|t| t.get("store"))
                .and_then(toml::Value::as_str)
                .unwrap_or_default();
            b.ph.store = b.ph.expand(spec).into();
            let cmd = b.command(&t(key), &[]);
            let alive = std::time::Instant::now();
            b.start_and_stop(
                &format!("[persist] {key}"),
                "started on its stdin (the suite speaks JSON lines); stopped after 1 s alive",
                cmd,
                ready.max(Duration::from_secs(2)),
                move || {
                    (alive.elapsed() > Duration::from_secs(1))
                        .then(|| "still running after 1 s".into())
                },
            );
        }
    }
    Ok(())
}
