//! `vxcert`: the conformance harness of the kit's contracts.
//!
//! Code map: `run` (the runner: contracts, preflight, reports) → each contract's
//! module (`recovery`: World, steps, fixtures) → `drivers` (wire, CLI, lifecycle,
//! probes, fault injector, clock, streams) and `verdict`. Lower layers never import
//! higher ones.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod agent_restore;
mod assets;
mod contract;
mod crash_explore_cmd;
mod drivers;
mod evidence;
mod init_cmd;
mod profile;
mod profile_explain;
mod recovery;
mod run;
mod session_persist;
mod single_writer;
#[cfg(test)]
mod step_check;
mod store_cmd;
mod try_cmd;
mod validate_cmd;
mod verdict;

#[derive(Parser, Debug)]
#[command(
    name = "vxcert",
    version,
    about = "Conformance kit for durable terminal-session recovery"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check checkpoint files against formats 1-3 and name the rule each one breaks.
    Validate(validate_cmd::ValidateArgs),
    /// Offline views of a checkpoint store directory.
    #[command(subcommand)]
    Store(StoreCommand),
    /// Run the acceptance suite against an implementation and write the reports.
    Run(run::RunArgs),
    /// Join shard reports (and reports of separate --contract runs) into one report.
    Merge(run::MergeArgs),
    /// What changed between two reports; exit 1 when a scenario regressed.
    Diff(run::DiffArgs),
    /// Write an expectations file (for `vxcert run --baseline`) from a report.
    Baseline(run::BaselineArgs),
    /// What a profile holds: every key, its meaning and its placeholders.
    Profile(ProfileArgs),
    /// Write a commented profile skeleton for the parts of a contract you implement.
    Init(init_cmd::InitArgs),
    /// Run each command a profile claims once on a valid input and show what it did.
    Try(try_cmd::TryArgs),
    /// Record one checkpoint publication and check every crash state it can leave.
    CrashExplore(crash_explore_cmd::CrashExploreArgs),
}

#[derive(clap::Args, Debug)]
struct ProfileArgs {
    /// Print every profile key with its meaning and placeholder list.
    #[arg(long, required = true)]
    explain: bool,
}

#[derive(Subcommand, Debug)]
enum StoreCommand {
    /// List a store directory's checkpoints with RFC §6 statuses, without a daemon.
    List(store_cmd::StoreListArgs),
}

/// The contracts, for `vxcert --help`: name, clause prefix, profile table, source.
fn contracts_help() -> String {
    let mut out = String::from("Contracts (vxcert run --contract NAME):\n");
    for c in contract::Contract::ALL {
        out += &format!(
            "  {} (clauses {}…, profile table [{}])\n      {}\n",
            c.name(),
            c.clause_prefix(),
            c.profile_table(),
            c.source()
        );
    }
    out + "\nProfile keys: vxcert profile --explain"
}

fn main() {
    drivers::start_state::trampoline_or_return();
    drivers::start_state::close_inherited_on_exec();
    let matches = Cli::command().after_help(contracts_help()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let code = match &cli.command {
        Command::Validate(args) => validate_cmd::run_validate(args),
        Command::Store(StoreCommand::List(args)) => store_cmd::run_store_list(args),
        Command::Run(args) => run::run_run(args),
        Command::Merge(args) => run::run_merge(args),
        Command::Diff(args) => run::run_diff(args),
        Command::Baseline(args) => run::run_baseline(args),
        Command::Profile(_) => {
            print!("{}", profile_explain::explain());
            0
        }
        Command::CrashExplore(args) => crash_explore_cmd::run(args),
        Command::Init(args) => init_cmd::run(args),
        Command::Try(args) => try_cmd::run(args),
    };
    std::process::exit(code);
}
