//! `vxref workspace save` and `vxref workspace restore`: the client side of
//! ADR-0068 §5–§6, as the peer orchestrates it, over ordinary verbs. Save archives
//! each pane's record read from that exact pane and checks the pane set did not
//! change meanwhile; restore validates the archive, plans every native session
//! against the current integrations and probes the reserved namespace before it
//! creates anything, and never runs an archived `command` or enters an archived
//! `cwd` (panes without a record get `--fallback-argv`). Archive bytes are read and
//! written only by vx-agentsession.

mod launch;
mod layout;
mod restore;
mod save;

use crate::errors::{exit_code_for, ApiError, ErrorCode, EXIT_OK};
use clap::{Arg, ArgMatches, Command};
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// The workspace client's limits, in one table.
pub mod limits {
    /// Reads of the pane set before save gives up on a changing topology.
    pub const SAVE_ATTEMPTS: usize = 3;
}

/// Adds `save` and `restore` to the `workspace` group.
pub fn install(root: Command) -> Command {
    root.mut_subcommand("workspace", |g| {
        g.subcommand(
            Command::new("save")
                .about("Archive the daemon's sessions with each pane's agent-session record")
                .arg(
                    Arg::new("output")
                        .long("output")
                        .value_name("FILE")
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("publish atomically here (default: print the archive)"),
                )
                .after_long_help(crate::docs_gen::command_errors_help(
                    &[
                        ErrorCode::Daemon,
                        ErrorCode::FileIo,
                        ErrorCode::ArchiveCorrupt,
                        ErrorCode::Revision,
                    ],
                    "session.list, pane.list and meta.get",
                )),
        )
        .subcommand(
            Command::new("restore")
                .about("Recreate missing sessions of an archive from the current templates")
                .arg(
                    Arg::new("archive")
                        .long("archive")
                        .required(true)
                        .value_name("FILE")
                        .value_parser(clap::value_parser!(PathBuf))
                        .help("the workspace archive (schema 1 or 2) to restore from"),
                )
                .arg(
                    Arg::new("fallback-argv")
                        .long("fallback-argv")
                        .value_name("JSON")
                        .allow_hyphen_values(true)
                        .help("JSON array: the program of every pane without a record"),
                )
                .after_long_help(crate::docs_gen::command_errors_help(
                    &[
                        ErrorCode::Daemon,
                        ErrorCode::FileIo,
                        ErrorCode::Param("fallback_argv"),
                        ErrorCode::ArchiveCorrupt,
                        ErrorCode::ArchiveSchema,
                        ErrorCode::IntegrationNotFound,
                        ErrorCode::IntegrationDisabled,
                        ErrorCode::IntegrationAmbiguous,
                        ErrorCode::IntegrationOwner,
                        ErrorCode::NativeRestore,
                        ErrorCode::AgentSessionUnconfirmed,
                    ],
                    "session.create, window.create, pane.create, pane.split and meta.*",
                )),
        )
    })
}

/// The daemon as the workspace clients reach it: a connection per call (save,
/// launch), or, for restore, one connection opened (and logged in) on the first
/// call and kept for every later one, because restore reads each one-shot creation
/// result on the connection whose `session.create` left it.
pub(crate) struct Client {
    socket: PathBuf,
    token: Option<String>,
    persistent: bool,
    conn: RefCell<Option<crate::client::Connection>>,
}

impl Client {
    pub(crate) fn call(&self, verb: &str, params: Value) -> Result<Value, Value> {
        let params: Map<String, Value> = match params {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        if !self.persistent {
            return crate::client::call(&self.socket, self.token.as_deref(), verb, params);
        }
        let mut conn = self.conn.borrow_mut();
        if conn.is_none() {
            *conn = Some(crate::client::Connection::open(
                &self.socket,
                self.token.as_deref(),
            )?);
        }
        conn.as_mut().expect("opened above").call(verb, params)
    }
}

fn connect(socket_flag: Option<&Path>, persistent: bool) -> Result<Client, Value> {
    let socket = crate::paths::select_socket(socket_flag).map_err(|_| {
        ApiError::new(
            ErrorCode::Daemon,
            "no socket path: give --socket, VENOMX_SOCKET or XDG_RUNTIME_DIR",
        )
        .to_json()
    })?;
    let token = crate::client::token_from_env(&socket).map_err(|e| e.to_json())?;
    Ok(Client {
        socket,
        token,
        persistent,
        conn: RefCell::new(None),
    })
}

/// Runs `workspace save|restore` and the orchestrated `agent launch`; `None` for
/// other subcommands.
pub fn dispatch(group: &str, sub: &ArgMatches, socket: Option<&Path>, json: bool) -> Option<i32> {
    if group == "agent" {
        let ("launch", args) = sub.subcommand()? else {
            return None;
        };
        let verb = crate::manifest::VerbId::AgentLaunch.verb();
        let result = crate::client::params_from(verb, args)
            .map_err(|e| e.to_json())
            .and_then(|params| {
                connect(socket, false).and_then(|c| launch::run(&c, Value::Object(params)))
            });
        return Some(report(result, json));
    }
    if group != "workspace" {
        return None;
    }
    let result = match sub.subcommand()? {
        ("save", args) => connect(socket, false)
            .and_then(|c| save::run(&c, args.get_one::<PathBuf>("output").map(PathBuf::as_path))),
        ("restore", args) => connect(socket, true).and_then(|c| {
            let archive = args.get_one::<PathBuf>("archive").expect("required");
            restore::run(&c, archive, args.get_one::<String>("fallback-argv"))
        }),
        _ => return None,
    };
    Some(report(result, json))
}

fn report(result: Result<Value, Value>, json: bool) -> i32 {
    match result {
        Ok(Value::String(archive)) => {
            // `save` without --output: the archive itself.
            print!("{archive}");
            EXIT_OK
        }
        Ok(ok) => {
            println!("{ok}");
            EXIT_OK
        }
        Err(error) => {
            let code = error["code"]
                .as_str()
                .unwrap_or("internal.error")
                .to_string();
            // Success prints JSON, so failure does too (one line, as `--json` would).
            println!("{}", serde_json::json!({ "error": error }));
            if !json {
                eprintln!("vxref: {code}: {}", error["message"].as_str().unwrap_or(""));
            }
            exit_code_for(&code)
        }
    }
}

/// An archive refusal as a wire error: code, rule and field path, never content.
pub(crate) fn archive_error(e: &vx_agentsession::archive::ArchiveError) -> Value {
    let code = ErrorCode::parse(e.code()).unwrap_or(ErrorCode::ArchiveCorrupt);
    ApiError::code(code)
        .with("rule", e.rule.id())
        .with("field", vx_agentsession::rules::path_string(&e.path))
        .to_json()
}
