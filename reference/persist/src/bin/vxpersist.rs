//! `vxpersist`: the session-persist reference's command line (issue 17).
//!
//! - `vxpersist blob check [--json] [--header-member NAME] [--backend B --session-id ID] FILE…`
//!   (pinned in surface.md): one line per file, exit 0 all valid, 1 otherwise, 2 usage.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::json;
use vx_persist::blob::{valid_header_member, ReadOptions};
use vx_persist::check::check_file;
use vx_persist::limits::DEFAULT_HEADER_MEMBER;
use vx_persist::Layouts;

#[derive(Parser)]
#[command(
    name = "vxpersist",
    about = "ADR-089 session persist: packed session blobs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Packed session blobs.
    Blob {
        #[command(subcommand)]
        command: BlobCommand,
    },
}

#[derive(Subcommand)]
enum BlobCommand {
    /// Is this blob valid, and if not, which rule does it break?
    Check(CheckArgs),
}

#[derive(Args)]
struct CheckArgs {
    /// Print one JSON object per file: {"file","result","rule","reason"}.
    #[arg(long)]
    json: bool,
    /// The header member's name (a profile may rename it).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_HEADER_MEMBER)]
    header_member: String,
    /// The backend the header must name (with --session-id).
    #[arg(long, value_name = "B", requires = "session_id")]
    backend: Option<String>,
    /// The session id the header must name (with --backend).
    #[arg(long, value_name = "ID", requires = "backend")]
    session_id: Option<String>,
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
}

fn usage(message: &str) -> ExitCode {
    eprintln!("vxpersist: {message}");
    ExitCode::from(2)
}

fn run_check(args: &CheckArgs) -> ExitCode {
    if !valid_header_member(&args.header_member) {
        return usage("--header-member must be one path component of at most 100 bytes");
    }
    let mut opts = ReadOptions::new(Layouts::builtin()).header_member(&args.header_member);
    if let (Some(b), Some(id)) = (&args.backend, &args.session_id) {
        opts = opts.expecting(b, id);
    }
    let mut all_valid = true;
    for path in &args.files {
        let verdict = check_file(path, &opts);
        all_valid &= verdict.is_valid();
        let shown = path.display().to_string();
        if args.json {
            // Written field by field: the pinned line's key order is file, result, rule, reason.
            println!(
                "{{\"file\":{},\"result\":{},\"rule\":{},\"reason\":{}}}",
                json!(shown),
                json!(verdict.result),
                json!(verdict.rule),
                json!(verdict.reason)
            );
        } else {
            match (&verdict.rule, &verdict.reason) {
                (_, None) => println!("{shown}: valid"),
                (Some(rule), Some(reason)) => {
                    println!("{shown}: {} ({rule}): {reason}", verdict.result)
                }
                (None, Some(reason)) => println!("{shown}: {}: {reason}", verdict.result),
            }
        }
    }
    ExitCode::from(if all_valid { 0 } else { 1 })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match &cli.command {
        Command::Blob {
            command: BlobCommand::Check(args),
        } => run_check(args),
    }
}
