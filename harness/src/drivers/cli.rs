//! The implementation's CLI: a command whose stdout must be one JSON value (`--json`),
//! `{"error":…}` alone meaning failure; the exit code is kept.

use super::wire::Reply;
use crate::verdict::OrHarness;
use serde_json::Value;
use std::process::{Command, Stdio};

/// Runs `cmd` with stdin closed: the reply and every byte it wrote (stdout, stderr).
pub fn run_json(cmd: Command) -> (Reply, Vec<u8>) {
    let (run, seen) = run(cmd);
    let code = run.exit;
    let reply = run
        .reply()
        .unwrap_or_else(|text| panic!("CLI stdout is not one JSON value (exit {code}): {text:?}"));
    (reply, seen)
}

/// What one run of the CLI printed, before its stdout is read as JSON.
pub struct Run {
    pub exit: i32,
    pub stdout: String,
}

impl Run {
    /// The reply stdout holds, or (Err) the first 300 characters of a stdout that
    /// is not one JSON value.
    pub fn reply(&self) -> Result<Reply, String> {
        let v: Value = serde_json::from_str(self.stdout.trim())
            .map_err(|_| self.stdout.chars().take(300).collect::<String>())?;
        let result = match v.get("error") {
            Some(e) if v.as_object().is_some_and(|o| o.len() == 1) => Err(e.clone()),
            _ => Ok(v),
        };
        Ok(Reply {
            result,
            exit: Some(self.exit),
        })
    }
}

/// Runs `cmd` with stdin closed: its exit code and stdout, and every byte it wrote.
pub fn run(mut cmd: Command) -> (Run, Vec<u8>) {
    let out = crate::evidence::output(cmd.stdin(Stdio::null())).or_harness("cannot run the CLI");
    let mut seen = out.stdout.clone();
    seen.extend_from_slice(&out.stderr);
    let run = Run {
        exit: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    };
    (run, seen)
}
