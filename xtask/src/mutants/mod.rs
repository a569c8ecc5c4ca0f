//! `cargo xtask mutants [--contract NAME] [--list] [--only ID,…] [--out FILE]` and
//! `cargo xtask mutants --ci`: the mutant battery.
//!
//! Each mutant of a contract's battery (`contract::CONTRACTS`: recovery's
//! `harness/mutants/*.toml`, the others' `harness/mutants/<contract>/*.toml`) is
//! applied to a scratch copy of the workspace, the contract's program (`vxref`,
//! `vxbroker`, `vxpersist`) is rebuilt into the battery's own target directory (only
//! what the edit touched recompiles), the build must start (else the mutant is
//! INVALID: a bug of the battery, never a kill), and the clean `vxcert` certifies it
//! with `vxcert run --contract NAME --bin-dir`. A mutant is killed when the run fails
//! a scenario the clean reference passes. `--ci` runs the mutants marked `ci = true`
//! of every contract, each on the rows tagged with its clause only (each contract's
//! baseline once, on those rows). One table per contract goes to
//! stdout and `--out`; its last line is the kill rate. Exit status: 0 when every
//! mutant run was killed (or is a surviving declared equivalent), 1 when one survived
//! or is invalid, 2 when the battery cannot run.

mod battery;
mod contract;
mod probe;
mod seed;
mod table;
mod tree;

use battery::Mutant;
use contract::Contract;
use probe::{Certifier, Verdict};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use tree::ScratchTree;

/// The clean programs the runner builds once besides the program under test (the
/// harness with its `vxstub`, the fault injector, the other contracts' programs) come
/// from a build of the whole kit, as `cargo certify` builds it: the same packages
/// unify dependency features the same way, so after a certify (CI's first step) that
/// build has nothing to do. Built alone, the two rebuilt 56 crates (53 s on this
/// 2-core machine).
const CLEAN_HELPER_PACKAGES: [&str; 5] = crate::KIT_PACKAGES;
/// What a bin dir holds: the program under test (a mutant's) and the clean others
/// (the crash explorer runs `{bin_dir}/vxcert` as its checker).
const PROGRAMS: [&str; 6] = [
    "vxref",
    "vxbroker",
    "vxpersist",
    "vxcert",
    "vxstub",
    "libvxfault.so",
];

struct Options {
    contract: Option<String>,
    ci: bool,
    list: bool,
    only: Option<BTreeSet<String>>,
    out: Option<PathBuf>,
}

fn parse(args: Vec<String>) -> Result<Options, String> {
    let mut opts = Options {
        contract: None,
        ci: false,
        list: false,
        only: None,
        out: None,
    };
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--list" => opts.list = true,
            "--ci" => opts.ci = true,
            "--contract" => {
                opts.contract = Some(it.next().ok_or("--contract needs a contract name")?)
            }
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
    if opts.ci && (opts.contract.is_some() || opts.only.is_some()) {
        return Err(
            "--ci runs every contract's ci = true mutants: it takes no --contract or --only".into(),
        );
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

/// One contract's share of a run: its battery and the mutants chosen from it.
struct Batch {
    contract: &'static Contract,
    mutants: Vec<Mutant>,
    chosen: Vec<usize>,
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

/// The batches a command line asks for: one contract (all or `--only`), or with
/// `--ci` every contract that marks mutants `ci = true`.
fn batches(root: &Path, opts: &Options) -> Result<Vec<Batch>, String> {
    if opts.ci {
        let mut out = Vec::new();
        for contract in &contract::CONTRACTS {
            let mutants = battery::load(root, contract)?;
            let chosen: Vec<usize> = (0..mutants.len()).filter(|&i| mutants[i].ci).collect();
            if !chosen.is_empty() {
                out.push(Batch {
                    contract,
                    mutants,
                    chosen,
                });
            }
        }
        return Ok(out);
    }
    let contract = contract::by_name(opts.contract.as_deref().unwrap_or("recovery"))?;
    let mutants = battery::load(root, contract)?;
    if mutants.is_empty() {
        return Err(format!(
            "contract {} has no mutants (its battery is {}/*.toml)",
            contract.name, contract.battery_dir
        ));
    }
    let chosen = match &opts.only {
        None => (0..mutants.len()).collect(),
        Some(ids) => {
            let known: BTreeSet<&str> = mutants.iter().map(|m| m.id.as_str()).collect();
            if let Some(bad) = ids.iter().find(|id| !known.contains(id.as_str())) {
                return Err(format!(
                    "--only: no mutant {bad} in {}'s battery (see --list)",
                    contract.name
                ));
            }
            (0..mutants.len())
                .filter(|&i| ids.contains(&mutants[i].id))
                .collect()
        }
    };
    Ok(vec![Batch {
        contract,
        mutants,
        chosen,
    }])
}

fn run(args: Vec<String>) -> Result<i32, String> {
    let opts = parse(args)?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("xtask has no parent directory")?
        .to_path_buf();
    let batches = batches(&root, &opts)?;
    if opts.list {
        for b in &batches {
            let listed: Vec<&Mutant> = b.chosen.iter().map(|&i| &b.mutants[i]).collect();
            print!("### {}\n\n{}", b.contract.name, table::list_table(&listed));
        }
        return Ok(0);
    }
    let target = target_dir(&root);
    let work = target.join("mutants");
    let clean = work.join("clean");
    let bin = work.join("bin");
    let started = Instant::now();

    eprintln!("mutants: building the clean kit");
    cargo_build(&root, &target, &CLEAN_HELPER_PACKAGES)?;
    let debug = target.join("debug");
    for name in PROGRAMS {
        copy(&debug.join(name), &clean.join(name))?;
    }
    // Each program under test alone, exactly as each mutant is built: built together
    // with the harness, cargo would unify dependency features into a different binary.
    let mut under_test = BTreeSet::new();
    for b in &batches {
        if under_test.insert(b.contract.package) {
            cargo_build(&root, &target, &[b.contract.package])?;
            copy(
                &debug.join(b.contract.binary),
                &clean.join(b.contract.binary),
            )?;
        }
    }
    for name in PROGRAMS {
        copy(&clean.join(name), &bin.join(name))?;
    }
    let profile = root.join("profiles/reference.toml");
    let vxcert = clean.join("vxcert");
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
    let kit = Kit {
        root: &root,
        tree: &tree,
        tree_target: &tree_target,
        bin: &bin,
        clean: &clean,
    };

    let mut tables = String::new();
    let mut failed = false;
    for b in &batches {
        let certifier = Certifier {
            contract: b.contract.name,
            vxcert: &vxcert,
            profile: &profile,
            root: &root,
        };
        let contract_started = Instant::now();
        eprintln!(
            "mutants: {}: certifying the clean reference (the baseline)",
            b.contract.name
        );
        let reports = work.join("reports").join(b.contract.name);
        // CI's subset runs each mutant on the rows that claim its clause (the rows
        // whose job is to catch it), and the baseline on all of those rows; the whole
        // battery runs the contract's every row.
        let clause_tags = |m: &Mutant| opts.ci.then(|| format!("@{}", m.clause));
        let baseline_tags = opts.ci.then(|| {
            let clauses: BTreeSet<String> = b
                .chosen
                .iter()
                .map(|&i| format!("@{}", b.mutants[i].clause))
                .collect();
            clauses.into_iter().collect::<Vec<_>>().join(" or ")
        });
        let baseline =
            certifier.run(&clean, &reports.join("baseline"), baseline_tags.as_deref())?;
        if !baseline.failing.is_empty() {
            eprintln!(
                "mutants: {}: the clean reference fails {} scenario(s); only other failures count as kills",
                b.contract.name,
                baseline.failing.len()
            );
        }
        let mut rows = Vec::new();
        for (n, &i) in b.chosen.iter().enumerate() {
            let m = &b.mutants[i];
            eprintln!(
                "mutants: {} [{}/{}] {}",
                b.contract.name,
                n + 1,
                b.chosen.len(),
                m.id
            );
            let tags = clause_tags(m);
            let row = run_one(
                m,
                b.contract,
                &kit,
                &certifier,
                &baseline,
                &reports,
                tags.as_deref(),
            )?;
            eprintln!("mutants:   {}", table::outcome_word(m, &row.outcome));
            rows.push(row);
        }
        // Exit 1 when a mutant is invalid or a non-equivalent one survived: CI runs a
        // subset of known kills, so any survivor there is a lost check.
        failed |= rows.iter().any(|r| match r.outcome {
            Outcome::Invalid(_) => true,
            Outcome::Survived => r.mutant.equivalent.is_none(),
            Outcome::Killed(_) => false,
        });
        tables.push_str(&format!(
            "### {}\n\n{}\n",
            b.contract.name,
            table::result_table(&rows, contract_started.elapsed().as_secs_f64())
        ));
    }
    tables.push_str(&format!(
        "All contracts: {:.0} s (with the clean kit's build).\n",
        started.elapsed().as_secs_f64()
    ));
    print!("{tables}");
    let out = opts.out.unwrap_or_else(|| match &opts.contract {
        _ if opts.ci => work.join("table-ci.md"),
        Some(c) => work.join(format!("table-{c}.md")),
        None => work.join("table-recovery.md"),
    });
    std::fs::write(&out, &tables).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("mutants: table written to {}", out.display());
    Ok(i32::from(failed))
}

/// What every mutant's run shares: the repository, its scratch copy and the bin dirs.
struct Kit<'a> {
    root: &'a Path,
    tree: &'a ScratchTree,
    tree_target: &'a Path,
    bin: &'a Path,
    clean: &'a Path,
}

fn run_one<'a>(
    m: &'a Mutant,
    contract: &Contract,
    kit: &Kit,
    certifier: &Certifier,
    baseline: &Verdict,
    reports: &Path,
    tags: Option<&str>,
) -> Result<Row<'a>, String> {
    let clean_text =
        std::fs::read_to_string(kit.root.join(&m.file)).map_err(|e| format!("{}: {e}", m.file))?;
    kit.tree.put(&m.file, &battery::apply(m, &clean_text))?;
    let build_started = Instant::now();
    let built = cargo_build_incremental(kit.tree.root(), kit.tree_target, &[contract.package]);
    // Revert at once: an interrupted battery leaves a clean scratch tree.
    kit.tree.put(&m.file, &clean_text)?;
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
    let program = kit.bin.join(contract.binary);
    copy(
        &kit.tree_target.join("debug").join(contract.binary),
        &program,
    )?;
    let run_started = Instant::now();
    let verdict = match probe::program_starts(contract.binary, &program) {
        Err(e) => Err(e),
        Ok(()) => certifier.run(kit.bin, &reports.join(&m.id), tags),
    };
    row.run_secs = run_started.elapsed().as_secs_f64();
    // The next contract's mutants run beside the clean program again.
    copy(&kit.clean.join(contract.binary), &program)?;
    row.outcome = match verdict {
        Err(e) => Outcome::Invalid(e),
        Ok(v) => {
            row.harness_errors = v.harness_errors.saturating_sub(baseline.harness_errors);
            let new: BTreeSet<String> = v.failing.difference(&baseline.failing).cloned().collect();
            let _ = std::fs::write(
                reports.join(&m.id).join("caught.txt"),
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
