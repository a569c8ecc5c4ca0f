//! Integration templates, `integrations/<id>.toml`, as the peer models them: `id`,
//! `[launch] command / required_executables / working_directory` and
//! `[session_identity] mode / native_env / restore / resume_args / fresh_args`.
//!
//! Other keys are ignored so the package format can grow, but `[session_identity]`
//! is closed: a key it does not define is an error (the peer ignores it, and a
//! misspelt `resume_args` would silently make a template non-restorable).

use toml::{Table, Value};

use crate::exec_policy::{classify, is_fixed_plugin_script, ProgramClass};
use crate::limits::{
    MAX_COMMAND_ARGS, MAX_EXECUTABLE_NAME_BYTES, MAX_IDENTITY_ARGS, MAX_IDENTITY_ARG_BYTES,
    MAX_NATIVE_ENV_BYTES, MAX_REQUIRED_EXECUTABLES, MAX_TEMPLATE_BYTES, MIN_IDENTITY_ARGS,
    MIN_IDENTITY_ARG_BYTES, NATIVE_ENV_PREFIX, NATIVE_ENV_SUFFIX, SESSION_ID_PLACEHOLDER,
};
use crate::record::validate_owner_id;
use crate::rules::{path_string, Seg, TemplateRule};

/// The keys `[session_identity]` defines; any other is refused.
pub const SESSION_IDENTITY_KEYS: [&str; 5] =
    ["mode", "native_env", "restore", "resume_args", "fresh_args"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub id: String,
    /// Without `[launch]` the template is not launchable.
    pub launch: Option<Launch>,
    pub session_identity: Option<SessionIdentity>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Non-empty; elements may contain `${PHUX_PLUGIN_ROOT}`.
    pub command: Vec<String>,
    pub required_executables: Vec<String>,
    pub working_directory: WorkingDirectory,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WorkingDirectory {
    /// The caller's directory (the default).
    #[default]
    Workspace,
    /// The owning plugin's root.
    PluginRoot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    NativeOrPhux,
    Phux,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restore {
    ExternalCli,
    PhuxSession,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionIdentity {
    pub mode: Mode,
    pub native_env: String,
    pub restore: Restore,
    pub resume_args: Option<Vec<String>>,
    pub fresh_args: Option<Vec<String>>,
}

impl SessionIdentity {
    /// Mode `native-or-phux`, restore `external-cli` and `resume_args`.
    pub fn supports_native_restore(&self) -> bool {
        self.mode == Mode::NativeOrPhux
            && self.restore == Restore::ExternalCli
            && self.resume_args.is_some()
    }

    /// Natively restorable and declares a caller-supplied fresh identity.
    pub fn supports_native_fresh(&self) -> bool {
        self.supports_native_restore() && self.fresh_args.is_some()
    }
}

impl Template {
    /// Launchable and natively restorable (`integration.list`'s `restorable`).
    pub fn restorable(&self) -> bool {
        self.launch.is_some()
            && self
                .session_identity
                .as_ref()
                .is_some_and(SessionIdentity::supports_native_restore)
    }

    /// Restorable and mints fresh identities (`integration.list`'s `fresh_identity`).
    pub fn fresh_identity(&self) -> bool {
        self.restorable()
            && self
                .session_identity
                .as_ref()
                .is_some_and(SessionIdentity::supports_native_fresh)
    }
}

/// A refused template: the rule and the key path, never a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    pub rule: TemplateRule,
    pub path: Vec<Seg>,
}

impl TemplateError {
    fn at(rule: TemplateRule, path: &[Seg]) -> Self {
        TemplateError {
            rule,
            path: path.to_vec(),
        }
    }

    pub fn code(&self) -> &'static str {
        self.rule.code()
    }

    pub fn reason(&self) -> String {
        if self.path.is_empty() {
            format!("{}: {}", self.rule.id(), self.rule.description())
        } else {
            format!(
                "{}: {} at {}",
                self.rule.id(),
                self.rule.description(),
                path_string(&self.path)
            )
        }
    }
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.reason())
    }
}

impl std::error::Error for TemplateError {}

type Result<T> = std::result::Result<T, TemplateError>;

const LAUNCH: Seg = Seg::Key("launch");
const SESSION: Seg = Seg::Key("session_identity");

/// Parses and checks a template file's bytes.
pub fn parse(bytes: &[u8]) -> Result<Template> {
    if bytes.len() > MAX_TEMPLATE_BYTES {
        return Err(TemplateError::at(TemplateRule::Size, &[]));
    }
    let text =
        std::str::from_utf8(bytes).map_err(|_| TemplateError::at(TemplateRule::Toml, &[]))?;
    // The toml crate refuses duplicate keys and tables; its message quotes the
    // text, so only the rule is kept.
    let table: Table =
        toml::from_str(text).map_err(|_| TemplateError::at(TemplateRule::Toml, &[]))?;
    let id = match table.get("id") {
        None => return Err(TemplateError::at(TemplateRule::Id, &[Seg::Key("id")])),
        Some(v) => string(v, &[Seg::Key("id")])?,
    };
    validate_owner_id(&id).map_err(|_| TemplateError::at(TemplateRule::Id, &[Seg::Key("id")]))?;
    let launch = table
        .get("launch")
        .map(|v| launch(table_of(v, &[LAUNCH])?))
        .transpose()?;
    let session_identity = table
        .get("session_identity")
        .map(|v| session_identity(table_of(v, &[SESSION])?))
        .transpose()?;
    let template = Template {
        id,
        launch,
        session_identity,
    };
    check_execution(&template)?;
    Ok(template)
}

fn string(value: &Value, path: &[Seg]) -> Result<String> {
    value
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| TemplateError::at(TemplateRule::Type, path))
}

fn table_of<'t>(value: &'t Value, path: &[Seg]) -> Result<&'t Table> {
    value
        .as_table()
        .ok_or_else(|| TemplateError::at(TemplateRule::Type, path))
}

fn strings(value: &Value, key: &'static str, parent: Seg) -> Result<Vec<String>> {
    let array = value
        .as_array()
        .ok_or_else(|| TemplateError::at(TemplateRule::Type, &[parent, Seg::Key(key)]))?;
    array
        .iter()
        .enumerate()
        .map(|(i, v)| string(v, &[parent, Seg::Key(key), Seg::Index(i)]))
        .collect()
}

fn launch(t: &Table) -> Result<Launch> {
    let command = match t.get("command") {
        Some(v) => strings(v, "command", LAUNCH)?,
        None => Vec::new(),
    };
    let command_path = [LAUNCH, Seg::Key("command")];
    if command.is_empty() || command.len() > MAX_COMMAND_ARGS || command[0].trim().is_empty() {
        return Err(TemplateError::at(TemplateRule::Command, &command_path));
    }
    if let Some(i) = command
        .iter()
        .position(|a| a.contains(SESSION_ID_PLACEHOLDER))
    {
        return Err(TemplateError::at(
            TemplateRule::CommandPlaceholder,
            &[LAUNCH, Seg::Key("command"), Seg::Index(i)],
        ));
    }
    let required_executables = match t.get("required_executables") {
        Some(v) => strings(v, "required_executables", LAUNCH)?,
        None => Vec::new(),
    };
    let bad_name = |n: &String| {
        n.is_empty()
            || n.trim() != n
            || n.len() > MAX_EXECUTABLE_NAME_BYTES
            || n.contains(['/', '\\'])
    };
    if required_executables.len() > MAX_REQUIRED_EXECUTABLES
        || required_executables.iter().any(bad_name)
    {
        return Err(TemplateError::at(
            TemplateRule::RequiredExecutables,
            &[LAUNCH, Seg::Key("required_executables")],
        ));
    }
    let wd_path = [LAUNCH, Seg::Key("working_directory")];
    let working_directory = match t.get("working_directory") {
        None => WorkingDirectory::Workspace,
        Some(v) => match string(v, &wd_path)?.as_str() {
            "workspace" => WorkingDirectory::Workspace,
            "plugin-root" => WorkingDirectory::PluginRoot,
            _ => return Err(TemplateError::at(TemplateRule::WorkingDirectory, &wd_path)),
        },
    };
    Ok(Launch {
        command,
        required_executables,
        working_directory,
    })
}

fn session_identity(t: &Table) -> Result<SessionIdentity> {
    // Unknown keys first: the verdict must not depend on the table's key order.
    if t.keys()
        .any(|k| !SESSION_IDENTITY_KEYS.contains(&k.as_str()))
    {
        return Err(TemplateError::at(
            TemplateRule::SessionUnknownKey,
            &[SESSION],
        ));
    }
    let required = |key: &'static str| {
        t.get(key).ok_or_else(|| {
            TemplateError::at(TemplateRule::SessionMissing, &[SESSION, Seg::Key(key)])
        })
    };
    let (mode, native_env, restore) = (
        required("mode")?,
        required("native_env")?,
        required("restore")?,
    );
    let mode_path = [SESSION, Seg::Key("mode")];
    let mode = match string(mode, &mode_path)?.as_str() {
        "native-or-phux" => Mode::NativeOrPhux,
        "phux" => Mode::Phux,
        _ => return Err(TemplateError::at(TemplateRule::Mode, &mode_path)),
    };
    let env_path = [SESSION, Seg::Key("native_env")];
    let native_env = string(native_env, &env_path)?;
    let restore_path = [SESSION, Seg::Key("restore")];
    let restore = match string(restore, &restore_path)?.as_str() {
        "external-cli" => Restore::ExternalCli,
        "phux-session" => Restore::PhuxSession,
        _ => return Err(TemplateError::at(TemplateRule::Restore, &restore_path)),
    };
    let resume_args = t
        .get("resume_args")
        .map(|v| strings(v, "resume_args", SESSION))
        .transpose()?;
    let fresh_args = t
        .get("fresh_args")
        .map(|v| strings(v, "fresh_args", SESSION))
        .transpose()?;
    if !valid_native_env(&native_env) {
        return Err(TemplateError::at(TemplateRule::NativeEnv, &env_path));
    }
    if resume_args.is_some() && (mode != Mode::NativeOrPhux || restore != Restore::ExternalCli) {
        return Err(TemplateError::at(
            TemplateRule::ResumePolicy,
            &[SESSION, Seg::Key("resume_args")],
        ));
    }
    if fresh_args.is_some() && resume_args.is_none() {
        return Err(TemplateError::at(
            TemplateRule::FreshWithoutResume,
            &[SESSION, Seg::Key("fresh_args")],
        ));
    }
    for (key, args) in [("resume_args", &resume_args), ("fresh_args", &fresh_args)] {
        if let Some(args) = args {
            check_identity_args(key, args)?;
        }
    }
    Ok(SessionIdentity {
        mode,
        native_env,
        restore,
        resume_args,
        fresh_args,
    })
}

/// `PHUX_<name>_SESSION_ID` with a non-empty name, env-name syntax, ≤128 bytes.
/// Unlike the peer, the value is not trimmed first: padding is refused.
pub fn valid_native_env(name: &str) -> bool {
    let mut bytes = name.bytes();
    let syntax = matches!(bytes.next(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_');
    syntax
        && name.len() <= MAX_NATIVE_ENV_BYTES
        && name.len() > NATIVE_ENV_PREFIX.len() + NATIVE_ENV_SUFFIX.len()
        && name.starts_with(NATIVE_ENV_PREFIX)
        && name.ends_with(NATIVE_ENV_SUFFIX)
}

fn check_identity_args(key: &'static str, args: &[String]) -> Result<()> {
    let path = [SESSION, Seg::Key(key)];
    if !(MIN_IDENTITY_ARGS..=MAX_IDENTITY_ARGS).contains(&args.len()) {
        return Err(TemplateError::at(TemplateRule::ArgsCount, &path));
    }
    if let Some(i) = args
        .iter()
        .position(|a| !(MIN_IDENTITY_ARG_BYTES..=MAX_IDENTITY_ARG_BYTES).contains(&a.len()))
    {
        return Err(TemplateError::at(
            TemplateRule::ArgsBytes,
            &[SESSION, Seg::Key(key), Seg::Index(i)],
        ));
    }
    let standalone = args.iter().filter(|a| *a == SESSION_ID_PLACEHOLDER).count();
    let embedded = args
        .iter()
        .any(|a| a != SESSION_ID_PLACEHOLDER && a.contains(SESSION_ID_PLACEHOLDER));
    if standalone != 1 || embedded {
        return Err(TemplateError::at(TemplateRule::Placeholder, &path));
    }
    Ok(())
}

/// The identity never reaches an executable or evaluator position: checked only
/// for natively restorable templates with a launch command (others never receive
/// an identity).
fn check_execution(template: &Template) -> Result<()> {
    let (Some(launch), Some(session)) = (&template.launch, &template.session_identity) else {
        return Ok(());
    };
    if !session.supports_native_restore() {
        return Ok(());
    }
    let program_path = [LAUNCH, Seg::Key("command"), Seg::Index(0)];
    match classify(&launch.command[0]) {
        ProgramClass::Runner => Err(TemplateError::at(TemplateRule::Interpreter, &program_path)),
        ProgramClass::Shell
            if !launch
                .command
                .get(1)
                .is_some_and(|a| is_fixed_plugin_script(a)) =>
        {
            Err(TemplateError::at(TemplateRule::Shell, &program_path))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
