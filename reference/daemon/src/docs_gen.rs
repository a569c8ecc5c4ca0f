//! Docs generated from the manifest and the error table (`vxref manifest --markdown`,
//! `vxref manifest --errors`); `docs/spec/verbs.md` and `docs/spec/errors.md` embed
//! this output and a test keeps them in step (`vxref manifest --events`:
//! `docs/spec/events.md`). The agent skill (`--skill`) is [`crate::skill`].

use crate::errors::{Class, ErrorCode};
use crate::manifest::{flag_name, Target, Verb, VERBS};
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
        let cli = if v.streaming() {
            "wire only".to_string()
        } else {
            format!("vxref {}", v.words().collect::<Vec<_>>().join(" "))
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
            if v.streaming() {
                cli
            } else {
                format!("`{cli}`")
            },
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
    }
    out
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
