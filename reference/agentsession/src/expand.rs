//! A template plus an opaque native id into what is spawned (ADR-0068 points 2, 3
//! and 6): the launch command with `${PHUX_PLUGIN_ROOT}` substituted per element,
//! then the identity vector with its placeholder element replaced by the id;
//! the environment `{native_env: id}`; the working directory from
//! `working_directory`. No shell, no splitting: the id stays one argv element.
//! Only the id is ever archived; this is recomputed from the current template.

use crate::exec_policy::{classify, is_fixed_plugin_script, ProgramClass};
use crate::limits::{MAX_EXPANDED_BYTES, PLUGIN_ROOT_PLACEHOLDER, SESSION_ID_PLACEHOLDER};
use crate::record::validate_native_id;
use crate::rules::{ExpandRule, NativeRule};
use crate::template::{Launch, Template, WorkingDirectory};

/// Where the program runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cwd {
    /// The caller's directory.
    Workspace,
    /// The plugin root, as given.
    PluginRoot(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expansion {
    pub argv: Vec<String>,
    /// `(native_env, id)` when an identity was applied.
    pub env: Option<(String, String)>,
    pub cwd: Cwd,
    /// Index of the id in `argv`, when an identity was applied.
    pub id_index: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpandError {
    Expand(ExpandRule),
    Native(NativeRule),
}

impl ExpandError {
    pub fn code(self) -> &'static str {
        match self {
            ExpandError::Expand(rule) => rule.code(),
            ExpandError::Native(rule) => rule.code(),
        }
    }

    pub fn rule_id(self) -> &'static str {
        match self {
            ExpandError::Expand(rule) => rule.id(),
            ExpandError::Native(rule) => rule.id(),
        }
    }

    pub fn reason(self) -> String {
        let text = match self {
            ExpandError::Expand(rule) => rule.description(),
            ExpandError::Native(rule) => rule.description(),
        };
        format!("{}: {text}", self.rule_id())
    }
}

impl std::fmt::Display for ExpandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code(), self.reason())
    }
}

impl std::error::Error for ExpandError {}

/// Which identity vector to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity<'a> {
    /// `resume_args` with an existing id.
    Resume(&'a str),
    /// `fresh_args` with a newly minted id (the caller mints it).
    Fresh(&'a str),
}

fn launch_of(template: &Template) -> Result<&Launch, ExpandError> {
    template
        .launch
        .as_ref()
        .ok_or(ExpandError::Expand(ExpandRule::NotLaunchable))
}

fn base(launch: &Launch, plugin_root: &str) -> (Vec<String>, Cwd) {
    let argv = launch
        .command
        .iter()
        .map(|part| part.replace(PLUGIN_ROOT_PLACEHOLDER, plugin_root))
        .collect();
    let cwd = match launch.working_directory {
        WorkingDirectory::Workspace => Cwd::Workspace,
        WorkingDirectory::PluginRoot => Cwd::PluginRoot(plugin_root.to_owned()),
    };
    (argv, cwd)
}

/// The plain launch: no identity, no record.
pub fn plain(template: &Template, plugin_root: &str) -> Result<Expansion, ExpandError> {
    let (argv, cwd) = base(launch_of(template)?, plugin_root);
    let expansion = Expansion {
        argv,
        env: None,
        cwd,
        id_index: None,
    };
    check_size(&expansion)?;
    Ok(expansion)
}

/// The launch with an identity applied.
pub fn with_identity(
    template: &Template,
    plugin_root: &str,
    identity: Identity<'_>,
) -> Result<Expansion, ExpandError> {
    let launch = launch_of(template)?;
    let session = template
        .session_identity
        .as_ref()
        .filter(|s| s.supports_native_restore())
        .ok_or(ExpandError::Expand(ExpandRule::NotRestorable))?;
    let (vector, id) = match identity {
        Identity::Resume(id) => (session.resume_args.as_deref(), id),
        Identity::Fresh(id) => (session.fresh_args.as_deref(), id),
    };
    let vector = vector.ok_or(ExpandError::Expand(match identity {
        Identity::Resume(_) => ExpandRule::NotRestorable,
        Identity::Fresh(_) => ExpandRule::NoFreshIdentity,
    }))?;
    validate_native_id(id).map_err(ExpandError::Native)?;
    let (mut argv, cwd) = base(launch, plugin_root);
    // The template was judged before substitution; a plugin root whose own name is
    // a shell or an interpreter must not change that verdict afterwards.
    match classify(&argv[0]) {
        ProgramClass::Runner => return Err(ExpandError::Expand(ExpandRule::Evaluator)),
        ProgramClass::Shell
            if !launch
                .command
                .get(1)
                .is_some_and(|a| is_fixed_plugin_script(a)) =>
        {
            return Err(ExpandError::Expand(ExpandRule::Evaluator))
        }
        _ => {}
    }
    let mut id_index = None;
    for arg in vector {
        if arg == SESSION_ID_PLACEHOLDER {
            id_index = Some(argv.len());
            argv.push(id.to_owned());
        } else {
            argv.push(arg.clone());
        }
    }
    let expansion = Expansion {
        argv,
        env: Some((session.native_env.clone(), id.to_owned())),
        cwd,
        id_index,
    };
    check_size(&expansion)?;
    Ok(expansion)
}

fn check_size(e: &Expansion) -> Result<(), ExpandError> {
    let argv = e.argv.iter().map(|a| a.len() + 1).sum::<usize>();
    let env = e.env.as_ref().map_or(0, |(k, v)| k.len() + v.len() + 2);
    if argv + env > MAX_EXPANDED_BYTES {
        return Err(ExpandError::Expand(ExpandRule::TooLarge));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::parse;

    const T: &str = r#"
id = "claude-code"
[session_identity]
mode = "native-or-phux"
native_env = "PHUX_CLAUDE_SESSION_ID"
restore = "external-cli"
resume_args = ["--resume", "${PHUX_AGENT_SESSION_ID}"]
fresh_args = ["--session-id", "${PHUX_AGENT_SESSION_ID}"]
[launch]
command = ["sh", "${PHUX_PLUGIN_ROOT}/w.sh", "--", "claude"]
working_directory = "plugin-root"
"#;

    #[test]
    fn the_id_is_one_element() {
        let t = parse(T.as_bytes()).unwrap();
        let hostile = "team session; printf x";
        let e = with_identity(&t, "/p", Identity::Resume(hostile)).unwrap();
        assert_eq!(
            e.argv,
            ["sh", "/p/w.sh", "--", "claude", "--resume", hostile]
        );
        assert_eq!(e.id_index, Some(5));
        assert_eq!(
            e.env,
            Some(("PHUX_CLAUDE_SESSION_ID".to_owned(), hostile.to_owned()))
        );
        assert_eq!(e.cwd, Cwd::PluginRoot("/p".to_owned()));
        let f = with_identity(&t, "/p", Identity::Fresh("u")).unwrap();
        assert_eq!(f.argv[4], "--session-id");
        assert_eq!(plain(&t, "/p").unwrap().argv.len(), 4);
    }

    #[test]
    fn refusals() {
        let t = parse(T.as_bytes()).unwrap();
        let err = |id: &str| {
            with_identity(&t, "/p", Identity::Resume(id))
                .unwrap_err()
                .rule_id()
        };
        assert_eq!(err("-x"), "native.option_shaped");
        assert_eq!(err(&"x".repeat(1025)), "native.length");
        let huge_root = "r".repeat(16 * 1024);
        assert_eq!(
            with_identity(&t, &huge_root, Identity::Resume("x"))
                .unwrap_err()
                .rule_id(),
            "expand.too_large"
        );
        let no_fresh = parse(
            T.replace(
                r#"fresh_args = ["--session-id", "${PHUX_AGENT_SESSION_ID}"]"#,
                "",
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(
            with_identity(&no_fresh, "/p", Identity::Fresh("x"))
                .unwrap_err()
                .rule_id(),
            "expand.no_fresh_identity"
        );
        let detect_only = parse(b"id = \"d\"").unwrap();
        assert_eq!(
            plain(&detect_only, "/p").unwrap_err().rule_id(),
            "expand.not_launchable"
        );
    }
}
