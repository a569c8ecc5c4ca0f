//! The broker's verdicts: the kit's error code, the rule that failed, and nothing of
//! the input. A message names the rule, never the key, path, file content or argv
//! that broke it (docs/spec/errors.md).

use std::fmt;

/// A request parameter an `invalid_params.<param>` code names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    Key,
    Have,
    Gen,
    Total,
    RingLen,
    MasterGen,
    Fp,
    Tab,
    Force,
    New,
    File,
    Ring,
    LockFd,
    Argv,
    Engines,
    Cwd,
    Listen,
    Label,
}

impl Param {
    /// The parameter's declared name (`data.param`).
    pub fn name(self) -> &'static str {
        match self {
            Param::Key => "key",
            Param::Have => "have",
            Param::Gen => "gen",
            Param::Total => "total",
            Param::RingLen => "ring_len",
            Param::MasterGen => "master_gen",
            Param::Fp => "fp",
            Param::Tab => "tab",
            Param::Force => "force",
            Param::New => "new",
            Param::File => "file",
            Param::Ring => "ring",
            Param::LockFd => "lock_fd",
            Param::Argv => "argv",
            Param::Engines => "engines",
            Param::Cwd => "cwd",
            Param::Listen => "listen",
            Param::Label => "label",
        }
    }
}

/// Every error code the broker's pure layers and checkers answer with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// `invalid_params.<param>`.
    InvalidParams(Param),
    /// `not_found.engine`: the key names an engine the broker does not run.
    EngineNotFound,
    /// `conflict.sidecar_corrupt`: an alias sidecar or owner file breaks its shape.
    SidecarCorrupt,
    /// `unsupported.sidecar_version`: an alias sidecar of another version.
    SidecarVersion,
    /// `unsupported.sidecar_size`: longer than 64 KiB, or nested deeper than 32.
    SidecarSize,
    /// `unavailable.sidecar_io`: the file cannot be opened or read, or is not a file.
    SidecarIo,
    /// `unavailable.lock`: the per-key lock cannot be taken for a reason other than
    /// another holder.
    Lock,
    /// `unavailable.lock_dir`: the lock directory is unset, unsafe or unusable.
    LockDir,
    /// `conflict.socket_exists`: a create-only master found its path taken.
    SocketExists,
    /// `unavailable.master_socket`: the master's socket cannot be bound.
    MasterSocket,
    /// `unavailable.spawn`: the agent could not be started.
    Spawn,
    /// `unavailable.master`: no master accepts on the socket (attach-only).
    Master,
    /// `conflict.not_socket`: something other than a socket sits at a session's
    /// socket path; it is left untouched.
    NotSocket,
    /// `invalid_request.malformed`: a client control frame breaks its shape.
    MalformedFrame,
    /// `invalid_request.frame_size`: a client text message over the limit.
    FrameSize,
    /// `unavailable.listen`: the broker cannot listen where it was told.
    ListenUnavailable,
    /// `unavailable.runtime_dir`: the runtime or history directory is unusable.
    RuntimeDirUnavailable,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidParams(p) => match p {
                Param::Key => "invalid_params.key",
                Param::Have => "invalid_params.have",
                Param::Gen => "invalid_params.gen",
                Param::Total => "invalid_params.total",
                Param::RingLen => "invalid_params.ring_len",
                Param::MasterGen => "invalid_params.master_gen",
                Param::Fp => "invalid_params.fp",
                Param::Tab => "invalid_params.tab",
                Param::Force => "invalid_params.force",
                Param::New => "invalid_params.new",
                Param::File => "invalid_params.file",
                Param::Ring => "invalid_params.ring",
                Param::LockFd => "invalid_params.lock_fd",
                Param::Argv => "invalid_params.argv",
                Param::Engines => "invalid_params.engines",
                Param::Cwd => "invalid_params.cwd",
                Param::Listen => "invalid_params.listen",
                Param::Label => "invalid_params.label",
            },
            Code::EngineNotFound => "not_found.engine",
            Code::SidecarCorrupt => "conflict.sidecar_corrupt",
            Code::SidecarVersion => "unsupported.sidecar_version",
            Code::SidecarSize => "unsupported.sidecar_size",
            Code::SidecarIo => "unavailable.sidecar_io",
            Code::Lock => "unavailable.lock",
            Code::LockDir => "unavailable.lock_dir",
            Code::SocketExists => "conflict.socket_exists",
            Code::MasterSocket => "unavailable.master_socket",
            Code::Spawn => "unavailable.spawn",
            Code::Master => "unavailable.master",
            Code::NotSocket => "conflict.not_socket",
            Code::MalformedFrame => "invalid_request.malformed",
            Code::FrameSize => "invalid_request.frame_size",
            Code::ListenUnavailable => "unavailable.listen",
            Code::RuntimeDirUnavailable => "unavailable.runtime_dir",
        }
    }

    /// The exit code of the code's class (docs/spec/errors.md).
    pub fn exit_code(self) -> i32 {
        match self {
            Code::InvalidParams(_) | Code::MalformedFrame | Code::FrameSize => 2,
            Code::EngineNotFound => 3,
            Code::SidecarCorrupt | Code::SocketExists | Code::NotSocket => 5,
            Code::SidecarIo
            | Code::Lock
            | Code::LockDir
            | Code::MasterSocket
            | Code::Spawn
            | Code::Master
            | Code::ListenUnavailable
            | Code::RuntimeDirUnavailable => 6,
            Code::SidecarVersion | Code::SidecarSize => 10,
        }
    }

    /// `data.param` of an `invalid_params.*` answer.
    pub fn param(self) -> Option<&'static str> {
        match self {
            Code::InvalidParams(p) => Some(p.name()),
            _ => None,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! rules {
    ($($variant:ident => ($id:literal, $code:expr, $text:literal),)*) => {
        /// Every rule the broker enforces. Ids are stable: corpora and reports use them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Rule { $($variant,)* }

        impl Rule {
            pub const ALL: &'static [Rule] = &[$(Rule::$variant,)*];
            pub fn id(self) -> &'static str { match self { $(Rule::$variant => $id,)* } }
            /// The code this rule answers with where no parameter overrides it.
            pub fn code(self) -> Code { match self { $(Rule::$variant => $code,)* } }
            pub fn description(self) -> &'static str { match self { $(Rule::$variant => $text,)* } }
            pub fn from_id(id: &str) -> Option<Rule> {
                match id { $($id => Some(Rule::$variant),)* _ => None }
            }
        }
    };
}

use Code::*;
use Param as P;

rules! {
    KeyTooLong => ("key.too_long", InvalidParams(P::Key), "key longer than 96 bytes"),
    KeyNoSeparator => ("key.no_separator", InvalidParams(P::Key), "key has no ':' between engine and id"),
    KeyEngineSyntax => ("key.engine_syntax", InvalidParams(P::Key), "engine is not [a-z][a-z0-9_-]{0,31}"),
    KeyEngineUnknown => ("key.engine_unknown", EngineNotFound, "engine is not configured"),
    KeyPlaceholderNotNew => ("key.placeholder_not_new", InvalidParams(P::Key), "placeholder id new-<uuid> outside a new=1 launch"),
    KeyPlaceholderPinned => ("key.placeholder_pinned", InvalidParams(P::Key), "placeholder id for an engine that pins its ids"),
    KeyIdSyntax => ("key.id_syntax", InvalidParams(P::Key), "id does not match the engine's id grammar"),
    CounterSyntax => ("counter.syntax", InvalidParams(P::Have), "not a decimal integer without sign or leading zero"),
    CounterRange => ("counter.range", InvalidParams(P::Have), "integer above 9007199254740991"),
    RingExceedsTotal => ("resume.ring_exceeds_total", InvalidParams(P::RingLen), "ring holds more bytes than were ever written"),
    FpSyntax => ("claim.fp_syntax", InvalidParams(P::Fp), "fp is not 32 lower-case hex digits"),
    TabSyntax => ("claim.tab_syntax", InvalidParams(P::Tab), "tab is not 16 lower-case hex digits"),
    HalfPair => ("claim.half_pair", InvalidParams(P::Tab), "fp and tab must come together or not at all"),
    FlagSyntax => ("param.flag_syntax", InvalidParams(P::Force), "flag is not 0 or 1"),
    FileKind => ("sidecar.kind_unknown", InvalidParams(P::File), "file is neither aliases.json nor <physical>.owner"),
    FileTooLarge => ("file.too_large", SidecarSize, "file longer than 64 KiB"),
    FileNotRegular => ("file.not_regular", SidecarIo, "not a regular file"),
    FileIo => ("file.io", SidecarIo, "file cannot be opened or read"),
    FilePublish => ("file.publish", SidecarIo, "file could not be written, synced or renamed into place"),
    JsonBom => ("json.bom", SidecarCorrupt, "byte order mark before the JSON text"),
    JsonUtf8 => ("json.utf8", SidecarCorrupt, "invalid UTF-8"),
    JsonLoneSurrogate => ("json.lone_surrogate", SidecarCorrupt, "escaped lone UTF-16 surrogate"),
    JsonSyntax => ("json.syntax", SidecarCorrupt, "not JSON"),
    JsonControl => ("json.control_in_string", SidecarCorrupt, "unescaped control character in a JSON string"),
    JsonDuplicateKey => ("json.duplicate_key", SidecarCorrupt, "duplicate key in an object"),
    JsonUnsafeInteger => ("json.unsafe_integer", SidecarCorrupt, "integer outside the safe range"),
    JsonTrailingData => ("json.trailing_data", SidecarCorrupt, "data after the top-level value"),
    JsonDepth => ("json.depth", SidecarSize, "nesting deeper than 32"),
    NotObject => ("schema.not_object", SidecarCorrupt, "document is not a JSON object"),
    UnknownField => ("schema.unknown_field", SidecarCorrupt, "field outside the closed shape"),
    MissingField => ("schema.missing_field", SidecarCorrupt, "required field missing"),
    FieldType => ("schema.type", SidecarCorrupt, "value has the wrong JSON type"),
    VersionUnsupported => ("alias.version_unsupported", SidecarVersion, "alias sidecar version is not 1"),
    AliasPlaceholderSyntax => ("alias.placeholder_syntax", SidecarCorrupt, "alias key is not <engine>@new-<uuid>"),
    AliasTargetSyntax => ("alias.target_syntax", SidecarCorrupt, "alias target is not <engine>@<real id>"),
    AliasEngineMismatch => ("alias.engine_mismatch", SidecarCorrupt, "alias maps across engines"),
    AliasTargetDuplicate => ("alias.target_duplicate", SidecarCorrupt, "two placeholders alias one real session"),
    OwnerFpSyntax => ("owner.fp_syntax", SidecarCorrupt, "owner fp is not 32 lower-case hex digits"),
    OwnerTabSyntax => ("owner.tab_syntax", SidecarCorrupt, "owner tab is not 16 lower-case hex digits"),
    OwnerLabelSyntax => ("owner.label_syntax", SidecarCorrupt, "owner label is over 128 bytes or has a control character"),
    OwnerTimeRange => ("owner.time_range", SidecarCorrupt, "since/heartbeat is not an integer of ms in 0..=9007199254740991"),
    OwnerHeartbeatBeforeSince => ("owner.heartbeat_before_since", SidecarCorrupt, "heartbeat earlier than since"),
    LockOpen => ("lock.open", Lock, "lock file cannot be opened"),
    LockFileUnsafe => ("lock.file_unsafe", Lock, "lock file is not a regular file of ours"),
    LockFlock => ("lock.flock", Lock, "flock failed for a reason other than another holder"),
    LockInterrupted => ("lock.interrupted", Lock, "flock interrupted on every attempt"),
    LockDirUnset => ("lock_dir.unset", LockDir, "no VXBROKER_LOCK_DIR, XDG_STATE_HOME or HOME"),
    LockDirRelative => ("lock_dir.relative", LockDir, "lock directory is not an absolute path"),
    LockDirSymlink => ("lock_dir.symlink", LockDir, "lock directory is a symbolic link"),
    LockDirNotDir => ("lock_dir.not_dir", LockDir, "lock directory is not a directory"),
    LockDirForeignOwner => ("lock_dir.foreign_owner", LockDir, "lock directory is owned by another user"),
    LockDirWritable => ("lock_dir.writable", LockDir, "lock directory is group or other writable"),
    LockDirIo => ("lock_dir.io", LockDir, "lock directory cannot be created or opened"),
    RingZero => ("master.ring_zero", InvalidParams(P::Ring), "ring capacity is 0"),
    LockFdInvalid => ("master.lock_fd", InvalidParams(P::LockFd), "lock fd is not an open descriptor"),
    ArgvEmpty => ("master.argv_empty", InvalidParams(P::Argv), "no program after --"),
    SocketExists => ("master.socket_exists", SocketExists, "create-only master: the socket path exists"),
    SocketBind => ("master.socket_bind", MasterSocket, "the master's socket cannot be bound"),
    SpawnFailed => ("master.spawn", Spawn, "the agent could not be started on a PTY"),
    MasterUnreachable => ("master.unreachable", Master, "no master accepts on the socket"),
    NotSocket => ("open.not_socket", NotSocket, "the session's socket path holds something other than a socket"),
    ReapFailed => ("open.reap_failed", Spawn, "a stale socket could not be unlinked under the lock"),
    LaunchFailed => ("open.launch_failed", Spawn, "the master exited or did not accept before it was ready"),
    FrameTooLarge => ("frame.too_large", FrameSize, "client text message longer than 64 KiB"),
    FrameUnknownType => ("frame.unknown_type", MalformedFrame, "t is not i, r or ping"),
    FrameSizeRange => ("frame.size_range", MalformedFrame, "cols/rows is not an integer in 1..=65535"),
    EnginesSyntax => ("engines.syntax", InvalidParams(P::Engines), "engines file is not TOML of [engine.<name>] with pin, id, launch, resume, index"),
    EnginesName => ("engines.name", InvalidParams(P::Engines), "engine name is not [a-z][a-z0-9_-]{0,31}"),
    EnginesPlaceholder => ("engines.placeholder", InvalidParams(P::Engines), "template names a placeholder other than {bin_dir} {id} {cwd} {history}"),
    EnginesArgvEmpty => ("engines.argv_empty", InvalidParams(P::Engines), "launch or resume is an empty argv"),
    EnginesIdUnpinned => ("engines.id_unpinned", InvalidParams(P::Engines), "launch of a pin = none engine names {id}"),
    EnginesIdMissing => ("engines.id_missing", InvalidParams(P::Engines), "resume, or launch of a pin = flag engine, does not name {id}"),
    EnginesIndexMissing => ("engines.index_missing", InvalidParams(P::Engines), "pin = none engine without an index"),
    ParamDuplicate => ("param.duplicate", InvalidParams(P::Key), "query parameter given more than once"),
    CwdRelative => ("param.cwd_relative", InvalidParams(P::Cwd), "cwd is not an absolute path"),
    LabelSyntax => ("param.label_syntax", InvalidParams(P::Label), "label is over 128 bytes or has a control character"),
    ListenSyntax => ("serve.listen_syntax", InvalidParams(P::Listen), "listen is not HOST:PORT or unix:/absolute/path"),
    ListenNotLoopback => ("serve.listen_not_loopback", InvalidParams(P::Listen), "listen address is not loopback"),
    ListenBind => ("serve.listen_bind", ListenUnavailable, "cannot listen (address in use, or another broker on the socket)"),
    RuntimeDir => ("serve.runtime_dir", RuntimeDirUnavailable, "runtime or history directory cannot be created"),
    RuntimeDirSymlink => ("serve.runtime_dir_symlink", RuntimeDirUnavailable, "runtime or history directory is a symbolic link"),
    RuntimeDirNotDir => ("serve.runtime_dir_not_dir", RuntimeDirUnavailable, "runtime or history directory is not a directory"),
    RuntimeDirForeignOwner => ("serve.runtime_dir_foreign_owner", RuntimeDirUnavailable, "runtime or history directory is owned by another user"),
    RuntimeDirShared => ("serve.runtime_dir_shared", RuntimeDirUnavailable, "runtime or history directory is open to group or other"),
}

/// A failed check: the code answered and the rule that failed. Content-free.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BrokerError {
    pub code: Code,
    pub rule: Rule,
}

impl BrokerError {
    /// The rule with its own code.
    pub fn new(rule: Rule) -> Self {
        BrokerError {
            code: rule.code(),
            rule,
        }
    }

    /// A parameter rule (`counter.*`, `param.*`, `claim.half_pair`) for `param`.
    pub fn param(rule: Rule, param: Param) -> Self {
        BrokerError {
            code: InvalidParams(param),
            rule,
        }
    }

    /// The human reason: rule id and description. Never input content.
    pub fn reason(&self) -> String {
        format!("{}: {}", self.rule.id(), self.rule.description())
    }
}

impl From<Rule> for BrokerError {
    fn from(rule: Rule) -> Self {
        BrokerError::new(rule)
    }
}

impl fmt::Display for BrokerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.code, self.reason())
    }
}

impl std::error::Error for BrokerError {}

/// The broker's rule for a JSON-level verdict of vx-format's scanner.
pub fn json_rule(rule: vx_format::Rule) -> Rule {
    use vx_format::Rule as F;
    match rule {
        F::Bom => Rule::JsonBom,
        F::Utf8 => Rule::JsonUtf8,
        F::LoneSurrogate => Rule::JsonLoneSurrogate,
        F::ControlInString => Rule::JsonControl,
        F::DuplicateKey => Rule::JsonDuplicateKey,
        F::UnsafeInteger => Rule::JsonUnsafeInteger,
        F::TrailingData => Rule::JsonTrailingData,
        F::Depth => Rule::JsonDepth,
        // The scanner yields only the rules above and syntax errors.
        _ => Rule::JsonSyntax,
    }
}

pub type Result<T> = std::result::Result<T, BrokerError>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn rule_ids_are_unique_and_round_trip() {
        let mut seen = HashSet::new();
        for &rule in Rule::ALL {
            assert!(seen.insert(rule.id()), "duplicate id {}", rule.id());
            assert_eq!(Rule::from_id(rule.id()), Some(rule));
        }
    }

    #[test]
    fn classes_decide_exit_codes() {
        for &rule in Rule::ALL {
            let code = rule.code();
            let class = code.as_str().split('.').next().unwrap();
            let want = match class {
                "invalid_params" | "invalid_request" => 2,
                "not_found" => 3,
                "conflict" => 5,
                "unavailable" => 6,
                "unsupported" => 10,
                other => panic!("unknown class {other}"),
            };
            assert_eq!(code.exit_code(), want, "{}", rule.id());
        }
    }
}
