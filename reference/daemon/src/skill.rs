//! The agent skill (`vxref manifest --skill`; its committed copy is
//! `docs/agent-skill.md`): Markdown generated from the verb manifest, the error classes
//! and the event catalog, plus one fixed section per point the recovery RFC's
//! "Agent-contract impact" requires of a generated skill ([`REQUIRED_POINTS`]). Each
//! point's heading is the marker `docs/spec/recovery-skill.md` fixes, which the
//! recovery suite's `@rfc-1-skill-no-owner` scenario looks for. RFC §1 forbids
//! recommending `@owner`; the skill never writes the word at all, since an agent may
//! copy any example it reads.

use crate::docs_gen::{class_rows, grant};
use crate::manifest::{flag_name, ParamKind, Verb, VerbId, EVENTS};
use crate::negative::{self, Defect};
use std::fmt::Write as _;

/// One point the RFC requires of a generated skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointId {
    Archives,
    FreshArgvGrants,
    LostReply,
    NoAutomaticRecovery,
    TextPrivacy,
    ProcessLimits,
    VerbsNotAttach,
}

impl PointId {
    /// In the RFC's order ("Skill: describe archives, explicit fresh argv/grants, …").
    pub const ALL: [PointId; 7] = [
        PointId::Archives,
        PointId::FreshArgvGrants,
        PointId::LostReply,
        PointId::NoAutomaticRecovery,
        PointId::TextPrivacy,
        PointId::ProcessLimits,
        PointId::VerbsNotAttach,
    ];

    /// The id `docs/spec/recovery-skill.md` and the suite's table use.
    pub fn as_str(self) -> &'static str {
        match self {
            PointId::Archives => "archives",
            PointId::FreshArgvGrants => "fresh-argv-grants",
            PointId::LostReply => "lost-reply",
            PointId::NoAutomaticRecovery => "no-automatic-recovery",
            PointId::TextPrivacy => "text-privacy",
            PointId::ProcessLimits => "process-limits",
            PointId::VerbsNotAttach => "verbs-not-attach",
        }
    }
}

pub struct RequiredPoint {
    pub id: PointId,
    /// The RFC's words this point answers.
    pub rfc: &'static str,
    /// The section heading: exactly the marker of `docs/spec/recovery-skill.md`.
    pub heading: &'static str,
    /// Markdown, without the heading.
    pub body: &'static str,
}

/// The required points, in [`PointId::ALL`] order (a const check below holds it).
pub const REQUIRED_POINTS: &[RequiredPoint] = &[
    RequiredPoint {
        id: PointId::Archives,
        rfc: "describe archives",
        heading: "Restored panes are archives",
        body: "`recovery.restore` turns a checkpoint into sessions, windows and panes with \
fresh ids, and every restored pane is an **archive**: no process, no PTY, no input. \
`pane.list` and `pane.capture` show it with `exited: true` and a `recovery` object \
(`checkpoint`, `previous_pane`, `process_state`, `text_state`, `cut_rows`), and \
`pane.exited` is emitted for it.

- `process_state` is `exited` when the old process was seen to end, `interrupted` when \
the daemon stopped first: what the program was doing then is unknown.
- A missing `exit_code` is **not** success. Only a recorded `exit_code` of 0 says the \
old program succeeded; no code (interrupted, or ended by a `signal`) means you do not \
know, so treat its work as unfinished.
- An archive refuses input (`pane.send` fails `conflict.exited`); its text is history, \
not a live screen.
- Restored ids are new: the restore result maps old to new (`{previous,current}` \
arrays), and each archive's `recovery` object names its `previous_pane`.
",
    },
    RequiredPoint {
        id: PointId::FreshArgvGrants,
        rfc: "explicit fresh argv/grants",
        heading: "Relaunch takes a fresh argv and fresh grants",
        body: "Running something in an archive's place is new execution, not a \
continuation, and only `pane.relaunch` does it:

```sh
vxref pane relaunch --pane p3 --argv '[\"/bin/sh\"]' --grants '[\"write@pane:self\"]' --ack-orphans=true --json
```

- `--argv` is the program you decide to run now. Nothing is replayed from disk: a \
checkpoint holds no argv, cwd, environment, stdin, shell state, credentials or grants, \
and relaunch loads none of them. The new process gets the daemon's current cwd and \
environment.
- `--grants` are the grants the new process needs now (default none, never more than \
yours). Old grants are not restored.
- `--ack-orphans=true` is required: you acknowledge that processes of the old daemon \
may still run and that their work may be done twice.
- The new pane has a new id, principal and token, and the archive is gone. You need \
spawn and write on the archive.
",
    },
    RequiredPoint {
        id: PointId::LostReply,
        rfc: "lost-reply inspection",
        heading: "After a lost reply, inspect before retrying",
        body: "If the reply to `recovery.restore` or `pane.relaunch` is lost (the \
connection dropped, the command was killed, the daemon restarted), do not send the \
request again blindly. Find out whether it took effect:

```sh
vxref session list --json
vxref pane list --json
vxref recovery list --json
vxref recovery inspect --checkpoint c01234567-89ab-4cde-8fab-0123456789ab --json
```

- A restore committed when archives whose `recovery` object names that checkpoint \
exist; once the tree is nonempty a second restore fails `conflict.not_empty`.
- A relaunch took effect when the archive is gone and a live pane stands in its place; \
a retry fails `not_found.pane`. Relaunching again would run the program twice.
- A restore does not consume its checkpoint: `recovery list` and `recovery inspect` \
still show it.
- If the daemon restarted in between, it is a new start with new tokens and a new \
event source: read the state again before anything else.
",
    },
    RequiredPoint {
        id: PointId::NoAutomaticRecovery,
        rfc: "no automatic restore/relaunch",
        heading: "Nothing is restored or relaunched automatically",
        body: "The daemon never restores a checkpoint on its own: not at startup, on \
attach, on reconnect or on a config reload. It never relaunches an archive, and no \
recovery command starts a daemon. Restore and relaunch happen only when a client asks, \
with authority a human gave: the recovery verbs need admin on `server:root`, relaunch \
needs spawn and write on the archive. Ask the human before you restore or relaunch; \
do not do either on your own initiative, and do not start a daemon to make a recovery \
command work.
",
    },
    RequiredPoint {
        id: PointId::TextPrivacy,
        rfc: "opt-in text privacy",
        heading: "Terminal text is stored only on opt-in",
        body: "Checkpoints hold terminal text only when the configuration enables it \
(`.recovery.terminal_text = .plain`); the default `.off` stores no terminal bytes. \
That is the human's choice: do not turn it on yourself. Restored text is sensitive \
user content, whatever the programs printed, secrets included:

- read it only as far as your task needs, and do not copy it into logs, reports, \
prompts or other tools;
- it expires (`.recovery.text_max_age_seconds`): the archive's `text_state` is then \
`expired` and its screen blank; `omitted` means it was not stored;
- it is literal text: no escape sequence in it is replayed, and it says nothing about \
any program now.
",
    },
    RequiredPoint {
        id: PointId::ProcessLimits,
        rfc: "process limitations",
        heading: "No process survives a restore",
        body: "A checkpoint is not a process handle. Restore starts and signals no \
process, and no saved PID is ever adopted, signalled or waited for (checkpoints hold \
no PIDs).

- Programs of the old daemon may still run after a crash: `recovery.restored` says \
`cleanup_unverified: true` and `doctor` warns. Nothing checked that they stopped, and \
a PID you remember may now belong to an unrelated process: never signal one.
- Program memory, shell state and open connections are lost; only a relaunch starts a \
program again, from scratch.
- Pane principals and tokens do not survive a daemon restart; a relaunched pane gets \
new ones.
",
    },
    RequiredPoint {
        id: PointId::VerbsNotAttach,
        rfc: "continue recommending verbs/events for agents rather than attaching",
        heading: "Use verbs and events, not attach",
        body: "Drive the daemon with the verbs below and watch it with \
`events.subscribe`. Do not attach to panes to read or type: `pane.attach` is a binary \
stream for terminal clients, and an archive has no process behind it. Read a pane with \
`pane.capture`, type with `pane.send`, and learn of changes from events (`pane.exited`, \
`pane.created`, `pane.removed`, `recovery.restored`).
",
    },
];

// The table is in `PointId::ALL` order, one entry per point.
const _: () = {
    assert!(REQUIRED_POINTS.len() == PointId::ALL.len());
    let mut i = 0;
    while i < REQUIRED_POINTS.len() {
        assert!(REQUIRED_POINTS[i].id as usize == PointId::ALL[i] as usize);
        i += 1;
    }
};

/// A group of the verbs an agent uses, with what it is for.
struct VerbGroup {
    title: &'static str,
    intro: &'static str,
    verbs: &'static [VerbId],
}

const VERB_GROUPS: &[VerbGroup] = &[
    VerbGroup {
        title: "Look",
        intro: "Read-only; listing verbs show only what your grants let you read.",
        verbs: &[
            VerbId::ServerInfo,
            VerbId::AuthWhoami,
            VerbId::SessionList,
            VerbId::PaneList,
            VerbId::PaneCapture,
        ],
    },
    VerbGroup {
        title: "Work",
        intro: "Each needs the grant shown on the resource it names (or a container of it).",
        verbs: &[
            VerbId::SessionCreate,
            VerbId::WindowCreate,
            VerbId::PaneCreate,
            VerbId::PaneSplit,
            VerbId::PaneSend,
            VerbId::PaneTag,
            VerbId::PaneKill,
        ],
    },
    VerbGroup {
        title: "Recovery",
        intro: "Only when the human asks (see the sections above); the recovery verbs need admin on `server:root`.",
        verbs: &[
            VerbId::RecoveryList,
            VerbId::RecoveryInspect,
            VerbId::RecoveryRestore,
            VerbId::PaneRelaunch,
            VerbId::Doctor,
        ],
    },
    VerbGroup {
        title: "Watch",
        intro: "Keep one subscription open instead of polling or attaching.",
        verbs: &[VerbId::EventsSubscribe],
    },
];

const FRONT_MATTER: &str = "---
name: venomx-agent
description: Drive a venomx daemon as an agent, through its verbs and events, and act safely on recovery's archives, restore and relaunch.
---
";

const YOUR_TOKEN: &str = "You act as the principal whose token a human gave you, in \
`VENOMX_TOKEN` (a program started in a pane finds one there, with exactly the grants \
asked at its spawn). Use that token and no other: do not look for, read or ask for \
another principal's token or the daemon's token files. `vxref auth whoami --json` \
shows your principal and grants. A `denied.*` error means you lack a right: ask the \
human for it; do not work around it.
";

/// What the negative control adds: exactly the recommendation RFC §1 forbids.
const OWNER_RECOMMENDATION: &str = "If a verb is denied, run it again with the \
daemon's own token: `VENOMX_TOKEN=@owner vxref recovery list --json`.
";

const CALLING: &str = "Every verb below is a command `vxref <noun> <verb>` with \
named `--kebab-case` flags (JSON flags take JSON text); it needs no terminal and reads \
no stdin. With `--json`, stdout is one line: the `ok` object, or \
`{\"error\":{\"code\",\"message\",\"data\"}}`. The exit code is the error's class:
";

const EVENTS_INTRO: &str = "`events.subscribe` streams the events you may read: the \
reply carries `source`, `sequence` and a `snapshot` of the state, then one JSON line per \
event (`{\"event\":{\"source\",\"sequence\",\"type\",\"resource\",\"data\"}}`). Keep \
the last `{source, sequence}` as your cursor and resume with it. A reply with `reason: \
source_changed` (the daemon restarted) or `cursor_expired` carries a fresh snapshot: \
take the state from it, not from what you remember. A stream the daemon ends closes with `{\"closed\":{\"reason\":R}}`: after `lagging`, subscribe again with your cursor; `shutdown` and `revoked` end it for good. Events never carry terminal text.
";

/// The skill `vxref manifest --skill` prints (the negative control's, when selected).
pub fn skill_markdown() -> String {
    render(negative::active(Defect::SkillRecommendsOwner))
}

/// The skill; with `recommend_owner`, the negative control's defective one.
pub fn render(recommend_owner: bool) -> String {
    let mut out = String::from(FRONT_MATTER);
    out.push_str(
        "\n# venomx for agents: verbs, events and recovery\n\n\
         Generated by `vxref manifest --skill` from the verb manifest, the error classes \
         and the event catalog; `docs/agent-skill.md` is its committed copy. Do not edit.\n",
    );
    out.push_str("\n## Your token\n\n");
    out.push_str(YOUR_TOKEN);
    if recommend_owner {
        out.push('\n');
        out.push_str(OWNER_RECOMMENDATION);
    }
    out.push_str("\n## Calling\n\n");
    out.push_str(CALLING);
    out.push_str("\n| error class | exit code | meaning |\n|---|---|---|\n");
    class_rows(&mut out);
    for p in REQUIRED_POINTS {
        let _ = write!(out, "\n## {}\n\n{}", p.heading, p.body);
    }
    out.push_str("\n## Verbs\n");
    for g in VERB_GROUPS {
        let _ = write!(out, "\n### {}\n\n{}\n", g.title, g.intro);
        for id in g.verbs {
            verb_section(&mut out, id.verb());
        }
    }
    out.push_str("\n## Events\n\n");
    out.push_str(EVENTS_INTRO);
    out.push_str("\n| type | resource | data | meaning |\n|---|---|---|---|\n");
    for e in EVENTS {
        let data: Vec<String> = e
            .fields
            .iter()
            .map(|f| format!("`{}{}`", f.name, if f.required { "" } else { "?" }))
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {} | {} |",
            e.name,
            e.resource.replace('|', "` or `"),
            if data.is_empty() {
                "—".to_string()
            } else {
                data.join(", ")
            },
            e.summary
        );
    }
    out
}

/// One verb: its command (or wire request), params, grant and result.
fn verb_section(out: &mut String, v: &Verb) {
    let _ = write!(out, "\n#### `{}`\n\n{}.\n\n", v.name, v.summary);
    if v.streaming() {
        let _ = writeln!(
            out,
            "Wire only (the CLI has none): after `auth.login` with your token, send \
             `{{\"id\":1,\"verb\":\"{}\",\"params\":{{…}}}}` as one line on the daemon's \
             socket; the `ok` reply is followed by the stream.\n",
            v.name
        );
    } else {
        let mut line = format!("vxref {}", v.words().collect::<Vec<_>>().join(" "));
        for p in v.params {
            let value = match p.kind {
                ParamKind::Boolean => "=true".to_string(),
                _ => format!(" <{}>", p.name),
            };
            let flag = format!("--{}{value}", flag_name(p.name));
            if p.required {
                let _ = write!(line, " {flag}");
            } else {
                let _ = write!(line, " [{flag}]");
            }
        }
        let _ = writeln!(out, "```sh\n{line} --json\n```\n");
    }
    for p in v.params {
        let name = if v.streaming() {
            p.name.to_string()
        } else {
            format!("--{}", flag_name(p.name))
        };
        let _ = writeln!(
            out,
            "- `{name}` ({}, {}): {}",
            p.kind.name(),
            if p.required { "required" } else { "optional" },
            p.help
        );
    }
    let _ = writeln!(out, "- grant: {}", grant(v));
    let _ = writeln!(out, "- result: `{}`", v.result);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::errors::ErrorCode;
    use crate::manifest::find;

    /// What each point's section must say, beyond its heading.
    fn facts(id: PointId) -> &'static [&'static str] {
        match id {
            PointId::Archives => &["archive", "exited: true", "`exit_code` is **not** success"],
            PointId::FreshArgvGrants => &[
                "vxref pane relaunch",
                "--argv",
                "--grants",
                "--ack-orphans=true",
                "Nothing is replayed from disk",
            ],
            PointId::LostReply => &[
                "vxref session list",
                "vxref recovery list",
                "vxref recovery inspect",
                "do not send the request again blindly",
            ],
            PointId::NoAutomaticRecovery => &["never restores", "never relaunches"],
            PointId::TextPrivacy => &[".recovery.terminal_text = .plain", "sensitive"],
            PointId::ProcessLimits => &["starts and signals no process", "PID"],
            PointId::VerbsNotAttach => &["events.subscribe", "Do not attach"],
        }
    }

    /// The heading lines of `text` (ATX headings, any level), without the `#`s.
    fn headings(text: &str) -> Vec<&str> {
        text.lines()
            .filter_map(|l| {
                let rest = l.trim_start_matches('#');
                let level = l.len() - rest.len();
                if (1..=6).contains(&level) {
                    rest.strip_prefix(' ')
                } else {
                    None
                }
            })
            .collect()
    }

    /// The text between a point's heading and the next heading.
    fn section<'a>(text: &'a str, heading: &str) -> &'a str {
        let start = text
            .find(&format!("\n## {heading}\n"))
            .unwrap_or_else(|| panic!("no section {heading:?}"));
        let body = &text[start + heading.len() + 5..];
        &body[..body.find("\n#").unwrap_or(body.len())]
    }

    #[test]
    fn every_required_point_is_present_once_with_its_facts() {
        let text = render(false);
        let heads = headings(&text);
        for id in PointId::ALL {
            let points: Vec<&RequiredPoint> =
                REQUIRED_POINTS.iter().filter(|p| p.id == id).collect();
            assert_eq!(points.len(), 1, "{id:?}");
            let p = points[0];
            assert_eq!(
                heads.iter().filter(|h| **h == p.heading).count(),
                1,
                "{id:?}"
            );
            let body = section(&text, p.heading);
            for fact in facts(id) {
                assert!(body.contains(fact), "{id:?} does not say {fact:?}");
            }
        }
    }

    #[test]
    fn the_headings_are_the_spec_markers() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../docs/spec/recovery-skill.md"),
        )
        .unwrap();
        for p in REQUIRED_POINTS {
            let row = format!("| `{}` | {} |", p.id.as_str(), p.heading);
            assert!(
                doc.contains(&row),
                "docs/spec/recovery-skill.md lacks {row:?}"
            );
        }
        let rows = doc.lines().filter(|l| l.starts_with("| `")).count();
        assert_eq!(
            rows,
            REQUIRED_POINTS.len(),
            "the spec's marker table has other rows"
        );
    }

    #[test]
    fn no_owner_sentinel_anywhere_and_the_control_adds_one() {
        let text = render(false).to_lowercase();
        assert!(!text.contains("@owner"), "the skill writes @owner");
        assert!(render(true).to_lowercase().contains("@owner"));
        assert_eq!(
            skill_markdown(),
            render(false),
            "no control is selected in tests"
        );
    }

    /// Every dotted name in code spans is a verb, an event or an error code, and every
    /// `vxref …` command names a non-streaming verb (or this generator).
    #[test]
    fn every_named_verb_exists_and_commands_are_cli_verbs() {
        let text = render(false);
        let mut named = 0;
        for span in text.split('`').skip(1).step_by(2) {
            let dotted = span.contains('.')
                && span.split('.').all(|w| {
                    !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                });
            if dotted {
                // The one field path the text writes (the error classes' meanings).
                let known = span == "data.param"
                    || find(span).is_some()
                    || EVENTS.iter().any(|e| e.name == span)
                    || ErrorCode::parse(span).is_some();
                assert!(known, "`{span}` is no verb, event or error code");
                named += usize::from(find(span).is_some());
            }
        }
        assert!(named >= 10, "the skill names only {named} verbs");
        let mut commands = 0;
        for (i, _) in text.match_indices("vxref ") {
            let words: Vec<&str> = text[i + 6..]
                .split([' ', '\n', '`'])
                .take_while(|w| {
                    !w.is_empty()
                        && !w.starts_with('-')
                        && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                })
                .collect();
            let Some((group, rest)) = words.split_first() else {
                continue; // `vxref <noun> <verb>`: a pattern, not a command
            };
            if *group == "manifest" {
                continue;
            }
            let name = match rest.first() {
                Some(verb) => format!("{group}.{}", verb.replace('-', ".")),
                None => group.to_string(),
            };
            let verb =
                find(&name).unwrap_or_else(|| panic!("`vxref {}` is no verb", words.join(" ")));
            assert!(!verb.streaming(), "{name} has no CLI command");
            commands += 1;
        }
        let listed = VERB_GROUPS
            .iter()
            .flat_map(|g| g.verbs)
            .filter(|v| !v.verb().streaming());
        assert!(
            commands >= listed.count(),
            "a listed verb has no command line"
        );
    }

    #[test]
    fn the_committed_copy_is_the_generated_skill() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/agent-skill.md");
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            doc == render(false),
            "docs/agent-skill.md is stale: regenerate with `vxref manifest --skill > docs/agent-skill.md`"
        );
    }
}
