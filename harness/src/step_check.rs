//! Test support: a contract's shipped suite against its step definitions.

use cucumber::codegen::WorldInventory;
use cucumber::feature::Ext as _;
use std::path::Path;

/// Every step of `features/<suite>/` matches exactly one step definition (an
/// ambiguous step would be a harness error at run time), and every `#[given]`/
/// `#[when]`/`#[then]` in `src/<module>/steps/` is used by some step.
pub fn assert_steps_match_once<W>(suite: &str, module: &str)
where
    W: cucumber::World + WorldInventory + std::fmt::Debug,
{
    let steps = W::collection();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("../features").join(suite);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "feature"))
        .collect();
    files.sort();
    let mut problems = Vec::new();
    let mut matched = std::collections::BTreeSet::new();
    let mut count = 0;
    for file in files {
        let feature =
            cucumber::gherkin::Feature::parse_path(&file, cucumber::gherkin::GherkinEnv::default())
                .unwrap()
                .expand_examples()
                .unwrap();
        let background = feature.background.iter().flat_map(|b| b.steps.iter());
        let scenarios = feature.scenarios.iter().flat_map(|s| s.steps.iter());
        let rules = feature.rules.iter().flat_map(|r| {
            let background = r.background.iter().flat_map(|b| b.steps.iter());
            background.chain(r.scenarios.iter().flat_map(|s| s.steps.iter()))
        });
        for step in background.chain(scenarios).chain(rules) {
            count += 1;
            match steps.find(step) {
                Ok(Some(m)) => {
                    matched.insert(m.2.map(|l| (l.path, l.line)));
                }
                Ok(None) => problems.push(format!("undefined: {} {}", step.keyword, step.value)),
                Err(e) => problems.push(format!("ambiguous: {}: {e}", step.value)),
            }
        }
    }
    assert!(count > 0, "the {suite} suite has no steps");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let steps_dir = root.join("src").join(module).join("steps");
    let defined: usize = std::fs::read_dir(steps_dir)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .map(|src| {
            src.lines()
                .filter(|l| {
                    ["#[given(", "#[when(", "#[then("]
                        .iter()
                        .any(|a| l.starts_with(a))
                })
                .count()
        })
        .sum();
    assert_eq!(
        matched.len(),
        defined,
        "some {suite} step definitions are never used"
    );
}
