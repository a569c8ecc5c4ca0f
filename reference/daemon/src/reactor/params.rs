//! Typed access to a request's params, checked against the verb's manifest entry.
//! Every failure is `invalid_params.<param>`; no value is echoed.

use crate::errors::{ApiError, ApiResult, ErrorCode};
use crate::ids::{PaneId, SessionId, WindowId};
use crate::manifest::{ParamKind, Verb};
use serde_json::{Map, Value};

/// Checks names, presence and JSON types against the manifest.
pub fn check_shape(verb: &Verb, params: &Map<String, Value>) -> ApiResult<()> {
    for (name, value) in params {
        let Some(spec) = verb.param(name) else {
            let e = ApiError::new(ErrorCode::UnknownParam, "unknown parameter");
            // Only echo the name when it looks like a parameter name.
            let plain =
                name.len() <= 64 && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
            return Err(if plain {
                e.with("param", name.as_str())
            } else {
                e
            });
        };
        let ok = match spec.kind {
            ParamKind::String => value.is_string(),
            ParamKind::Integer => value.is_i64() || value.is_u64(),
            ParamKind::Boolean => value.is_boolean(),
            ParamKind::Json => true,
        };
        if !ok {
            return Err(ApiError::param(spec.name, "parameter has the wrong type"));
        }
    }
    for spec in verb.params.iter().filter(|p| p.required) {
        if !params.contains_key(spec.name) {
            return Err(ApiError::param(spec.name, "required parameter missing"));
        }
    }
    Ok(())
}

pub struct Params<'a>(pub &'a Map<String, Value>);

impl<'a> Params<'a> {
    pub fn opt_str(&self, name: &'static str) -> Option<&'a str> {
        self.0.get(name).and_then(Value::as_str)
    }

    pub fn str(&self, name: &'static str) -> ApiResult<&'a str> {
        self.opt_str(name)
            .ok_or_else(|| ApiError::param(name, "required parameter missing"))
    }

    pub fn opt_int(&self, name: &'static str, min: i64, max: i64) -> ApiResult<Option<i64>> {
        match self.0.get(name) {
            None => Ok(None),
            Some(v) => match v.as_i64() {
                Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
                _ => Err(ApiError::param(name, "integer out of range")),
            },
        }
    }

    pub fn int(&self, name: &'static str, min: i64, max: i64) -> ApiResult<i64> {
        self.opt_int(name, min, max)?
            .ok_or_else(|| ApiError::param(name, "required parameter missing"))
    }

    pub fn opt_bool(&self, name: &'static str) -> Option<bool> {
        self.0.get(name).and_then(Value::as_bool)
    }

    pub fn json(&self, name: &'static str) -> Option<&'a Value> {
        self.0.get(name)
    }

    pub fn session(&self, name: &'static str) -> ApiResult<SessionId> {
        SessionId::parse(self.str(name)?).ok_or_else(|| ApiError::param(name, "not a session id"))
    }

    pub fn window(&self, name: &'static str) -> ApiResult<WindowId> {
        WindowId::parse(self.str(name)?).ok_or_else(|| ApiError::param(name, "not a window id"))
    }

    pub fn pane(&self, name: &'static str) -> ApiResult<PaneId> {
        PaneId::parse(self.str(name)?).ok_or_else(|| ApiError::param(name, "not a pane id"))
    }

    pub fn opt_pane(&self, name: &'static str) -> ApiResult<Option<PaneId>> {
        match self.opt_str(name) {
            None => Ok(None),
            Some(_) => self.pane(name).map(Some),
        }
    }

    pub fn opt_window(&self, name: &'static str) -> ApiResult<Option<WindowId>> {
        match self.opt_str(name) {
            None => Ok(None),
            Some(_) => self.window(name).map(Some),
        }
    }

    /// A non-empty JSON array of strings without NUL bytes (at most 4096 entries).
    pub fn argv(&self, name: &'static str) -> ApiResult<Vec<String>> {
        let bad = || ApiError::param(name, "argv must be a non-empty array of strings");
        let items = self.json(name).and_then(Value::as_array).ok_or_else(bad)?;
        if items.is_empty() || items.len() > 4096 {
            return Err(bad());
        }
        let argv: Vec<String> = items
            .iter()
            .map(|v| v.as_str().filter(|s| !s.contains('\0')).map(String::from))
            .collect::<Option<_>>()
            .ok_or_else(bad)?;
        if argv[0].is_empty() {
            return Err(bad());
        }
        Ok(argv)
    }

    /// An optional JSON array of strings (`grants`).
    pub fn string_list(&self, name: &'static str) -> ApiResult<Vec<String>> {
        match self.json(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) if items.len() <= 256 => items
                .iter()
                .map(|v| v.as_str().map(String::from))
                .collect::<Option<_>>()
                .ok_or_else(|| ApiError::param(name, "expected an array of strings")),
            Some(_) => Err(ApiError::param(name, "expected an array of strings")),
        }
    }
}
