//! The drive's executor: `vxstub cli` in the current pod's root of the task's
//! backend, then the packer on that same root (the executor packs before it
//! returns, while the config dir is live). Unpack and HasSession go to the packer
//! on the root the next Execute uses.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use super::faults::{FaultOp, SharedFaults, Verdict};
use crate::error::{ErrorCode, PersistError};
use crate::runstore::Output;
use crate::runtime::output::put_session_state_blob;
use crate::runtime::resolve::capable;
use crate::runtime::{ExecError, Executor, Graph, NeedsInteraction, Task};
use crate::{Layouts, SessionPacker};

/// A stub's reply longer than this is garbage.
const MAX_STUB_REPLY_BYTES: usize = 64 * 1024;

pub struct StubExecutor<'a> {
    pub vxstub: Option<&'a Path>,
    pub pod: &'a str,
    pub pod_dir: PathBuf,
    pub graph: &'a Graph,
    pub faults: SharedFaults,
    /// Every Execute, in order (the `inspect.executes` records).
    pub executes: &'a mut Vec<Value>,
}

impl StubExecutor<'_> {
    pub fn root(&self, backend: &str) -> PathBuf {
        self.pod_dir.join(backend)
    }

    fn pack(&self, backend: &str, id: &str) -> Option<Vec<u8>> {
        if !capable(backend) || self.faults.borrow_mut().verdict(FaultOp::Pack) != Verdict::Pass {
            return None;
        }
        let root = self.root(backend);
        SessionPacker::new(Layouts::builtin(), backend, &root)
            .and_then(|p| p.pack(id))
            .ok()
    }

    fn spawn(&self, task: &Task, root: &Path) -> Result<Value, ExecError> {
        let stub = self
            .vxstub
            .ok_or(ExecError::Failed("no vxstub executable"))?;
        let spec = self
            .graph
            .node(&task.node)
            .ok_or(ExecError::Failed("no such node"))?;
        let fingerprint = task.fingerprint.clone().unwrap_or(spec.fingerprint.clone());
        let mut cmd = Command::new(stub);
        cmd.arg("cli")
            .args(["--backend", &task.backend, "--node", &task.node])
            .arg("--root")
            .arg(root)
            .args(["--fingerprint", &fingerprint]);
        if let Some(id) = &task.session_id {
            cmd.args(["--session-id", id]);
        }
        if let Some(a) = &task.answer {
            cmd.args(["--answer", a]);
        }
        if let Some(q) = &task.ask {
            cmd.args(["--ask", q]);
        }
        if !spec.extra_output.is_empty() {
            cmd.args([
                "--extra",
                &Value::Object(spec.extra_output.clone()).to_string(),
            ]);
        }
        let out = cmd
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|_| ExecError::Failed("vxstub could not be started"))?;
        if !out.status.success() || out.stdout.len() > MAX_STUB_REPLY_BYTES {
            return Err(ExecError::Failed("vxstub failed"));
        }
        serde_json::from_slice(&out.stdout)
            .map_err(|_| ExecError::Failed("vxstub answered garbage"))
    }
}

/// A pod's root for one backend, made 0700 when missing.
pub fn make_root(root: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(root)
}

fn reply_str(reply: &Value, key: &str) -> Option<String> {
    reply.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl Executor for StubExecutor<'_> {
    fn execute(&mut self, task: &Task) -> Result<Output, ExecError> {
        let root = self.root(&task.backend);
        let visit = 1 + self
            .executes
            .iter()
            .filter(|e| e["node"] == task.node.as_str())
            .count();
        let result = make_root(&root)
            .map_err(|_| ExecError::Failed("the pod root could not be made"))
            .and_then(|()| self.spawn(task, &root));
        let mut record = json!({
            "seq": self.executes.len() + 1, "node": task.node, "pod": self.pod,
            "backend": task.backend, "visit": visit, "session_id": task.session_id,
            "fingerprint": task.fingerprint, "answer": task.answer.is_some(),
            "input_keys": task.input.keys().collect::<Vec<_>>(),
            "outcome": "error", "turn": null, "minted": null, "output_session_id": null,
        });
        let reply = match result {
            Ok(reply) => reply,
            Err(e) => {
                self.executes.push(record);
                return Err(e);
            }
        };
        record["outcome"] = reply["outcome"].clone();
        record["turn"] = reply["turn"].clone();
        record["minted"] = reply["minted"].clone();
        record["output_session_id"] = reply["session_id"].clone();
        self.executes.push(record);
        let id = reply_str(&reply, "session_id").ok_or(ExecError::Failed("no session id"))?;
        match reply["outcome"].as_str() {
            Some("completed") => {
                let Some(Value::Object(mut output)) = reply.get("output").cloned() else {
                    return Err(ExecError::Failed("vxstub answered no output"));
                };
                if task.pack_on_success {
                    if let Some(blob) = self.pack(&task.backend, &id) {
                        put_session_state_blob(&mut output, &blob);
                    }
                }
                Ok(output)
            }
            Some("ask_user") => Err(ExecError::NeedsInteraction(Box::new(NeedsInteraction {
                node: task.node.clone(),
                question: reply_str(&reply, "question").unwrap_or_default(),
                backend: task.backend.clone(),
                session_id: Some(id.clone()),
                fingerprint: reply_str(&reply, "fingerprint"),
                session_state_blob: self.pack(&task.backend, &id),
                session_state_ref: None,
            }))),
            _ => Err(ExecError::Failed("vxstub answered an unknown outcome")),
        }
    }

    fn unpack_session(&mut self, backend: &str, id: &str, blob: &[u8]) -> Result<(), PersistError> {
        if self.faults.borrow_mut().verdict(FaultOp::Unpack) != Verdict::Pass {
            self.faults
                .borrow_mut()
                .record(FaultOp::Unpack, None, Some("unavailable.injected"));
            return Err(PersistError::new(ErrorCode::PersistIo, "injected failure"));
        }
        let root = self.root(backend);
        make_root(&root).map_err(|_| {
            PersistError::new(ErrorCode::PersistIo, "the pod root could not be made")
        })?;
        let result =
            SessionPacker::new(Layouts::builtin(), backend, &root).and_then(|p| p.unpack(id, blob));
        let code = result.as_ref().err().map(|e| e.code.as_str());
        self.faults.borrow_mut().record(FaultOp::Unpack, None, code);
        result
    }

    fn has_session(&mut self, backend: &str, id: &str) -> bool {
        let root = self.root(backend);
        SessionPacker::new(Layouts::builtin(), backend, &root).is_ok_and(|p| p.has_session(id))
    }
}
