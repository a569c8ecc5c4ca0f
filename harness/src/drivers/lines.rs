//! A child process spoken to in JSON lines: one request per line on its stdin, one
//! reply per line on its stdout, in order (the session-persist store adapter and
//! drive protocols). Replies are read on a thread, so a silent child is a `timeout`,
//! never a hung step; the child is killed when the client is dropped.

use super::sandbox::{self, Placeholders};
use crate::verdict::OrHarness;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};

pub struct LinesChild {
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<String>,
    what: &'static str,
}

impl LinesChild {
    /// Starts `words` (placeholders expanded) with `env`, in `cwd`.
    pub fn start(
        what: &'static str,
        ph: &Placeholders,
        words: &[String],
        env: &[(String, String)],
        cwd: &Path,
    ) -> LinesChild {
        let mut child = sandbox::command(ph, words, env, cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| crate::harness_error!("starting the {what}: {e}"));
        let stdin = child.stdin.take().or_harness("the child's stdin");
        let stdout = child.stdout.take().or_harness("the child's stdout");
        let (tx, replies) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        LinesChild {
            child,
            stdin,
            replies,
            what,
        }
    }

    /// Sends one request and waits up to `limit_ms` (scaled) for its reply, which
    /// must be one JSON object.
    pub fn request(&mut self, req: &Value, limit_ms: u64) -> Value {
        let mut line = req.to_string();
        line.push('\n');
        let what = self.what;
        if self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .is_err()
        {
            panic!("the {what} closed its input (it exited?)");
        }
        let limit = crate::drivers::scaled(limit_ms);
        let reply = match self.replies.recv_timeout(limit) {
            Ok(r) => r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                crate::timed_out!("the {what} did not answer in {limit:?}")
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("the {what} exited without answering")
            }
        };
        let v: Value = serde_json::from_str(&reply)
            .unwrap_or_else(|_| panic!("the {what}'s reply is not JSON: {reply:?}"));
        assert!(v.is_object(), "the {what}'s reply is not an object: {v}");
        v
    }
}

impl Drop for LinesChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
