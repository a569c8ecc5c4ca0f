//! The store's errors: RFC §6 error codes with their CLI exit codes, and a reason that
//! is safe to show anywhere (no paths, no file content, no terminal text).

use std::borrow::Cow;
use std::fmt;

use nix::errno::Errno;
use vx_format::{Code, FormatError};

/// The RFC §6 error codes a store operation can fail with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// `unavailable.recovery_io`: store unsafe, I/O or durability failure.
    RecoveryIo,
    /// `conflict.checkpoint_corrupt`: checksum/schema/topology/duplicate generation.
    CheckpointCorrupt,
    /// `conflict.checkpoint_expired`: whole checkpoint expired or future-dated.
    CheckpointExpired,
    /// `not_found.checkpoint`: a well-formed id that names no file.
    CheckpointNotFound,
    /// `invalid_params.checkpoint`: the id is not `c` + lowercase UUID v4.
    InvalidCheckpoint,
    /// `unsupported.checkpoint_format`: a durable version this reader does not know.
    CheckpointFormat,
    /// `unsupported.checkpoint_size`: whole-file/count/depth bounds exceeded.
    CheckpointSize,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 7] = [
        ErrorCode::RecoveryIo,
        ErrorCode::CheckpointCorrupt,
        ErrorCode::CheckpointExpired,
        ErrorCode::CheckpointNotFound,
        ErrorCode::InvalidCheckpoint,
        ErrorCode::CheckpointFormat,
        ErrorCode::CheckpointSize,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::RecoveryIo => "unavailable.recovery_io",
            ErrorCode::CheckpointCorrupt => "conflict.checkpoint_corrupt",
            ErrorCode::CheckpointExpired => "conflict.checkpoint_expired",
            ErrorCode::CheckpointNotFound => "not_found.checkpoint",
            ErrorCode::InvalidCheckpoint => "invalid_params.checkpoint",
            ErrorCode::CheckpointFormat => "unsupported.checkpoint_format",
            ErrorCode::CheckpointSize => "unsupported.checkpoint_size",
        }
    }

    /// The CLI exit code of RFC §6's error table.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorCode::InvalidCheckpoint => 2,
            ErrorCode::CheckpointNotFound => 3,
            ErrorCode::CheckpointCorrupt | ErrorCode::CheckpointExpired => 5,
            ErrorCode::RecoveryIo => 6,
            ErrorCode::CheckpointFormat | ErrorCode::CheckpointSize => 10,
        }
    }

    /// The stable wire message: a description of the condition, never a detail of it.
    pub fn message(self) -> &'static str {
        match self {
            ErrorCode::RecoveryIo => "recovery store unavailable",
            ErrorCode::CheckpointCorrupt => "checkpoint corrupt",
            ErrorCode::CheckpointExpired => "checkpoint expired or future-dated",
            ErrorCode::CheckpointNotFound => "checkpoint not found",
            ErrorCode::InvalidCheckpoint => "invalid checkpoint id",
            ErrorCode::CheckpointFormat => "unsupported checkpoint format",
            ErrorCode::CheckpointSize => "checkpoint exceeds size bounds",
        }
    }

    /// RFC §6 `data`: the one code with a parameter name is the invalid id.
    pub fn param(self) -> Option<&'static str> {
        (self == ErrorCode::InvalidCheckpoint).then_some("checkpoint")
    }
}

impl From<Code> for ErrorCode {
    fn from(code: Code) -> Self {
        match code {
            Code::Corrupt => ErrorCode::CheckpointCorrupt,
            Code::Format => ErrorCode::CheckpointFormat,
            Code::Size => ErrorCode::CheckpointSize,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed store operation. `reason` names what failed (a step, a rule id, an errno
/// name) for diagnostics and doctor; it never holds a path, a name from the directory
/// or file content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreError {
    pub code: ErrorCode,
    pub reason: Cow<'static, str>,
    /// The OS error behind an I/O failure.
    pub errno: Option<Errno>,
}

impl StoreError {
    pub fn new(code: ErrorCode, reason: impl Into<Cow<'static, str>>) -> Self {
        StoreError {
            code,
            reason: reason.into(),
            errno: None,
        }
    }

    /// `unavailable.recovery_io` for an unsafe object or failed call.
    pub fn io(reason: impl Into<Cow<'static, str>>) -> Self {
        StoreError::new(ErrorCode::RecoveryIo, reason)
    }

    pub fn os(reason: &'static str, errno: Errno) -> Self {
        StoreError {
            code: ErrorCode::RecoveryIo,
            reason: Cow::Borrowed(reason),
            errno: Some(errno),
        }
    }

    pub fn invalid_id() -> Self {
        StoreError::new(
            ErrorCode::InvalidCheckpoint,
            "checkpoint id is not c + lowercase UUID v4",
        )
    }

    pub fn not_found() -> Self {
        StoreError::new(ErrorCode::CheckpointNotFound, "no checkpoint with this id")
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn exit_code(&self) -> i32 {
        self.code.exit_code()
    }
}

impl From<FormatError> for StoreError {
    fn from(err: FormatError) -> Self {
        // The reader's reason is a rule id and a JSON path, never content.
        StoreError::new(err.code().into(), err.reason())
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.reason)?;
        if let Some(errno) = self.errno {
            write!(f, " ({})", errno.desc())?;
            write!(f, " [{errno:?}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for StoreError {}

pub type Result<T> = std::result::Result<T, StoreError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_rfc_table() {
        let table: Vec<(&str, i32)> = ErrorCode::ALL
            .iter()
            .map(|c| (c.as_str(), c.exit_code()))
            .collect();
        assert_eq!(
            table,
            [
                ("unavailable.recovery_io", 6),
                ("conflict.checkpoint_corrupt", 5),
                ("conflict.checkpoint_expired", 5),
                ("not_found.checkpoint", 3),
                ("invalid_params.checkpoint", 2),
                ("unsupported.checkpoint_format", 10),
                ("unsupported.checkpoint_size", 10),
            ]
        );
    }

    #[test]
    fn display_names_the_code_reason_and_errno() {
        let err = StoreError::os("fsync of the temporary file", Errno::EIO);
        assert_eq!(
            err.to_string(),
            "unavailable.recovery_io: fsync of the temporary file (I/O error) [EIO]"
        );
    }
}
