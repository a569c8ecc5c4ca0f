//! `vxbroker`'s command line: the pinned offline checkers (surface.md "Offline
//! checkers") and the master. Checkers print one line per input and exit 0 when all
//! are valid, 1 otherwise, 2 on usage errors.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Map, Value};

use crate::error::{BrokerError, Param};
use crate::files;
use crate::key::{parse_key, EngineSpec, EngineTable, IdKind, Pin};
use crate::resume::{check_ring, parse_counter, plan, Plan};

#[derive(Parser, Debug)]
#[command(
    name = "vxbroker",
    about = "Reference broker of the single-writer contract"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Session keys.
    Key {
        #[command(subcommand)]
        verb: KeyVerb,
    },
    /// The delta-resume decision for one reconnect.
    ResumePlan(ResumePlanArgs),
    /// Alias sidecars and owner files.
    Sidecar {
        #[command(subcommand)]
        verb: SidecarVerb,
    },
    /// A session master (dtach-like): owns the PTY, ring and total; multiplexes viewers.
    Master(crate::master::MasterArgs),
    /// The broker: HTTP + WebSocket routes over masters.
    #[cfg(feature = "server")]
    Serve(crate::serve::ServeArgs),
    /// The kit's viewer: streams one session, reconnecting by itself (never forcing).
    #[cfg(feature = "server")]
    Client(crate::client_command::ClientArgs),
}

#[derive(Subcommand, Debug)]
pub enum KeyVerb {
    /// Checks keys `{engine}:{native_id}`; valid ones get their physical name.
    Check(KeyCheckArgs),
}

#[derive(Args, Debug)]
pub struct KeyCheckArgs {
    #[arg(long)]
    pub json: bool,
    /// Check as a `new=1` launch, where a placeholder `new-<uuid>` is allowed.
    #[arg(long)]
    pub new: bool,
    /// `NAME=uuid|ses[:flag|none]`, repeatable; replaces the default engines
    /// (claude=uuid:flag, gemini=uuid:flag, opencode=ses:none).
    #[arg(
        long = "engine",
        value_name = "NAME=ID[:PIN]",
        conflicts_with = "engines_file"
    )]
    pub engines: Vec<String>,
    /// An engines file (`E.toml`) instead of `--engine`.
    #[arg(long = "engines", value_name = "E.toml")]
    pub engines_file: Option<PathBuf>,
    #[arg(required = true)]
    pub keys: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ResumePlanArgs {
    // Values are taken as text (hyphens too) so the counter grammar, not clap,
    // answers `-1` and `1.5` with `invalid_params.<param>`.
    /// Bytes the viewer has consumed; omit for absent.
    #[arg(long, allow_hyphen_values = true)]
    pub have: Option<String>,
    /// Generation the viewer saw; omit for absent.
    #[arg(long, allow_hyphen_values = true)]
    pub gen: Option<String>,
    #[arg(long, allow_hyphen_values = true)]
    pub total: String,
    #[arg(long = "ring-len", allow_hyphen_values = true)]
    pub ring_len: String,
    #[arg(long = "master-gen", allow_hyphen_values = true)]
    pub master_gen: String,
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand, Debug)]
pub enum SidecarVerb {
    /// Checks `aliases.json` and `<physical>.owner` files.
    Check(SidecarCheckArgs),
}

#[derive(Args, Debug)]
pub struct SidecarCheckArgs {
    #[arg(long)]
    pub json: bool,
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Runs the command line; returns the exit code.
pub fn run<I: IntoIterator<Item = OsString>>(args: I, out: &mut dyn Write) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Key {
            verb: KeyVerb::Check(a),
        } => key_check(&a, out),
        Command::ResumePlan(a) => resume_plan(&a, out),
        Command::Sidecar {
            verb: SidecarVerb::Check(a),
        } => sidecar_check(&a, out),
        Command::Master(a) => crate::master::run(&a),
        #[cfg(feature = "server")]
        Command::Serve(a) => crate::serve::run(&a),
        #[cfg(feature = "server")]
        Command::Client(a) => crate::client_command::run(&a),
    }
}

fn engine_table(specs: &[String]) -> Option<EngineTable> {
    if specs.is_empty() {
        return Some(EngineTable::seed());
    }
    let mut table = EngineTable::new();
    for spec in specs {
        let (name, rest) = spec.split_once('=')?;
        let (id, pin) = rest.split_once(':').unwrap_or((rest, ""));
        let id = match id {
            "uuid" => IdKind::Uuid,
            "ses" => IdKind::Ses,
            _ => return None,
        };
        let pin = match (pin, id) {
            ("flag", _) | ("", IdKind::Uuid) => Pin::Flag,
            ("none", _) | ("", IdKind::Ses) => Pin::None,
            _ => return None,
        };
        if !table.insert(name, EngineSpec { id, pin }) {
            return None;
        }
    }
    Some(table)
}

/// One checker line: `{"<subject>":…,"result","rule","reason"}` plus extras.
fn verdict(
    subject: (&str, Value),
    outcome: std::result::Result<Map<String, Value>, BrokerError>,
) -> (Value, bool) {
    let mut line = Map::new();
    line.insert(subject.0.into(), subject.1);
    let ok = outcome.is_ok();
    match outcome {
        Ok(extra) => {
            line.insert("result".into(), "valid".into());
            line.insert("rule".into(), Value::Null);
            line.insert("reason".into(), Value::Null);
            line.extend(extra);
        }
        Err(e) => {
            line.insert("result".into(), e.code.as_str().into());
            let rule = if crate::variant::on() {
                Value::Null
            } else {
                e.rule.id().into()
            };
            line.insert("rule".into(), rule);
            line.insert("reason".into(), e.reason().into());
        }
    }
    (Value::Object(line), ok)
}

fn print_line(out: &mut dyn Write, json_mode: bool, line: &Value, subject: &str) {
    if json_mode {
        let _ = writeln!(out, "{line}");
        return;
    }
    let name = line[subject].as_str().unwrap_or_default();
    match line["rule"].as_str() {
        None => match line.get("physical_key").and_then(Value::as_str) {
            Some(p) => writeln!(out, "{name}: valid ({p})"),
            None => writeln!(out, "{name}: valid"),
        },
        Some(_) => writeln!(
            out,
            "{name}: {}: {}",
            line["result"].as_str().unwrap_or_default(),
            line["reason"].as_str().unwrap_or_default()
        ),
    }
    .ok();
}

fn usage_error(out: &mut dyn Write, json_mode: bool, e: BrokerError) -> i32 {
    let mut error = json!({"code": e.code.as_str(), "message": e.reason(), "rule": e.rule.id()});
    if let Some(p) = e.code.param() {
        error["data"] = json!({ "param": p });
    }
    if crate::variant::on() {
        error.as_object_mut().map(|o| o.remove("rule"));
    }
    if json_mode {
        let _ = writeln!(out, "{}", json!({ "error": error }));
    } else {
        eprintln!("vxbroker: {e}");
    }
    2
}

fn key_check(a: &KeyCheckArgs, out: &mut dyn Write) -> i32 {
    let engines = match &a.engines_file {
        Some(path) => match crate::engines::load(path) {
            Ok(e) => e.table(),
            Err(e) => return usage_error(out, a.json, e),
        },
        None => match engine_table(&a.engines) {
            Some(t) => t,
            None => {
                eprintln!("vxbroker: --engine takes NAME=uuid|ses[:flag|none] with NAME [a-z][a-z0-9_-]{{0,31}}");
                return 2;
            }
        },
    };
    let mut all_valid = true;
    for key in &a.keys {
        let outcome = parse_key(key, &engines, a.new).map(|k| {
            let mut extra = Map::new();
            extra.insert("physical_key".into(), k.physical().into());
            extra
        });
        let (line, ok) = verdict(("key", key.as_str().into()), outcome);
        all_valid &= ok;
        print_line(out, a.json, &line, "key");
    }
    i32::from(!all_valid)
}

fn resume_plan(a: &ResumePlanArgs, out: &mut dyn Write) -> i32 {
    let parsed = (|| {
        let opt = |v: &Option<String>, p| v.as_deref().map(|t| parse_counter(t, p)).transpose();
        let have = opt(&a.have, Param::Have)?;
        let gen = opt(&a.gen, Param::Gen)?;
        let total = parse_counter(&a.total, Param::Total)?;
        let ring_len = parse_counter(&a.ring_len, Param::RingLen)?;
        let master_gen = parse_counter(&a.master_gen, Param::MasterGen)?;
        check_ring(total, ring_len)?;
        Ok::<_, BrokerError>(plan(have, gen, total, ring_len, master_gen))
    })();
    let p = match parsed {
        Ok(p) => p,
        Err(e) => return usage_error(out, a.json, e),
    };
    let line = match p {
        Plan::Delta { from } => json!({"plan": p.name(), "from": from}),
        _ => json!({"plan": p.name()}),
    };
    if a.json {
        let _ = writeln!(out, "{line}");
    } else {
        match p {
            Plan::Delta { from } => writeln!(out, "delta from {from}"),
            _ => writeln!(out, "{}", p.name()),
        }
        .ok();
    }
    0
}

fn sidecar_check(a: &SidecarCheckArgs, out: &mut dyn Write) -> i32 {
    let mut all_valid = true;
    for file in &a.files {
        let outcome = files::check_file(file).map(|_| Map::new());
        let name = file.to_string_lossy();
        let (line, ok) = verdict(("file", name.as_ref().into()), outcome);
        all_valid &= ok;
        print_line(out, a.json, &line, "file");
    }
    i32::from(!all_valid)
}
