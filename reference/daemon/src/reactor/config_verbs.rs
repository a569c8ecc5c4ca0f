//! `config.get/set/check` in the reactor (`config.reload` is recovery's: its retention
//! runs on the recovery worker). `set` only persists (validated); the file itself is
//! read and written only by the config worker (`config_io.rs`).

use super::config_io::ConfigJob;
use super::params::Params;
use super::{Outcome, Reply, State};
use crate::config;
use crate::config::doc::{get_path, json_to_zon, split_key, zon_to_json};
use crate::errors::{ApiError, ApiResult};
use serde_json::{json, Value};

fn bad_key() -> ApiError {
    ApiError::param("key", "no such config field")
}

impl State {
    pub(super) fn config_get(&self, p: &Params<'_>) -> ApiResult<Value> {
        let doc = self.config.to_zon();
        match p.opt_str("key") {
            None => Ok(json!({"config": zon_to_json(&doc)})),
            Some(key) => {
                let path = split_key(key).ok_or_else(bad_key)?;
                let value = get_path(&doc, &path).ok_or_else(bad_key)?;
                Ok(json!({"key": key, "value": zon_to_json(value)}))
            }
        }
    }

    /// `config.set`: the key and value are checked here; the read-modify-write and
    /// the atomic write (with its fsyncs) are the config worker's.
    pub(super) fn config_set(&mut self, p: &Params<'_>, reply: Reply) {
        let parsed = (|| {
            let path = split_key(p.str("key")?).ok_or_else(bad_key)?;
            let leaf = path.last().map(String::as_str).unwrap_or("");
            let value = p
                .json("value")
                .and_then(|v| json_to_zon(v, leaf))
                .ok_or_else(|| ApiError::param("value", "value has no config representation"))?;
            Ok((path, value))
        })();
        match parsed {
            Ok((key, value)) => self.send_config_job(ConfigJob::Set {
                path: self.identity.config_path.clone(),
                key,
                value,
                reply,
            }),
            Err(e) => drop(reply.send(Outcome::reply(Err(e)))),
        }
    }

    /// `config.check`: given text is checked here (no I/O); the file, by the worker.
    pub(super) fn config_check(&mut self, p: &Params<'_>, reply: Reply) {
        match p.opt_str("text") {
            Some(text) => {
                let result = config::check_text(text.as_bytes())
                    .map(|_| json!({"valid": true}))
                    .map_err(|e| e.to_api());
                let _ = reply.send(Outcome::reply(result));
            }
            None => self.send_config_job(ConfigJob::Check {
                path: self.identity.config_path.clone(),
                reply,
            }),
        }
    }

    /// A send failure drops the job and its reply: the client sees shutdown.
    fn send_config_job(&self, job: ConfigJob) {
        let _ = self.config_jobs.send(job);
    }
}
