//! Which files under a backend's root belong to a session: the data of
//! `persist/layouts.toml` (profiles may pass their own), the auth-file denylist, and
//! the matching of paths against it. Pure: the packer walks, this only answers.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::error::{ErrorCode, PersistError, Result};
use crate::header::valid_backend_name;
use crate::limits::{MAX_PATH_DEPTH, MAX_TS_BYTES};

/// The document shipped with the kit.
pub const BUILTIN_LAYOUTS: &str = include_str!("../../../persist/layouts.toml");

/// Every backend's layout and the names that are never session files.
#[derive(Clone, Debug)]
pub struct Layouts {
    never: Vec<String>,
    backends: BTreeMap<String, BackendLayout>,
}

/// One backend: whether it has the persist capability, and its patterns.
#[derive(Clone, Debug)]
pub struct BackendLayout {
    pub name: String,
    pub capability: bool,
    /// The environment variable naming the root (informational; callers pass roots).
    pub root_env: Option<String>,
    key: Pattern,
    files: Vec<Pattern>,
}

/// What a whitelisted path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// The HasSession key file (the transcript).
    Key,
    Session,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pattern {
    pub(crate) comps: Vec<Comp>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Comp {
    /// `**`: one or more components.
    Tail,
    Template(Vec<Part>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Lit(String),
    Id,
    Var(Var),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Var {
    Dir,
    Any,
    Ts,
    Year,
    Month,
    Day,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    auth: AuthDoc,
    backend: BTreeMap<String, BackendDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AuthDoc {
    never: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BackendDoc {
    capability: bool,
    root_env: Option<String>,
    key: Option<String>,
    #[serde(default)]
    files: Vec<String>,
}

fn invalid(reason: &'static str) -> PersistError {
    PersistError::new(ErrorCode::InvalidLayouts, reason)
}

impl Layouts {
    /// The kit's own layouts (`persist/layouts.toml`), parsed once.
    pub fn builtin() -> &'static Layouts {
        static BUILTIN: OnceLock<Layouts> = OnceLock::new();
        BUILTIN
            .get_or_init(|| Layouts::parse(BUILTIN_LAYOUTS).expect("persist/layouts.toml is valid"))
    }

    /// Parses a layouts document. A capable backend needs a key pattern that is also
    /// one of its file patterns; an incapable one has no patterns at all.
    pub fn parse(text: &str) -> Result<Layouts> {
        let doc: Doc = toml::from_str(text)
            .map_err(|_| invalid("layouts document is not valid TOML of the schema"))?;
        if doc
            .auth
            .never
            .iter()
            .any(|n| n.is_empty() || n.contains('/'))
        {
            return Err(invalid("auth names are single path components"));
        }
        let mut backends = BTreeMap::new();
        for (name, b) in doc.backend {
            if !valid_backend_name(&name) {
                return Err(invalid("backend names are [a-z][a-z0-9_]{0,31}"));
            }
            let layout = if b.capability {
                let key = Pattern::parse(
                    b.key
                        .as_deref()
                        .ok_or(invalid("a capable backend names its key file"))?,
                )?;
                if key.comps.contains(&Comp::Tail) {
                    return Err(invalid("the key pattern names one file"));
                }
                let files = b
                    .files
                    .iter()
                    .map(|f| Pattern::parse(f))
                    .collect::<Result<Vec<_>>>()?;
                if !files.contains(&key) {
                    return Err(invalid("the key pattern is one of the file patterns"));
                }
                BackendLayout {
                    name: name.clone(),
                    capability: true,
                    root_env: b.root_env,
                    key,
                    files,
                }
            } else {
                if b.key.is_some() || !b.files.is_empty() {
                    return Err(invalid("a backend without the capability has no patterns"));
                }
                BackendLayout {
                    name: name.clone(),
                    capability: false,
                    root_env: b.root_env,
                    key: Pattern { comps: Vec::new() },
                    files: Vec::new(),
                }
            };
            backends.insert(name, layout);
        }
        Ok(Layouts {
            never: doc.auth.never,
            backends,
        })
    }

    /// A backend known to the layouts, capable or not.
    pub fn lookup(&self, name: &str) -> Option<&BackendLayout> {
        self.backends.get(name)
    }

    /// A backend with the persist capability: unknown ⇒ `invalid_params.backend`,
    /// known without it (kimi, grok) ⇒ `unsupported.persist_capability`.
    pub fn capable(&self, name: &str) -> Result<&BackendLayout> {
        match self.backends.get(name) {
            None => Err(PersistError::new(
                ErrorCode::InvalidBackend,
                "unknown backend",
            )),
            Some(b) if !b.capability => Err(PersistError::new(
                ErrorCode::NoCapability,
                "backend has no persist capability",
            )),
            Some(b) => Ok(b),
        }
    }

    pub fn backend_names(&self) -> impl Iterator<Item = &str> {
        self.backends.keys().map(String::as_str)
    }

    /// True for a component that is never a session file (OAuth and account files).
    pub fn is_auth_name(&self, component: &str) -> bool {
        self.never.iter().any(|n| n == component)
    }

    /// True when any component of `path` is an auth name.
    pub fn has_auth_component(&self, path: &str) -> bool {
        path.split('/').any(|c| self.is_auth_name(c))
    }
}

impl BackendLayout {
    /// What `path` (already through the path rule) is for session `id`, or `None`
    /// when it is not whitelisted. Auth names are checked by the caller.
    pub fn classify(&self, path: &str, id: &str) -> Option<FileKind> {
        let comps: Vec<&str> = path.split('/').collect();
        if self.key.matches(&comps, id) {
            return Some(FileKind::Key);
        }
        self.files
            .iter()
            .any(|p| p.matches(&comps, id))
            .then_some(FileKind::Session)
    }

    pub(crate) fn key_pattern(&self) -> &Pattern {
        &self.key
    }

    pub(crate) fn file_patterns(&self) -> &[Pattern] {
        &self.files
    }
}

impl Pattern {
    fn parse(text: &str) -> Result<Pattern> {
        let mut comps = Vec::new();
        let parts: Vec<&str> = text.split('/').collect();
        if parts.len() > MAX_PATH_DEPTH {
            return Err(invalid("a pattern is at most 16 components"));
        }
        for (i, c) in parts.iter().enumerate() {
            if *c == "**" {
                if i + 1 != parts.len() || i == 0 {
                    return Err(invalid("** is the last component, after another"));
                }
                comps.push(Comp::Tail);
            } else {
                comps.push(Comp::Template(parse_template(c)?));
            }
        }
        Ok(Pattern { comps })
    }

    fn matches(&self, comps: &[&str], id: &str) -> bool {
        let mut i = 0;
        for comp in &self.comps {
            match comp {
                Comp::Tail => return comps.len() > i,
                Comp::Template(parts) => {
                    let Some(c) = comps.get(i) else { return false };
                    if !template_matches(parts, c, id) {
                        return false;
                    }
                    i += 1;
                }
            }
        }
        i == comps.len()
    }
}

fn parse_template(text: &str) -> Result<Vec<Part>> {
    if text.is_empty() || text == "." || text == ".." {
        return Err(invalid("pattern components are not empty, . or .."));
    }
    let mut parts = Vec::new();
    let mut rest = text;
    let mut vars = 0;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('{') {
            let end = after.find('}').ok_or(invalid("unclosed placeholder"))?;
            let part = match &after[..end] {
                "id" => Part::Id,
                "dir" => Part::Var(Var::Dir),
                "any" => Part::Var(Var::Any),
                "ts" => Part::Var(Var::Ts),
                "yyyy" => Part::Var(Var::Year),
                "mm" => Part::Var(Var::Month),
                "dd" => Part::Var(Var::Day),
                _ => return Err(invalid("unknown placeholder")),
            };
            vars += usize::from(matches!(part, Part::Var(_)));
            parts.push(part);
            rest = &after[end + 1..];
        } else {
            let end = rest.find('{').unwrap_or(rest.len());
            if rest[..end].contains(['}', '*', '\\']) {
                return Err(invalid("stray pattern character"));
            }
            parts.push(Part::Lit(rest[..end].to_owned()));
            rest = &rest[end..];
        }
    }
    if vars > 1 {
        return Err(invalid(
            "at most one placeholder besides {id} per component",
        ));
    }
    if parts.iter().any(|p| matches!(p, Part::Var(Var::Dir))) && parts.len() != 1 {
        return Err(invalid("{dir} is a whole component"));
    }
    Ok(parts)
}

/// The component's exact name when it has no placeholder besides `{id}`.
pub(crate) fn template_literal(parts: &[Part], id: &str) -> Option<String> {
    let mut out = String::new();
    for p in parts {
        match p {
            Part::Lit(s) => out.push_str(s),
            Part::Id => out.push_str(id),
            Part::Var(_) => return None,
        }
    }
    Some(out)
}

/// Whether one component `name` fits the template for session `id`. Literal parts
/// before the placeholder are stripped from the front, those after it from the back,
/// and what is left must fit the placeholder (or be empty without one). No
/// allocation: the reader calls this for every member and pattern.
pub(crate) fn template_matches(parts: &[Part], name: &str, id: &str) -> bool {
    fn text<'t>(p: &'t Part, id: &'t str) -> &'t str {
        match p {
            Part::Lit(s) => s,
            Part::Id => id,
            Part::Var(_) => "",
        }
    }
    let var = parts.iter().position(|p| matches!(p, Part::Var(_)));
    let (head, tail) = match var {
        Some(v) => (&parts[..v], &parts[v + 1..]),
        None => (parts, &[][..]),
    };
    let mut rest = name;
    for p in head {
        match rest.strip_prefix(text(p, id)) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    for p in tail.iter().rev() {
        match rest.strip_suffix(text(p, id)) {
            Some(r) => rest = r,
            None => return false,
        }
    }
    match var.map(|v| &parts[v]) {
        Some(Part::Var(v)) => var_matches(*v, rest),
        _ => rest.is_empty(),
    }
}

fn var_matches(var: Var, s: &str) -> bool {
    let digits = |n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    match var {
        Var::Dir | Var::Any => !s.is_empty(),
        Var::Ts => {
            !s.is_empty()
                && s.len() <= MAX_TS_BYTES
                && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        }
        Var::Year => digits(4),
        Var::Month => digits(2) && matches!(s.parse::<u8>(), Ok(1..=12)),
        Var::Day => digits(2) && matches!(s.parse::<u8>(), Ok(1..=31)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_layouts_whitelist_each_backend() {
        let l = Layouts::builtin();
        let claude = l.capable("claude_code").unwrap();
        assert_eq!(
            claude.classify("projects/-home-x/abc.jsonl", "abc"),
            Some(FileKind::Key)
        );
        assert_eq!(
            claude.classify("projects/-home-x/abc/sub/a.json", "abc"),
            Some(FileKind::Session)
        );
        assert_eq!(claude.classify("projects/-home-x/abd.jsonl", "abc"), None);
        assert_eq!(claude.classify("projects/abc.jsonl", "abc"), None);
        assert_eq!(claude.classify("projects/-home-x/abc", "abc"), None);
        let codex = l.capable("codex").unwrap();
        assert_eq!(
            codex.classify(
                "sessions/2025/05/07/rollout-2025-05-07T17-24-21-abc.jsonl",
                "abc"
            ),
            Some(FileKind::Key)
        );
        assert_eq!(
            codex.classify("sessions/2025/13/07/rollout-x-abc.jsonl", "abc"),
            None
        );
        assert_eq!(
            codex.classify("sessions/2025/05/07/rollout--abc.jsonl", "abc"),
            None
        );
        let pi = l.capable("pi").unwrap();
        assert_eq!(
            pi.classify("sessions/--home--/2025T_abc.jsonl", "abc"),
            Some(FileKind::Key)
        );
        assert_eq!(pi.classify("sessions/--home--/_abc.jsonl", "abc"), None);
        assert_eq!(l.capable("kimi").unwrap_err().code, ErrorCode::NoCapability);
        assert_eq!(l.capable("grok").unwrap_err().code, ErrorCode::NoCapability);
        assert_eq!(
            l.capable("nope").unwrap_err().code,
            ErrorCode::InvalidBackend
        );
        assert!(l.has_auth_component("projects/x/abc/auth.json"));
        assert!(!l.has_auth_component("projects/x/abc/auth.jsonl"));
    }

    #[test]
    fn malformed_layouts_are_refused() {
        for bad in [
            "[auth]\nnever=[]\n[backend.x]\ncapability=true\nfiles=[\"a\"]\n",
            "[auth]\nnever=[]\n[backend.x]\ncapability=true\nkey=\"a/{id}\"\nfiles=[\"b\"]\n",
            "[auth]\nnever=[]\n[backend.x]\ncapability=true\nkey=\"**\"\nfiles=[\"**\"]\n",
            "[auth]\nnever=[]\n[backend.x]\ncapability=true\nkey=\"{ts}{any}\"\nfiles=[\"{ts}{any}\"]\n",
            "[auth]\nnever=[]\n[backend.x]\ncapability=false\nkey=\"a\"\n",
            "[auth]\nnever=[\"a/b\"]\n[backend.x]\ncapability=false\n",
            "[auth]\nnever=[]\nextra=1\n[backend.x]\ncapability=false\n",
        ] {
            assert_eq!(Layouts::parse(bad).unwrap_err().code, ErrorCode::InvalidLayouts, "{bad}");
        }
    }
}
