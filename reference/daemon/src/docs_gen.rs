//! Docs generated from the manifest and the error table (`vxref manifest --markdown`,
//! `vxref manifest --errors`); `docs/spec/verbs.md` and `docs/spec/errors.md` embed
//! this output and a test keeps them in step (`vxref manifest --events`:
//! `docs/spec/events.md`). The agent skill (`--skill`) is [`crate::skill`].

use crate::errors::{Class, ErrorCode};
use crate::manifest::{flag_name, CliForm, Target, Verb, ANY_VERB, VERBS};
use std::fmt::Write as _;

/// The dispatch grant of `v`, as the docs and the agent skill write it.
pub fn grant(v: &Verb) -> String {
    match v.target {
        Target::Open => "none".to_string(),
        Target::Server => format!("{} on `server:root`", v.right.as_str()),
        Target::Param(p) => format!("{} on `<{p}>`", v.right.as_str()),
        Target::Filtered => "entries filtered by read".to_string(),
    }
}

pub fn verbs_markdown() -> String {
    let mut out = String::new();
    out.push_str(
        "| verb | CLI | params | grant (checked before lookup) | mutation | ok result |\n",
    );
    out.push_str("|---|---|---|---|---|---|\n");
    for v in VERBS {
        let command = format!("`vxref {}`", v.words().collect::<Vec<_>>().join(" "));
        let cli = match v.cli_form() {
            CliForm::Call => command,
            CliForm::Terminal => format!("{command} in a terminal (`--pane` only)"),
            CliForm::WireOnly => "wire only".to_string(),
        };
        let params = if v.params.is_empty() {
            "—".to_string()
        } else {
            v.params
                .iter()
                .map(|p| {
                    let flag = format!("`--{}` {}", flag_name(p.name), p.kind.name());
                    if p.required {
                        flag
                    } else {
                        format!("{flag}?")
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let grant = grant(v);
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | `{}` |",
            v.name,
            cli,
            params,
            grant,
            if v.mutation { "yes" } else { "no" },
            v.result
        );
    }
    out.push('\n');
    for v in VERBS {
        let _ = writeln!(out, "### `{}`\n\n{}.\n", v.name, v.summary);
        for p in v.params {
            let _ = writeln!(
                out,
                "- `{}` ({}, {}): {}",
                p.name,
                p.kind.name(),
                if p.required { "required" } else { "optional" },
                p.help
            );
        }
        if !v.params.is_empty() {
            out.push('\n');
        }
        let _ = writeln!(out, "Errors (besides {}):\n", any_verb_codes());
        for line in verb_error_lines(v) {
            let _ = writeln!(out, "- {line}");
        }
        out.push('\n');
    }
    out
}

/// [`ANY_VERB`]'s codes, as the docs and the long help name them.
pub fn any_verb_codes() -> String {
    ANY_VERB
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per code `v` can return: code, exit code, meaning (`vxref <verb> --help`
/// and `docs/spec/verbs.md`).
pub fn verb_error_lines(v: &Verb) -> Vec<String> {
    v.error_codes()
        .into_iter()
        .map(|c| {
            let meaning = match c {
                ErrorCode::Param(p) if v.param(p).is_some() && !has_own_meaning(c) => {
                    format!("`{p}` is missing, of the wrong type, malformed or out of range")
                }
                _ => c.meaning().to_string(),
            };
            format!("`{c}` (exit {}): {meaning}", c.exit_code())
        })
        .collect()
}

/// A CLI-only command's long-help error section: `codes` with exit codes and meanings,
/// plus what the verbs it calls can return.
pub fn command_errors_help(codes: &[ErrorCode], calls: &str) -> String {
    let lines: Vec<String> = codes
        .iter()
        .map(|c| {
            format!(
                "  {c} (exit {}): {}",
                c.exit_code(),
                c.meaning().replace('`', "")
            )
        })
        .collect();
    format!(
        "Errors (the exit code is the class's; besides these, any error of {calls}):\n{}",
        lines.join("\n")
    )
}

/// Param codes the error table describes on their own (`invalid_params.checkpoint`).
fn has_own_meaning(code: ErrorCode) -> bool {
    ErrorCode::ALL.contains(&code)
}

/// One table row per error class: `class.*`, exit code, meaning.
pub fn class_rows(out: &mut String) {
    for c in Class::ALL {
        let _ = writeln!(
            out,
            "| `{}.*` | {} | {} |",
            c.as_str(),
            c.exit(),
            c.meaning()
        );
    }
}

pub fn errors_markdown() -> String {
    let mut out = String::new();
    out.push_str("| class | exit code | meaning |\n|---|---|---|\n");
    class_rows(&mut out);
    out.push_str("\n| code | exit code | when |\n|---|---|---|\n");
    for code in ErrorCode::ALL {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            code,
            code.exit_code(),
            code.meaning()
        );
    }
    out
}

pub fn events_markdown() -> String {
    use crate::manifest::{EVENTS, SILENT_MUTATIONS};
    let mut out = String::new();
    out.push_str("| type | resource | data | emitted by | meaning |\n|---|---|---|---|---|\n");
    for e in EVENTS {
        let data = if e.fields.is_empty() {
            "—".to_string()
        } else {
            e.fields
                .iter()
                .map(|f| {
                    let opt = if f.required { "" } else { "?" };
                    format!("`{}{opt}` {}", f.name, f.kind.name())
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let by = e
            .emitted_by
            .iter()
            .map(|c| format!("`{}`", c.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {} | {} | {} |",
            e.name,
            e.resource.replace('|', "` or `"),
            data,
            by,
            e.summary
        );
    }
    out.push_str("\n| mutation verb without events | why |\n|---|---|\n");
    for (verb, why) in SILENT_MUTATIONS {
        let _ = writeln!(out, "| `{}` | {why} |", verb.name());
    }
    out.push('\n');
    for e in EVENTS.iter().filter(|e| !e.fields.is_empty()) {
        let _ = writeln!(out, "### `{}`\n", e.name);
        for f in e.fields {
            let _ = writeln!(
                out,
                "- `{}` ({}, {}): {}",
                f.name,
                f.kind.name(),
                if f.required { "always" } else { "optional" },
                f.help
            );
        }
        out.push('\n');
    }
    out
}
