#!/usr/bin/env python3
"""Builds the integration-template corpus and its expected verdicts.

Independent of the Rust reader: templates are TOML text assembled here (the
peer's own shapes: its claude-code template, its test mutations), and every
verdict is stated by hand from docs/spec/agent-session.md. Run from anywhere:
    python3 corpus/integrations/generate.py
It rewrites every case file and expected.jsonl; commit the result.
A row with "pad_to" is padded with newlines to that many bytes before checking.
"""
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
BAD = "invalid_params.integration_template"
VALID = "valid"
PH = "${PHUX_AGENT_SESSION_ID}"
ROOT = "${PHUX_PLUGIN_ROOT}"


def toml_str(s):
    # TOML basic strings: JSON string escapes are a subset TOML accepts.
    return json.dumps(s, ensure_ascii=False)


def toml_list(items):
    return "[" + ", ".join(toml_str(i) if isinstance(i, str) else str(i) for i in items) + "]"


def template(id_="claude-code", session=None, launch=None, extra_top="", drop=()):
    session = {
        "mode": "native-or-phux",
        "native_env": "PHUX_CLAUDE_SESSION_ID",
        "restore": "external-cli",
        "resume_args": ["--resume", PH],
        "fresh_args": ["--session-id", PH],
        **(session or {}),
    }
    launch = {
        "command": ["sh", ROOT + "/scripts/phux-agent-wrap.sh", "--name", "claude", "--", "claude"],
        "required_executables": ["claude"],
        "working_directory": "workspace",
        **(launch or {}),
    }
    lines = ["schema_version = 1"]
    if id_ is not None:
        lines.append(f"id = {toml_str(id_) if isinstance(id_, str) else id_}")
    lines += ['display_name = "Claude Code"', 'kind = "terminal-agent"', "first_party = true", extra_top,
              "", "[detect]", 'mode = "opt-in"', 'command = "claude"', "", "[session_identity]"]
    for key, value in session.items():
        if value is None or f"session.{key}" in drop:
            continue
        lines.append(f"{key} = {toml_list(value) if isinstance(value, list) else toml_str(value)}")
    lines += ["", "[agent_identity]", 'name = "claude"', "", "[launch]"]
    for key, value in launch.items():
        if value is None or f"launch.{key}" in drop:
            continue
        lines.append(f"{key} = {toml_list(value) if isinstance(value, list) else toml_str(value)}")
    return "\n".join(lines) + "\n"


cases = []


def case(name, text, result, rule=None, pad_to=None):
    row = {"case": name, "kind": "template", "file": f"{name}.toml", "result": result, "rule": rule}
    if pad_to is not None:
        row["pad_to"] = pad_to
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    cases.append((row, data))


def bad(name, text, rule, **kw):
    case(name, text, BAD, rule, **kw)


case("valid-peer-claude", template(), VALID)
case("valid-plain-executable", template(launch={"command": ["codex"]}), VALID)
case("valid-fixed-shell-script", template(launch={"command": ["bash", ROOT + "/w.sh"]}), VALID)
case("valid-fixed-bin-bash-script", template(launch={"command": ["/bin/bash", ROOT + "/trusted/wrapper.sh"]}), VALID)
case("valid-plugin-script-as-program", template(launch={"command": [ROOT + "/scripts/fake-agent.sh"]}), VALID)
case("valid-detect-only", 'id = "detect-only"\n', VALID)
case("valid-legacy-without-resume", template(session={"resume_args": None, "fresh_args": None}), VALID)
case("valid-not-restorable-evaluator", template(session={"resume_args": None, "fresh_args": None},
                                                launch={"command": ["sh", "-c", "exec claude"]}), VALID)
case("valid-phux-mode", template(session={"mode": "phux", "restore": "phux-session", "resume_args": None,
                                          "fresh_args": None}), VALID)
case("valid-resume-only", template(session={"fresh_args": None}), VALID)
case("valid-unknown-keys-outside-session", template(extra_top='future = { x = 1 }'), VALID)
case("valid-plugin-root-cwd", template(launch={"working_directory": "plugin-root"}), VALID)
case("valid-env-128-bytes", template(session={"native_env": "PHUX_" + "A" * 112 + "_SESSION_ID"}), VALID)
case("valid-16-args", template(session={"resume_args": ["a"] * 15 + [PH]}), VALID)
case("valid-64-kib", template(), VALID, pad_to=65536)

bad("size-64-kib-plus-1", template(), "template.size", pad_to=65537)
bad("toml-syntax", "id = \n", "template.toml")
bad("toml-duplicate-key", 'id = "a"\nid = "b"\n', "template.toml")
bad("toml-duplicate-table", template() + "\n[launch]\ncommand = [\"x\"]\n", "template.toml")
bad("not-utf8", b'id = "\xff"\n', "template.toml")
bad("id-missing", template(id_=None), "template.id")
bad("id-padded", template(id_=" claude"), "template.id")
bad("id-121-bytes", template(id_="i" * 121), "template.id")
bad("id-control", template(id_="cl\u0085aude"), "template.id")
bad("id-number", template(id_=7), "template.type")
bad("launch-not-table", 'id = "x"\nlaunch = "claude"\n', "template.type")
bad("command-empty", template(launch={"command": []}), "template.command")
bad("command-blank-program", template(launch={"command": ["  ", "x"]}), "template.command")
bad("command-not-strings", template(launch={"command": ["claude", 1]}), "template.type")
bad("command-holds-placeholder", template(launch={"command": ["claude", "--resume=" + PH]}), "template.command_placeholder")
bad("required-executable-path", template(launch={"required_executables": ["bin/claude"]}), "template.required_executables")
bad("required-executable-padded", template(launch={"required_executables": [" claude"]}), "template.required_executables")
bad("working-directory-home", template(launch={"working_directory": "home"}), "template.working_directory")
bad("session-unknown-key", template(session={"resume_arg": ["x"]}), "template.session_unknown_key")
bad("session-missing-mode", template(drop=("session.mode",)), "template.session_missing")
bad("mode-unknown", template(session={"mode": "native"}), "template.mode")
bad("restore-unknown", template(session={"restore": "cli"}), "template.restore")
for name, env in [("env-bad-name", "BAD-NAME"), ("env-bash-env", "BASH_ENV"), ("env-phux-agent-id", "PHUX_AGENT_ID"),
                  ("env-no-middle", "PHUX_SESSION_ID"), ("env-padded", " PHUX_CLAUDE_SESSION_ID"),
                  ("env-129-bytes", "PHUX_" + "A" * 113 + "_SESSION_ID"),
                  # The right suffix outside the namespace: no PHUX_ prefix, another
                  # case, the prefix inside the name.
                  ("env-outside-namespace", "CLAUDE_SESSION_ID"),
                  ("env-lowercase-prefix", "phux_CLAUDE_SESSION_ID"),
                  ("env-prefix-inside", "XPHUX_CLAUDE_SESSION_ID")]:
    bad(name, template(session={"native_env": env}), "template.native_env")
bad("resume-with-phux-mode", template(session={"mode": "phux"}), "template.resume_policy")
bad("resume-with-phux-session-restore", template(session={"restore": "phux-session"}), "template.resume_policy")
bad("fresh-without-resume", template(session={"resume_args": None}), "template.fresh_without_resume")
bad("placeholder-none", template(session={"resume_args": ["--resume"]}), "template.placeholder")
bad("placeholder-two", template(session={"resume_args": [PH, PH]}), "template.placeholder")
bad("placeholder-embedded", template(session={"resume_args": ["--resume=" + PH]}), "template.placeholder")
bad("placeholder-extra-embedded", template(session={"fresh_args": ["--id", PH, "x" + PH]}), "template.placeholder")
bad("args-empty", template(session={"resume_args": []}), "template.args_count")
bad("args-17", template(session={"resume_args": ["a"] * 16 + [PH]}), "template.args_count")
bad("args-empty-element", template(session={"resume_args": ["", PH]}), "template.args_bytes")
bad("args-4097-byte-element", template(session={"resume_args": ["a" * 4097, PH]}), "template.args_bytes")
for name, command, rule in [
    ("evaluator-sh-xc", ["sh", "-xc"], "template.shell"),
    ("evaluator-bare-bash", ["bash"], "template.shell"),
    ("evaluator-shell-relative-escape", ["bash", ROOT + "/../w.sh"], "template.shell"),
    ("evaluator-shell-absolute-script", ["bash", "/tmp/w.sh"], "template.shell"),
    ("evaluator-env-sh-c", ["/usr/bin/env", "sh", "-c"], "template.interpreter"),
    ("evaluator-python3", ["python3", ROOT + "/agent.py"], "template.interpreter"),
    ("evaluator-python3.12", ["/usr/bin/python3.12"], "template.interpreter"),
    ("evaluator-node", ["node"], "template.interpreter"),
    ("evaluator-busybox", ["busybox", "sh"], "template.interpreter"),
    ("runner-nice", ["nice", "claude"], "template.interpreter"),
]:
    bad(name, template(launch={"command": command}), rule)
# The identity placed right after `python3 -c`: it is the program's source.
bad("evaluator-python3-c", template(session={"resume_args": [PH], "fresh_args": [PH]},
                                    launch={"command": ["python3", "-c"]}), "template.interpreter")
# The same with the flag joined to another (`-S`: no site module): still -c's source.
bad("evaluator-python3-Sc", template(session={"resume_args": [PH], "fresh_args": [PH]},
                                     launch={"command": ["python3", "-Sc"]}), "template.interpreter")

for path in HERE.glob("*.toml"):
    path.unlink()
with open(HERE / "expected.jsonl", "w", encoding="utf-8") as out:
    for row, data in cases:
        (HERE / row["file"]).write_bytes(data)
        out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
print(f"{len(cases)} template cases")
