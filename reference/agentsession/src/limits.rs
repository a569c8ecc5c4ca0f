//! The numbers of native agent-session restore, in one place (ADR-0068 point 7 and
//! the bounds). Nothing else in the crate spells them.

/// Encoded `agent-session/v1` record, on every write path.
pub const MIN_RECORD_BYTES: usize = 1;
pub const MAX_RECORD_BYTES: usize = 4096;
/// `plugin_id` and `integration_id`.
pub const MAX_OWNER_ID_BYTES: usize = 120;
/// `native_id`.
pub const MAX_NATIVE_ID_BYTES: usize = 1024;

/// `[session_identity] native_env`.
pub const MAX_NATIVE_ENV_BYTES: usize = 128;
pub const NATIVE_ENV_PREFIX: &str = "PHUX_";
pub const NATIVE_ENV_SUFFIX: &str = "_SESSION_ID";
/// `resume_args` / `fresh_args`: elements per vector and bytes per element.
pub const MIN_IDENTITY_ARGS: usize = 1;
pub const MAX_IDENTITY_ARGS: usize = 16;
pub const MIN_IDENTITY_ARG_BYTES: usize = 1;
pub const MAX_IDENTITY_ARG_BYTES: usize = 4096;
/// The standalone argv element expansion replaces with the native id.
pub const SESSION_ID_PLACEHOLDER: &str = "${PHUX_AGENT_SESSION_ID}";
/// Substituted per `[launch] command` element with the owning plugin's root.
pub const PLUGIN_ROOT_PLACEHOLDER: &str = "${PHUX_PLUGIN_ROOT}";
/// A template file, before it is parsed (the kit's bound; the peer has none).
pub const MAX_TEMPLATE_BYTES: usize = 65_536;
/// `[launch] command` elements (the kit's bound, the archive's argv bound).
pub const MAX_COMMAND_ARGS: usize = 256;
/// `[launch] required_executables`: count and bytes per name (the peer's bounds).
pub const MAX_REQUIRED_EXECUTABLES: usize = 16;
pub const MAX_EXECUTABLE_NAME_BYTES: usize = 255;

/// An expansion: argv elements (each + 1 for its NUL) plus `NAME=value` + 1 of the
/// identity variable.
pub const MAX_EXPANDED_BYTES: usize = 16 * 1024;

/// A workspace archive, decided on the length before a byte is read.
pub const MAX_ARCHIVE_BYTES: u64 = 16 * 1024 * 1024;
/// JSON nesting of a workspace archive.
pub const MAX_ARCHIVE_DEPTH: usize = 128;
/// A split ratio token (`0.` and digits).
pub const MAX_RATIO_TOKEN_BYTES: usize = 32;
/// Pane `cols` / `rows`.
pub const MAX_PANE_CELLS: u64 = 65_535;
/// Archived `command` arrays.
pub const MIN_ARGV_ELEMENTS: usize = 1;
pub const MAX_ARGV_ELEMENTS: usize = 256;
/// Schema versions the archive reader accepts.
pub const ARCHIVE_SCHEMA_LEGACY: u64 = 1;
pub const ARCHIVE_SCHEMA_NATIVE: u64 = 2;
