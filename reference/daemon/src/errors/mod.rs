//! The one table of error codes and exit codes.
//!
//! A wire error is `{"code","message","data"}`. Every code is an [`ErrorCode`]; its
//! [`Class`] (the part before the first dot) decides the CLI exit code. The wire
//! strings and `docs/spec/errors.md`'s table both come from [`ErrorCode::as_str`] and
//! [`ErrorCode::ALL`]. Messages are fixed descriptions: they never carry payload bytes,
//! paths, terminal text, argv or credentials.

mod text;

use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// Exit code of a successful CLI call.
pub const EXIT_OK: i32 = 0;

/// An error class: every code `<class>.<detail>` exits with [`Class::exit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    Internal,
    InvalidRequest,
    InvalidParams,
    NotFound,
    Denied,
    Conflict,
    Unavailable,
    Unsupported,
}

impl Class {
    /// In the order the docs list them.
    pub const ALL: [Class; 8] = [
        Class::Internal,
        Class::InvalidRequest,
        Class::InvalidParams,
        Class::NotFound,
        Class::Denied,
        Class::Conflict,
        Class::Unavailable,
        Class::Unsupported,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Class::Internal => "internal",
            Class::InvalidRequest => "invalid_request",
            Class::InvalidParams => "invalid_params",
            Class::NotFound => "not_found",
            Class::Denied => "denied",
            Class::Conflict => "conflict",
            Class::Unavailable => "unavailable",
            Class::Unsupported => "unsupported",
        }
    }

    /// The CLI exit code (RFC §6's table for the classes it names).
    pub fn exit(self) -> i32 {
        match self {
            Class::Internal => 1,
            Class::InvalidRequest | Class::InvalidParams => 2,
            Class::NotFound => 3,
            Class::Denied => 4,
            Class::Conflict => 5,
            Class::Unavailable => 6,
            Class::Unsupported => 10,
        }
    }

    pub fn meaning(self) -> &'static str {
        match self {
            Class::Internal => "the daemon or client failed in a way no request can fix",
            Class::InvalidRequest => "the frame is not a request: malformed JSON, oversized, unknown verb",
            Class::InvalidParams => "a parameter is missing, unknown, of the wrong type or out of range; `data.param` names it",
            Class::NotFound => "an authorized caller named a resource that does not exist",
            Class::Denied => "the caller lacks a right (checked before any lookup), or its token is invalid",
            Class::Conflict => "the request is valid but the current state forbids it",
            Class::Unavailable => "the daemon cannot do it now: shutting down, spawn failed, no daemon, I/O failure",
            Class::Unsupported => "the request needs a version, size or feature this implementation refuses",
        }
    }

    pub fn parse(class: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.as_str() == class)
    }
}

/// Every code the core daemon and its CLI emit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    Internal,
    Malformed,
    FrameSize,
    UnknownVerb,
    /// `invalid_params.<param>`: the named parameter (its declared name, or `config`
    /// for a config document) is missing, of the wrong type, malformed or out of range.
    Param(&'static str),
    UnknownParam,
    SessionNotFound,
    WindowNotFound,
    PaneNotFound,
    PrincipalNotFound,
    CheckpointNotFound,
    DeniedRead,
    DeniedWrite,
    DeniedSpawn,
    DeniedAdmin,
    DeniedDelegation,
    DeniedToken,
    NotEmpty,
    NotArchive,
    RecoveryBusy,
    CheckpointCorrupt,
    CheckpointExpired,
    Empty,
    Layer,
    Exited,
    Revision,
    TagLimit,
    InputFull,
    Shutdown,
    Spawn,
    Daemon,
    OwnerToken,
    Ids,
    ConfigIo,
    RecoveryDisabled,
    RecoveryIo,
    CheckpointFormat,
    CheckpointSize,
    Locked,
    ReservedKey,
    IntegrationNotFound,
    MetaKeyLimit,
    IntegrationDisabled,
    IntegrationAmbiguous,
    IntegrationOwner,
    Exists,
    AgentSessionUnconfirmed,
    ArchiveCorrupt,
    NativeRestore,
    ArchiveSchema,
    FileIo,
    Terminal,
}

/// The placeholder the docs table shows for [`ErrorCode::Param`].
const ANY_PARAM: &str = "<param>";

impl ErrorCode {
    /// Every code, in the order the docs table lists them. `Param` appears once for
    /// any parameter and once for each parameter code RFC §6 or the config names.
    pub const ALL: [ErrorCode; 58] = [
        ErrorCode::Internal,
        ErrorCode::Malformed,
        ErrorCode::FrameSize,
        ErrorCode::UnknownVerb,
        ErrorCode::Param(ANY_PARAM),
        ErrorCode::UnknownParam,
        ErrorCode::Param("ack_orphans"),
        ErrorCode::Param("checkpoint"),
        ErrorCode::Param("config"),
        ErrorCode::Param("agent_session"),
        ErrorCode::Param("native_id"),
        ErrorCode::Param("fallback_argv"),
        ErrorCode::SessionNotFound,
        ErrorCode::WindowNotFound,
        ErrorCode::PaneNotFound,
        ErrorCode::PrincipalNotFound,
        ErrorCode::CheckpointNotFound,
        ErrorCode::DeniedRead,
        ErrorCode::DeniedWrite,
        ErrorCode::DeniedSpawn,
        ErrorCode::DeniedAdmin,
        ErrorCode::DeniedDelegation,
        ErrorCode::DeniedToken,
        ErrorCode::NotEmpty,
        ErrorCode::NotArchive,
        ErrorCode::RecoveryBusy,
        ErrorCode::CheckpointCorrupt,
        ErrorCode::CheckpointExpired,
        ErrorCode::Empty,
        ErrorCode::Layer,
        ErrorCode::Exited,
        ErrorCode::Revision,
        ErrorCode::TagLimit,
        ErrorCode::InputFull,
        ErrorCode::Shutdown,
        ErrorCode::Spawn,
        ErrorCode::Daemon,
        ErrorCode::OwnerToken,
        ErrorCode::Ids,
        ErrorCode::ConfigIo,
        ErrorCode::RecoveryDisabled,
        ErrorCode::RecoveryIo,
        ErrorCode::CheckpointFormat,
        ErrorCode::CheckpointSize,
        ErrorCode::Locked,
        ErrorCode::ReservedKey,
        ErrorCode::IntegrationNotFound,
        ErrorCode::MetaKeyLimit,
        ErrorCode::IntegrationDisabled,
        ErrorCode::IntegrationAmbiguous,
        ErrorCode::IntegrationOwner,
        ErrorCode::Exists,
        ErrorCode::AgentSessionUnconfirmed,
        ErrorCode::ArchiveCorrupt,
        ErrorCode::NativeRestore,
        ErrorCode::ArchiveSchema,
        ErrorCode::FileIo,
        ErrorCode::Terminal,
    ];

    /// The wire string.
    pub fn as_str(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            ErrorCode::Internal => "internal.error",
            ErrorCode::Malformed => "invalid_request.malformed",
            ErrorCode::FrameSize => "invalid_request.frame_size",
            ErrorCode::UnknownVerb => "invalid_request.unknown_verb",
            ErrorCode::Param(p) => return Cow::Owned(format!("invalid_params.{p}")),
            ErrorCode::UnknownParam => "invalid_params.unknown_param",
            ErrorCode::SessionNotFound => "not_found.session",
            ErrorCode::WindowNotFound => "not_found.window",
            ErrorCode::PaneNotFound => "not_found.pane",
            ErrorCode::PrincipalNotFound => "not_found.principal",
            ErrorCode::CheckpointNotFound => "not_found.checkpoint",
            ErrorCode::DeniedRead => "denied.read",
            ErrorCode::DeniedWrite => "denied.write",
            ErrorCode::DeniedSpawn => "denied.spawn",
            ErrorCode::DeniedAdmin => "denied.admin",
            ErrorCode::DeniedDelegation => "denied.delegation",
            ErrorCode::DeniedToken => "denied.token",
            ErrorCode::NotEmpty => "conflict.not_empty",
            ErrorCode::NotArchive => "conflict.not_archive",
            ErrorCode::RecoveryBusy => "conflict.recovery_busy",
            ErrorCode::CheckpointCorrupt => "conflict.checkpoint_corrupt",
            ErrorCode::CheckpointExpired => "conflict.checkpoint_expired",
            ErrorCode::Empty => "conflict.empty",
            ErrorCode::Layer => "conflict.layer",
            ErrorCode::Exited => "conflict.exited",
            ErrorCode::Revision => "conflict.revision",
            ErrorCode::TagLimit => "conflict.tag_limit",
            ErrorCode::InputFull => "conflict.input_full",
            ErrorCode::Shutdown => "unavailable.shutdown",
            ErrorCode::Spawn => "unavailable.spawn",
            ErrorCode::Daemon => "unavailable.daemon",
            ErrorCode::OwnerToken => "unavailable.owner_token",
            ErrorCode::Ids => "unavailable.ids",
            ErrorCode::ConfigIo => "unavailable.config_io",
            ErrorCode::RecoveryDisabled => "unavailable.recovery_disabled",
            ErrorCode::RecoveryIo => "unavailable.recovery_io",
            ErrorCode::CheckpointFormat => "unsupported.checkpoint_format",
            ErrorCode::CheckpointSize => "unsupported.checkpoint_size",
            ErrorCode::Locked => "unavailable.locked",
            ErrorCode::ReservedKey => "denied.reserved_key",
            ErrorCode::IntegrationNotFound => "not_found.integration",
            ErrorCode::MetaKeyLimit => "conflict.meta_limit",
            ErrorCode::IntegrationDisabled => "conflict.integration_disabled",
            ErrorCode::IntegrationAmbiguous => "conflict.integration_ambiguous",
            ErrorCode::IntegrationOwner => "conflict.integration_owner",
            ErrorCode::Exists => "conflict.exists",
            ErrorCode::AgentSessionUnconfirmed => "conflict.agent_session_unconfirmed",
            ErrorCode::ArchiveCorrupt => "conflict.archive_corrupt",
            ErrorCode::NativeRestore => "unsupported.native_restore",
            ErrorCode::ArchiveSchema => "unsupported.archive_schema",
            ErrorCode::FileIo => "unavailable.file_io",
            ErrorCode::Terminal => "unavailable.terminal",
        })
    }

    pub fn class(self) -> Class {
        use ErrorCode as E;
        match self {
            E::Internal => Class::Internal,
            E::Malformed | E::FrameSize | E::UnknownVerb => Class::InvalidRequest,
            E::Param(_) | E::UnknownParam => Class::InvalidParams,
            E::SessionNotFound
            | E::WindowNotFound
            | E::PaneNotFound
            | E::PrincipalNotFound
            | E::CheckpointNotFound
            | E::IntegrationNotFound => Class::NotFound,
            E::DeniedRead
            | E::DeniedWrite
            | E::DeniedSpawn
            | E::DeniedAdmin
            | E::DeniedDelegation
            | E::DeniedToken
            | E::ReservedKey => Class::Denied,
            E::NotEmpty
            | E::NotArchive
            | E::RecoveryBusy
            | E::CheckpointCorrupt
            | E::CheckpointExpired
            | E::Empty
            | E::Layer
            | E::Exited
            | E::Revision
            | E::TagLimit
            | E::InputFull
            | E::MetaKeyLimit
            | E::IntegrationDisabled
            | E::IntegrationAmbiguous
            | E::IntegrationOwner
            | E::Exists
            | E::AgentSessionUnconfirmed
            | E::ArchiveCorrupt => Class::Conflict,
            E::Shutdown
            | E::Spawn
            | E::Daemon
            | E::OwnerToken
            | E::Ids
            | E::ConfigIo
            | E::RecoveryDisabled
            | E::RecoveryIo
            | E::Locked
            | E::FileIo
            | E::Terminal => Class::Unavailable,
            E::CheckpointFormat | E::CheckpointSize | E::NativeRestore | E::ArchiveSchema => {
                Class::Unsupported
            }
        }
    }

    pub fn exit_code(self) -> i32 {
        self.class().exit()
    }

    /// The code of a wire string, if it is one this daemon defines. A parameter code
    /// resolves through `param`, which gives a parameter's `'static` name when it is
    /// one (the manifest's [`crate::manifest::parse_error_code`] passes its declared
    /// params; this table sits below the manifest and does not import it).
    pub fn parse_with(
        code: &str,
        param: impl Fn(&str) -> Option<&'static str>,
    ) -> Option<ErrorCode> {
        if let Some(name) = code.strip_prefix("invalid_params.") {
            if name == "unknown_param" {
                return Some(ErrorCode::UnknownParam);
            }
            return named_param(name)
                .or_else(|| param(name))
                .map(ErrorCode::Param);
        }
        ErrorCode::ALL
            .into_iter()
            .filter(|c| !matches!(c, ErrorCode::Param(_)))
            .find(|c| c.as_str() == code)
    }

    /// [`Self::parse_with`] for the codes this table names, parameter codes included
    /// only where the table lists them (`invalid_params.checkpoint`, …).
    pub fn parse(code: &str) -> Option<ErrorCode> {
        Self::parse_with(code, |_| None)
    }
}

/// A parameter code the table lists on its own, as its `'static` name; `config` and
/// `fallback_argv` are not verb params (the config document, the restore client's flag).
fn named_param(name: &str) -> Option<&'static str> {
    ErrorCode::ALL.into_iter().find_map(|c| match c {
        ErrorCode::Param(p) if p == name && p != ANY_PARAM => Some(p),
        _ => None,
    })
}

impl From<vx_store::ErrorCode> for ErrorCode {
    fn from(code: vx_store::ErrorCode) -> Self {
        use vx_store::ErrorCode as S;
        match code {
            S::RecoveryIo => ErrorCode::RecoveryIo,
            S::CheckpointCorrupt => ErrorCode::CheckpointCorrupt,
            S::CheckpointExpired => ErrorCode::CheckpointExpired,
            S::CheckpointNotFound => ErrorCode::CheckpointNotFound,
            S::InvalidCheckpoint => ErrorCode::Param("checkpoint"),
            S::CheckpointFormat => ErrorCode::CheckpointFormat,
            S::CheckpointSize => ErrorCode::CheckpointSize,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_str())
    }
}

/// Exit code for a wire code string (the CLI reads it from a reply), by its class.
/// Unknown classes exit 1.
pub fn exit_code_for(code: &str) -> i32 {
    let class = code.split('.').next().unwrap_or("");
    Class::parse(class).map_or(1, Class::exit)
}

/// A verb's failure, as sent on the wire.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: &'static str,
    pub data: Map<String, Value>,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: &'static str) -> Self {
        ApiError {
            code,
            message,
            data: Map::new(),
        }
    }

    /// The code with its fixed message.
    pub fn code(code: ErrorCode) -> Self {
        ApiError::new(code, code.message())
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.data.insert(key.to_string(), value.into());
        self
    }

    pub fn exit_code(&self) -> i32 {
        self.code.exit_code()
    }

    pub fn to_json(&self) -> Value {
        json!({"code": self.code.as_str(), "message": self.message, "data": self.data})
    }

    pub fn internal() -> Self {
        ApiError::code(ErrorCode::Internal)
    }

    /// `invalid_params.<param>` with `data.param` set.
    pub fn param(param: &'static str, message: &'static str) -> Self {
        ApiError::new(ErrorCode::Param(param), message).with("param", param)
    }

    pub fn shutdown() -> Self {
        ApiError::code(ErrorCode::Shutdown)
    }
}

impl From<ErrorCode> for ApiError {
    fn from(code: ErrorCode) -> Self {
        ApiError::code(code)
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC §6's error table, as the RFC writes it: code and exit code.
    const RFC_ERRORS: &[(&str, i32)] = &[
        ("invalid_params.checkpoint", 2),
        ("invalid_params.ack_orphans", 2),
        ("not_found.checkpoint", 3),
        ("denied.admin", 4),
        ("denied.spawn", 4),
        ("denied.write", 4),
        ("conflict.recovery_busy", 5),
        ("conflict.not_empty", 5),
        ("conflict.not_archive", 5),
        ("conflict.checkpoint_corrupt", 5),
        ("conflict.checkpoint_expired", 5),
        ("unavailable.recovery_disabled", 6),
        ("unavailable.recovery_io", 6),
        ("unavailable.spawn", 6),
        ("unsupported.checkpoint_format", 10),
        ("unsupported.checkpoint_size", 10),
    ];

    #[test]
    fn every_rfc_code_exists_with_the_rfc_exit_code() {
        for (code, exit) in RFC_ERRORS {
            let typed = ErrorCode::parse(code).unwrap_or_else(|| panic!("{code} is not defined"));
            assert_eq!(typed.as_str(), *code);
            assert_eq!(typed.exit_code(), *exit, "{code}");
            assert_eq!(exit_code_for(code), *exit, "{code}");
            assert!(
                ErrorCode::ALL.contains(&typed),
                "{code} is not in the docs table"
            );
        }
    }

    #[test]
    fn every_code_round_trips_and_has_its_class_prefix() {
        for code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(s.starts_with(&format!("{}.", code.class().as_str())), "{s}");
            if code != ErrorCode::Param(ANY_PARAM) {
                assert_eq!(ErrorCode::parse(&s), Some(code), "{s}");
            }
        }
        let mut strings: Vec<String> = ErrorCode::ALL.iter().map(|c| c.to_string()).collect();
        strings.sort();
        strings.dedup();
        assert_eq!(
            strings.len(),
            ErrorCode::ALL.len(),
            "no code is listed twice"
        );
        assert_eq!(ErrorCode::parse("pane.nonsense"), None);
        assert_eq!(ErrorCode::parse("invalid_params.no_such_param"), None);
        assert_eq!(ErrorCode::parse("invalid_params.<param>"), None);
        assert_eq!(exit_code_for("nonsense"), 1);
    }

    #[test]
    fn store_codes_map_to_the_same_wire_strings() {
        for code in vx_store::ErrorCode::ALL {
            let ours = ErrorCode::from(code);
            assert_eq!(ours.as_str(), code.as_str());
            assert_eq!(ours.exit_code(), code.exit_code());
        }
    }
}
