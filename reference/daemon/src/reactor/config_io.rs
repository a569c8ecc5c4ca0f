//! The config worker thread: every read and write of the config file happens here,
//! never in a reactor turn (`config.set`'s atomic write and its fsyncs, `config.check`
//! of the file, reload's read and validation, doctor's re-read). Jobs run one at a
//! time, so two `config.set`s never interleave their read-modify-write.
//!
//! It answers `config.set` and `config.check` on their [`Reply`]; reload and doctor
//! continue elsewhere (retention on the recovery worker, the store's facts), so their
//! jobs carry the continuation the reactor built, and this module knows nothing of
//! recovery.

use crate::config::doc::set_path;
use crate::config::zon::Zon;
use crate::config::{self, Config, LoadError};
use crate::doctor::ConfigFile;
use crate::errors::{ApiError, ApiResult};
use crate::stream::{Outcome, Reply};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// What the config worker does. `path` is `None` when no config home could be
/// resolved (every file operation then fails `unavailable.config_io`).
pub enum ConfigJob {
    /// `config.set`: read the file, set one validated field, check the whole
    /// document, write it atomically.
    Set {
        path: Option<PathBuf>,
        key: Vec<String>,
        value: Zon,
        reply: Reply,
    },
    /// `config.check` of the file.
    Check { path: Option<PathBuf>, reply: Reply },
    /// Reload, phase one (RFC §2): read and validate with no side effect; `then`
    /// continues with the result.
    Reload {
        path: Option<PathBuf>,
        then: Box<dyn FnOnce(ApiResult<Config>) + Send>,
    },
    /// `doctor`: re-read and validate the file like `config.check` (only its error
    /// code is kept); `then` continues with it.
    Doctor {
        path: Option<PathBuf>,
        then: Box<dyn FnOnce(ConfigFile) + Send>,
    },
}

/// Starts the thread; it ends when the job sender is dropped.
pub fn start() -> std::sync::mpsc::Sender<ConfigJob> {
    let (tx, rx) = std::sync::mpsc::channel::<ConfigJob>();
    let spawned = std::thread::Builder::new()
        .name("vxref-config".into())
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                run(job);
            }
        });
    // Without a thread every job's reply sender is dropped: callers see shutdown.
    drop(spawned);
    tx
}

fn file(path: Option<&Path>) -> Result<&Path, LoadError> {
    path.ok_or(LoadError::Io)
}

fn bad_key() -> ApiError {
    ApiError::param("key", "no such config field")
}

fn set(path: Option<&Path>, key: &[String], value: Zon) -> ApiResult<Value> {
    let file = file(path).map_err(|e| e.to_api())?;
    let (mut doc, _) = config::load(file).map_err(|e| e.to_api())?;
    if !set_path(&mut doc, key, value) {
        return Err(bad_key());
    }
    Config::from_zon(&doc).map_err(|e| LoadError::Schema(e).to_api())?;
    config::store(file, &doc).map_err(|_| LoadError::Io.to_api())?;
    Ok(json!({}))
}

fn run(job: ConfigJob) {
    match job {
        ConfigJob::Set {
            path,
            key,
            value,
            reply,
        } => {
            let _ = reply.send(Outcome::reply(set(path.as_deref(), &key, value)));
        }
        ConfigJob::Check { path, reply } => {
            let result = file(path.as_deref())
                .and_then(config::load)
                .map(|_| json!({"valid": true}))
                .map_err(|e| e.to_api());
            let _ = reply.send(Outcome::reply(result));
        }
        ConfigJob::Reload { path, then } => {
            then(
                file(path.as_deref())
                    .and_then(config::load_with_plugins)
                    .map_err(|e| e.to_api()),
            );
        }
        ConfigJob::Doctor { path, then } => {
            then(match path.as_deref() {
                None => ConfigFile::NoPath,
                Some(p) => match config::load(p) {
                    Ok(_) => ConfigFile::Valid,
                    Err(e) => ConfigFile::Invalid(e.to_api().code),
                },
            });
        }
    }
}
