//! In-memory twins of the stores, for the runtime's property tests and fuzz
//! targets (no filesystem, deterministic). Semantics follow the fs twins: a
//! create-only put, `not_found.blob` on a missing get, an idempotent delete.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::error::{ErrorCode, PersistError, Result};
use crate::runstore::{Checkpoint, RunResult, RunStatus, RunStore, RunStoreCode, RunStoreError};
use crate::store::{check_run, BackendSessionStore, StateRef};

#[derive(Debug, Default)]
pub struct MemoryStore {
    pub blobs: RefCell<BTreeMap<(String, String), Vec<u8>>>,
}

impl BackendSessionStore for MemoryStore {
    fn put(&self, run: &str, r: &StateRef, blob: &[u8]) -> Result<()> {
        check_run(run)?;
        let key = (run.to_owned(), r.to_string());
        let mut blobs = self.blobs.borrow_mut();
        if blobs.contains_key(&key) {
            return Err(PersistError::new(
                ErrorCode::Exists,
                "a blob already exists under the ref",
            ));
        }
        blobs.insert(key, blob.to_vec());
        Ok(())
    }

    fn get(&self, run: &str, r: &StateRef) -> Result<Vec<u8>> {
        self.blobs
            .borrow()
            .get(&(run.to_owned(), r.to_string()))
            .cloned()
            .ok_or(PersistError::new(
                ErrorCode::BlobNotFound,
                "no blob under the ref",
            ))
    }

    fn delete(&self, run: &str, r: &StateRef) -> Result<()> {
        self.blobs
            .borrow_mut()
            .remove(&(run.to_owned(), r.to_string()));
        Ok(())
    }

    fn delete_run(&self, run: &str) -> Result<()> {
        self.blobs.borrow_mut().retain(|(r, _), _| r != run);
        Ok(())
    }
}

#[derive(Debug, Default)]
pub struct MemoryRunStore {
    pub runs: RefCell<BTreeMap<String, Checkpoint>>,
}

impl MemoryRunStore {
    fn write(&self, cp: &Checkpoint, status: RunStatus) -> RunResult<()> {
        let mut cp = cp.clone();
        cp.status = status;
        cp.validate()?;
        self.runs.borrow_mut().insert(cp.run.clone(), cp);
        Ok(())
    }
}

impl RunStore for MemoryRunStore {
    fn save_checkpoint(&self, cp: &Checkpoint) -> RunResult<()> {
        self.write(cp, cp.status.saved())
    }

    fn pause_run(&self, cp: &Checkpoint) -> RunResult<()> {
        self.write(cp, RunStatus::Paused)
    }

    fn fail_run_resumable(&self, cp: &Checkpoint) -> RunResult<()> {
        self.write(cp, RunStatus::FailedResumable)
    }

    fn fail_run(&self, cp: &Checkpoint) -> RunResult<()> {
        self.write(cp, RunStatus::Failed)
    }

    fn load_run(&self, run: &str) -> RunResult<Checkpoint> {
        self.runs
            .borrow()
            .get(run)
            .cloned()
            .ok_or(RunStoreError::new(
                RunStoreCode::RunNotFound,
                "the run has no checkpoint",
            ))
    }

    fn delete_run(&self, run: &str) -> RunResult<()> {
        self.runs.borrow_mut().remove(run);
        Ok(())
    }
}
