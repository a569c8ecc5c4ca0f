//! `config.get/set/check/reload`. `set` only persists (validated); `reload` activates
//! the file's config, or changes nothing when it is invalid.

use super::params::Params;
use super::State;
use crate::config::schema::{get_path, json_to_zon, set_path, split_key, zon_to_json};
use crate::config::{self, Config, LoadError};
use crate::errors::{ApiError, ApiResult};
use serde_json::{json, Value};
use std::path::PathBuf;

fn bad_key() -> ApiError {
    ApiError::param("key", "no such config field")
}

impl State {
    fn config_file(&self) -> ApiResult<PathBuf> {
        self.identity
            .config_path
            .clone()
            .ok_or_else(|| LoadError::Io.to_api())
    }

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

    pub(super) fn config_set(&mut self, p: &Params<'_>) -> ApiResult<Value> {
        let key = p.str("key")?;
        let path = split_key(key).ok_or_else(bad_key)?;
        let leaf = path.last().map(String::as_str).unwrap_or("");
        let value = p
            .json("value")
            .and_then(|v| json_to_zon(v, leaf))
            .ok_or_else(|| ApiError::param("value", "value has no config representation"))?;
        let file = self.config_file()?;
        let (mut doc, _) = config::load(&file).map_err(|e| e.to_api())?;
        if !set_path(&mut doc, &path, value) {
            return Err(bad_key());
        }
        Config::from_zon(&doc).map_err(|e| LoadError::Schema(e).to_api())?;
        config::store(&file, &doc).map_err(|_| LoadError::Io.to_api())?;
        Ok(json!({}))
    }

    pub(super) fn config_check(&self, p: &Params<'_>) -> ApiResult<Value> {
        match p.opt_str("text") {
            Some(text) => config::check_text(text.as_bytes()),
            None => config::load(&self.config_file()?),
        }
        .map_err(|e| e.to_api())?;
        Ok(json!({"valid": true}))
    }
}
