//! The one table of error codes and exit codes.
//!
//! A wire error is `{"code","message","data"}`. The code's class (the part before the
//! first dot) decides the CLI exit code; the table below is what `docs/spec/errors.md`
//! is generated from. Messages are fixed descriptions: they never carry payload bytes,
//! paths, terminal text, argv or credentials.

use serde_json::{json, Map, Value};

/// Exit code of a successful CLI call.
pub const EXIT_OK: i32 = 0;

/// One error class: every code `<class>.<detail>` exits with `exit`.
pub struct ErrorClass {
    pub class: &'static str,
    pub exit: i32,
    pub meaning: &'static str,
}

/// Classes, in the order the docs list them.
pub const ERROR_CLASSES: &[ErrorClass] = &[
    ErrorClass {
        class: "internal",
        exit: 1,
        meaning: "the daemon or client failed in a way no request can fix",
    },
    ErrorClass {
        class: "invalid_request",
        exit: 2,
        meaning: "the frame is not a request: malformed JSON, oversized, unknown verb",
    },
    ErrorClass {
        class: "invalid_params",
        exit: 2,
        meaning: "a parameter is missing, unknown, of the wrong type or out of range; `data.param` names it",
    },
    ErrorClass {
        class: "not_found",
        exit: 3,
        meaning: "an authorized caller named a resource that does not exist",
    },
    ErrorClass {
        class: "denied",
        exit: 4,
        meaning: "the caller lacks a right (checked before any lookup), or its token is invalid",
    },
    ErrorClass {
        class: "conflict",
        exit: 5,
        meaning: "the request is valid but the current state forbids it",
    },
    ErrorClass {
        class: "unavailable",
        exit: 6,
        meaning: "the daemon cannot do it now: shutting down, spawn failed, no daemon, I/O failure",
    },
    ErrorClass {
        class: "unsupported",
        exit: 10,
        meaning: "the request needs a version, size or feature this implementation refuses",
    },
];

/// Every concrete code the core daemon emits, with its meaning (for the docs table).
pub const ERROR_CODES: &[(&str, &str)] = &[
    ("internal.error", "unexpected internal failure"),
    ("invalid_request.malformed", "frame is not strict JSON or not a request object; the connection stays open"),
    ("invalid_request.frame_size", "frame longer than the frame limit; the daemon replies, then closes the connection"),
    ("invalid_request.unknown_verb", "no such verb in the manifest"),
    ("invalid_params.<param>", "the named parameter is missing, of the wrong type, malformed or out of range"),
    ("invalid_params.unknown_param", "a parameter the verb does not declare"),
    ("invalid_params.ack_orphans", "pane.relaunch without ack_orphans=true"),
    ("invalid_params.checkpoint", "the checkpoint id is not `c` + lowercase UUID v4 (never used as a path)"),
    ("invalid_params.config", "a config document or key fails the schema; `data.field` is the path, `data.problem` the rule"),
    ("not_found.session", "no such session"),
    ("not_found.window", "no such window"),
    ("not_found.pane", "no such pane"),
    ("not_found.principal", "no such principal"),
    ("not_found.checkpoint", "an authorized, well-formed checkpoint id names no file"),
    ("denied.read", "caller lacks read on the resource"),
    ("denied.write", "caller lacks write on the resource"),
    ("denied.spawn", "caller lacks spawn on the resource"),
    ("denied.admin", "caller lacks admin on the resource"),
    ("denied.delegation", "asked grants exceed what the spawner or issuer holds"),
    ("denied.token", "the presented token is not valid for this daemon start; the connection closes"),
    ("conflict.not_empty", "the window already has a tiled pane; or recovery.restore: the daemon has a session, window or pane"),
    ("conflict.not_archive", "pane.relaunch: the pane is not a restored archive"),
    ("conflict.recovery_busy", "an explicit checkpoint write is already in flight"),
    ("conflict.checkpoint_corrupt", "checksum, schema, topology or duplicate-generation failure"),
    ("conflict.checkpoint_expired", "the whole checkpoint is expired or future-dated"),
    ("conflict.empty", "the window has no tiled pane to split or place against"),
    ("conflict.layer", "the operation does not apply to a pane of this layer"),
    ("conflict.exited", "the pane's process has exited"),
    ("conflict.revision", "the window's revision changed since the caller read it"),
    ("conflict.tag_limit", "a pane holds at most 16 tags"),
    ("conflict.input_full", "the pane's input queue is full"),
    ("unavailable.shutdown", "the daemon is shutting down and refuses mutations"),
    ("unavailable.spawn", "the program could not be started (for example, executable not found)"),
    ("unavailable.daemon", "CLI only: no daemon answers on the socket"),
    ("unavailable.owner_token", "CLI only: `VENOMX_TOKEN=@owner` but `<socket>.owner` cannot be read"),
    ("unavailable.ids", "an ID counter reached 2^53-1"),
    ("unavailable.config_io", "the config file could not be read or written"),
    ("unavailable.recovery_disabled", "recovery.checkpoint/restore need `.recovery.enabled = true`"),
    ("unavailable.recovery_io", "the recovery store is unsafe, or an I/O or durability step failed"),
    ("unsupported.checkpoint_format", "the checkpoint's durable format is not 1, 2 or 3"),
    ("unsupported.checkpoint_size", "whole-file, count, depth or tag-count bounds exceeded"),
    ("unavailable.locked", "`serve`: another daemon holds the socket's lock"),
];

/// Exit code for an error code, by its class. Unknown classes exit 1.
pub fn exit_code_for(code: &str) -> i32 {
    let class = code.split('.').next().unwrap_or("");
    ERROR_CLASSES
        .iter()
        .find(|c| c.class == class)
        .map_or(1, |c| c.exit)
}

/// A verb's failure, as sent on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: String,
    pub message: &'static str,
    pub data: Map<String, Value>,
}

impl ApiError {
    pub fn new(code: impl Into<String>, message: &'static str) -> Self {
        ApiError {
            code: code.into(),
            message,
            data: Map::new(),
        }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.data.insert(key.to_string(), value.into());
        self
    }

    pub fn exit_code(&self) -> i32 {
        exit_code_for(&self.code)
    }

    pub fn to_json(&self) -> Value {
        json!({"code": self.code, "message": self.message, "data": self.data})
    }

    pub fn internal() -> Self {
        ApiError::new("internal.error", "internal error")
    }

    /// `invalid_params.<param>` with `data.param` set.
    pub fn param(param: &str, message: &'static str) -> Self {
        ApiError::new(format!("invalid_params.{param}"), message).with("param", param)
    }

    pub fn not_found(kind: &str) -> Self {
        let message = match kind {
            "session" => "session not found",
            "window" => "window not found",
            "pane" => "pane not found",
            "principal" => "principal not found",
            _ => "not found",
        };
        ApiError::new(format!("not_found.{kind}"), message)
    }

    pub fn conflict(detail: &str, message: &'static str) -> Self {
        ApiError::new(format!("conflict.{detail}"), message)
    }

    pub fn shutdown() -> Self {
        ApiError::new("unavailable.shutdown", "daemon is shutting down")
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_map_to_rfc_exit_codes() {
        assert_eq!(exit_code_for("invalid_params.checkpoint"), 2);
        assert_eq!(exit_code_for("not_found.checkpoint"), 3);
        assert_eq!(exit_code_for("denied.admin"), 4);
        assert_eq!(exit_code_for("conflict.not_empty"), 5);
        assert_eq!(exit_code_for("unavailable.recovery_io"), 6);
        assert_eq!(exit_code_for("unsupported.checkpoint_size"), 10);
        assert_eq!(exit_code_for("nonsense"), 1);
    }

    #[test]
    fn every_listed_code_has_a_class() {
        for (code, _) in ERROR_CODES {
            let class = code.split('.').next().unwrap();
            assert!(ERROR_CLASSES.iter().any(|c| c.class == class), "{code}");
        }
    }
}
