//! No import circle inside a crate: for every source file, the modules its
//! `crate::…`, `super::…` and `self::…` paths name (the longest path that is a module
//! of the crate), and no strongly connected group of two or more modules. A circle
//! means none of its files can be read alone; the fix is to move the shared piece
//! down into a file that imports neither side (docs/architecture.md).
//!
//! Text-level, on purpose: comments are dropped and `#[cfg(test)]` modules at the end
//! of a file are left out (a test may reach across), which is all the kit's code
//! needs; plain `use child::…` from a parent to its own child is not a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

const CRATES: &[&str] = &[
    "reference/format/src",
    "reference/agentsession/src",
    "reference/store/src",
    "reference/persist/src",
    "reference/daemon/src",
    "reference/broker/src",
    "harness/src",
    "fault-injection/src",
    "fault-injection/probe/src",
    "fault-injection/preload/src",
    "fault-injection/plan/src",
    "xtask/src",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn module_of(root: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(root).unwrap().with_extension("");
    let mut parts: Module = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The source without comments and without a trailing `#[cfg(test)]` module.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::a::b`, `super::a` or `self::a` path in `code`, as (head, segments).
fn paths(code: &str) -> Vec<(&str, Vec<&str>)> {
    let mut out = Vec::new();
    for head in ["crate", "super", "self"] {
        let pat = format!("{head}::");
        let mut from = 0;
        while let Some(at) = code[from..].find(&pat) {
            let start = from + at;
            from = start + pat.len();
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &code[from..];
            let mut segs = Vec::new();
            let mut tail = rest;
            loop {
                let len = tail
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                if len == 0 {
                    break;
                }
                segs.push(&tail[..len]);
                match tail[len..].strip_prefix("::") {
                    Some(t) => tail = t,
                    None => break,
                }
            }
            out.push((head, segs));
        }
    }
    out
}

fn edges(root: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let modules: BTreeMap<Module, String> = files
        .iter()
        .map(|f| (module_of(root, f), std::fs::read_to_string(f).unwrap()))
        .collect();
    let mut graph = BTreeMap::new();
    for (m, text) in &modules {
        let mut to = BTreeSet::new();
        for (head, segs) in paths(&code(text)) {
            let base: Module = match head {
                "crate" => Vec::new(),
                "self" => m.clone(),
                _ => m[..m.len().saturating_sub(1)].to_vec(),
            };
            let mut best = None;
            for k in 0..=segs.len() {
                let mut cand = base.clone();
                cand.extend(segs[..k].iter().map(|s| s.to_string()));
                if modules.contains_key(&cand) {
                    best = Some(cand);
                }
            }
            if let Some(b) = best.filter(|b| b != m) {
                to.insert(b);
            }
        }
        graph.insert(m.clone(), to);
    }
    graph
}

/// Strongly connected groups of two or more modules (Tarjan).
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a Module) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in &self.graph[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w]);
                    self.low.insert(v, l);
                } else if self.on.contains(w) {
                    let l = self.low[v].min(self.index[w]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut group = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    group.push(w.join("::"));
                    if w == v {
                        break;
                    }
                }
                if group.len() > 1 {
                    group.sort();
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_crate_has_an_import_circle() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    for krate in CRATES {
        for group in circles(&edges(&workspace.join(krate))) {
            found.push(format!("{krate}: {}", group.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

/// The control: a planted circle of two files is found, a parent using its child is not.
#[test]
fn a_planted_circle_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nuse a::X;\n").unwrap();
    std::fs::write(
        src.join("a.rs"),
        "use crate::b::Y; // crate::lib\npub struct X;\n",
    )
    .unwrap();
    std::fs::write(src.join("b.rs"), "pub struct Y(super::a::X);\n").unwrap();
    assert_eq!(
        circles(&edges(src)),
        vec![vec!["a".to_string(), "b".to_string()]]
    );
    std::fs::write(
        src.join("b.rs"),
        "pub struct Y;\n#[cfg(test)]\nuse crate::a::X;\n",
    )
    .unwrap();
    assert!(circles(&edges(src)).is_empty());
}
