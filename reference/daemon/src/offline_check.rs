//! `vxref workspace check` and `vxref integration check`: offline verdicts on
//! workspace archives and integration templates, no daemon needed (surface.md
//! "Offline checkers"). The rules live in `vx-agentsession`; this only opens files,
//! bounds what it reads by the length before reading, and prints one line per file.
//! Exit 0 when every file is valid, 1 otherwise (usage errors exit 2 in clap).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, ArgMatches, Command};
use vx_agentsession::check::{InputKind, Verdict};

/// The `(group, kind)` pairs that take a `check` subcommand.
const CHECKERS: [(&str, InputKind, &str); 2] = [
    (
        "workspace",
        InputKind::WorkspaceArchive,
        "workspace archives (schema 1 and 2)",
    ),
    (
        "integration",
        InputKind::IntegrationTemplate,
        "integration templates (integrations/<id>.toml)",
    ),
];

fn check_command(what: &str) -> Command {
    Command::new("check")
        .about(format!("Check {what} offline; one verdict line per file"))
        .arg(
            Arg::new("files")
                .value_name("FILE")
                .required(true)
                .action(ArgAction::Append)
                .value_parser(clap::value_parser!(PathBuf)),
        )
}

/// Adds `check` to the `workspace` and `integration` groups, creating a group the
/// manifest did not already make.
pub fn install(mut root: Command) -> Command {
    for (group, _, what) in CHECKERS {
        if root.find_subcommand(group).is_some() {
            root = root.mut_subcommand(group, |g| g.subcommand(check_command(what)));
        } else {
            root = root.subcommand(
                Command::new(group)
                    .subcommand_required(true)
                    .subcommand(check_command(what)),
            );
        }
    }
    root
}

/// Runs a checker when `vxref <group> check` was asked; `None` otherwise.
pub fn dispatch(group: &str, sub: &ArgMatches, json: bool) -> Option<i32> {
    let (_, kind, _) = CHECKERS.iter().find(|(g, _, _)| *g == group)?;
    let ("check", args) = sub.subcommand()? else {
        return None;
    };
    let mut all_valid = true;
    for path in args.get_many::<PathBuf>("files").into_iter().flatten() {
        let verdict = check_file(path, *kind);
        all_valid &= verdict.is_valid();
        let shown = path.display().to_string();
        if json {
            println!("{}", verdict.json_line(&shown));
        } else {
            println!("{}", verdict.text_line(&shown));
        }
    }
    Some(if all_valid { 0 } else { 1 })
}

fn check_file(path: &Path, kind: InputKind) -> Verdict {
    let io = |e: std::io::Error| Verdict::file_io(&format!("{:?}", e.kind()));
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => return io(e),
    };
    let len = match file.metadata() {
        Ok(m) if m.is_file() => m.len(),
        Ok(_) => return Verdict::file_io("not a regular file"),
        Err(e) => return io(e),
    };
    // Decided on the length alone, before a byte is read.
    if let Some(refused) = kind.length_verdict(len) {
        return refused;
    }
    let mut bytes = Vec::with_capacity(len as usize);
    // A file that grew since fstat is still read only up to one byte past the limit.
    if let Err(e) = file.take(kind.read_limit()).read_to_end(&mut bytes) {
        return io(e);
    }
    match kind.length_verdict(bytes.len() as u64) {
        Some(refused) => refused,
        // The real verdict unless a negative control's defect is active.
        None => crate::negative_checker::verdict(kind, &bytes, kind.verdict(&bytes)),
    }
}
