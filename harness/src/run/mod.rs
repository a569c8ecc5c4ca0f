//! `vxcert run`: the acceptance suites of one or more contracts against one
//! implementation, and their reports.
//!
//! Flow: load the profile → choose the contracts → preflight (binaries, libraries,
//! suites, registries, environment; nothing runs when something is missing) → run
//! each contract's cucumber suite, collecting one typed [`Outcome`] per scenario →
//! build the typed report once and write it.

mod assemble;
mod baseline;
pub mod clauses;
mod diff;
pub mod error_codes;
mod evidence_json;
mod failed_steps;
mod html;
mod html_evidence;
mod load;
mod merge;
mod preflight;
mod progress;
mod repeat;
mod report;
mod report_files;
mod repro;
mod scenario_place;
mod shard;

pub use baseline::{run_baseline, BaselineArgs};
pub use diff::{run_diff, DiffArgs};
pub use merge::{run_merge, MergeArgs};

use crate::contract::{Contract, SuiteWorld};
use crate::profile::{self, Profile, RunContext};
use crate::verdict::Verdict;
use cucumber::{codegen::WorldInventory, tag::Ext as _, writer::Ext as _};
use scenario_place::{
    classify, example_row, feature_file, feature_path, repro_name, row_of, with_pins,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Profile of the implementation under test (default: the reference's).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Contract to certify (repeatable): recovery, agent-restore, single-writer,
    /// session-persist. Default: every contract the profile claims.
    #[arg(long = "contract", value_name = "NAME")]
    pub contracts: Vec<String>,
    /// Cucumber tag expression selecting scenarios (`@must and not @rfc-3-…`).
    #[arg(long, value_name = "EXPR")]
    pub tags: Option<String>,
    /// Where report.json, report.xml, report.md and cucumber.json are written.
    #[arg(long, value_name = "DIR", default_value = "vxcert-report")]
    pub report: PathBuf,
    /// Root of the suites (`<contract>/clauses.toml` and `<contract>/*.feature`).
    #[arg(long, value_name = "DIR")]
    pub features: Option<PathBuf>,
    /// Directory holding the implementation's binaries, for `{bin_dir}` (default: the
    /// directory of vxcert itself).
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
    /// How many scenarios run at once, instead of the profile's `concurrency` (default
    /// 4). Rows that mostly wait (timers, reconnects, a peer's silence) finish sooner
    /// with more; rows that keep the CPU busy do not.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: Option<u16>,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Run only shard K of N: the scenarios whose stable id (contract, feature file,
    /// scenario name, Examples row) hashes into it. `vxcert merge` joins the shards.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<shard::Shard>,
    /// Run only the scenario at this line of this feature file
    /// (`08_faults.feature:28`; an outline's example by its own line), as a live row's
    /// `repro.sh` does; repeatable.
    #[arg(long = "at", value_name = "FILE:LINE", value_parser = repro::parse_at)]
    pub at: Vec<(String, usize)>,
    /// Run each selected scenario N times, each in a fresh sandbox; a scenario whose
    /// runs disagree is `flaky`, with the evidence of each distinct outcome.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Fail only on a regression against this report (report.json or its directory)
    /// or expectations file (`vxcert baseline`, `.toml`).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

/// One finished (or not run) scenario.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub contract: Contract,
    pub feature: String,
    pub row: String,
    pub name: String,
    pub line: usize,
    /// The Examples row of an outline's scenario, as written.
    pub example: Option<String>,
    pub tags: Vec<String>,
    pub verdict: Verdict,
    pub message: Option<String>,
    pub duration_ms: u128,
    /// The feature file's path (to find the step it failed at).
    pub feature_path: String,
    /// What the scenario ran, saw and compared.
    pub kept: Option<crate::evidence::Kept>,
    /// The reproduction directory, relative to the report.
    pub reproduce: Option<String>,
    /// Which run of the scenario this was (`--repeat`), from 1.
    pub round: u32,
    /// A `flaky` scenario's distinct outcomes (`--repeat`).
    pub variants: Vec<repeat::Variant>,
}

static OUTCOMES: Mutex<Vec<Outcome>> = Mutex::new(Vec::new());

fn record(o: Outcome) {
    OUTCOMES.lock().unwrap_or_else(|p| p.into_inner()).push(o);
}

/// The reference's profile, from the kit's files packed into vxcert.
pub(crate) fn default_profile() -> Result<PathBuf, String> {
    crate::assets::reference_profile().map_err(|e| e.to_string())
}

pub fn run_run(args: &RunArgs) -> i32 {
    // Before any thread starts: they inherit the blocked signals the sweep waits for.
    crate::drivers::start_state::sweep_on_interrupt();
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("vxcert run: {e}");
            2
        }
    }
}

/// The contracts to run: those named on the command line (each claimed by the
/// profile and with a suite in this kit), else every contract the profile claims.
fn choose_contracts(args: &RunArgs, profile: &Profile) -> Result<Vec<Contract>, String> {
    let names: Vec<String> = if args.contracts.is_empty() {
        profile.contracts.clone()
    } else {
        args.contracts.clone()
    };
    let mut out = Vec::new();
    for n in &names {
        let c = Contract::from_name(n).ok_or_else(|| {
            format!(
                "unknown contract {n:?} (known: {})",
                Contract::names().join(", ")
            )
        })?;
        if !profile.claims(c.name()) {
            return Err(format!(
                "the profile does not claim the {c} contract (add it to `contracts`)"
            ));
        }
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

fn run_inner(args: &RunArgs) -> Result<i32, String> {
    // The kit's files (suites, corpus, reference profile) before anything else: a
    // scenario must never be the first to find them missing.
    let kit = crate::assets::root().map_err(|e| e.to_string())?;
    let suite_root = args
        .features
        .clone()
        .unwrap_or_else(|| kit.join("features"));
    let profile_path = match &args.profile {
        Some(p) => p.clone(),
        None => default_profile()?,
    };
    let profile = Profile::load(&profile_path)?;
    let contracts = choose_contracts(args, &profile)?;
    // Scenarios run programs from their own temporary directories: a relative
    // --bin-dir would name nothing there.
    let bin_dir = match &args.bin_dir {
        Some(d) => d.canonicalize().map_err(|e| {
            format!(
                "--bin-dir {}: {e}; pass the directory that holds the implementation's \
                 programs (the kit's: target/debug after `cargo build --workspace`)",
                d.display()
            )
        })?,
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .parent()
            .map(Path::to_path_buf)
            .ok_or("no directory for vxcert")?,
    };
    let tags = match &args.tags {
        None => None,
        Some(t) => Some(
            t.parse::<cucumber::gherkin::tagexpr::TagOperation>()
                .map_err(|e| format!("--tags {t:?}: {e}"))?,
        ),
    };
    // A baseline that cannot be read is a usage error before anything runs.
    if let Some(b) = &args.baseline {
        baseline::load(b)?;
    }
    let identity = report::Identity {
        shard: args.shard.map(|s| s.to_string()),
        tags: args.tags.clone(),
        profile_sha256: merge::file_digest(&profile_path),
        suites: contracts
            .iter()
            .map(|c| {
                (
                    c.name(),
                    merge::suite_digest(&suite_root.join(c.suite_dir())),
                )
            })
            .collect(),
        repeat: (args.repeat > 1).then_some(args.repeat),
    };
    let checked = preflight::check(&preflight::Inputs {
        profile: &profile,
        bin_dir: &bin_dir,
        suite_root: &suite_root,
        contracts: &contracts,
    })?;
    let implementation = implementation_version(&profile, &bin_dir);
    let concurrency = args
        .concurrency
        .map(usize::from)
        .or(profile.concurrency)
        .unwrap_or(4)
        .max(1);
    crate::drivers::set_timeout_multiplier(profile.timeout_multiplier);
    profile::set_context(RunContext {
        profile: profile.clone(),
        bin_dir,
        profile_path: profile_path.clone(),
        faketime: checked.faketime.clone(),
    })?;
    // A crashed daemon's orphans come back to us, so their PIDs can be freed and reused.
    crate::drivers::process::become_subreaper();

    std::fs::create_dir_all(&args.report)
        .map_err(|e| format!("cannot create {}: {e}", args.report.display()))?;
    let progress = Arc::new(progress::Progress::new(args.quiet));
    let started_at = crate::recovery::fixtures::timestamp(0);
    let start = Instant::now();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(concurrency * 2 + 4)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let rerun = Arc::new(repro::Rerun {
        vxcert: std::env::current_exe().map_err(|e| e.to_string())?,
        profile: args.profile.as_ref().and_then(|p| p.canonicalize().ok()),
        features: args.features.as_ref().and_then(|p| p.canonicalize().ok()),
        bin_dir: args.bin_dir.as_ref().and_then(|p| p.canonicalize().ok()),
    });
    for round in 1..=args.repeat {
        for contract in &contracts {
            let setup = Arc::new(SuiteSetup {
                contract: *contract,
                dir: suite_root.join(contract.suite_dir()),
                report: args.report.clone(),
                tags: tags.clone(),
                shard: args.shard,
                at: args.at.clone(),
                rerun: rerun.clone(),
                concurrency,
                claimed: profile.features.clone(),
                faketime: checked.faketime.is_some(),
                root: checked.root,
                progress: progress.clone(),
                round,
            });
            match contract {
                Contract::Recovery => {
                    runtime.block_on(run_suite::<crate::recovery::World>(setup))?
                }
                Contract::AgentRestore => {
                    runtime.block_on(run_suite::<crate::agent_restore::World>(setup))?
                }
                Contract::SingleWriter => {
                    runtime.block_on(run_suite::<crate::single_writer::World>(setup))?
                }
                Contract::SessionPersist => {
                    runtime.block_on(run_suite::<crate::session_persist::World>(setup))?
                }
            }
        }
    }
    progress.finish();
    // Each scenario's sandbox swept its own processes; what is left escaped them all
    // (a process without the sandbox in its environment, command line or cwd).
    let escaped = crate::drivers::start_state::sweep_all();
    if !escaped.is_empty() {
        let names: Vec<String> = escaped.iter().map(ToString::to_string).collect();
        eprintln!(
            "vxcert: stopped {} process(es) still running after every scenario ended: {}",
            names.len(),
            names.join(", ")
        );
    }
    let duration_ms = start.elapsed().as_millis();

    let mut outcomes = std::mem::take(&mut *OUTCOMES.lock().unwrap_or_else(|p| p.into_inner()));
    outcomes.sort_by(|a, b| {
        (a.contract, &a.feature, a.line, a.round).cmp(&(b.contract, &b.feature, b.line, b.round))
    });
    // The filter may be asked more than once about one scenario.
    outcomes.dedup_by(|a, b| {
        a.contract == b.contract && a.feature == b.feature && a.line == b.line && a.round == b.round
    });
    let outcomes = repeat::combine(outcomes);
    let (run_json, scenario_json, templates) = report::build(report::Inputs {
        profile: &profile,
        profile_path: &profile_path,
        implementation: &implementation,
        started_at: &started_at,
        duration_ms,
        concurrency,
        outcomes: &outcomes,
        registries: &checked.registries,
        identity,
    });
    let mut rep = assemble::assemble(run_json, scenario_json, &templates);
    if let Some(b) = &args.baseline {
        baseline::apply(&mut rep, b)?;
    }
    report_files::write(&args.report, &rep)?;
    println!("{}", report::summary(&rep));
    Ok(if rep.ok { 0 } else { 1 })
}

/// One contract's run.
struct SuiteSetup {
    contract: Contract,
    dir: PathBuf,
    report: PathBuf,
    tags: Option<cucumber::gherkin::tagexpr::TagOperation>,
    shard: Option<shard::Shard>,
    at: Vec<(String, usize)>,
    /// How a live row's `repro.sh` runs it again with the kit.
    rerun: Arc<repro::Rerun>,
    concurrency: usize,
    claimed: Vec<String>,
    faketime: bool,
    root: bool,
    progress: Arc<progress::Progress>,
    /// Which run of the suite this is (`--repeat`), from 1.
    round: u32,
}

impl SuiteSetup {
    /// `name` for the first round, `name` with `-round<k>` before its extension after.
    fn per_round(&self, stem: &str, ext: &str) -> String {
        match self.round {
            1 => format!("{stem}.{ext}"),
            k => format!("{stem}-round{k}.{ext}"),
        }
    }

    /// Why a scenario with these tags does not run here, when it does not.
    fn not_runnable(&self, tags: &[&String]) -> Option<(Verdict, String)> {
        let profile = &profile::context().profile;
        if let Some(part) = tags
            .iter()
            .find_map(|t| t.strip_prefix("part-"))
            .filter(|p| !profile.claims_part(self.contract, p))
        {
            return Some((
                Verdict::NotClaimed,
                format!(
                    "the profile does not claim the {part} part of {} (it claims: {})",
                    self.contract,
                    profile.claimed_parts(self.contract).join(", ")
                ),
            ));
        }
        self.unsupported(tags)
            .map(|why| (Verdict::UnsupportedOptional, why))
    }

    /// Why a scenario with these tags cannot run here (an unclaimed optional feature,
    /// a missing tool or privilege), when it cannot.
    fn unsupported(&self, tags: &[&String]) -> Option<String> {
        tags.iter()
            .find_map(|t| {
                t.strip_prefix("optional-")
                    .filter(|feat| !self.claimed.iter().any(|c| c == feat))
                    .map(|feat| format!("optional feature {feat} not claimed by the profile"))
            })
            .or_else(|| {
                (tags.iter().any(|t| *t == "needs-faketime") && !self.faketime).then(|| {
                    "libfaketime is not installed (Debian: apt-get install libfaketime)".into()
                })
            })
            .or_else(|| {
                tags.iter().find_map(|t| {
                    let twin = t.strip_prefix("twin-")?;
                    crate::session_persist::twin_unavailable(&profile::context().profile, twin)
                })
            })
            .or_else(|| {
                (tags.iter().any(|t| *t == "needs-root") && !self.root)
                    .then(|| "the suite must run as root to chown a file to another UID".into())
            })
    }
}

/// Runs one contract's cucumber suite with World `W`, recording every outcome.
async fn run_suite<W>(setup: Arc<SuiteSetup>) -> Result<(), String>
where
    W: cucumber::World + WorldInventory + SuiteWorld + std::fmt::Debug,
{
    let contract = setup.contract;
    let name = contract.name();
    let create = |file: String| {
        std::fs::File::create(setup.report.join(&file))
            .map_err(|e| format!("cannot create {file}: {e}"))
    };
    let log = create(setup.per_round(&format!("cucumber-{name}"), "log"))?;
    let json = create(setup.per_round(&format!("cucumber-{name}"), "json"))?;
    let round = setup.round;
    let progress = setup.progress.clone();
    let report_dir = setup.report.clone();
    let rerun = setup.rerun.clone();
    let filter_setup = setup.clone();
    let cucumber = W::cucumber()
        .max_concurrent_scenarios(setup.concurrency)
        .with_writer(
            cucumber::writer::Basic::raw(log, cucumber::writer::Coloring::Never, 0)
                .summarized()
                .tee::<W, _>(cucumber::writer::Json::for_tee(json))
                .tee::<W, _>(
                    failed_steps::Writer
                        .discard_stats_writes()
                        .discard_arbitrary_writes(),
                )
                .normalized(),
        )
        .fail_on_skipped()
        .with_cli(cucumber::cli::Opts::<_, _, _, cucumber::cli::Empty>::default())
        .after(move |feature, rule, scenario, ev, world| {
            let duration_ms = world
                .as_ref()
                .map_or(0, |w| w.created().elapsed().as_millis());
            let failure = world.as_ref().and_then(|w| w.failure());
            let kept = world.as_ref().map(|w| crate::evidence::take(&w.evidence()));
            let (verdict, message) = classify(Some(ev), failure);
            let (verdict, message) = with_pins(verdict, message, kept.as_ref());
            let example = example_row(feature, scenario.position.line);
            let reproduce = (!verdict.held() && verdict != Verdict::HarnessError)
                .then(|| {
                    let k = kept.as_ref()?;
                    let commands = if k.last_step_commands.is_empty() {
                        let n = k.commands.len();
                        &k.commands[n.saturating_sub(evidence_json::SCENARIO_TAIL)..]
                    } else {
                        &k.last_step_commands[..]
                    };
                    let name = repro_name(contract, feature, scenario.position.line);
                    let name = match round {
                        1 => name,
                        k => format!("{name}-round{k}"),
                    };
                    if !k.processes.is_empty() {
                        // The suite started the implementation's processes: the row runs
                        // again alone, with the kit.
                        let at = (feature_file(feature), scenario.position.line);
                        return repro::write_rerun(&report_dir, &name, &rerun, contract, &at);
                    }
                    repro::write(&report_dir, &name, commands)
                })
                .flatten();
            let mut tags: Vec<String> = feature.tags.clone();
            tags.extend(scenario.tags.iter().cloned());
            progress.done(contract, verdict);
            record(Outcome {
                contract,
                feature: feature_file(feature),
                row: row_of(feature, rule),
                name: scenario.name.clone(),
                line: scenario.position.line,
                example,
                tags,
                verdict,
                message,
                duration_ms,
                feature_path: feature_path(feature),
                kept,
                reproduce,
                round,
                variants: Vec::new(),
            });
            Box::pin(async {})
        });
    let filter = move |f: &cucumber::gherkin::Feature,
                       r: Option<&cucumber::gherkin::Rule>,
                       s: &cucumber::gherkin::Scenario| {
        let all: Vec<&String> = f.tags.iter().chain(s.tags.iter()).collect();
        let setup = &filter_setup;
        if let Some(ex) = &setup.tags {
            if !ex.eval(all.iter().copied()) {
                return false;
            }
        }
        if !setup.at.is_empty()
            && !setup
                .at
                .iter()
                .any(|(file, line)| *file == feature_file(f) && *line == s.position.line)
        {
            return false;
        }
        if let Some(shard) = &setup.shard {
            let example = example_row(f, s.position.line);
            let id = shard::scenario_id(name, &feature_file(f), &s.name, example.as_deref());
            if !shard.holds(&id) {
                return false;
            }
        }
        if let Some((verdict, why)) = setup.not_runnable(&all) {
            let mut tags: Vec<String> = f.tags.clone();
            tags.extend(s.tags.iter().cloned());
            setup.progress.done(contract, verdict);
            record(Outcome {
                contract,
                feature: feature_file(f),
                row: row_of(f, r),
                name: s.name.clone(),
                line: s.position.line,
                example: example_row(f, s.position.line),
                tags,
                verdict,
                message: Some(why),
                duration_ms: 0,
                feature_path: feature_path(f),
                kept: None,
                reproduce: None,
                round: setup.round,
                variants: Vec::new(),
            });
            return false;
        }
        setup.progress.selected(contract);
        true
    };
    cucumber.filter_run(&setup.dir, filter).await;
    Ok(())
}

fn implementation_version(profile: &Profile, bin_dir: &Path) -> String {
    if profile.version.is_empty() {
        return profile.implementation.clone();
    }
    let words: Vec<String> = profile
        .version
        .iter()
        .map(|w| w.replace("{bin_dir}", &bin_dir.to_string_lossy()))
        .collect();
    let out = std::process::Command::new(&words[0])
        .args(&words[1..])
        .stdin(std::process::Stdio::null())
        .output();
    let v = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string(),
        _ => "version unknown".into(),
    };
    if profile.implementation.is_empty() {
        v
    } else {
        format!("{} ({v})", profile.implementation)
    }
}
