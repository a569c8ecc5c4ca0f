//! The contract's error codes, rule ids and errors. Every message is a fixed
//! description chosen by the code path: never member bytes, paths, ids or argv.

use std::fmt;

/// Error codes (`<class>.<detail>`, the class decides the exit code as in
/// docs/spec/errors.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The blob breaks a structural or safety rule of docs/spec/persist-blob.md.
    BlobCorrupt,
    /// The blob, a member or the member count exceeds a cap.
    BlobSize,
    /// A session file to pack is not a plain regular file with one link.
    SessionUnsafe,
    /// The session to pack exceeds a cap (never truncated).
    SessionSize,
    /// No key file (transcript) for the session under the root.
    SessionNotFound,
    /// More than one key file answers the session id.
    SessionAmbiguous,
    /// A store put under a ref that already exists.
    Exists,
    /// A store get of a ref that names no blob.
    BlobNotFound,
    InvalidBackend,
    InvalidSessionId,
    InvalidRef,
    InvalidRun,
    InvalidHeaderMember,
    /// A known backend without the persist capability (kimi, grok).
    NoCapability,
    /// The root or store is unsafe, or an I/O or durability step failed.
    PersistIo,
    /// The layouts document is not valid.
    InvalidLayouts,
    /// A store named by `fs:DIR` / `s3:URL/BUCKET` that cannot be parsed, or S3
    /// credentials missing from the environment (docs/spec/persist-store.md).
    InvalidStore,
    /// The S3 bucket does not exist (`NoSuchBucket`); it is never created.
    BucketNotFound,
    /// The S3 store refused the request: unsigned, unknown key, no permission.
    StoreDenied,
    /// The S3 store refused the request's signature (`SignatureDoesNotMatch`).
    StoreSignature,
    /// The S3 store could not be reached, did not answer in time, lost the reply,
    /// answered 5xx or something this client does not understand.
    StoreUnavailable,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BlobCorrupt => "conflict.blob_corrupt",
            ErrorCode::BlobSize => "unsupported.blob_size",
            ErrorCode::SessionUnsafe => "conflict.session_unsafe",
            ErrorCode::SessionSize => "unsupported.session_size",
            ErrorCode::SessionNotFound => "not_found.session",
            ErrorCode::SessionAmbiguous => "conflict.session_ambiguous",
            ErrorCode::Exists => "conflict.exists",
            ErrorCode::BlobNotFound => "not_found.blob",
            ErrorCode::InvalidBackend => "invalid_params.backend",
            ErrorCode::InvalidSessionId => "invalid_params.session_id",
            ErrorCode::InvalidRef => "invalid_params.ref",
            ErrorCode::InvalidRun => "invalid_params.run",
            ErrorCode::InvalidHeaderMember => "invalid_params.header_member",
            ErrorCode::NoCapability => "unsupported.persist_capability",
            ErrorCode::PersistIo => "unavailable.persist_io",
            ErrorCode::InvalidLayouts => "invalid_params.layouts",
            ErrorCode::InvalidStore => "invalid_params.store",
            ErrorCode::BucketNotFound => "not_found.bucket",
            ErrorCode::StoreDenied => "denied.store",
            ErrorCode::StoreSignature => "denied.store_signature",
            ErrorCode::StoreUnavailable => "unavailable.store",
        }
    }

    /// The CLI exit code of the code's class (docs/spec/errors.md).
    pub fn exit_code(self) -> i32 {
        match self.as_str().split('.').next() {
            Some("invalid_params") => 2,
            Some("not_found") => 3,
            Some("denied") => 4,
            Some("conflict") => 5,
            Some("unavailable") => 6,
            Some("unsupported") => 10,
            _ => 1,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The blob reader's rules, in the order the reader applies them (first failure wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlobRule {
    Size,
    Framing,
    Type,
    Path,
    NotSessionFile,
    Header,
    Caps,
    Mode,
}

impl BlobRule {
    pub const ALL: [BlobRule; 8] = [
        BlobRule::Size,
        BlobRule::Framing,
        BlobRule::Type,
        BlobRule::Path,
        BlobRule::NotSessionFile,
        BlobRule::Header,
        BlobRule::Caps,
        BlobRule::Mode,
    ];

    pub fn id(self) -> &'static str {
        match self {
            BlobRule::Size => "blob.size",
            BlobRule::Framing => "blob.framing",
            BlobRule::Type => "blob.type",
            BlobRule::Path => "blob.path",
            BlobRule::NotSessionFile => "blob.not_session_file",
            BlobRule::Header => "blob.header",
            BlobRule::Caps => "blob.caps",
            BlobRule::Mode => "blob.mode",
        }
    }

    pub fn code(self) -> ErrorCode {
        match self {
            BlobRule::Size | BlobRule::Caps => ErrorCode::BlobSize,
            _ => ErrorCode::BlobCorrupt,
        }
    }
}

/// A refused blob: the rule it broke and a fixed, content-free reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlobError {
    pub rule: BlobRule,
    pub reason: &'static str,
}

impl BlobError {
    pub const fn new(rule: BlobRule, reason: &'static str) -> Self {
        BlobError { rule, reason }
    }

    pub fn code(&self) -> ErrorCode {
        self.rule.code()
    }
}

impl fmt::Display for BlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.code(), self.rule.id(), self.reason)
    }
}

impl std::error::Error for BlobError {}

/// Any other failure of the packer, the layouts or a store: a code, an optional
/// rule id (`pack.unsafe`, `pack.caps`, a blob rule on unpack) and a fixed reason.
/// An OS error keeps only its errno name, never the path it concerned; an S3 error
/// only the HTTP status, never the URL (it carries the signature and key id).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistError {
    pub code: ErrorCode,
    pub rule: Option<&'static str>,
    pub reason: &'static str,
    pub errno: Option<nix::errno::Errno>,
    pub http_status: Option<u16>,
}

impl PersistError {
    pub const fn new(code: ErrorCode, reason: &'static str) -> Self {
        PersistError {
            code,
            rule: None,
            reason,
            errno: None,
            http_status: None,
        }
    }

    /// A store answered `status` (S3).
    pub const fn http(code: ErrorCode, reason: &'static str, status: u16) -> Self {
        PersistError {
            code,
            rule: None,
            reason,
            errno: None,
            http_status: Some(status),
        }
    }

    pub const fn rule(code: ErrorCode, rule: &'static str, reason: &'static str) -> Self {
        PersistError {
            code,
            rule: Some(rule),
            reason,
            errno: None,
            http_status: None,
        }
    }

    /// An I/O or durability step failed with `errno`.
    pub fn os(reason: &'static str, errno: nix::errno::Errno) -> Self {
        PersistError {
            code: ErrorCode::PersistIo,
            rule: None,
            reason,
            errno: Some(errno),
            http_status: None,
        }
    }

    pub fn rule_id(&self) -> Option<&'static str> {
        self.rule
    }
}

impl From<BlobError> for PersistError {
    fn from(e: BlobError) -> Self {
        PersistError::rule(e.code(), e.rule.id(), e.reason)
    }
}

impl fmt::Display for PersistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code)?;
        if let Some(rule) = self.rule {
            write!(f, " ({rule})")?;
        }
        write!(f, ": {}", self.reason)?;
        if let Some(errno) = self.errno {
            write!(f, " ({})", errno.desc())?;
        }
        if let Some(status) = self.http_status {
            write!(f, " (HTTP {status})")?;
        }
        Ok(())
    }
}

impl std::error::Error for PersistError {}

pub type Result<T> = std::result::Result<T, PersistError>;
