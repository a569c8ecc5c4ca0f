//! The `vxref` command line, built from the manifest: each verb `a.b` is the
//! subcommand path `vxref a b`, each param a `--kebab-case` flag. `--json` prints
//! the `ok` object (or `{"error":…}`) on stdout as one line; without it the result is
//! pretty-printed and errors go to stderr. The exit code comes from the error table.
//! `pane.attach` is the one streaming verb with a subcommand: `vxref pane attach`
//! holds the stream in the terminal (`attach::interactive`).

use crate::attach::interactive;
use crate::errors::{exit_code_for, ErrorCode, EXIT_OK};
use crate::manifest::{flag_name, CliForm, ParamKind, Verb, VERBS};
use crate::{client, docs_gen, paths, server};
use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The whole CLI as a clap command (also the source of shell completions).
pub fn command() -> Command {
    let mut root = Command::new("vxref")
        .about("Reference daemon of the venomx recovery conformance kit, and its client")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg(
            Arg::new("socket")
                .long("socket")
                .global(true)
                .value_name("PATH")
                .value_parser(clap::value_parser!(PathBuf))
                .help("daemon socket (default: $VENOMX_SOCKET, then $XDG_RUNTIME_DIR/venomx/default.sock)"),
        )
        .arg(
            Arg::new("json")
                .long("json")
                .global(true)
                .action(ArgAction::SetTrue)
                .help("print the ok object, or {\"error\":…}, as one JSON line"),
        )
        .subcommand(
            Command::new("serve")
                .about("Run the daemon in the foreground until SIGINT/SIGTERM")
                .arg(
                    Arg::new("on-demand")
                        .long("on-demand")
                        .action(ArgAction::SetTrue)
                        .help("stop 5000 ms after the last session ends"),
                )
                .arg(
                    Arg::new("legacy-spawn")
                        .long("legacy-spawn")
                        .action(ArgAction::SetTrue)
                        .help("play an older server: ignore agent_session on spawns, let clients write session.created/v1/*"),
                ),
        )
        .subcommand(
            Command::new("manifest")
                .about("Print the verb manifest (JSON), or the docs generated from it")
                .arg(Arg::new("markdown").long("markdown").action(ArgAction::SetTrue).help("verbs as Markdown"))
                .arg(Arg::new("errors").long("errors").action(ArgAction::SetTrue).help("error table as Markdown"))
                .arg(Arg::new("events").long("events").action(ArgAction::SetTrue).help("event catalog as Markdown"))
                .arg(Arg::new("skill").long("skill").action(ArgAction::SetTrue).help("the agent skill as Markdown (docs/agent-skill.md)")),
        )
        .subcommand(
            Command::new("mcp")
                .about("Serve the verbs as Model Context Protocol tools on stdio (for agents)")
                .long_about(
                    "Serve the daemon's verbs as Model Context Protocol tools over standard \
                     input and output, until the client closes them. Every verb but the \
                     streaming ones (pane.attach, events.subscribe) is a tool of the same \
                     dotted name, with an input schema from its params and an output schema \
                     from its result. Each call is one connection to the daemon at --socket \
                     (or $VENOMX_SOCKET, or the default path), logged in with $VENOMX_TOKEN \
                     as the CLI does; a daemon error is a tool error carrying the error \
                     object {code,message,data}.",
                ),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_parser(clap::value_parser!(clap_complete::Shell)),
                ),
        );
    // A CLI call is one request and one reply; of the streaming verbs only
    // `pane.attach` has a subcommand (the terminal attach), the others are wire-only.
    let cli_verbs = || VERBS.iter().filter(|v| v.cli_form() != CliForm::WireOnly);
    let mut groups: Vec<&str> = cli_verbs().filter_map(|v| v.words().next()).collect();
    groups.dedup();
    for group in groups {
        // A one-word verb (`doctor`) is a subcommand of its own.
        if let Some(verb) = cli_verbs().find(|v| v.name == group) {
            root = root.subcommand(subcommand(verb, group));
            continue;
        }
        let mut g = Command::new(group).subcommand_required(true);
        for verb in cli_verbs().filter(|v| v.words().next() == Some(group)) {
            let rest: Vec<&str> = verb.words().skip(1).collect();
            g = g.subcommand(subcommand(verb, &rest.join("-")));
        }
        root = root.subcommand(g);
    }
    let mut root = crate::workspace::install(crate::offline_check::install(root));
    let bare: Vec<String> = root
        .get_subcommands()
        .filter(|c| c.get_about().is_none())
        .map(|c| c.get_name().to_string())
        .collect();
    for noun in bare {
        if let Some(about) = crate::manifest::nouns::about(&noun) {
            root = root.mut_subcommand(noun, |g| g.about(about));
        }
    }
    root
}

fn subcommand(verb: &'static Verb, name: &str) -> Command {
    match verb.cli_form() {
        CliForm::Terminal => interactive::command(verb, name),
        CliForm::Call | CliForm::WireOnly => verb_command(verb, name),
    }
}

fn verb_command(verb: &'static Verb, name: &str) -> Command {
    let errors = docs_gen::verb_error_lines(verb)
        .into_iter()
        .map(|l| format!("  {}", l.replace('`', "")))
        .collect::<Vec<_>>()
        .join("\n");
    let any = docs_gen::any_verb_codes().replace('`', "");
    let mut c = Command::new(name.to_string())
        .about(verb.summary)
        .after_long_help(format!(
            "Errors (the exit code is the class's; any verb can also return {any}):\n{errors}"
        ));
    for p in verb.params {
        let mut arg = Arg::new(p.name)
            .long(flag_name(p.name))
            .help(p.help)
            .required(p.required)
            .value_name(p.kind.name().to_uppercase());
        arg = match p.kind {
            ParamKind::Integer => arg
                .value_parser(clap::value_parser!(i64))
                .allow_negative_numbers(true),
            ParamKind::Boolean => arg
                .value_parser(clap::value_parser!(bool))
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("true"),
            ParamKind::String | ParamKind::Json => arg.allow_hyphen_values(true),
        };
        c = c.arg(arg);
    }
    c
}

/// Entry point; returns the exit code.
pub fn main() -> i32 {
    let matches = match command().try_get_matches() {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let json = matches.get_flag("json");
    let socket_flag = matches.get_one::<PathBuf>("socket").cloned();
    let (name, sub) = matches.subcommand().expect("subcommand_required");
    match name {
        "serve" => {
            let Ok(socket) = paths::select_socket(socket_flag.as_deref()) else {
                eprintln!(
                    "vxref serve: no socket path: give --socket, VENOMX_SOCKET or XDG_RUNTIME_DIR"
                );
                return 2;
            };
            server::serve(server::ServeOptions {
                socket,
                on_demand: sub.get_flag("on-demand"),
                legacy_spawn: sub.get_flag("legacy-spawn"),
            })
        }
        "manifest" => {
            if sub.get_flag("markdown") {
                print!("{}", docs_gen::verbs_markdown());
            } else if sub.get_flag("errors") {
                print!("{}", docs_gen::errors_markdown());
            } else if sub.get_flag("events") {
                print!("{}", docs_gen::events_markdown());
            } else if sub.get_flag("skill") {
                print!("{}", crate::skill::skill_markdown());
            } else {
                println!("{}", crate::manifest::manifest_json());
            }
            EXIT_OK
        }
        "mcp" => crate::mcp::serve(socket_flag.as_deref()),
        "completions" => {
            let shell = *sub
                .get_one::<clap_complete::Shell>("shell")
                .expect("required");
            clap_complete::generate(shell, &mut command(), "vxref", &mut std::io::stdout());
            EXIT_OK
        }
        group => {
            if let Some(code) = crate::offline_check::dispatch(group, sub, json) {
                return code;
            }
            if let Some(code) = crate::workspace::dispatch(group, sub, socket_flag.as_deref(), json)
            {
                return code;
            }
            if let Some(verb) = crate::manifest::find(group) {
                return run_verb(verb, sub, socket_flag, json);
            }
            let (verb_name, args) = sub.subcommand().expect("subcommand_required");
            let dotted = format!("{group}.{}", verb_name.replace('-', "."));
            let verb = crate::manifest::find(&dotted).expect("generated from the manifest");
            match verb.cli_form() {
                CliForm::Terminal => run_terminal(args, socket_flag.as_deref(), json),
                CliForm::Call | CliForm::WireOnly => run_verb(verb, args, socket_flag, json),
            }
        }
    }
}

fn run_verb(verb: &Verb, args: &ArgMatches, socket_flag: Option<PathBuf>, json: bool) -> i32 {
    let chosen = paths::select_socket(socket_flag.as_deref()).ok();
    let result = (|| {
        let params = client::params_from(verb, args).map_err(|e| e.to_json())?;
        let (socket, token) = client::target(socket_flag.as_deref()).map_err(|e| e.to_json())?;
        client::call(&socket, token.as_deref(), verb.name, params)
    })();
    match result {
        Ok(ok) => {
            if json {
                println!("{ok}");
            } else {
                println!("{}", serde_json::to_string_pretty(&ok).unwrap_or_default());
            }
            EXIT_OK
        }
        Err(error) => {
            let hint = chosen.and_then(|socket| local_hint(&error, &socket));
            report_error(&error, json, hint.as_deref())
        }
    }
}

/// For the two errors the CLI makes itself about its socket, the path it used and
/// what to do (printed after the message; `--json` keeps the wire's error object).
fn local_hint(error: &Value, socket: &Path) -> Option<String> {
    match error.get("code").and_then(Value::as_str)? {
        "unavailable.daemon" => Some(format!(
            "{}: start one with `vxref serve --socket {0}`, or name a running daemon's \
             socket with --socket or VENOMX_SOCKET",
            socket.display()
        )),
        "unavailable.owner_token" => Some(format!(
            "{}: VENOMX_TOKEN=@owner reads the token the daemon wrote beside its socket; \
             run as the daemon's user, or set VENOMX_TOKEN to a token",
            paths::owner_path(socket).display()
        )),
        _ => None,
    }
}

/// `vxref pane attach`: how it ended goes to stderr as one line (`--json` changes
/// only how an error is printed).
fn run_terminal(args: &ArgMatches, socket_flag: Option<&Path>, json: bool) -> i32 {
    let pane = args.get_one::<String>("pane").expect("required");
    match interactive::run(socket_flag, pane) {
        Ok(ended) => {
            eprintln!("vxref: {}", ended.reason);
            ended.code
        }
        Err(error) => report_error(&error, json, None),
    }
}

/// Prints a wire error object as the CLI does (`{"error":…}` on stdout with
/// `--json`, `vxref: <code>: <message>[ (<hint>)]` on stderr without) and returns its exit
/// code.
fn report_error(error: &Value, json: bool, hint: Option<&str>) -> i32 {
    let code = error
        .get("code")
        .and_then(Value::as_str)
        .map_or_else(|| ErrorCode::Internal.to_string(), str::to_string);
    if json {
        println!("{}", serde_json::json!({"error": error}));
    } else {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        match hint {
            Some(hint) => eprintln!("vxref: {code}: {message} ({hint})"),
            None => eprintln!("vxref: {code}: {message}"),
        }
    }
    exit_code_for(&code)
}
