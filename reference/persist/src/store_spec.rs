//! A store named on a command line: `fs:DIR` or `s3:URL/BUCKET`
//! (docs/spec/persist-store.md).

use std::path::Path;

use crate::error::{ErrorCode, PersistError, Result};
use crate::s3::S3Store;
use crate::store::{BackendSessionStore, FsStore};

/// Opens the store `spec` names. An `s3:` store reads its identity from the
/// environment and checks its bucket exists before anything else runs.
pub fn open_store(spec: &str) -> Result<Box<dyn BackendSessionStore>> {
    if let Some(dir) = spec.strip_prefix("fs:") {
        return Ok(Box::new(FsStore::open(Path::new(dir))?));
    }
    if let Some(location) = spec.strip_prefix("s3:") {
        return Ok(Box::new(S3Store::open(location)?));
    }
    Err(PersistError::new(
        ErrorCode::InvalidStore,
        "a store is fs:DIR or s3:URL/BUCKET",
    ))
}

/// The failures that say the store (or its configuration) is not there to judge,
/// rather than that it broke the contract: a suite seeing one is a harness error.
pub fn is_environment_error(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::InvalidStore
            | ErrorCode::BucketNotFound
            | ErrorCode::StoreDenied
            | ErrorCode::StoreSignature
            | ErrorCode::StoreUnavailable
    )
}
