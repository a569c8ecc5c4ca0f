//! Every file of the contracts' corpora (what vxcert carries, harness/build.rs) is
//! exercised: named by a scenario row of a feature (a table cell or a quoted step
//! argument), or a case of its generator's `expected.jsonl` that a checker test of
//! the reference reads with its verdict. A fuzz seed alone does not count (seeds live
//! in `fuzz/seeds/`). Every other directory of `corpus/` is declared below with what
//! reads it, so a new one cannot slip past.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The corpora the contracts' suites feed (harness/build.rs packs them into vxcert).
const SUITE_CORPORA: [&str; 4] = ["broker", "integrations", "persist", "workspace"];

/// The other directories of `corpus/`: not fed to any suite, each with its reader.
const OTHER: [(&str, &str); 6] = [
    ("attach", "fuzz/targets.sh"),
    ("checkpoints", "reference/format/tests/corpus.rs"),
    ("config", "fuzz/targets.sh"),
    ("fuzz", "fuzz/targets.sh"),
    ("wire", "fuzz/targets.sh"),
    // A second name of corpus/broker (a symbolic link), read as broker.
    ("single-writer", "docs/spec/single-writer.md"),
];

fn kit() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.is_dir() {
            files_under(&p, out);
        } else if meta.is_file() {
            out.push(p);
        }
    }
}

/// Every table cell and quoted string of every feature.
fn feature_tokens() -> BTreeSet<String> {
    let mut files = Vec::new();
    files_under(&kit().join("features"), &mut files);
    let mut out = BTreeSet::new();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "feature"))
    {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            let line = line.trim();
            if line.starts_with('|') {
                out.extend(line.split('|').map(|c| c.trim().to_string()));
            }
            out.extend(line.split('"').skip(1).step_by(2).map(str::to_string));
        }
    }
    out
}

/// The `file` of every case of `dir/expected.jsonl`, as paths under `dir`.
fn expected_cases(dir: &Path) -> BTreeSet<PathBuf> {
    let Ok(text) = std::fs::read_to_string(dir.join("expected.jsonl")) else {
        return BTreeSet::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["file"].as_str().map(|f| dir.join(f)))
        .collect()
}

/// Whether a reference test reads `corpus/<rel>` (its verdicts).
fn read_by_a_checker_test(rel: &str) -> bool {
    let mut files = Vec::new();
    for dir in ["reference", "harness/tests"] {
        files_under(&kit().join(dir), &mut files);
    }
    files
        .iter()
        .filter(|f| f.to_string_lossy().contains("/tests/"))
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains(&format!("corpus/{rel}"))))
}

/// A generator, its verdict list or a fuzz dictionary: tools, not inputs.
fn is_tool(p: &Path) -> bool {
    let name = p.file_name().unwrap().to_string_lossy();
    name == "generate.py" || name == "expected.jsonl" || name.ends_with(".dict")
}

#[test]
fn every_corpus_file_is_used_by_a_scenario_or_a_checker_row() {
    let corpus = kit().join("corpus");
    let tokens = feature_tokens();
    let mut top: Vec<String> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    for name in &top {
        if SUITE_CORPORA.contains(&name.as_str()) {
            continue;
        }
        let (_, reader) = OTHER
            .iter()
            .find(|(d, _)| d == name)
            .unwrap_or_else(|| panic!("corpus/{name} is neither a suite's corpus nor declared"));
        let text = std::fs::read_to_string(kit().join(reader)).unwrap();
        assert!(
            text.contains(&format!("corpus/{name}")),
            "{reader} does not read corpus/{name}"
        );
    }
    let mut unused = Vec::new();
    let mut by_scenario = 0;
    let mut by_checker = 0;
    for suite in SUITE_CORPORA {
        let mut files = Vec::new();
        files_under(&corpus.join(suite), &mut files);
        assert!(!files.is_empty(), "corpus/{suite} is empty");
        for f in files.iter().filter(|f| !is_tool(f)) {
            let rel = f.strip_prefix(&corpus).unwrap();
            let comps: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            // The file name, or its path below one or two directories.
            let named =
                (1..comps.len()).any(|n| tokens.contains(&comps[comps.len() - n..].join("/")));
            if named {
                by_scenario += 1;
                continue;
            }
            let checked = f.ancestors().skip(1).take_while(|d| *d != corpus).any(|d| {
                expected_cases(d).contains(f)
                    && read_by_a_checker_test(&d.strip_prefix(&corpus).unwrap().to_string_lossy())
            });
            if checked {
                by_checker += 1;
            } else {
                unused.push(rel.display().to_string());
            }
        }
    }
    assert!(
        unused.is_empty(),
        "{} corpus files are used by no scenario and no checker row: {unused:#?}",
        unused.len()
    );
    assert!(
        by_scenario > 300 && by_checker > 0,
        "{by_scenario} {by_checker}"
    );
}
