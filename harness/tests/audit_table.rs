//! The audit table (docs/audit.md): every row (scenario) of the four suites, the
//! clause it is judged under, the seed sentence that clause quotes, and what the row
//! rests on: `seed` (the sentence requires what the row checks), `pin` (the kit's
//! reading where the seed is open; a profile may say otherwise), `part` (the kit's
//! own format or tool, judged only where an implementation claims it) or `should`.
//!
//! Nothing here is a second registry: the basis comes from the clause registries
//! (`level`, `basis`, `claimed_by`, `quote`, `rows`, `why`) and the rows' tags. The table is
//! generated, and this test fails when the shipped document differs from what the
//! generator writes (`UPDATE=1 cargo test -p vxcert --test audit_table` rewrites it),
//! when a row has no clause or its clause no quote, when a quote is not its seed's
//! sentence verbatim (whitespace aside, as in clause_quotes.rs), when a `part` row
//! lacks the claim that adopts the format, and when a MUST row is judged under a
//! SHOULD clause.

use cucumber::gherkin::{Feature, GherkinEnv};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Each suite, its clause prefix and its seed file under `shared/seeds/`.
const SUITES: [(&str, &str, &str); 4] = [
    ("recovery", "rfc-", "002_db2fed4dbfadc150.txt"),
    ("agent-restore", "asr-", "000_762b42388703ca93.txt"),
    ("single-writer", "sw-", "003_df8267c1b4854deb.txt"),
    ("session-persist", "sp-", "004_f9b2c105e15dcfff.txt"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[derive(Debug, Clone, Default)]
struct Clause {
    id: String,
    level: String,
    text: String,
    quote: Option<String>,
    why: Option<String>,
    basis: Option<String>,
    claimed_by: Vec<String>,
    /// (scenario, quote): the sentence a particular row tests, when not `quote`.
    rows: Vec<(String, String)>,
}

fn registry(dir: &Path) -> Result<BTreeMap<String, Clause>, String> {
    let path = dir.join("clauses.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{path:?}: {e}"))?;
    let doc: toml::Table = toml::from_str(&text).map_err(|e| format!("{path:?}: {e}"))?;
    let list = doc
        .get("clause")
        .and_then(|c| c.as_array())
        .ok_or(format!("{path:?}: no [[clause]] array"))?;
    let mut out = BTreeMap::new();
    for c in list {
        let s = |k: &str| c.get(k).and_then(|v| v.as_str()).map(str::to_string);
        let clause = Clause {
            id: s("id").ok_or(format!("{path:?}: a clause without id"))?,
            level: s("level").unwrap_or_default(),
            text: s("text").unwrap_or_default(),
            quote: s("quote"),
            why: s("why"),
            basis: s("basis"),
            claimed_by: c
                .get("claimed_by")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            rows: c
                .get("rows")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|r| {
                            let f = |k: &str| r.get(k)?.as_str().map(str::to_string);
                            Some((f("scenario")?, f("quote")?))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        };
        out.insert(clause.id.clone(), clause);
    }
    Ok(out)
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    suite: &'static str,
    file: String,
    name: String,
    clause: String,
    sentence: String,
    basis: &'static str,
    pins: Vec<String>,
    why: String,
    /// The cases the row runs: its examples, or 1.
    cases: usize,
}

/// A scenario (or, when its Examples blocks carry different tags, each block) with
/// every tag that applies to it: the feature's, the rule's, its own, the block's.
/// Each is (file, row label, scenario name, tags, cases).
type Scenario = (String, String, String, Vec<String>, usize);

fn scenarios(dir: &Path) -> Result<Vec<Scenario>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{dir:?}: {e}"))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "feature"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let f = Feature::parse_path(&file, GherkinEnv::default())
            .map_err(|e| format!("{}: {e}", file.display()))?;
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let plain = f.scenarios.iter().map(|s| (s, Vec::new()));
        let ruled = f.rules.iter().flat_map(|r| {
            r.scenarios
                .iter()
                .map(move |s| (s, r.tags.clone()))
                .collect::<Vec<_>>()
        });
        for (s, rule_tags) in plain.chain(ruled) {
            let mut tags: Vec<String> = f.tags.clone();
            tags.extend(rule_tags);
            tags.extend(s.tags.iter().cloned());
            let blocks: Vec<&Vec<String>> = s.examples.iter().map(|e| &e.tags).collect();
            let cases = |e: &cucumber::gherkin::Examples| {
                e.table
                    .as_ref()
                    .map_or(0, |t| t.rows.len().saturating_sub(1))
            };
            if blocks.windows(2).any(|w| w[0] != w[1]) {
                for (i, b) in blocks.iter().enumerate() {
                    let mut t = tags.clone();
                    t.extend(b.iter().cloned());
                    let label = format!("{} [examples {}]", s.name, i + 1);
                    out.push((
                        name.clone(),
                        label,
                        s.name.clone(),
                        t,
                        cases(&s.examples[i]),
                    ));
                }
            } else {
                tags.extend(blocks.first().into_iter().flat_map(|b| b.iter().cloned()));
                let n = s.examples.iter().map(cases).sum::<usize>().max(1);
                out.push((name.clone(), s.name.clone(), s.name.clone(), tags, n));
            }
        }
    }
    Ok(out)
}

fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The rows of one suite, and what is wrong with them. `seed` is the seed's text,
/// when available, for the verbatim check.
fn audit_suite(
    suite: &'static str,
    prefix: &str,
    dir: &Path,
    seed: Option<&str>,
) -> Result<(Vec<Row>, Vec<String>), String> {
    let clauses = registry(dir)?;
    let seed = seed.map(squeeze);
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    let mut row_quotes_used = std::collections::BTreeSet::new();
    for (file, name, scenario, tags, cases) in scenarios(dir)? {
        let at = format!("{suite}/{file}: {name:?}");
        let mut tagged = Vec::new();
        for t in tags.iter().filter(|t| t.starts_with(prefix)) {
            match clauses.get(t) {
                Some(c) if !tagged.iter().any(|x: &&Clause| x.id == c.id) => tagged.push(c),
                Some(_) => {}
                None => problems.push(format!("{at}: tag @{t} names no clause")),
            }
        }
        // The row's clause: the most specific (last) one that is not a pin, as the
        // evidence picks it; a row of pins alone is judged under its first pin.
        let Some(primary) = tagged
            .iter()
            .rev()
            .find(|c| c.level != "pin")
            .or(tagged.first())
            .copied()
        else {
            problems.push(format!("{at}: no clause tag, so no entry in the audit"));
            continue;
        };
        let should_row = tags.iter().any(|t| t == "should");
        let basis = if should_row {
            "should"
        } else if primary.level == "pin" {
            "pin"
        } else if primary.basis.as_deref() == Some("part") {
            if !primary.claimed_by.iter().any(|c| tags.contains(c)) {
                problems.push(format!(
                    "{at}: judges {} (the kit's own format) but carries none of {:?}",
                    primary.id, primary.claimed_by
                ));
            }
            "part"
        } else if primary.level == "should" {
            problems.push(format!(
                "{at}: a MUST row judged under the SHOULD clause {}: tag it @should",
                primary.id
            ));
            "should"
        } else {
            "seed"
        };
        let own = primary.rows.iter().find(|(s, _)| *s == scenario);
        if own.is_some() {
            row_quotes_used.insert((primary.id.clone(), scenario.clone()));
        }
        let sentence = match own.map(|(_, q)| q).or(primary.quote.as_ref()) {
            Some(q) => q.clone(),
            None => {
                problems.push(format!(
                    "{at}: clause {} quotes no seed sentence",
                    primary.id
                ));
                String::new()
            }
        };
        if let (Some(seed), false) = (&seed, sentence.is_empty()) {
            if !seed.contains(&squeeze(&sentence)) {
                problems.push(format!(
                    "{at}: the quote {} gives it is not in its seed verbatim",
                    primary.id
                ));
            }
        }
        let pins: Vec<String> = tagged
            .iter()
            .filter(|c| c.level == "pin" && c.id != primary.id)
            .map(|c| c.id.clone())
            .collect();
        let why = match basis {
            "pin" | "part" => primary.why.clone().unwrap_or_else(|| primary.text.clone()),
            _ => primary.text.clone(),
        };
        rows.push(Row {
            suite,
            file,
            name,
            clause: primary.id.clone(),
            sentence,
            basis,
            pins,
            why,
            cases,
        });
    }
    for c in clauses.values() {
        for (scenario, _) in &c.rows {
            if !row_quotes_used.contains(&(c.id.clone(), scenario.clone())) {
                problems.push(format!(
                    "{suite}: {} quotes a sentence for {scenario:?}, which is no row judged under it",
                    c.id
                ));
            }
        }
    }
    Ok((rows, problems))
}

/// `$VXCERT_SEEDS`, else `shared/seeds/` beside the repository; single-writer's
/// seed also ships as features/single-writer/seed.txt.
fn seed_text(suite: &str, file: &str) -> Option<String> {
    let dir = std::env::var_os("VXCERT_SEEDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/seeds"));
    std::fs::read_to_string(dir.join(file)).ok().or_else(|| {
        std::fs::read_to_string(root().join("features").join(suite).join("seed.txt")).ok()
    })
}

fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

fn render(rows: &[Row]) -> String {
    let mut out = String::new();
    out.push_str("# Audit: what every row of the four suites rests on\n\n");
    out.push_str(
        "Generated from the clause registries (`features/*/clauses.toml`: `level`, `quote`, \
         `why`, `basis`, `claimed_by`, and `rows`, the sentence one row tests where it \
         is not its clause's quote) and the rows' tags by \
         `UPDATE=1 cargo test -p vxcert --test audit_table`; that test fails when this \
         file differs from what it writes, when a row has no clause, when a quoted \
         sentence is not in its seed verbatim, or when a `part` row is not gated by the \
         claim that adopts the format. Do not edit by hand.\n\n",
    );
    out.push_str(
        "A row is a scenario (an outline with its examples; each Examples block when \
         blocks carry different tags). Its clause is its most specific clause tag that \
         is not a pin (the one its evidence names); its sentence is the clause's quote, or \
         the clause's `rows` entry for that row (which its evidence quotes too). Basis:\n\n\
         - `seed`: the quoted sentence requires what the row checks; a fail is the \
         seed's.\n\
         - `pin`: the kit's reading where the seed is open (a name, a code, a cap, a \
         shape); a deviation is `non-strict` unless the profile declares its own value \
         (docs/profile-keys.md). A `seed` row may also observe pins (listed after \
         `+`): only those observations are non-strict.\n\
         - `part`: the kit's own format or tool, which the seed does not define; judged \
         only when the profile claims the part or feature named in `why`.\n\
         - `should`: tagged `@should`; its fail never fails certification.\n\n",
    );
    out.push_str(
        "## Counts\n\nRows, and in brackets the cases they run (an outline runs one per \
         example).\n\n| suite | rows | MUST rows | seed | pin | part | should |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|\n");
    for (suite, ..) in SUITES {
        let of: Vec<&Row> = rows.iter().filter(|r| r.suite == suite).collect();
        let n = |f: &dyn Fn(&Row) -> bool| {
            let (rows, cases) = of
                .iter()
                .filter(|r| f(r))
                .fold((0, 0), |(n, c), r| (n + 1, c + r.cases));
            format!("{rows} ({cases})")
        };
        let _ = writeln!(
            out,
            "| {suite} | {} | {} | {} | {} | {} | {} |",
            n(&|_| true),
            n(&|r| r.basis != "should"),
            n(&|r| r.basis == "seed"),
            n(&|r| r.basis == "pin"),
            n(&|r| r.basis == "part"),
            n(&|r| r.basis == "should")
        );
    }
    for (suite, ..) in SUITES {
        let _ = write!(
            out,
            "\n## {suite}\n\n| row | clause | seed sentence | basis | why |\n|---|---|---|---|---|\n"
        );
        for r in rows.iter().filter(|r| r.suite == suite) {
            let basis = if r.pins.is_empty() {
                r.basis.to_string()
            } else {
                format!("{} + {}", r.basis, r.pins.join(", "))
            };
            let _ = writeln!(
                out,
                "| {} — {} | {} | “{}” | {} | {} |",
                r.file,
                cell(&r.name),
                r.clause,
                cell(&r.sentence),
                basis,
                cell(&r.why)
            );
        }
    }
    out
}

/// Every suite's rows and problems; `with_seeds` compares the quotes.
fn audit_all(with_seeds: bool) -> (Vec<Row>, Vec<String>, usize) {
    let mut rows = Vec::new();
    let mut problems = Vec::new();
    let mut seeds = 0;
    for (suite, prefix, seed_file) in SUITES {
        let seed = with_seeds.then(|| seed_text(suite, seed_file)).flatten();
        seeds += usize::from(seed.is_some());
        let dir = root().join("features").join(suite);
        let (r, p) = audit_suite(suite, prefix, &dir, seed.as_deref())
            .unwrap_or_else(|e| panic!("{suite}: {e}"));
        rows.extend(r);
        problems.extend(p);
    }
    (rows, problems, seeds)
}

#[test]
fn every_row_has_an_entry_and_the_document_is_current() {
    let (rows, problems, seeds) = audit_all(true);
    if seeds < SUITES.len() {
        assert!(
            std::env::var_os("VXCERT_REQUIRE_SEEDS").is_none(),
            "only {seeds} of {} seeds found (set VXCERT_SEEDS)",
            SUITES.len()
        );
        eprintln!("audit_table: {seeds} of 4 seeds found: the other quotes were not compared");
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(rows.len() >= 300, "only {} rows", rows.len());
    let text = render(&rows);
    let path = root().join("docs/audit.md");
    if std::env::var_os("UPDATE").is_some() {
        std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    }
    let shipped = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        shipped == text,
        "docs/audit.md differs from what the generator writes ({} rows): run \
         UPDATE=1 cargo test -p vxcert --test audit_table",
        rows.len()
    );
}

/// The checks catch what they claim to: a row without a clause, a quote the seed
/// lacks, a part row without its claim, a MUST row under a SHOULD clause; a clean
/// row passes with the right basis and pins.
#[test]
fn the_audit_catches_each_kind_of_gap() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("clauses.toml"),
        r#"
[[clause]]
id = "sw-a"
level = "must"
text = "A."
quote = "One writer, ever."
[[clause.rows]]
scenario = "clean"
quote = "ever."
[[clause.rows]]
scenario = "gone"
quote = "One"
[[clause]]
id = "sw-pin-x"
level = "pin"
text = "X."
quote = "One writer, ever."
why = "The seed is open."
[[clause]]
id = "sw-fmt"
level = "must"
text = "F."
quote = "One writer, ever."
why = "The kit's file."
basis = "part"
claimed_by = ["part-checker"]
[[clause]]
id = "sw-s"
level = "should"
text = "S."
quote = "Never in the seed."
"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("a.feature"),
        "Feature: A\n\n  @sw-a @sw-pin-x\n  Scenario: clean\n    Given x\n\n  Scenario: bare\n    Given x\n\n  @sw-fmt\n  Scenario: unclaimed\n    Given x\n\n  @sw-fmt @part-checker\n  Scenario: claimed\n    Given x\n\n  @sw-s\n  Scenario: must under should\n    Given x\n\n  @sw-s @should\n  Scenario: fine should\n    Given x\n",
    )
    .unwrap();
    let (rows, problems) = audit_suite(
        "single-writer",
        "sw-",
        dir.path(),
        Some("One writer,\n ever."),
    )
    .unwrap();
    let basis: Vec<(&str, &str)> = rows.iter().map(|r| (r.name.as_str(), r.basis)).collect();
    assert_eq!(
        basis,
        [
            ("clean", "seed"),
            ("unclaimed", "part"),
            ("claimed", "part"),
            ("must under should", "should"),
            ("fine should", "should")
        ]
    );
    assert_eq!(rows[0].pins, ["sw-pin-x"]);
    assert_eq!(rows[0].sentence, "ever.", "the row's own sentence");
    assert_eq!(rows[1].sentence, "One writer, ever.", "the clause's quote");
    assert_eq!(problems.len(), 6, "{problems:#?}");
    assert!(problems[0].contains("\"bare\": no clause tag"));
    assert!(problems[1].contains("\"unclaimed\": judges sw-fmt"));
    assert!(problems[2].contains("SHOULD clause sw-s"));
    assert!(problems[3].contains("\"must under should\": the quote sw-s gives it is not in"));
    assert!(problems[4].contains("\"fine should\": the quote sw-s gives it is not in"));
    assert!(problems[5].contains("sw-a quotes a sentence for \"gone\", which is no row"));
}
