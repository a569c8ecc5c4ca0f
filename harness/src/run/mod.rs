//! `vxcert run`: the acceptance suite against one implementation, and its reports.

mod attach;
mod clauses;
mod collected;
mod events;
mod fixtures;
mod pids;
mod profile;
mod report;
mod restore_events;
mod steps;
mod world;

use cucumber::{event, tag::Ext as _, writer::Ext as _, World as _};
use profile::Profile;
use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

pub const SUITE_VERSION: &str = env!("CARGO_PKG_VERSION");
pub const RFC: &str = "Durable session restore and daemon crash recovery (accepted 2026-11-06, history to 2026-11-10)";

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Profile of the implementation under test (default: the reference's).
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// Cucumber tag expression selecting scenarios (`@must and not @rfc-3-…`).
    #[arg(long, value_name = "EXPR")]
    pub tags: Option<String>,
    /// Where report.json, report.xml and report.md are written.
    #[arg(long, value_name = "DIR", default_value = "vxcert-report")]
    pub report: PathBuf,
    /// Directory of the suite (clauses.toml and recovery/*.feature).
    #[arg(long, value_name = "DIR")]
    pub features: Option<PathBuf>,
    /// Directory holding the implementation's binaries, for `{bin_dir}` (default: the
    /// directory of vxcert itself).
    #[arg(long, value_name = "DIR")]
    pub bin_dir: Option<PathBuf>,
}

/// One finished scenario.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub feature: String,
    pub row: String,
    pub name: String,
    pub line: usize,
    /// The Examples row of an outline's scenario, as written.
    pub example: Option<String>,
    pub tags: Vec<String>,
    pub verdict: &'static str,
    pub message: Option<String>,
    pub duration_ms: u128,
}

static OUTCOMES: Mutex<Vec<Outcome>> = Mutex::new(Vec::new());

fn default_suite_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../features")
}

fn default_profile() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/reference.toml")
}

pub fn run_run(args: &RunArgs) -> i32 {
    match run_inner(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("vxcert run: {e}");
            2
        }
    }
}

fn run_inner(args: &RunArgs) -> Result<i32, String> {
    let suite = args.features.clone().unwrap_or_else(default_suite_dir);
    let profile_path = args.profile.clone().unwrap_or_else(default_profile);
    let profile = Profile::load(&profile_path)?;
    let registry = clauses::load(&suite.join("clauses.toml"))?;
    if let Err(problems) = clauses::check(&registry, &suite.join("recovery")) {
        return Err(format!(
            "clause registry check failed:\n  {}",
            problems.join("\n  ")
        ));
    }
    let bin_dir = match &args.bin_dir {
        Some(d) => d.clone(),
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
    let implementation = implementation_version(&profile, &bin_dir);
    let concurrency = profile.concurrency.unwrap_or(4).max(1);
    let claimed = profile.features.clone();
    world::CONTEXT
        .set(world::RunContext {
            profile: profile.clone(),
            bin_dir,
        })
        .map_err(|_| "run context already set")?;
    // A crashed daemon's orphans come back to us, so their PIDs can be freed and reused.
    pids::become_subreaper();

    std::fs::create_dir_all(&args.report)
        .map_err(|e| format!("cannot create {}: {e}", args.report.display()))?;
    let log = std::fs::File::create(args.report.join("cucumber.log"))
        .map_err(|e| format!("cannot create cucumber.log: {e}"))?;

    let started_at = fixtures::timestamp(0);
    let start = Instant::now();
    let any = Regex::new("^(.*)$").expect("regex");
    let cucumber = world::World::cucumber()
        .given(any.clone(), steps::run_step)
        .when(any.clone(), steps::run_step)
        .then(any, steps::run_step)
        .max_concurrent_scenarios(concurrency)
        .with_writer(
            cucumber::writer::Basic::raw(log, cucumber::writer::Coloring::Never, 0)
                .summarized()
                .normalized(),
        )
        .fail_on_skipped()
        .with_cli(cucumber::cli::Opts::<_, _, _, cucumber::cli::Empty>::default())
        .after(|feature, _rule, scenario, ev, world| {
            let duration_ms = world.map_or(0, |w| w.created.elapsed().as_millis());
            let (verdict, message) = classify(Some(ev));
            let mut tags: Vec<String> = feature.tags.clone();
            tags.extend(scenario.tags.iter().cloned());
            let outcome = Outcome {
                feature: feature_file(feature),
                row: feature.name.clone(),
                name: scenario.name.clone(),
                line: scenario.position.line,
                example: example_row(feature, scenario.position.line),
                tags,
                verdict,
                message,
                duration_ms,
            };
            OUTCOMES.lock().unwrap().push(outcome);
            Box::pin(async {})
        });
    let filter = {
        move |f: &cucumber::gherkin::Feature,
              _r: Option<&cucumber::gherkin::Rule>,
              s: &cucumber::gherkin::Scenario| {
            let all: Vec<&String> = f.tags.iter().chain(s.tags.iter()).collect();
            if let Some(ex) = &tags {
                if !ex.eval(all.iter().copied()) {
                    return false;
                }
            }
            let missing = all
                .iter()
                .find_map(|t| {
                    t.strip_prefix("optional-")
                        .filter(|feat| !claimed.iter().any(|c| c == feat))
                        .map(|feat| format!("optional feature {feat} not claimed by the profile"))
                })
                .or_else(|| {
                    (all.iter().any(|t| *t == "needs-faketime")
                        && world::faketime_preload().is_none())
                    .then(|| {
                        "libfaketime is not installed (Debian: apt-get install libfaketime)".into()
                    })
                })
                .or_else(|| {
                    (all.iter().any(|t| *t == "needs-root") && !nix::unistd::geteuid().is_root())
                        .then(|| "the suite must run as root to chown a file to another UID".into())
                });
            if let Some(why) = missing {
                let mut tags: Vec<String> = f.tags.clone();
                tags.extend(s.tags.iter().cloned());
                OUTCOMES.lock().unwrap().push(Outcome {
                    feature: feature_file(f),
                    row: f.name.clone(),
                    name: s.name.clone(),
                    line: s.position.line,
                    example: example_row(f, s.position.line),
                    tags,
                    verdict: "unsupported-optional",
                    message: Some(why),
                    duration_ms: 0,
                });
                return false;
            }
            true
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(concurrency * 2 + 4)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(cucumber.filter_run(suite.join("recovery"), filter));
    let duration_ms = start.elapsed().as_millis();

    let mut outcomes = std::mem::take(&mut *OUTCOMES.lock().unwrap());
    outcomes.sort_by(|a, b| (&a.feature, a.line).cmp(&(&b.feature, b.line)));
    // The filter may be asked more than once about one scenario.
    outcomes.dedup_by(|a, b| a.feature == b.feature && a.line == b.line);
    let rep = report::build(report::Inputs {
        profile: &profile,
        profile_path: &profile_path,
        implementation: &implementation,
        started_at: &started_at,
        duration_ms,
        outcomes: &outcomes,
        clauses: &registry,
    });
    report::write(&args.report, &rep)?;
    println!("{}", report::summary(&rep));
    Ok(if rep.ok { 0 } else { 1 })
}

/// The text of the Examples row at `line`, when the scenario comes from an outline.
fn example_row(f: &cucumber::gherkin::Feature, line: usize) -> Option<String> {
    let text = std::fs::read_to_string(f.path.as_ref()?).ok()?;
    let row = text.lines().nth(line.checked_sub(1)?)?.trim();
    row.starts_with('|').then(|| {
        row.trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" | ")
    })
}

fn feature_file(f: &cucumber::gherkin::Feature) -> String {
    f.path
        .as_ref()
        .and_then(|p| p.file_name())
        .map_or_else(|| f.name.clone(), |n| n.to_string_lossy().into_owned())
}

fn classify(ev: Option<&event::ScenarioFinished>) -> (&'static str, Option<String>) {
    match ev {
        None => ("harness-error", Some("scenario did not finish".into())),
        Some(event::ScenarioFinished::StepPassed) => ("pass", None),
        Some(event::ScenarioFinished::StepSkipped) => (
            "harness-error",
            Some("a step was skipped (undefined step)".into()),
        ),
        Some(event::ScenarioFinished::BeforeHookFailed(info)) => {
            ("harness-error", Some(panic_text(info.as_ref())))
        }
        Some(event::ScenarioFinished::StepFailed(_, _, err)) => {
            let msg = match err {
                event::StepError::Panic(p) => panic_text(p.as_ref()),
                other => other.to_string(),
            };
            let verdict = if msg.starts_with("timeout:") {
                "timeout"
            } else if msg.starts_with("harness-error:") {
                "harness-error"
            } else {
                "fail"
            };
            (verdict, Some(msg))
        }
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "panic".into()
    }
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
