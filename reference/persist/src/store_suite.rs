//! The conformance suite every `BackendSessionStore` runs (the peer's `storetest`,
//! strict where the peer is loose: create-only put, typed not-found, idempotent
//! delete, a sweeping DeleteRun). `vxpersist store-suite` runs it on a named store.

use crate::error::{ErrorCode, PersistError};
use crate::store::{BackendSessionStore, StateRef};
use crate::store_spec::is_environment_error;

/// One check's outcome: its name and a failure description (never blob bytes).
/// `harness_error`: the check could not judge the store (unreachable, denied, no
/// bucket), so the failure is no verdict on the contract.
pub struct CheckOutcome {
    pub name: &'static str,
    pub failure: Option<String>,
    pub harness_error: bool,
}

/// Why a check did not pass.
struct Failure {
    text: String,
    harness: bool,
}

impl From<String> for Failure {
    fn from(text: String) -> Self {
        Failure {
            text,
            harness: false,
        }
    }
}

impl From<&str> for Failure {
    fn from(text: &str) -> Self {
        Failure::from(text.to_owned())
    }
}

impl From<PersistError> for Failure {
    fn from(e: PersistError) -> Self {
        Failure {
            harness: is_environment_error(e.code),
            text: e.to_string(),
        }
    }
}

type Check = fn(&dyn BackendSessionStore, &str) -> Result<(), Failure>;

fn r(text: &str) -> StateRef {
    StateRef::parse(text).expect("suite refs are valid")
}

fn expect_code<T>(got: Result<T, PersistError>, code: ErrorCode) -> Result<(), Failure> {
    match got {
        Err(e) if e.code == code => Ok(()),
        Err(e) => Err(Failure {
            harness: is_environment_error(e.code),
            text: format!("expected {code}, got {e}"),
        }),
        Ok(_) => Err(format!("expected {code}, got success").into()),
    }
}

fn ok<T>(got: Result<T, PersistError>) -> Result<T, Failure> {
    got.map_err(Failure::from)
}

const A: &str = "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8T";
const B: &str = "writer/01J9ZQ4V7X8M2K3N4P5Q6R7S8V";
const PAUSE: &str = "writer/pause/01J9ZQ4V7X8M2K3N4P5Q6R7S8W";

const CHECKS: [(&str, Check); 8] = [
    ("put then get returns the same bytes", |s, run| {
        ok(s.put(run, &r(A), b"blob-a"))?;
        (ok(s.get(run, &r(A)))? == b"blob-a")
            .then_some(())
            .ok_or("get returned other bytes".into())
    }),
    (
        "a second put under the same ref is conflict.exists and keeps the first",
        |s, run| {
            ok(s.put(run, &r(A), b"first"))?;
            expect_code(s.put(run, &r(A), b"second"), ErrorCode::Exists)?;
            (ok(s.get(run, &r(A)))? == b"first")
                .then_some(())
                .ok_or("the first blob was replaced".into())
        },
    ),
    (
        "an empty blob and a 1 MiB blob round-trip byte for byte",
        |s, run| {
            let big: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
            ok(s.put(run, &r(A), b""))?;
            ok(s.put(run, &r(B), &big))?;
            let got = (ok(s.get(run, &r(A)))?, ok(s.get(run, &r(B)))?);
            (got.0.is_empty() && got.1 == big)
                .then_some(())
                .ok_or("a blob came back changed".into())
        },
    ),
    (
        "delete of a never-put ref and delete_run of an empty run succeed",
        |s, run| {
            ok(s.delete(run, &r(B)))?;
            ok(s.delete_run(run))?;
            ok(s.delete_run(&format!("{run}-never")))
        },
    ),
    ("get of a missing ref is not_found.blob", |s, run| {
        expect_code(s.get(run, &r(B)), ErrorCode::BlobNotFound)
    }),
    ("delete is idempotent", |s, run| {
        ok(s.put(run, &r(A), b"a"))?;
        ok(s.delete(run, &r(A)))?;
        ok(s.delete(run, &r(A)))?;
        expect_code(s.get(run, &r(A)), ErrorCode::BlobNotFound)
    }),
    ("pause refs and completed refs are distinct", |s, run| {
        ok(s.put(run, &r(A), b"slot"))?;
        ok(s.put(run, &r(PAUSE), b"pause"))?;
        let both = (ok(s.get(run, &r(A)))?, ok(s.get(run, &r(PAUSE)))?);
        (both == (b"slot".to_vec(), b"pause".to_vec()))
            .then_some(())
            .ok_or("refs collided".into())
    }),
    (
        "delete_run sweeps every blob of the run and only that run",
        |s, run| {
            let other = format!("{run}-other");
            ok(s.put(run, &r(A), b"a"))?;
            ok(s.put(run, &r(PAUSE), b"p"))?;
            ok(s.put(&other, &r(A), b"kept"))?;
            ok(s.delete_run(run))?;
            ok(s.delete_run(run))?;
            expect_code(s.get(run, &r(A)), ErrorCode::BlobNotFound)?;
            expect_code(s.get(run, &r(PAUSE)), ErrorCode::BlobNotFound)?;
            let kept = ok(s.get(&other, &r(A)))?;
            ok(s.delete_run(&other))?;
            (kept == b"kept")
                .then_some(())
                .ok_or("another run's blob was swept".into())
        },
    ),
];

/// Runs every check in its own run id (`<prefix>-<n>`), deleting the run after.
pub fn run_suite(store: &dyn BackendSessionStore, prefix: &str) -> Vec<CheckOutcome> {
    CHECKS
        .iter()
        .enumerate()
        .map(|(i, (name, check))| {
            let run = format!("{prefix}-{i}");
            let mut failure = check(store, &run).err();
            if let (None, Err(e)) = (&failure, store.delete_run(&run)) {
                failure = Some(Failure {
                    harness: is_environment_error(e.code),
                    text: format!("cleanup: {e}"),
                });
            }
            CheckOutcome {
                name,
                harness_error: failure.as_ref().is_some_and(|f| f.harness),
                failure: failure.map(|f| f.text),
            }
        })
        .collect()
}
