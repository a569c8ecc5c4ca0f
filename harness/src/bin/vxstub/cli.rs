//! `vxstub cli`: a fake CLI agent for the session-persist contract
//! (docs/spec/persist-drive.md). It keeps one transcript per session, one line per
//! turn, at its backend's key file under `--root` and reads nothing else. With
//! `--session-id` it continues that transcript; when the file is missing it mints a
//! new session under the same id (turn 1), as Pi does: a runtime that resumes an id
//! without unpacking it first shows a reset turn count.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Map, Value};

#[derive(Args, Debug)]
pub struct CliArgs {
    #[arg(long)]
    backend: String,
    #[arg(long)]
    root: PathBuf,
    #[arg(long)]
    node: String,
    #[arg(long)]
    fingerprint: String,
    /// Resume this session (Task.SessionID).
    #[arg(long = "session-id")]
    session_id: Option<String>,
    /// The human's answer on a reInvoke.
    #[arg(long)]
    answer: Option<String>,
    /// End the turn with ask_user instead of completing.
    #[arg(long)]
    ask: Option<String>,
    /// A JSON object merged into the output.
    #[arg(long)]
    extra: Option<String>,
}

/// The key file (transcript) of `id` under a backend's root, in the shape the
/// backend's layout names (persist/layouts.toml).
fn transcript(backend: &str, id: &str) -> Option<PathBuf> {
    let rel = match backend {
        "claude_code" => format!("projects/vx/{id}.jsonl"),
        "codex" => format!("sessions/2026/01/01/rollout-20260101T000000-{id}.jsonl"),
        "pi" => format!("sessions/vx/20260101_{id}.jsonl"),
        "kimi" | "grok" => format!("{backend}/{id}.jsonl"),
        _ => return None,
    };
    Some(PathBuf::from(rel))
}

/// A session id the stub mints: `s` and 24 hex digits of time and pid.
fn mint_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("s{:016x}{:08x}", nanos as u64, std::process::id())
}

fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn append_turn(path: &Path, line: &str) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(line.as_bytes())?;
    f.sync_all()
}

pub fn run(args: &CliArgs) -> i32 {
    let extra: Map<String, Value> = match args.extra.as_deref().map(serde_json::from_str) {
        None => Map::new(),
        Some(Ok(Value::Object(m))) => m,
        Some(_) => {
            eprintln!("vxstub cli: --extra is not a JSON object");
            return 2;
        }
    };
    let id = args.session_id.clone().unwrap_or_else(mint_id);
    let Some(rel) = transcript(&args.backend, &id).filter(|_| valid_id(&id)) else {
        eprintln!("vxstub cli: unknown backend or invalid session id");
        return 2;
    };
    let path = args.root.join(rel);
    let previous = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text.lines().count() as u64),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            eprintln!("vxstub cli: cannot read the transcript: {}", e.kind());
            return 1;
        }
    };
    let minted = previous.is_none();
    let turn = previous.unwrap_or(0) + 1;
    let line = json!({
        "turn": turn, "node": args.node, "answer": args.answer, "ask": args.ask,
        "marker": format!("VXTRANSCRIPT-{id}"),
    });
    if let Err(e) = append_turn(&path, &format!("{line}\n")) {
        eprintln!("vxstub cli: cannot write the transcript: {}", e.kind());
        return 1;
    }
    let mut output = json!({
        "_session_id": id, "_backend": args.backend,
        "_session_fingerprint": args.fingerprint, "turn": turn,
        "text": format!("{} turn {turn}", args.node),
    });
    if let Value::Object(o) = &mut output {
        o.extend(extra);
    }
    let reply = json!({
        "outcome": if args.ask.is_some() { "ask_user" } else { "completed" },
        "session_id": id, "turn": turn, "minted": minted,
        "fingerprint": args.fingerprint, "question": args.ask, "output": output,
    });
    println!("{reply}");
    0
}
