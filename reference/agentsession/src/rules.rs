//! The rule tables: every rule a reader enforces, with its stable id (corpora,
//! reports and `"rule"` fields use it), the spec's error code and a description.
//! Descriptions name fields and bounds, never content.

macro_rules! rule_table {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => ($id:literal, $code:literal, $text:literal),)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($variant,)* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];
            pub fn id(self) -> &'static str { match self { $($name::$variant => $id,)* } }
            pub fn code(self) -> &'static str { match self { $($name::$variant => $code,)* } }
            pub fn description(self) -> &'static str { match self { $($name::$variant => $text,)* } }
            pub fn from_id(id: &str) -> Option<Self> {
                match id { $($id => Some($name::$variant),)* _ => None }
            }
        }
    };
}

/// Error code of a refused record (`pane.create`, `meta.set`, `agent.launch`).
pub const RECORD_CODE: &str = "invalid_params.agent_session";
/// Error code of a refused native id given on its own (`agent.launch native_id`).
pub const NATIVE_ID_CODE: &str = "invalid_params.native_id";
/// Error code of a refused integration template.
pub const TEMPLATE_CODE: &str = "invalid_params.integration_template";
/// Error code of a corrupt workspace archive.
pub const ARCHIVE_CODE: &str = "conflict.archive_corrupt";
/// Error code of an archive whose schema_version is not 1 or 2.
pub const ARCHIVE_SCHEMA_CODE: &str = "unsupported.archive_schema";
/// Error code of an integration that cannot restore natively.
pub const NATIVE_RESTORE_CODE: &str = "unsupported.native_restore";

rule_table! {
    /// The `agent-session/v1` record's own rules.
    RecordRule {
        Size => ("record.size", "invalid_params.agent_session", "encoded record is not 1-4096 bytes"),
        Json => ("record.json", "invalid_params.agent_session", "record is not strict JSON"),
        Shape => ("record.shape", "invalid_params.agent_session", "record is not an object of exactly the strings plugin_id, integration_id, native_id"),
        OwnerLength => ("record.owner_length", "invalid_params.agent_session", "plugin_id or integration_id is not 1-120 bytes"),
        OwnerPadded => ("record.owner_padded", "invalid_params.agent_session", "plugin_id or integration_id differs from its trimmed form"),
        OwnerControl => ("record.owner_control", "invalid_params.agent_session", "plugin_id or integration_id contains a Unicode Cc character"),
    }
}

rule_table! {
    /// A provider-native id, in a record or given on its own.
    NativeRule {
        Length => ("native.length", "invalid_params.native_id", "native_id is not 1-1024 bytes"),
        Padded => ("native.padded", "invalid_params.native_id", "native_id differs from its trimmed form"),
        OptionShaped => ("native.option_shaped", "invalid_params.native_id", "native_id begins with '-'"),
        Control => ("native.control", "invalid_params.native_id", "native_id contains a Unicode Cc character"),
    }
}

rule_table! {
    /// `integrations/<id>.toml`.
    TemplateRule {
        Size => ("template.size", "invalid_params.integration_template", "template longer than 65536 bytes"),
        Toml => ("template.toml", "invalid_params.integration_template", "template is not UTF-8 TOML (syntax, duplicate key)"),
        Type => ("template.type", "invalid_params.integration_template", "a modeled key has the wrong TOML type"),
        Id => ("template.id", "invalid_params.integration_template", "id missing, or not 1-120 bytes, trimmed, without Unicode Cc"),
        Command => ("template.command", "invalid_params.integration_template", "[launch] command is not 1-256 strings with a non-blank program"),
        CommandPlaceholder => ("template.command_placeholder", "invalid_params.integration_template", "[launch] command contains the session placeholder"),
        RequiredExecutables => ("template.required_executables", "invalid_params.integration_template", "required_executables is not at most 16 trimmed PATH names of 1-255 bytes"),
        WorkingDirectory => ("template.working_directory", "invalid_params.integration_template", "working_directory is not workspace or plugin-root"),
        SessionUnknownKey => ("template.session_unknown_key", "invalid_params.integration_template", "[session_identity] has a key it does not define"),
        SessionMissing => ("template.session_missing", "invalid_params.integration_template", "[session_identity] lacks mode, native_env or restore"),
        Mode => ("template.mode", "invalid_params.integration_template", "mode is not native-or-phux or phux"),
        Restore => ("template.restore", "invalid_params.integration_template", "restore is not external-cli or phux-session"),
        NativeEnv => ("template.native_env", "invalid_params.integration_template", "native_env is not a dedicated PHUX_<name>_SESSION_ID environment name of at most 128 bytes"),
        ResumePolicy => ("template.resume_policy", "invalid_params.integration_template", "resume_args without mode native-or-phux and restore external-cli"),
        FreshWithoutResume => ("template.fresh_without_resume", "invalid_params.integration_template", "fresh_args without resume_args"),
        ArgsCount => ("template.args_count", "invalid_params.integration_template", "resume_args or fresh_args is not 1-16 elements"),
        ArgsBytes => ("template.args_bytes", "invalid_params.integration_template", "a resume_args or fresh_args element is not 1-4096 bytes"),
        Placeholder => ("template.placeholder", "invalid_params.integration_template", "vector lacks exactly one standalone session placeholder, or an element merely contains it"),
        Interpreter => ("template.interpreter", "invalid_params.integration_template", "a natively restorable template launches an interpreter or program runner"),
        Shell => ("template.shell", "invalid_params.integration_template", "a natively restorable template launches a shell without a fixed plugin-owned script"),
    }
}

rule_table! {
    /// Expanding a template with an id.
    ExpandRule {
        NotLaunchable => ("expand.not_launchable", "unsupported.native_restore", "template has no [launch] command"),
        NotRestorable => ("expand.not_restorable", "unsupported.native_restore", "template does not declare native resume"),
        NoFreshIdentity => ("expand.no_fresh_identity", "unsupported.native_restore", "template does not declare fresh_args"),
        Evaluator => ("expand.evaluator", "unsupported.native_restore", "after plugin-root substitution the program is an interpreter, or a shell without a fixed plugin-owned script"),
        TooLarge => ("expand.too_large", "invalid_params.native_id", "expanded argv and environment exceed 16384 bytes"),
    }
}

rule_table! {
    /// The workspace archive, in the reader's order: the first failing rule wins.
    ArchiveRule {
        Size => ("archive.size", "conflict.archive_corrupt", "archive longer than 16777216 bytes"),
        Json => ("archive.json", "conflict.archive_corrupt", "not strict JSON (UTF-8, duplicate key, depth 128, safe integers, ratio decimals)"),
        SchemaVersion => ("archive.schema_version", "unsupported.archive_schema", "schema_version is not the integer 1 or 2"),
        Shape => ("archive.shape", "conflict.archive_corrupt", "a member is missing, unknown or of the wrong type"),
        Schema1Record => ("archive.schema1_record", "conflict.archive_corrupt", "schema 1 archive carries an agent_session"),
        Record => ("archive.record", "conflict.archive_corrupt", "agent_session fails the record rules"),
        DuplicateSession => ("archive.duplicate_session", "conflict.archive_corrupt", "session name blank or not unique"),
        Layout => ("archive.layout", "conflict.archive_corrupt", "layout pane index out of range, repeated or missing"),
        Cells => ("archive.cells", "conflict.archive_corrupt", "cols or rows outside 0-65535"),
        Argv => ("archive.argv", "conflict.archive_corrupt", "command is not 1-256 strings"),
    }
}

/// Field paths are vx-format's: keys are the format's own names, never content.
pub use vx_format::error::path_string;
pub use vx_format::Seg;

/// Unicode general category Cc, as the seed's "control-free" means.
pub fn has_control(text: &str) -> bool {
    text.chars().any(char::is_control)
}

/// The seed's "trimmed": no leading or trailing Unicode White_Space.
pub fn is_trimmed(text: &str) -> bool {
    text.trim() == text
}
