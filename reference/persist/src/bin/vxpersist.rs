//! `vxpersist`: the session-persist reference's command line (issue 17).
//!
//! - `vxpersist blob check [--json] [--header-member NAME] [--backend B --session-id ID] FILE…`
//!   (pinned in surface.md): one line per file, exit 0 all valid, 1 otherwise, 2 usage.
//! - `vxpersist pack|unpack|has-session --backend B --root DIR --session-id ID [FILE]`:
//!   pack writes the blob to FILE (stdout without one), unpack reads FILE (stdin
//!   without one), has-session prints `true` or `false`. Errors go to stderr as
//!   `code (rule): reason` and exit with the code's class (docs/spec/errors.md).
//! - `vxpersist store-suite --store fs:DIR|s3:URL/BUCKET [--json]`: the store
//!   conformance suite; exit 0 all pass, 1 a check failed, 2 the store could not be
//!   judged (usage, unreachable, denied, no bucket: a harness error, never a pass).
//! - `vxpersist store put|get|delete|delete-run --store STORE --run RUN [--ref REF] [FILE]`:
//!   one store operation (docs/spec/persist-store.md); get writes the blob to stdout.
//! - `vxpersist store serve --store STORE`: the store adapter, JSON lines on
//!   stdin/stdout (docs/spec/persist-store-adapter.md), for a kit that judges the store.
//! - `vxpersist drive --state DIR [--vxstub PATH]`: the runtime over JSON lines.
//!
//! `--layouts FILE` (any command) replaces persist/layouts.toml, as a profile may.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::json;
use std::io::{Read, Write};

use vx_persist::blob::{check_length, valid_header_member, ReadOptions};
use vx_persist::check::{check_file, read_blob_file};
use vx_persist::limits::{DEFAULT_HEADER_MEMBER, MAX_BLOB_BYTES};
use vx_persist::store_lines;
use vx_persist::store_spec::open_store;
use vx_persist::store_suite::run_suite;
use vx_persist::{ErrorCode, Layouts, PersistError, SessionPacker, StateRef};

#[derive(Parser)]
#[command(
    name = "vxpersist",
    about = "ADR-089 session persist: packed session blobs"
)]
struct Cli {
    /// A layouts document replacing persist/layouts.toml (a profile's override).
    #[arg(long, global = true, value_name = "FILE")]
    layouts: Option<PathBuf>,
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
    /// Pack a session from a backend's root into a blob.
    Pack(SessionArgs),
    /// Validate a blob whole, then unpack it into a backend's root.
    Unpack(SessionArgs),
    /// Whether the root holds exactly one key file of the session.
    HasSession(SessionArgs),
    /// Run the BackendSessionStore conformance suite on a store.
    StoreSuite(StoreSuiteArgs),
    /// The session-persist runtime over JSON lines (docs/spec/persist-drive.md).
    Drive(vx_persist::drive::DriveArgs),
    /// One operation on a BackendSessionStore, or the store adapter.
    Store {
        #[command(subcommand)]
        command: StoreCommand,
    },
}

#[derive(Subcommand)]
enum StoreCommand {
    /// Create-only put of FILE (stdin without one) under the ref.
    Put(StoreOpArgs),
    /// Write the blob under the ref to stdout.
    Get(StoreOpArgs),
    /// Delete the ref (idempotent).
    Delete(StoreOpArgs),
    /// Delete every blob of the run.
    DeleteRun(StoreOpArgs),
    /// Serve put/get/delete/delete_run requests as JSON lines on stdin/stdout.
    Serve(StoreServeArgs),
}

#[derive(Args)]
struct StoreServeArgs {
    /// `fs:DIR` or `s3:URL/BUCKET` (identity from VXPERSIST_S3_* variables).
    #[arg(long, value_name = "STORE")]
    store: String,
}

#[derive(Args)]
struct StoreOpArgs {
    /// `fs:DIR` or `s3:URL/BUCKET` (identity from VXPERSIST_S3_* variables).
    #[arg(long, value_name = "STORE")]
    store: String,
    #[arg(long, value_name = "RUN")]
    run: String,
    /// `<node>/<ulid>` or `<node>/pause/<ulid>` (not for delete-run).
    #[arg(long = "ref", value_name = "REF")]
    state_ref: Option<String>,
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
}

#[derive(Args)]
struct StoreSuiteArgs {
    /// `fs:DIR` or `s3:URL/BUCKET` (identity from VXPERSIST_S3_* variables).
    #[arg(long, value_name = "STORE")]
    store: String,
    /// Print one JSON object per check: {"check","verdict","reason"}.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct SessionArgs {
    #[arg(long, value_name = "B")]
    backend: String,
    #[arg(long, value_name = "DIR")]
    root: PathBuf,
    #[arg(long, value_name = "ID")]
    session_id: String,
    /// The header member's name (a profile may rename it).
    #[arg(long, value_name = "NAME", default_value = DEFAULT_HEADER_MEMBER)]
    header_member: String,
    /// The blob: written by pack, read by unpack (stdout/stdin without one).
    #[arg(value_name = "FILE")]
    file: Option<PathBuf>,
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

/// A failure traced to one command-line input: the library's typed error (whose
/// reason never carries bytes, ids or paths), the input it came from (the flag, and
/// the path when the user gave one; never a session id, which names a session), and
/// what to do. Printed as `vxpersist: INPUT: CODE (RULE): REASON; FIX`, exit by class.
struct InputError {
    error: PersistError,
    input: String,
    fix: String,
}

impl InputError {
    fn new(error: PersistError, input: impl Into<String>, fix: impl Into<String>) -> Self {
        InputError {
            error,
            input: input.into(),
            fix: fix.into(),
        }
    }

    fn report(&self) -> ExitCode {
        eprintln!("vxpersist: {}: {}; {}", self.input, self.error, self.fix);
        ExitCode::from(u8::try_from(self.error.code.exit_code()).unwrap_or(1))
    }
}

/// `--backend` names no backend of the layouts, or one without the persist
/// capability: the fix lists those that have it.
fn backend_error(layouts: &Layouts, error: PersistError) -> InputError {
    let capable: Vec<&str> = layouts
        .backend_names()
        .filter(|n| layouts.lookup(n).is_some_and(|b| b.capability))
        .collect();
    InputError::new(
        error,
        "--backend",
        format!(
            "give a backend with the persist capability: {} (the layouts document, \
             persist/layouts.toml or --layouts, lists them)",
            capable.join(", ")
        ),
    )
}

/// A blob file the user named that could not be read or written.
fn file_error(error: PersistError, path: &std::path::Path, writing: bool) -> InputError {
    let fix = if writing {
        "give a new file's path in a directory you can write (a symbolic link is refused)"
    } else if error.code == ErrorCode::PersistIo {
        "give an existing regular file you can read (a symbolic link is refused)"
    } else {
        "the blob is not valid: `vxpersist blob check FILE` names the rule it breaks"
    };
    InputError::new(error, format!("FILE {}", path.display()), fix)
}

/// What a pack, unpack or has-session error says about the inputs.
fn session_error(error: PersistError, args: &SessionArgs) -> InputError {
    let root = format!("--root {}", args.root.display());
    match error.code {
        ErrorCode::InvalidSessionId => InputError::new(
            error,
            "--session-id",
            "give the session id as the backend writes it",
        ),
        ErrorCode::SessionNotFound | ErrorCode::SessionAmbiguous => InputError::new(
            error,
            format!("{root} with --session-id"),
            "check the session id, and that --root is the backend's session directory \
             (`vxpersist has-session` answers true for exactly one key file)",
        ),
        ErrorCode::PersistIo | ErrorCode::SessionUnsafe => InputError::new(
            error,
            root,
            "--root must be an existing directory you own, and its session files \
             plain regular files with one link",
        ),
        _ => {
            let input = match &args.file {
                Some(path) => format!("FILE {}", path.display()),
                None => "the blob on stdin".to_string(),
            };
            InputError::new(
                error,
                input,
                "`vxpersist blob check` names the rule a blob breaks; \
                 docs/spec/persist-blob.md has the rules",
            )
        }
    }
}

/// A `--store` that cannot be opened. Only an `fs:` store's directory is shown: an
/// S3 location is named by its flag alone.
fn store_error(error: PersistError, spec: &str) -> InputError {
    let input = match spec.strip_prefix("fs:") {
        Some(dir) => format!("--store fs:{dir}"),
        None => "--store".to_string(),
    };
    InputError::new(
        error,
        input,
        "give fs:DIR (an existing private directory) or s3:URL/BUCKET with the \
         VXPERSIST_S3_* variables set (docs/spec/persist-store.md)",
    )
}

fn run_check(layouts: &Layouts, args: &CheckArgs) -> ExitCode {
    if !valid_header_member(&args.header_member) {
        return usage("--header-member must be one path component of at most 100 bytes");
    }
    let mut opts = ReadOptions::new(layouts).header_member(&args.header_member);
    if let (Some(b), Some(id)) = (&args.backend, &args.session_id) {
        // No blob names a backend that cannot pack: either way a usage error, before
        // any file is judged.
        if let Err(e) = layouts.capable(b) {
            let e = PersistError::new(ErrorCode::InvalidBackend, e.reason);
            return backend_error(layouts, e).report();
        }
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

fn run_session(
    layouts: &Layouts,
    command: &Command,
    args: &SessionArgs,
) -> Result<ExitCode, InputError> {
    let packer = SessionPacker::new(layouts, &args.backend, &args.root)
        .map_err(|e| backend_error(layouts, e))?
        .with_header_member(&args.header_member)
        .map_err(|e| {
            InputError::new(
                e,
                "--header-member",
                "give one path component of at most 100 bytes",
            )
        })?;
    let session = |e| session_error(e, args);
    match command {
        Command::Pack(_) => {
            let blob = packer.pack(&args.session_id).map_err(session)?;
            match &args.file {
                Some(path) => write_new_file(path, &blob).map_err(|e| file_error(e, path, true))?,
                None => std::io::stdout().write_all(&blob).map_err(|_| {
                    let e = PersistError::new(ErrorCode::PersistIo, "write of the blob to stdout");
                    InputError::new(e, "stdout", "give FILE to write the blob to a file")
                })?,
            }
        }
        Command::Unpack(_) => {
            let blob = match &args.file {
                Some(path) => read_blob_file(path).map_err(|e| file_error(e, path, false))?,
                None => read_stdin().map_err(session)?,
            };
            packer.unpack(&args.session_id, &blob).map_err(session)?;
        }
        Command::HasSession(_) => println!("{}", packer.has_session(&args.session_id)),
        Command::Blob { .. }
        | Command::StoreSuite(_)
        | Command::Store { .. }
        | Command::Drive(_) => {
            unreachable!("dispatched in main")
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The blob file is created 0600 (replacing an existing one, never through a
/// symlink) and synced.
fn write_new_file(path: &std::path::Path, blob: &[u8]) -> Result<(), PersistError> {
    use std::os::unix::fs::OpenOptionsExt;
    let io = |_| PersistError::new(ErrorCode::PersistIo, "write of the blob file");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(io)?;
    f.write_all(blob).map_err(io)?;
    f.sync_all().map_err(io)
}

fn read_stdin() -> Result<Vec<u8>, PersistError> {
    let mut buf = Vec::new();
    std::io::stdin()
        .take(MAX_BLOB_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|_| PersistError::new(ErrorCode::PersistIo, "read of the blob from stdin"))?;
    check_length(buf.len() as u64)?;
    Ok(buf)
}

fn run_store_suite(args: &StoreSuiteArgs) -> ExitCode {
    // Anything that keeps the suite from judging the store is exit 2 (harness error).
    let store = match open_store(&args.store) {
        Ok(s) => s,
        Err(e) => {
            let e = store_error(e, &args.store);
            eprintln!(
                "vxpersist: the store cannot be judged: {}: {}; {}",
                e.input, e.error, e.fix
            );
            return ExitCode::from(2);
        }
    };
    let prefix = format!("suite-{}-{}", std::process::id(), unix_millis());
    let (mut all, mut harness) = (true, false);
    for outcome in run_suite(store.as_ref(), &prefix) {
        all &= outcome.failure.is_none();
        harness |= outcome.harness_error;
        let verdict = match (&outcome.failure, outcome.harness_error) {
            (None, _) => "pass",
            (Some(_), false) => "fail",
            (Some(_), true) => "harness-error",
        };
        if args.json {
            println!(
                "{{\"check\":{},\"verdict\":{},\"reason\":{}}}",
                json!(outcome.name),
                json!(verdict),
                json!(outcome.failure)
            );
        } else {
            println!(
                "{verdict}: {}{}",
                outcome.name,
                outcome
                    .failure
                    .map(|f| format!(" ({f})"))
                    .unwrap_or_default()
            );
        }
    }
    ExitCode::from(match (harness, all) {
        (true, _) => 2,
        (false, true) => 0,
        (false, false) => 1,
    })
}

/// Run ids of two suites on one bucket never meet, even across PID reuse.
fn unix_millis() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn run_store_op(command: &StoreCommand) -> Result<ExitCode, InputError> {
    let (StoreCommand::Put(args)
    | StoreCommand::Get(args)
    | StoreCommand::Delete(args)
    | StoreCommand::DeleteRun(args)) = command
    else {
        unreachable!("serve is dispatched in main")
    };
    let store = open_store(&args.store).map_err(|e| store_error(e, &args.store))?;
    let state_ref = || match &args.state_ref {
        Some(text) => StateRef::parse(text),
        None => Err(PersistError::new(
            ErrorCode::InvalidRef,
            "--ref is required",
        )),
    };
    // A store operation's error names the flag it came from, else the store.
    let op = |e: PersistError| {
        let (input, fix) = match e.code {
            ErrorCode::InvalidRun => ("--run", "give the run's id"),
            ErrorCode::InvalidRef => ("--ref", "give the ref as the store listed it"),
            ErrorCode::Exists => ("--ref", "a put never replaces a blob: delete the ref first"),
            ErrorCode::BlobNotFound => ("--ref", "the store has no blob under this ref"),
            _ => return store_error(e, &args.store),
        };
        InputError::new(e, input, fix)
    };
    match command {
        StoreCommand::Put(_) => {
            let blob = match &args.file {
                Some(path) => read_blob_file(path).map_err(|e| file_error(e, path, false))?,
                None => read_stdin().map_err(|e| {
                    InputError::new(
                        e,
                        "the blob on stdin",
                        "give FILE, or pipe one whole blob to stdin",
                    )
                })?,
            };
            store
                .put(&args.run, &state_ref().map_err(op)?, &blob)
                .map_err(op)?;
        }
        StoreCommand::Get(_) => {
            let blob = store
                .get(&args.run, &state_ref().map_err(op)?)
                .map_err(op)?;
            std::io::stdout().write_all(&blob).map_err(|_| {
                let e = PersistError::new(ErrorCode::PersistIo, "write of the blob to stdout");
                InputError::new(
                    e,
                    "stdout",
                    "redirect stdout to a file or a pipe that reads it",
                )
            })?;
        }
        StoreCommand::Delete(_) => store
            .delete(&args.run, &state_ref().map_err(op)?)
            .map_err(op)?,
        StoreCommand::DeleteRun(_) => store.delete_run(&args.run).map_err(op)?,
        StoreCommand::Serve(_) => unreachable!("serve is dispatched in main"),
    }
    Ok(ExitCode::SUCCESS)
}

fn serve_store(args: &StoreServeArgs) -> ExitCode {
    let store = match open_store(&args.store) {
        Ok(s) => s,
        Err(e) => return store_error(e, &args.store).report(),
    };
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    match store_lines::serve(store.as_ref(), &mut stdin.lock(), &mut stdout.lock()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

/// The builtin layouts, or the document `--layouts` names (an invalid one is a usage
/// error: nothing runs against a whitelist that did not parse).
fn load_layouts(path: Option<&std::path::Path>) -> Result<Layouts, InputError> {
    match path {
        None => Ok(Layouts::builtin().clone()),
        Some(p) => {
            let input = format!("--layouts {}", p.display());
            let text = std::fs::read_to_string(p).map_err(|e| {
                let reason = match e.kind() {
                    std::io::ErrorKind::NotFound => "layouts file does not exist",
                    std::io::ErrorKind::PermissionDenied => "layouts file is not readable",
                    _ => "layouts file cannot be read as UTF-8 text",
                };
                let e = PersistError::new(ErrorCode::InvalidLayouts, reason);
                InputError::new(e, input.clone(), "give a readable layouts document")
            })?;
            Layouts::parse(&text).map_err(|e| {
                InputError::new(
                    e,
                    input,
                    "fix the document: persist/layouts.toml is the format, \
                     docs/spec/persist-blob.md its rules",
                )
            })
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let layouts = match load_layouts(cli.layouts.as_deref()) {
        Ok(l) => l,
        Err(e) => return e.report(),
    };
    let layouts = &layouts;
    match &cli.command {
        Command::Blob {
            command: BlobCommand::Check(args),
        } => run_check(layouts, args),
        Command::StoreSuite(args) => run_store_suite(args),
        Command::Drive(args) => ExitCode::from(vx_persist::drive::main(args)),
        Command::Store {
            command: StoreCommand::Serve(args),
        } => serve_store(args),
        Command::Store { command } => run_store_op(command).unwrap_or_else(|e| e.report()),
        Command::Pack(args) | Command::Unpack(args) | Command::HasSession(args) => {
            run_session(layouts, &cli.command, args).unwrap_or_else(|e| e.report())
        }
    }
}
