//! The daemon's modules import each other without cycles. Every `crate::` and
//! `super::` path in non-test code is an edge; an edge between two modules counts
//! between the children of their nearest common ancestor (so `reactor::recovery::worker`
//! using `crate::server` is `reactor → server`), and a module using its own ancestor
//! or descendant is no edge. Each directory's graph of children must be acyclic.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

type Module = Vec<String>;

/// Every source file as its module path (`reactor/recovery/mod.rs` → reactor::recovery)
/// and its text with comments and test modules removed.
fn modules(src: &Path) -> BTreeMap<Module, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).expect("under src");
            let mut module: Module = rel
                .iter()
                .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            if module == ["lib"] || module == ["main"] {
                module.clear();
            }
            let text = std::fs::read_to_string(&path).expect("source");
            out.insert(module, production_code(&text));
        }
    }
    // Modules declared `#[cfg(test)] mod x;` are test code.
    let test_only: Vec<Module> = out
        .iter()
        .flat_map(|(m, text)| {
            let lines: Vec<&str> = text.lines().collect();
            lines
                .windows(2)
                .filter(|w| w[0].trim() == "#[cfg(test)]")
                .filter_map(|w| w[1].trim().strip_prefix("mod ")?.strip_suffix(';'))
                .map(|name| [m.clone(), vec![name.to_string()]].concat())
                .collect::<Vec<_>>()
        })
        .collect();
    for m in test_only {
        out.remove(&m);
    }
    out
}

/// The text before the first `#[cfg(test)] mod tests {`, without line comments.
fn production_code(text: &str) -> String {
    let end = text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len());
    text[..end]
        .lines()
        .map(|l| match l.trim_start().starts_with("//") {
            true => "",
            false => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

/// Module paths `text` names from `module`, as written (`crate::a::b`, `super::x`,
/// `super::{x, y::z}`).
fn references(module: &Module, text: &str) -> Vec<Module> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let mut path = Vec::new();
        let mut rest = &text[at + "crate::".len()..];
        loop {
            let id = ident(rest);
            if id.is_empty() {
                break;
            }
            path.push(id.to_string());
            rest = &rest[id.len()..];
            match rest.strip_prefix("::") {
                Some(r) => rest = r,
                None => break,
            }
        }
        out.push(path);
    }
    for (at, _) in text.match_indices("super::") {
        if at > 0 && text[..at].ends_with("super::") {
            continue; // counted from the first `super::`
        }
        let mut base = module.clone();
        let mut rest = &text[at..];
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                group.split(',').map(|n| ident(n.trim())).collect()
            }
            None => vec![ident(rest)],
        };
        for name in names.into_iter().filter(|n| !n.is_empty()) {
            out.push([base.clone(), vec![name.to_string()]].concat());
        }
    }
    out
}

#[test]
fn the_daemon_has_no_import_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = modules(&src);
    // Per parent module: edges between its children.
    let mut graphs: BTreeMap<Module, BTreeSet<(String, String)>> = BTreeMap::new();
    for (from, text) in &modules {
        for path in references(from, text) {
            // The longest prefix that is a module.
            let Some(to) = (1..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| modules.contains_key(p))
            else {
                continue;
            };
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // an ancestor or a descendant
            }
            graphs
                .entry(from[..common].to_vec())
                .or_default()
                .insert((from[common].clone(), to[common].clone()));
        }
    }
    assert!(!graphs.is_empty(), "the scan found no edges at all");

    for (parent, edges) in &graphs {
        // Peel off modules nothing left imports, and modules that import nothing
        // left: what remains lies on (or between) cycles.
        let mut nodes: BTreeSet<&String> = edges.iter().flat_map(|(a, b)| [a, b]).collect();
        let mut left: BTreeSet<&(String, String)> = edges.iter().collect();
        loop {
            let free: Vec<&String> = nodes
                .iter()
                .copied()
                .filter(|n| {
                    !left.iter().any(|(_, to)| to == *n) || !left.iter().any(|(from, _)| from == *n)
                })
                .collect();
            if free.is_empty() {
                break;
            }
            for n in free {
                nodes.remove(n);
                left.retain(|(from, to)| from != n && to != n);
            }
        }
        assert!(
            left.is_empty(),
            "import cycle among the children of `crate::{}`: {:?}",
            parent.join("::"),
            left
        );
    }
}
