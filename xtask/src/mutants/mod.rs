//! `cargo xtask mutants [--list] [--only ID,…] [--out FILE]`: the mutant battery.
//!
//! Each mutant of `harness/mutants/*.toml` is applied to a scratch copy of the
//! workspace, `vxref` is rebuilt into the shared target directory (only what the edit
//! touched recompiles), the build must start and answer `server.info` (else the mutant
//! is INVALID: a bug of the battery, never a kill), and the clean `vxcert` certifies
//! it with `--bin-dir`. A mutant is killed when the run fails a scenario the clean
//! reference passes. The table goes to stdout and `--out`; its last line is the kill
//! rate. Exit status: 0 when every mutant run was killed (or is a surviving declared
//! equivalent), 1 when one survived or is invalid, 2 when the battery cannot run.

mod battery;
mod probe;
mod seed;
mod tree;

use battery::Mutant;
use probe::{Certifier, Verdict};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use tree::ScratchTree;

/// The clean programs the runner builds once besides the daemon, the harness (with
/// its `vxstub`) and the fault injector, come from a build of the whole kit, as
/// `cargo certify` builds it: the same packages unify dependency features the same
/// way, so after a certify (CI's first step) that build has nothing to do. Built alone,
/// the two rebuilt 56 crates (53 s on this 2-core machine).
const CLEAN_HELPER_PACKAGES: [&str; 5] = crate::KIT_PACKAGES;
/// What a bin dir holds besides the daemon under test (always the clean ones): the
/// crash explorer runs `{bin_dir}/vxcert` as its checker.
const CLEAN_HELPERS: [&str; 3] = ["vxcert", "vxstub", "libvxfault.so"];

struct Options {
    list: bool,
    only: Option<BTreeSet<String>>,
    out: Option<PathBuf>,
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let mut opts = Options {
        list: false,
        only: None,
        out: None,
    };
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--list" => opts.list = true,
            "--only" => {
                let v = it
                    .next()
                    .ok_or("--only needs a comma-separated list of ids")?;
                opts.only = Some(v.split(',').map(|s| s.trim().to_string()).collect());
            }
            "--out" => opts.out = Some(it.next().ok_or("--out needs a file")?.into()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(opts)
}

enum Outcome {
    /// The scenarios the clean reference passes and this mutant fails.
    Killed(BTreeSet<String>),
    Survived,
    Invalid(String),
}

struct Row<'a> {
    mutant: &'a Mutant,
    outcome: Outcome,
    build_secs: f64,
    run_secs: f64,
    /// Scenarios the suite could not carry out, beyond the baseline's.
    harness_errors: usize,
}

pub fn main(args: Vec<String>) -> i32 {
    match run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask mutants: {e}");
            2
        }
    }
}

fn run(args: Vec<String>) -> Result<i32, String> {
    let opts = parse(args)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?
        .to_path_buf();
    let mutants = battery::load(&root)?;
    if opts.list {
        print!("{}", list_table(&mutants));
        return Ok(0);
    }
    let chosen: Vec<&Mutant> = match &opts.only {
        None => mutants.iter().collect(),
        Some(ids) => {
            let known: BTreeSet<&str> = mutants.iter().map(|m| m.id.as_str()).collect();
            if let Some(bad) = ids.iter().find(|id| !known.contains(id.as_str())) {
                return Err(format!("--only: no mutant {bad} (see --list)"));
            }
            mutants.iter().filter(|m| ids.contains(&m.id)).collect()
        }
    };
    let target = target_dir(&root);
    let work = target.join("mutants");
    let clean = work.join("clean");
    let bin = work.join("bin");
    let started = Instant::now();

    eprintln!("mutants: building the clean kit");
    // The daemon alone, exactly as each mutant is built: built together with the
    // harness, cargo would unify dependency features into a different binary.
    cargo_build(&root, &target, &CLEAN_HELPER_PACKAGES)?;
    cargo_build(&root, &target, &["vxref"])?;
    let debug = target.join("debug");
    for name in std::iter::once(&"vxref").chain(CLEAN_HELPERS.iter()) {
        copy(&debug.join(name), &clean.join(name))?;
    }
    for name in CLEAN_HELPERS {
        copy(&clean.join(name), &bin.join(name))?;
    }
    let profile = root.join("profiles/reference.toml");
    let vxcert = clean.join("vxcert");
    let certifier = Certifier {
        vxcert: &vxcert,
        profile: &profile,
        root: &root,
    };
    eprintln!("mutants: certifying the clean reference (the baseline)");
    let baseline = certifier.run(&clean, &work.join("reports/baseline"))?;
    if !baseline.failing.is_empty() {
        eprintln!(
            "mutants: the clean reference fails {} scenario(s); only other failures count as kills",
            baseline.failing.len()
        );
    }
    let tree = ScratchTree::sync(&root, &work.join("tree"))?;
    // The scratch tree builds into its own target dir. Cargo's artifact hashes do not
    // depend on where a workspace lies, so sharing `target/` with the repository let
    // each side take the other's fingerprints as its own: a later build of the
    // repository linked crates built from the scratch tree's older sources.
    let tree_target = work.join("target");
    // Its registry crates are the repository's, built a moment ago: shared, not rebuilt.
    let members = seed::workspace_packages(&root)?;
    let seeded = seed::seed(&debug, &tree_target.join("debug"), &members)?;
    eprintln!("mutants: scratch target seeded with {seeded} registry build entries");

    let mut rows = Vec::new();
    for (i, m) in chosen.iter().enumerate() {
        eprintln!("mutants: [{}/{}] {}", i + 1, chosen.len(), m.id);
        let row = run_one(
            m,
            &root,
            &tree_target,
            &tree,
            &bin,
            &certifier,
            &baseline,
            &work,
        )?;
        eprintln!("mutants:   {}", outcome_word(m, &row.outcome));
        rows.push(row);
    }
    let table = result_table(&rows, started.elapsed().as_secs_f64());
    print!("{table}");
    let out = opts.out.unwrap_or_else(|| work.join("table.md"));
    std::fs::write(&out, &table).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("mutants: table written to {}", out.display());
    // Exit 1 when a mutant is invalid or a non-equivalent one survived: CI runs a
    // subset of known kills, so any survivor there is a lost check.
    let failed = rows.iter().any(|r| match r.outcome {
        Outcome::Invalid(_) => true,
        Outcome::Survived => r.mutant.equivalent.is_none(),
        Outcome::Killed(_) => false,
    });
    Ok(i32::from(failed))
}

#[allow(clippy::too_many_arguments)]
fn run_one<'a>(
    m: &'a Mutant,
    root: &Path,
    tree_target: &Path,
    tree: &ScratchTree,
    bin: &Path,
    certifier: &Certifier,
    baseline: &Verdict,
    work: &Path,
) -> Result<Row<'a>, String> {
    let clean_text =
        std::fs::read_to_string(root.join(&m.file)).map_err(|e| format!("{}: {e}", m.file))?;
    tree.put(&m.file, &battery::apply(m, &clean_text))?;
    let build_started = Instant::now();
    let built = cargo_build_incremental(tree.root(), tree_target, &["vxref"]);
    // Revert at once: an interrupted battery leaves a clean scratch tree.
    tree.put(&m.file, &clean_text)?;
    let build_secs = build_started.elapsed().as_secs_f64();
    let mut row = Row {
        mutant: m,
        outcome: Outcome::Survived,
        build_secs,
        run_secs: 0.0,
        harness_errors: 0,
    };
    if let Err(e) = built {
        row.outcome = Outcome::Invalid(format!("does not build: {e}"));
        return Ok(row);
    }
    copy(&tree_target.join("debug/vxref"), &bin.join("vxref"))?;
    if let Err(e) = probe::daemon_starts(&bin.join("vxref")) {
        row.outcome = Outcome::Invalid(e);
        return Ok(row);
    }
    let run_started = Instant::now();
    let report = work.join("reports").join(&m.id);
    let verdict = certifier.run(bin, &report);
    row.run_secs = run_started.elapsed().as_secs_f64();
    row.outcome = match verdict {
        Err(e) => Outcome::Invalid(e),
        Ok(v) => {
            row.harness_errors = v.harness_errors.saturating_sub(baseline.harness_errors);
            let new: BTreeSet<String> = v.failing.difference(&baseline.failing).cloned().collect();
            let _ = std::fs::write(
                report.join("caught.txt"),
                new.iter().map(|s| format!("{s}\n")).collect::<String>(),
            );
            if new.is_empty() {
                Outcome::Survived
            } else {
                Outcome::Killed(new)
            }
        }
    };
    Ok(row)
}

fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) if Path::new(&t).is_absolute() => PathBuf::from(t),
        Some(t) => root.join(t),
        None => root.join("target"),
    }
}

fn cargo_build(dir: &Path, target: &Path, packages: &[&str]) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target);
    for p in packages {
        cmd.args(["--package", p]);
    }
    status(cmd)
}

/// A build of the scratch tree, whose target directory is the battery's own: with
/// incremental compilation (whatever CARGO_INCREMENTAL the caller has, e.g. CI's 0
/// for its shared target/), each mutant recompiles only the queries its edit touched
/// in the crates it changed. Incremental state does not enter cargo's unit hashes,
/// so the seeded registry units still fit.
fn cargo_build_incremental(dir: &Path, target: &Path, packages: &[&str]) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env("CARGO_INCREMENTAL", "1");
    for p in packages {
        cmd.args(["--package", p]);
    }
    status(cmd)
}

fn status(mut cmd: Command) -> Result<(), String> {
    match cmd.status() {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("cargo build failed ({s})")),
        Err(e) => Err(format!("cannot run cargo: {e}")),
    }
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // Remove first: the destination may be a running (busy) executable.
    let _ = std::fs::remove_file(to);
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("copy {} to {}: {e}", from.display(), to.display()))
}

fn outcome_word(m: &Mutant, o: &Outcome) -> String {
    match o {
        Outcome::Killed(failing) => format!("killed ({} scenario(s))", failing.len()),
        Outcome::Survived if m.equivalent.is_some() => "survived (equivalent)".into(),
        Outcome::Survived => "survived".into(),
        Outcome::Invalid(why) => format!("INVALID: {why}"),
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn list_table(mutants: &[Mutant]) -> String {
    let mut t =
        String::from("| mutant | clause | § | file | description |\n|---|---|---|---|---|\n");
    for m in mutants {
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            m.id,
            m.clause,
            m.section,
            m.file,
            cell(&m.description)
        ));
    }
    t.push_str(&format!("{} mutants\n", mutants.len()));
    t
}

fn result_table(rows: &[Row], total_secs: f64) -> String {
    let mut t = String::from(
        "| mutant | clause | § | result | rows that caught it (scenarios) | build s | run s | harness errors |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (result, caught) = match &r.outcome {
            Outcome::Killed(failing) => {
                let mut per_row: BTreeMap<&str, usize> = BTreeMap::new();
                for s in failing {
                    *per_row
                        .entry(s.split(": ").next().unwrap_or("?"))
                        .or_default() += 1;
                }
                let caught: Vec<String> = per_row
                    .iter()
                    .map(|(row, n)| format!("{row} ({n})"))
                    .collect();
                ("killed".to_string(), caught.join("; "))
            }
            Outcome::Survived => match &r.mutant.equivalent {
                Some(why) => ("equivalent".to_string(), why.clone()),
                None => (
                    "**survived**".to_string(),
                    r.mutant.survivor_note.clone().unwrap_or_default(),
                ),
            },
            Outcome::Invalid(why) => ("INVALID".to_string(), why.clone()),
        };
        t.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.0} | {:.0} | {} |\n",
            r.mutant.id,
            r.mutant.clause,
            r.mutant.section,
            result,
            cell(&caught),
            r.build_secs,
            r.run_secs,
            r.harness_errors
        ));
    }
    let killed = rows
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Killed(_)))
        .count();
    let invalid = rows
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Invalid(_)))
        .count();
    let equivalent = rows
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Survived) && r.mutant.equivalent.is_some())
        .count();
    let valid = rows.len() - invalid - equivalent;
    let rate = if valid == 0 {
        0.0
    } else {
        100.0 * killed as f64 / valid as f64
    };
    t.push_str(&format!(
        "\n{} mutant(s) in {:.0} s; {invalid} invalid (battery bugs) and {equivalent} \
         equivalent (surviving, break no MUST), neither counted.\n\
         Kill rate: {killed}/{valid} valid mutants killed ({rate:.1} %)\n",
        rows.len(),
        total_secs
    ));
    t
}
