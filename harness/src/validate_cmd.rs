//! `vxcert validate`: is this checkpoint valid, and if not, which rule does it break?

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::json;
use vx_format::{check_length, read, write, ReadContext};

#[derive(clap::Args, Debug)]
pub struct ValidateArgs {
    /// Print one JSON object per file: {"file","result","reason"}.
    #[arg(long)]
    json: bool,
    /// The active store's socket path; the payload's `socket` must equal it.
    #[arg(long, value_name = "PATH")]
    socket: Option<String>,
    /// The active store's uid; the payload's `uid` must equal it.
    #[arg(long, value_name = "N")]
    uid: Option<u64>,
    /// Configured max_checkpoint_bytes (the reader applies min(N, 64 MiB)).
    #[arg(long, value_name = "N", default_value_t = vx_format::limits::DEFAULT_MAX_CHECKPOINT_BYTES)]
    max_bytes: u64,
    /// Also report whether the bytes equal the reference writer's encoding.
    #[arg(long)]
    canonical: bool,
    /// Checkpoint files (`c<uuid>.json`).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// One file's verdict.
struct Verdict {
    result: String,
    reason: Option<String>,
    canonical: bool,
}

const IO_ERROR: &str = "unavailable.recovery_io";

fn validate_file(path: &Path, args: &ValidateArgs) -> Verdict {
    let fail = |result: &str, reason: String| Verdict {
        result: result.into(),
        reason: Some(reason),
        canonical: false,
    };
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return fail(IO_ERROR, format!("cannot open file: {}", e.kind())),
    };
    let len = match file.metadata() {
        Ok(m) if m.is_file() => m.len(),
        Ok(_) => return fail(IO_ERROR, "not a regular file".into()),
        Err(e) => return fail(IO_ERROR, format!("cannot stat file: {}", e.kind())),
    };
    // The limit is decided on the length alone, before a byte is read.
    if let Err(e) = check_length(len, args.max_bytes) {
        return fail(e.code().as_str(), e.reason());
    }
    let mut bytes = Vec::with_capacity(len as usize);
    if let Err(e) = file.read_to_end(&mut bytes) {
        return fail(IO_ERROR, format!("cannot read file: {}", e.kind()));
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let ctx = ReadContext {
        file_name: Some(name),
        socket: args.socket.as_deref(),
        uid: args.uid,
        max_bytes: args.max_bytes,
    };
    match read(&bytes, &ctx) {
        Ok(decoded) => Verdict {
            result: "valid".into(),
            reason: None,
            canonical: write(&decoded.checkpoint, decoded.format).is_ok_and(|ours| ours == bytes),
        },
        Err(e) => fail(e.code().as_str(), e.reason()),
    }
}

pub fn run_validate(args: &ValidateArgs) -> i32 {
    let mut all_valid = true;
    for path in &args.files {
        let verdict = validate_file(path, args);
        all_valid &= verdict.result == "valid";
        let shown = path.display().to_string();
        if args.json {
            let mut line =
                json!({"file": shown, "result": verdict.result, "reason": verdict.reason});
            if args.canonical {
                line["canonical"] = json!(verdict.canonical);
            }
            println!("{line}");
        } else {
            let canonical = match (args.canonical, verdict.canonical) {
                (false, _) => "",
                (true, true) => " (canonical)",
                (true, false) => " (not canonical)",
            };
            match &verdict.reason {
                None => println!("{shown}: valid{canonical}"),
                Some(reason) => println!("{shown}: {}: {reason}", verdict.result),
            }
        }
    }
    if all_valid {
        0
    } else {
        1
    }
}
