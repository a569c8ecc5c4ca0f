//! The drive's failure injection and call log (docs/spec/persist-drive.md
//! `inject`, `inspect.ops`). The wrappers sit between the runtime and the real
//! `FsStore` / `FsRunStore`; `after` does the call, then reports an error ("the
//! write landed, the client saw an error").

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{json, Value};

use crate::error::{ErrorCode, PersistError, Result};
use crate::runstore::{Checkpoint, RunResult, RunStore, RunStoreCode, RunStoreError};
use crate::store::{BackendSessionStore, StateRef};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultOp {
    StorePut,
    StoreGet,
    StoreDelete,
    SaveCheckpoint,
    PauseRun,
    FailRunResumable,
    FailRun,
    LoadRun,
    Pack,
    Unpack,
}

impl FaultOp {
    pub const ALL: [FaultOp; 10] = [
        FaultOp::StorePut,
        FaultOp::StoreGet,
        FaultOp::StoreDelete,
        FaultOp::SaveCheckpoint,
        FaultOp::PauseRun,
        FaultOp::FailRunResumable,
        FaultOp::FailRun,
        FaultOp::LoadRun,
        FaultOp::Pack,
        FaultOp::Unpack,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FaultOp::StorePut => "store_put",
            FaultOp::StoreGet => "store_get",
            FaultOp::StoreDelete => "store_delete",
            FaultOp::SaveCheckpoint => "save_checkpoint",
            FaultOp::PauseRun => "pause_run",
            FaultOp::FailRunResumable => "fail_run_resumable",
            FaultOp::FailRun => "fail_run",
            FaultOp::LoadRun => "load_run",
            FaultOp::Pack => "pack",
            FaultOp::Unpack => "unpack",
        }
    }

    pub fn parse(s: &str) -> Option<FaultOp> {
        FaultOp::ALL.into_iter().find(|op| op.as_str() == s)
    }

    /// Whether `after` means anything: a write that can land before its error.
    pub fn can_land(self) -> bool {
        matches!(
            self,
            FaultOp::StorePut
                | FaultOp::SaveCheckpoint
                | FaultOp::PauseRun
                | FaultOp::FailRunResumable
                | FaultOp::FailRun
        )
    }
}

#[derive(Clone, Copy, Debug)]
struct Arm {
    op: FaultOp,
    after: bool,
    skip: u32,
    count: u32,
}

/// What a call should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    FailBefore,
    FailAfter,
}

#[derive(Debug, Default)]
pub struct Faults {
    arms: Vec<Arm>,
    ops: Vec<Value>,
    seq: u64,
}

pub type SharedFaults = Rc<RefCell<Faults>>;

impl Faults {
    pub fn arm(&mut self, op: FaultOp, after: bool, skip: u32, count: u32) {
        self.arms.push(Arm {
            op,
            after,
            skip,
            count,
        });
    }

    pub fn clear(&mut self) {
        self.arms.clear();
    }

    pub fn verdict(&mut self, op: FaultOp) -> Verdict {
        let Some(arm) = self.arms.iter_mut().find(|a| a.op == op && a.count > 0) else {
            return Verdict::Pass;
        };
        if arm.skip > 0 {
            arm.skip -= 1;
            return Verdict::Pass;
        }
        arm.count -= 1;
        match arm.after {
            true => Verdict::FailAfter,
            false => Verdict::FailBefore,
        }
    }

    pub fn record(&mut self, op: FaultOp, r: Option<String>, code: Option<&str>) {
        self.seq += 1;
        self.ops.push(json!({
            "seq": self.seq, "op": op.as_str(), "ref": r,
            "ok": code.is_none(), "code": code,
        }));
    }

    pub fn ops(&self) -> &[Value] {
        &self.ops
    }
}

fn injected_store() -> PersistError {
    PersistError::new(ErrorCode::PersistIo, "injected failure")
}

fn injected_run() -> RunStoreError {
    RunStoreError::new(RunStoreCode::Injected, "injected failure")
}

/// Runs `call` under `op`'s verdict and logs the result.
fn guarded<T, E: Clone>(
    faults: &SharedFaults,
    op: FaultOp,
    r: Option<String>,
    injected: E,
    code_of: impl Fn(&E) -> &'static str,
    call: impl FnOnce() -> std::result::Result<T, E>,
) -> std::result::Result<T, E> {
    let verdict = faults.borrow_mut().verdict(op);
    let result = match verdict {
        Verdict::FailBefore => Err(injected),
        Verdict::FailAfter => call().and(Err(injected)),
        Verdict::Pass => call(),
    };
    let code = result.as_ref().err().map(&code_of);
    faults.borrow_mut().record(op, r, code);
    result
}

pub struct FaultyStore<S> {
    pub inner: S,
    pub faults: SharedFaults,
}

impl<S: BackendSessionStore> BackendSessionStore for FaultyStore<S> {
    fn put(&self, run: &str, r: &StateRef, blob: &[u8]) -> Result<()> {
        let code = |e: &PersistError| e.code.as_str();
        guarded(
            &self.faults,
            FaultOp::StorePut,
            Some(r.to_string()),
            injected_store(),
            code,
            || self.inner.put(run, r, blob),
        )
    }

    fn get(&self, run: &str, r: &StateRef) -> Result<Vec<u8>> {
        let code = |e: &PersistError| e.code.as_str();
        guarded(
            &self.faults,
            FaultOp::StoreGet,
            Some(r.to_string()),
            injected_store(),
            code,
            || self.inner.get(run, r),
        )
    }

    fn delete(&self, run: &str, r: &StateRef) -> Result<()> {
        let code = |e: &PersistError| e.code.as_str();
        guarded(
            &self.faults,
            FaultOp::StoreDelete,
            Some(r.to_string()),
            injected_store(),
            code,
            || self.inner.delete(run, r),
        )
    }

    fn delete_run(&self, run: &str) -> Result<()> {
        self.inner.delete_run(run)
    }
}

pub struct FaultyRunStore<R> {
    pub inner: R,
    pub faults: SharedFaults,
}

impl<R: RunStore> FaultyRunStore<R> {
    fn write(&self, op: FaultOp, call: impl FnOnce() -> RunResult<()>) -> RunResult<()> {
        guarded(
            &self.faults,
            op,
            None,
            injected_run(),
            |e| e.code.as_str(),
            call,
        )
    }
}

impl<R: RunStore> RunStore for FaultyRunStore<R> {
    fn save_checkpoint(&self, cp: &Checkpoint) -> RunResult<()> {
        self.write(FaultOp::SaveCheckpoint, || self.inner.save_checkpoint(cp))
    }

    fn pause_run(&self, cp: &Checkpoint) -> RunResult<()> {
        self.write(FaultOp::PauseRun, || self.inner.pause_run(cp))
    }

    fn fail_run_resumable(&self, cp: &Checkpoint) -> RunResult<()> {
        self.write(FaultOp::FailRunResumable, || {
            self.inner.fail_run_resumable(cp)
        })
    }

    fn fail_run(&self, cp: &Checkpoint) -> RunResult<()> {
        self.write(FaultOp::FailRun, || self.inner.fail_run(cp))
    }

    fn load_run(&self, run: &str) -> RunResult<Checkpoint> {
        guarded(
            &self.faults,
            FaultOp::LoadRun,
            None,
            injected_run(),
            |e| e.code.as_str(),
            || self.inner.load_run(run),
        )
    }

    fn delete_run(&self, run: &str) -> RunResult<()> {
        self.inner.delete_run(run)
    }
}
