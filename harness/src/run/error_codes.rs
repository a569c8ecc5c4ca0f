//! The error-code check of a suite (`features/<contract>/errors.toml`, the RFC's
//! error table as data): every code the RFC defines is expected by some scenario,
//! with the CLI's exit code. Beside the clause check ([`super::clauses`]): a clause
//! with a scenario says a rule is looked at, not that each documented failure of it
//! is ever produced.
//!
//! A scenario *expects* a code when one of its steps (background included, Examples
//! expanded) says `fails with "<code>"` (or `fail with`) naming no second code, so a
//! step that accepts either of two codes proves neither. It expects it *with its exit
//! code* when a later step of the same scenario is `the CLI exits with code <exit>`.

use cucumber::feature::Ext as _;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Codes allowed, for now, to have no scenario, each with why. Temporary: remove an
/// entry as soon as its scenario is merged (an allowed code that has one is refused).
const ALLOWED_MISSING: &[(&str, &str)] = &[];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorCode {
    pub code: String,
    pub exit: i32,
    pub condition: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    error: Vec<ErrorCode>,
}

/// A suite's error table, beside its clause registry.
pub fn table_path(suite_dir: &Path) -> PathBuf {
    suite_dir.join("errors.toml")
}

pub fn load(path: &Path) -> Result<Vec<ErrorCode>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read error table {}: {e}", path.display()))?;
    let f: File = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut seen = BTreeSet::new();
    for e in &f.error {
        if !seen.insert(e.code.as_str()) {
            return Err(format!("error code {:?} is listed twice", e.code));
        }
        if !(1..=125).contains(&e.exit) {
            return Err(format!(
                "error code {}: exit {} out of range",
                e.code, e.exit
            ));
        }
    }
    Ok(f.error)
}

/// What the suite's scenarios expect: (code, exit seen after it in that scenario).
fn expectations(dir: &Path, codes: &[ErrorCode]) -> Result<Vec<(String, Option<i32>)>, String> {
    let mut out = Vec::new();
    for file in super::clauses::feature_files(dir)? {
        let feature =
            cucumber::gherkin::Feature::parse_path(&file, cucumber::gherkin::GherkinEnv::default())
                .map_err(|e| format!("{}: {e}", file.display()))?
                .expand_examples()
                .map_err(|e| format!("{}: {e}", file.display()))?;
        let top = feature.background.iter().flat_map(|b| b.steps.iter());
        let top: Vec<&str> = top.map(|s| s.value.as_str()).collect();
        let mut scenarios: Vec<Vec<&str>> = Vec::new();
        for s in &feature.scenarios {
            scenarios.push(
                top.iter()
                    .copied()
                    .chain(s.steps.iter().map(|s| s.value.as_str()))
                    .collect(),
            );
        }
        for r in &feature.rules {
            let rule_bg: Vec<&str> = r
                .background
                .iter()
                .flat_map(|b| b.steps.iter().map(|s| s.value.as_str()))
                .collect();
            for s in &r.scenarios {
                let steps = top.iter().chain(&rule_bg).copied();
                scenarios.push(
                    steps
                        .chain(s.steps.iter().map(|s| s.value.as_str()))
                        .collect(),
                );
            }
        }
        for steps in scenarios {
            out.extend(scenario_expectations(&steps, codes));
        }
    }
    Ok(out)
}

/// The codes one scenario's steps expect, each with the first CLI exit checked after.
fn scenario_expectations(steps: &[&str], codes: &[ErrorCode]) -> Vec<(String, Option<i32>)> {
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let named: Vec<&ErrorCode> = codes
            .iter()
            .filter(|c| step.contains(&format!("\"{}\"", c.code)))
            .collect();
        let [code] = named.as_slice() else {
            continue;
        };
        let quoted = format!("\"{}\"", code.code);
        if !(step.contains(&format!("fails with {quoted}"))
            || step.contains(&format!("fail with {quoted}")))
        {
            continue;
        }
        let exit = steps[i + 1..].iter().find_map(|s| {
            s.strip_prefix("the CLI exits with code ")
                .and_then(|n| n.trim().parse::<i32>().ok())
        });
        out.push((code.code.clone(), exit));
    }
    out
}

/// Fails when a code of the table has no scenario expecting it, or none that also
/// checks the CLI's exit code for it.
pub fn check(codes: &[ErrorCode], dir: &Path) -> Result<(), Vec<String>> {
    check_with(codes, dir, ALLOWED_MISSING)
}

fn check_with(
    codes: &[ErrorCode],
    dir: &Path,
    allowed: &[(&str, &str)],
) -> Result<(), Vec<String>> {
    let found = expectations(dir, codes).map_err(|e| vec![e])?;
    let mut problems = Vec::new();
    for c in codes {
        let expected = found.iter().any(|(code, _)| *code == c.code);
        let with_exit = found
            .iter()
            .any(|(code, exit)| *code == c.code && *exit == Some(c.exit));
        let allowance = allowed.iter().find(|(code, _)| *code == c.code);
        match allowance {
            Some(_) if expected => problems.push(format!(
                "error {} is allowed to have no scenario but has one: remove its allowance",
                c.code
            )),
            Some(_) => {}
            None if !expected => problems.push(format!(
                "error {} (exit {}: {}) has no scenario that expects it",
                c.code, c.exit, c.condition
            )),
            None if !with_exit => problems.push(format!(
                "error {} has no scenario that checks its CLI exit code {}",
                c.code, c.exit
            )),
            None => {}
        }
    }
    for (code, _) in allowed {
        if !codes.iter().any(|c| c.code == *code) {
            problems.push(format!(
                "allowance for {code}, which is no error of the table"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(code: &str, exit: i32) -> ErrorCode {
        ErrorCode {
            code: code.into(),
            exit,
            condition: "c".into(),
        }
    }

    /// The shipped table holds the RFC's sixteen codes, and the shipped suite expects
    /// each of them with its CLI exit code (but for the allowances).
    #[test]
    fn shipped_suite_expects_every_rfc_error_code() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../features/recovery");
        let codes = load(&table_path(&dir)).unwrap();
        assert_eq!(codes.len(), 16, "RFC §6 lists sixteen codes");
        if let Err(p) = check(&codes, &dir) {
            panic!("error-code check failed:\n{}", p.join("\n"));
        }
    }

    fn suite(text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.feature"), text).unwrap();
        dir
    }

    /// A code no step expects, one expected only beside another code, and one
    /// expected without its exit code all fail the check; an allowance that is not
    /// needed does too.
    #[test]
    fn check_fails_when_a_code_has_no_scenario() {
        let codes = [
            code("a.one", 2),
            code("b.two", 5),
            code("c.three", 6),
            code("d.four", 4),
            code("e.five", 3),
        ];
        let dir = suite(
            "Feature: X\n\
             \x20 Scenario: one\n\
             \x20   When the owner runs the CLI \"x\"\n\
             \x20   Then the call fails with \"a.one\"\n\
             \x20   And the CLI exits with code 2\n\
             \x20 Scenario: two is only an alternative\n\
             \x20   Then the call fails with \"b.two\" or \"c.three\"\n\
             \x20   And the CLI exits with code 5\n\
             \x20 Scenario Outline: four without its exit\n\
             \x20   Then the call fails with \"<code>\"\n\
             \x20   And the CLI exits with code <exit>\n\
             \x20   Examples:\n\
             \x20     | code   | exit |\n\
             \x20     | d.four | 5    |\n\
             \x20     | e.five | 3    |\n",
        );
        let p = check_with(&codes, dir.path(), &[("e.five", "later")]).unwrap_err();
        assert_eq!(p.len(), 4, "{p:?}");
        assert!(
            p[0].contains("b.two") && p[0].contains("no scenario"),
            "{p:?}"
        );
        assert!(
            p[1].contains("c.three") && p[1].contains("no scenario"),
            "{p:?}"
        );
        assert!(
            p[2].contains("d.four") && p[2].contains("exit code 4"),
            "{p:?}"
        );
        assert!(p[3].contains("e.five") && p[3].contains("remove"), "{p:?}");
        let codes = [code("a.one", 2), code("e.five", 3)];
        assert!(check_with(&codes, dir.path(), &[]).is_ok());
        let p = check_with(&codes, dir.path(), &[("z.none", "x")]).unwrap_err();
        assert!(p[0].contains("z.none"), "{p:?}");
    }

    #[test]
    fn a_rule_scenario_and_a_background_count() {
        let codes = [code("a.one", 2)];
        let dir = suite(
            "Feature: X\n\
             \x20 Rule: R\n\
             \x20   Background:\n\
             \x20     Given the owner runs the CLI \"x\"\n\
             \x20   Scenario: s\n\
             \x20     Then exactly one of them succeeds and the others fail with \"a.one\"\n\
             \x20     And the CLI exits with code 2\n",
        );
        assert!(check_with(&codes, dir.path(), &[]).is_ok());
    }
}
