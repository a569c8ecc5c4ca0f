//! The implementation's CLI: a command whose stdout must be one JSON value (`--json`),
//! `{"error":…}` alone meaning failure; the exit code is kept.

use super::wire::Reply;
use crate::verdict::OrHarness;
use serde_json::Value;
use std::process::{Command, Stdio};

/// Runs `cmd` with stdin closed: the reply and every byte it wrote (stdout, stderr).
pub fn run_json(mut cmd: Command) -> (Reply, Vec<u8>) {
    let out = crate::evidence::output(cmd.stdin(Stdio::null())).or_harness("cannot run the CLI");
    let mut seen = out.stdout.clone();
    seen.extend_from_slice(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    let text = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|_| {
        panic!(
            "CLI stdout is not one JSON value (exit {code}): {:?}",
            text.chars().take(300).collect::<String>()
        )
    });
    let result = match v.get("error") {
        Some(e) if v.as_object().is_some_and(|o| o.len() == 1) => Err(e.clone()),
        _ => Ok(v),
    };
    (
        Reply {
            result,
            exit: Some(code),
        },
        seen,
    )
}
