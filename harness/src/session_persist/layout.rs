//! The backends' session layouts (`persist/layouts.toml`, or the document the
//! profile names with `[persist] layouts`) as the kit instantiates them: the concrete
//! file names of one session, for the sessions the kit plants, the blobs it writes
//! and its "exactly the session's files" judgements.

use crate::verdict::OrHarness;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The kit's layouts document, the one the reference reads.
const KIT_LAYOUTS: &str = include_str!("../../../persist/layouts.toml");

#[derive(Debug, Deserialize)]
pub struct Layouts {
    backend: BTreeMap<String, Backend>,
}

#[derive(Debug, Deserialize)]
struct Backend {
    capability: bool,
    #[serde(default)]
    key: Option<String>,
    #[serde(default)]
    files: Vec<String>,
}

/// One session's file names under its backend root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The key file (the transcript HasSession looks for).
    pub key: String,
    /// Every file of the session, the key first.
    pub files: Vec<String>,
    /// A directory whose files are the session's (the `**` pattern's), or the key
    /// file's own directory when the layout has none.
    pub inner_dir: String,
}

/// Reads a layouts document; every capable backend needs a key that is one of its
/// files, and one backend at least is capable (rows about the others do not apply:
/// with none, nothing would be judged).
pub fn parse(text: &str) -> Result<Layouts, String> {
    let l: Layouts = toml::from_str(text).map_err(|e| e.to_string())?;
    if !l.backend.values().any(|b| b.capability) {
        return Err(
            "no backend has the persist capability: the packer rows would judge nothing".into(),
        );
    }
    for (name, b) in &l.backend {
        if !b.capability {
            continue;
        }
        match &b.key {
            Some(k) if b.files.contains(k) => {}
            _ => {
                return Err(format!(
                    "backend {name}: a capable backend needs a `key` that is one of its `files`"
                ))
            }
        }
    }
    Ok(l)
}

/// The layouts of this run: the profile's document when it names one (checked when
/// the profile was read), else the kit's.
fn layouts() -> Layouts {
    match own_layouts_path() {
        Some(path) => {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| crate::harness_error!("the profile's layouts {path}: {e}"));
            parse(&text)
                .unwrap_or_else(|e| crate::harness_error!("the profile's layouts {path}: {e}"))
        }
        None => parse(KIT_LAYOUTS).or_harness("the kit's persist/layouts.toml"),
    }
}

/// The layouts document the profile names (`[persist] layouts`), if any.
fn own_layouts_path() -> Option<String> {
    crate::profile::try_context()
        .and_then(|c| c.profile.persist.as_ref())
        .and_then(|t| t.get("layouts"))
        .and_then(|v| v.as_str())
        .filter(|p| !p.is_empty())
        .map(str::to_string)
}

/// The profile's own layouts document, when it names one (the kit's corpus blobs follow
/// the kit's layouts, so a checker of other layouts may refuse them by right).
pub fn own_layouts() -> Option<String> {
    own_layouts_path()
}

/// Ends a row whose subject the implementation's own layouts leave out. ADR-089
/// leaves the backends' file sets to the implementer ("Implementer discovery"), so
/// that is its choice, not a fail; with the kit's own layouts it is the suite's
/// error.
pub fn not_in_layouts(what: &str) -> ! {
    match own_layouts_path() {
        Some(path) => crate::does_not_apply!(
            "the implementation's layouts ({path}) have no {what}, which ADR-089 leaves to the implementer"
        ),
        None => crate::harness_error!("the kit's layouts have no {what}"),
    }
}

/// One placeholder of a pattern component, instantiated as the kit's sessions are;
/// `**` becomes `below`.
fn instantiate_below(pattern: &str, id: &str, below: &str) -> String {
    let mut out = Vec::new();
    for component in pattern.split('/') {
        if component == "**" {
            out.push(below.to_string());
            continue;
        }
        out.push(
            component
                .replace("{id}", id)
                .replace("{dir}", "-work-demo")
                .replace("{any}", "2026-11-30T09-15-02-000Z")
                .replace("{ts}", "2026-11-30T09-15-02")
                .replace("{yyyy}", "2026")
                .replace("{mm}", "11")
                .replace("{dd}", "30"),
        );
    }
    out.join("/")
}

fn instantiate(pattern: &str, id: &str) -> String {
    instantiate_below(pattern, id, "subagents/agent-a1.jsonl")
}

/// Whether this run's layouts have `backend` with the persist capability.
pub fn is_capable(backend: &str) -> bool {
    layouts().backend.get(backend).is_some_and(|b| b.capability)
}

/// The capable backend's layout; a row about a backend the implementation's own
/// layouts lack does not apply.
fn capable(all: &Layouts, backend: &str) -> (String, Vec<String>) {
    let b = all
        .backend
        .get(backend)
        .filter(|b| b.capability)
        .unwrap_or_else(|| not_in_layouts(&format!("backend {backend:?} with the capability")));
    let key = b.key.clone().or_harness("the backend's key pattern");
    (key, b.files.clone())
}

/// The session `id` of `backend` as the kit writes it: the key file and one file of
/// every other pattern of the backend's layout.
pub fn session(backend: &str, id: &str) -> Session {
    let (key_pattern, patterns) = capable(&layouts(), backend);
    let key = instantiate(&key_pattern, id);
    let mut files = vec![key.clone()];
    let mut inner_dir = None;
    for pattern in patterns.iter().filter(|p| **p != key_pattern) {
        let file = instantiate(pattern, id);
        if let Some(prefix) = pattern.strip_suffix("/**") {
            inner_dir.get_or_insert_with(|| instantiate(prefix, id));
        }
        files.push(file);
    }
    let inner_dir =
        inner_dir.unwrap_or_else(|| key.rsplit_once('/').map_or("", |(d, _)| d).to_string());
    Session {
        key,
        files,
        inner_dir,
    }
}

/// The files the kit plants for session `id` of `backend`, the key file first: one
/// file of every pattern, two below a `**` (a subagent's transcript and a tool
/// result), each with its own bytes.
pub fn planted(backend: &str, id: &str) -> Vec<(String, Vec<u8>)> {
    let (key_pattern, patterns) = capable(&layouts(), backend);
    let line = |n: usize| format!("{{\"turn\":{n},\"session\":\"{id}\"}}\n").into_bytes();
    let mut out = vec![(instantiate(&key_pattern, id), line(1))];
    for pattern in patterns.iter().filter(|p| **p != key_pattern) {
        if pattern.ends_with("/**") {
            out.push((instantiate(pattern, id), line(out.len() + 1)));
            let tool = instantiate_below(pattern, id, "tool-results/t1.txt");
            out.push((tool, b"tool output\n".to_vec()));
        } else {
            out.push((instantiate(pattern, id), line(out.len() + 1)));
        }
    }
    out
}

/// Where the kit puts the `n`-th extra file of a session (caps rows): below the
/// backend's `**` pattern; a backend without one has one file per session.
pub fn extra_file(backend: &str, id: &str, n: usize) -> String {
    let (_, patterns) = capable(&layouts(), backend);
    let below = patterns
        .iter()
        .find(|p| p.ends_with("/**"))
        .unwrap_or_else(|| {
            not_in_layouts(&format!(
                "`**` pattern for backend {backend:?} (one file per session: no extra files)"
            ))
        });
    instantiate_below(below, id, &format!("extra/f{n:03}.txt"))
}

/// Whether `backend`'s sessions have files below a `**` (more than one file each).
pub fn has_subtree(backend: &str) -> bool {
    capable(&layouts(), backend)
        .1
        .iter()
        .any(|p| p.ends_with("/**"))
}

/// Whether `backend`'s layout lists `path` as a file of session `id` (the kit's
/// decoys are only decoys where the implementation's own layouts leave them out).
pub fn lists(backend: &str, id: &str, path: &str) -> bool {
    let (_, patterns) = capable(&layouts(), backend);
    patterns.iter().any(|p| pattern_matches(p, id, path))
}

/// One layouts pattern against a relative path (the placeholders of
/// persist/layouts.toml; `**` as the last component: one or more components).
fn pattern_matches(pattern: &str, id: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.split('/').collect();
    let got: Vec<&str> = path.split('/').collect();
    let (fixed, below) = match pat.split_last() {
        Some((&"**", rest)) => (rest, true),
        _ => (&pat[..], false),
    };
    let count_ok = if below {
        got.len() > fixed.len()
    } else {
        got.len() == fixed.len()
    };
    count_ok
        && fixed
            .iter()
            .zip(&got)
            .all(|(p, g)| component_regex(p, id).is_match(g))
}

fn component_regex(component: &str, id: &str) -> regex::Regex {
    let mut re = String::from("^");
    let mut rest = component;
    while let Some(open) = rest.find('{') {
        re.push_str(&regex::escape(&rest[..open]));
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
        re.push_str(match &rest[open..=close.min(rest.len() - 1)] {
            "{id}" => "(?:ID)",
            "{dir}" => "[^/]+",
            "{any}" => "[^/]+",
            "{ts}" => "[0-9A-Za-z-]{1,64}",
            "{yyyy}" => "[0-9]{4}",
            "{mm}" | "{dd}" => "[0-9]{2}",
            _ => "(?:$.)",
        });
        rest = &rest[(close + 1).min(rest.len())..];
    }
    re.push_str(&regex::escape(rest));
    re.push('$');
    let re = re.replace("(?:ID)", &format!("(?:{})", regex::escape(id)));
    regex::Regex::new(&re)
        .unwrap_or_else(|e| crate::harness_error!("layout pattern {component:?}: {e}"))
}

/// A capable backend other than `backend` (for a blob that names the wrong one).
pub fn other_backend(backend: &str) -> String {
    layouts()
        .backend
        .into_iter()
        .find(|(name, b)| b.capability && name != backend)
        .map(|(name, _)| name)
        .or_harness("the layouts have a second capable backend")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The placeholders match what persist/layouts.toml says, and nothing more.
    #[test]
    fn patterns_match_their_placeholders_only() {
        let m = |p: &str, path: &str| pattern_matches(p, "s1", path);
        assert!(m("projects/{dir}/{id}.jsonl", "projects/-w/s1.jsonl"));
        assert!(!m("projects/{dir}/{id}.jsonl", "projects/-w/s2.jsonl"));
        assert!(!m("projects/{dir}/{id}.jsonl", "projects/a/b/s1.jsonl"));
        assert!(m("projects/{dir}/{id}/**", "projects/-w/s1/a/b.txt"));
        assert!(!m("projects/{dir}/{id}/**", "projects/-w/s1"));
        assert!(m(
            "sessions/{yyyy}/{mm}/{dd}/rollout-{ts}-{id}.jsonl",
            "sessions/2026/11/30/rollout-2026-11-30T10-00-00-s1.jsonl"
        ));
        assert!(!m(
            "sessions/{yyyy}/{mm}/{dd}/rollout-{ts}-{id}.jsonl",
            "sessions/26/11/30/rollout-x-s1.jsonl"
        ));
        assert!(m("todos/{id}-agent-{any}.json", "todos/s1-agent-s1.json"));
        assert!(!m("todos/{id}.txt", "todos/s1.txt.bak"));
    }

    /// The kit's sessions follow the layouts: claude's transcript and one file below
    /// its directory; one file for codex and pi.
    #[test]
    fn sessions_are_instantiated_from_the_layouts() {
        let c = session("claude_code", "s1");
        assert_eq!(c.key, "projects/-work-demo/s1.jsonl");
        assert_eq!(
            c.files,
            [
                "projects/-work-demo/s1.jsonl",
                "projects/-work-demo/s1/subagents/agent-a1.jsonl"
            ]
        );
        assert_eq!(c.inner_dir, "projects/-work-demo/s1");
        let x = session("codex", "0193-ab");
        assert_eq!(
            x.files,
            ["sessions/2026/11/30/rollout-2026-11-30T09-15-02-0193-ab.jsonl"]
        );
        assert_eq!(x.inner_dir, "sessions/2026/11/30");
        let p = session("pi", "p1");
        assert_eq!(
            p.key,
            "sessions/-work-demo/2026-11-30T09-15-02-000Z_p1.jsonl"
        );
        assert_ne!(other_backend("claude_code"), "claude_code");
    }

    /// Planted sessions follow the layouts: two files below a `**`, one per other
    /// pattern; extra files go below the `**`; a document whose key is not one of its
    /// files is refused.
    #[test]
    fn planted_sessions_and_documents() {
        let c: Vec<String> = planted("claude_code", "s1")
            .into_iter()
            .map(|f| f.0)
            .collect();
        assert_eq!(
            c,
            [
                "projects/-work-demo/s1.jsonl",
                "projects/-work-demo/s1/subagents/agent-a1.jsonl",
                "projects/-work-demo/s1/tool-results/t1.txt"
            ]
        );
        assert_eq!(
            extra_file("claude_code", "s1", 7),
            "projects/-work-demo/s1/extra/f007.txt"
        );
        let peer = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../peers/session-packer/layouts.toml"),
        )
        .unwrap();
        let l = parse(&peer).unwrap();
        assert_eq!(l.backend["codex"].files.len(), 2);
        let e = parse("[backend.x]\ncapability = true\nkey = \"a/{id}\"\nfiles = [\"b/{id}\"]\n")
            .unwrap_err();
        assert!(e.contains("backend x"), "{e}");
        let e = parse("[backend.x]\ncapability = false\n").unwrap_err();
        assert!(e.contains("no backend has the persist capability"), "{e}");
    }
}
