#!/usr/bin/env python3
"""Builds the workspace-archive and resume-record corpus and its expected verdicts.

Independent of the Rust writer on purpose: archives are phux-shaped dicts dumped
with Python's json module (the peer's serde order, `indent=2`, f32-looking
ratios), or raw text for what json.dumps cannot express; every verdict below is
stated by hand from docs/spec/workspace-archive.md and docs/spec/agent-session.md.
Run from anywhere:
    python3 corpus/workspace/generate.py
It rewrites every case file, records/ and expected.jsonl; commit the result.

A row with "pad_to" names a file that is padded with ASCII spaces to that many
bytes before it is checked (16 MiB files are not committed).
"""
import copy
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORRUPT = "conflict.archive_corrupt"
SCHEMA = "unsupported.archive_schema"
RECORD = "invalid_params.agent_session"
VALID = "valid"
MIB16 = 16 * 1024 * 1024
PLACEHOLDER_ID = "session-42"


def record(plugin="com.phux.agents", integration="claude-code", native=PLACEHOLDER_ID):
    return {"plugin_id": plugin, "integration_id": integration, "native_id": native}


def pane(active=False, cols=80, rows=24, **extra):
    # phux's serde order: active, title?, cwd?, command?, agent_session?, cols, rows
    p = {"active": active}
    for key in ("title", "cwd", "command", "agent_session"):
        if key in extra:
            p[key] = extra[key]
    p["cols"] = cols
    p["rows"] = rows
    return p


def split(dir_, ratio, left, right):
    return {"kind": "split", "dir": dir_, "ratio": ratio, "left": left, "right": right}


def leaf(i):
    return {"kind": "pane", "pane": i}


def phux_archive(schema=2):
    """What phux's `workspace save` writes: schema 2 always, active always."""
    return {
        "schema_version": schema,
        "sessions": [
            {
                "name": "ops",
                "active": True,
                "windows": [
                    {
                        "name": "main",
                        "active": True,
                        "layout": split("horizontal", 0.33333334, leaf(0),
                                        split("vertical", 0.5, leaf(1), leaf(2))),
                        "panes": [
                            pane(True, 120, 40, title="agent", cwd="/tmp/ops",
                                 agent_session=record()),
                            pane(False, 60, 40, cwd="/tmp/ops",
                                 agent_session=record(integration="codex", native="thread 42; printf x")),
                            pane(False, 60, 40),
                        ],
                    },
                    {"name": "logs", "active": False, "panes": [pane(True, 0, 0)]},
                ],
            },
            {"name": "scratch", "active": False, "windows": []},
        ],
    }


def without_records(a):
    for s in a["sessions"]:
        for w in s["windows"]:
            for p in w["panes"]:
                p.pop("agent_session", None)
    return a


def dumps(obj, pretty=True):
    if pretty:
        return json.dumps(obj, ensure_ascii=False, indent=2) + "\n"
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n"


def first_pane(a):
    return a["sessions"][0]["windows"][0]["panes"][0]


def first_window(a):
    return a["sessions"][0]["windows"][0]


cases = []


def case(name, data, result, rule=None, pad_to=None):
    if isinstance(data, dict):
        data = dumps(data)
    if isinstance(data, str):
        data = data.encode("utf-8")
    row = {"case": name, "kind": "archive", "file": f"{name}.json", "result": result, "rule": rule}
    if pad_to is not None:
        row["pad_to"] = pad_to
    cases.append((row, data))


def mutate(fn, schema=2):
    a = phux_archive(schema)
    fn(a)
    return a


def corrupt(name, data, rule, **kw):
    case(name, data, CORRUPT, rule, **kw)


# Valid archives: phux's output, schema 1, canonical-looking compact text.
case("valid-phux-schema2", phux_archive(), VALID)
case("valid-phux-schema2-without-records", without_records(phux_archive()), VALID)
case("valid-schema1", without_records(phux_archive(1)), VALID)
case("valid-compact", dumps(phux_archive(), pretty=False), VALID)
case("valid-empty", {"schema_version": 1, "sessions": []}, VALID)
case("valid-minimal-members", {"schema_version": 2, "sessions": [{"name": "a", "windows": [
    {"name": "w", "panes": [{}, {"agent_session": record()}]}]}]}, VALID)
case("valid-schema-version-last", '{"sessions":[],"schema_version":2}', VALID)
# phux's serde_json (ryu) prints f32 ratios >= 1e-6 without an exponent; Python's
# repr would not, so the text is written directly.
case("valid-ratio-small", dumps(phux_archive()).replace("0.33333334", "0.000001"), VALID)
case("valid-ratio-long", dumps(phux_archive()).replace("0.33333334", "0.3333333333333333333333333333"), VALID)
case("valid-unicode-and-escapes", mutate(lambda a: a["sessions"][0].update(name="é\u2028\"\\/ops")), VALID)
case("valid-id-bounds", mutate(lambda a: first_pane(a).update(
    agent_session=record(plugin="p" * 120, integration="é" * 60, native="n" * 1024))), VALID)
# The byte bounds in every UTF-8 width, and Unicode spaces inside ids (only their
# ends are trimmed).
case("valid-id-bounds-multibyte", mutate(lambda a: first_pane(a).update(
    agent_session=record(plugin="é" * 60, integration="€" * 40, native="\U0001F600" * 256))), VALID)
case("valid-id-interior-spaces", mutate(lambda a: first_pane(a).update(
    agent_session=record(plugin="com\u3000phux", integration="co\u00a0dex", native="session\u2028 42"))), VALID)
# Schema 2 is an additive format outside the record: members a reader does not know
# in sessions, windows and panes are read past (phux writes a session's host and
# project); the record itself stays closed.
case("valid-additive-members", mutate(lambda a: (
    a["sessions"][0].update(host="build-01", project={"root": "/srv/ops", "tags": ["a"]}),
    first_window(a).update(zoom=1), first_pane(a).update(argv=["sh"], scrollback=[1, 2]))), VALID)
case("valid-cells-bounds", mutate(lambda a: first_pane(a).update(cols=65535, rows=0)), VALID)
case("valid-argv-bounds", mutate(lambda a: (first_pane(a).update(command=["x"] * 256),
                                            a["sessions"][0].update(command=["sh"]))), VALID)
case("valid-16-mib", without_records(phux_archive(1)), VALID, pad_to=MIB16)


def chain(depth_splits):
    """A right-leaning chain of splits: its leaf sits at JSON depth 6 + depth_splits."""
    node = leaf(depth_splits)
    for i in reversed(range(depth_splits)):
        node = split("vertical", 0.5, leaf(i), node)
    return {"schema_version": 1, "sessions": [{"name": "deep", "windows": [
        {"name": "w", "layout": node, "panes": [{} for _ in range(depth_splits + 1)]}]}]}


case("valid-depth-128", dumps(chain(122), pretty=False), VALID)
corrupt("depth-129", dumps(chain(123), pretty=False), "archive.json")

# Size: decided on the length alone.
corrupt("size-16-mib-plus-1", without_records(phux_archive(1)), "archive.size", pad_to=MIB16 + 1)

# Strict JSON.
base = dumps(phux_archive())
corrupt("not-json", "{\"schema_version\":2,", "archive.json")
corrupt("bom", b"\xef\xbb\xbf" + base.encode(), "archive.json")
corrupt("invalid-utf8", base.encode().replace(b"main", b"m\xffin"), "archive.json")
corrupt("lone-surrogate", base.replace('"main"', '"m\\ud800in"'), "archive.json")
corrupt("trailing-data", base + "{}", "archive.json")
corrupt("duplicate-key-top", base.replace('"schema_version": 2,', '"schema_version": 2,\n  "schema_version": 2,', 1), "archive.json")
corrupt("duplicate-key-record", base.replace('"native_id": "session-42"', '"native_id": "session-42", "native_id": "other"', 1), "archive.json")
corrupt("duplicate-key-by-escape", base.replace('"name": "main",', '"name": "main", "na\\u006de": "x",', 1), "archive.json")
corrupt("unsafe-integer", base.replace('"cols": 120', '"cols": 9007199254740992', 1), "archive.json")
corrupt("fraction-outside-ratio", base.replace('"cols": 120', '"cols": 120.5', 1), "archive.json")
corrupt("exponent-outside-ratio", base.replace('"cols": 120', '"cols": 1e2', 1), "archive.json")

# Schema version.
for name, text in [("schema-0", "0"), ("schema-3", "3"), ("schema-string-2", '"2"'), ("schema-null", "null"),
                   ("schema-negative-1", "-1")]:
    case(name, base.replace('"schema_version": 2', f'"schema_version": {text}', 1), SCHEMA, "archive.schema_version")
case("schema-missing", '{"sessions":[]}', SCHEMA, "archive.schema_version")
corrupt("schema-fraction", base.replace('"schema_version": 2', '"schema_version": 2.0', 1), "archive.json")
corrupt("top-level-array", "[1,2]", "archive.shape")

# Schema-1 smuggling.
corrupt("schema1-smuggling", phux_archive(1), "archive.schema1_record")
corrupt("schema1-smuggling-invalid-record", mutate(lambda a: first_pane(a).update(
    agent_session=record(native=" padded")), schema=1), "archive.schema1_record")

# Record rules inside archives.
for name, rec in [
    ("plugin-id-121-bytes", record(plugin="p" * 121)),
    ("plugin-id-empty", record(plugin="")),
    ("plugin-id-padded", record(plugin=" com.phux.agents")),
    ("plugin-id-nbsp-padded", record(plugin="com.phux.agents\u00a0")),
    ("plugin-id-tab", record(plugin="com\tphux")),
    ("integration-id-padded", record(integration="codex ")),
    ("integration-id-c1", record(integration="co\u0085dex")),
    ("native-id-padded", record(native=" session-42")),
    ("native-id-option-shaped", record(native="--dangerously-bypass-approvals-and-sandbox")),
    ("native-id-dash-x", record(native="-x")),
    ("native-id-newline", record(native="session\n42")),
    ("native-id-c1", record(native="session\u009b42")),
    ("native-id-del", record(native="session\u007f")),
    ("native-id-1025-bytes", record(native="n" * 1025)),
    ("native-id-1025-bytes-two-byte", record(native="é" * 512 + "n")),
    ("native-id-1025-bytes-four-byte", record(native="\U0001F600" * 256 + "n")),
    ("native-id-ideographic-padded", record(native="\u3000session-42")),
    ("native-id-line-separator-end", record(native="session-42\u2028")),
    ("plugin-id-121-bytes-three-byte", record(plugin="€" * 40 + "p")),
    ("integration-id-em-space-end", record(integration="codex\u2003")),
    ("native-id-empty", record(native="")),
]:
    corrupt(name, mutate(lambda a, r=rec: first_pane(a).update(agent_session=r)), "archive.record")

# Closed shapes.
corrupt("record-with-argv", mutate(lambda a: first_pane(a)["agent_session"].update(argv=["sh", "-c", "x"])), "archive.shape")
corrupt("record-with-env", mutate(lambda a: first_pane(a)["agent_session"].update(env={"A": "b"})), "archive.shape")
corrupt("record-missing-native-id", mutate(lambda a: first_pane(a)["agent_session"].pop("native_id")), "archive.shape")
corrupt("record-native-id-number", mutate(lambda a: first_pane(a)["agent_session"].update(native_id=42)), "archive.shape")
corrupt("record-null", mutate(lambda a: first_pane(a).update(agent_session=None)), "archive.shape")
corrupt("unknown-top-field", mutate(lambda a: a.update(saved_at="now")), "archive.shape")
corrupt("record-unknown-member-in-additive-pane", mutate(lambda a: (
    first_pane(a).update(future=True), first_pane(a)["agent_session"].update(future=True))), "archive.shape")
corrupt("missing-sessions", {"schema_version": 2}, "archive.shape")
corrupt("missing-windows", mutate(lambda a: a["sessions"][1].pop("windows")), "archive.shape")
corrupt("missing-panes", mutate(lambda a: a["sessions"][0]["windows"][1].pop("panes")), "archive.shape")
corrupt("missing-session-name", mutate(lambda a: a["sessions"][1].pop("name")), "archive.shape")
corrupt("active-null", mutate(lambda a: first_pane(a).update(active=None)), "archive.shape")
corrupt("cols-string", mutate(lambda a: first_pane(a).update(cols="80")), "archive.shape")
corrupt("title-number", mutate(lambda a: first_pane(a).update(title=7)), "archive.shape")
corrupt("layout-unknown-kind", mutate(lambda a: first_window(a).update(layout={"kind": "tabs", "pane": 0})), "archive.shape")
corrupt("layout-pane-with-ratio", mutate(lambda a: first_window(a)["layout"].update(
    left={"kind": "pane", "pane": 0, "ratio": 0.5})), "archive.shape")
corrupt("layout-split-missing-right", mutate(lambda a: first_window(a)["layout"].pop("right")), "archive.shape")
corrupt("layout-dir-diagonal", mutate(lambda a: first_window(a)["layout"].update(dir="diagonal")), "archive.shape")

# Ratios: integers and strings are the wrong type; decimals outside (0,1) are not JSON here.
for name, text, rule in [("ratio-0", "0", "archive.shape"), ("ratio-1", "1", "archive.shape"),
                         ("ratio-string", '"0.5"', "archive.shape"), ("ratio-0.0", "0.0", "archive.json"),
                         ("ratio-1.0", "1.0", "archive.json"), ("ratio-1.5", "1.5", "archive.json"),
                         ("ratio-negative", "-0.5", "archive.json"), ("ratio-exponent", "5e-1", "archive.json"),
                         ("ratio-exponent-tiny", "1e-07", "archive.json"),
                         ("ratio-rounds-to-1", "0.99999999999999999999", "archive.json"),
                         ("ratio-33-bytes", "0." + "3" * 31, "archive.json")]:
    corrupt(name, base.replace("0.33333334", text, 1), rule)

# Session names.
corrupt("duplicate-session", mutate(lambda a: a["sessions"][1].update(name="ops")), "archive.duplicate_session")
corrupt("blank-session-empty", mutate(lambda a: a["sessions"][1].update(name="")), "archive.duplicate_session")
corrupt("blank-session-spaces", mutate(lambda a: a["sessions"][1].update(name=" \t\u3000")), "archive.duplicate_session")

# Layout indexes.
corrupt("layout-index-out-of-range", mutate(lambda a: first_window(a)["layout"].update(left=leaf(3))), "archive.layout")
corrupt("layout-index-twice", mutate(lambda a: first_window(a)["layout"].update(left=leaf(1))), "archive.layout")
corrupt("layout-index-negative", mutate(lambda a: first_window(a)["layout"].update(left=leaf(-1))), "archive.layout")
corrupt("layout-misses-a-pane", mutate(lambda a: first_window(a).update(layout=split("vertical", 0.5, leaf(0), leaf(1)))), "archive.layout")
corrupt("layout-without-panes", mutate(lambda a: a["sessions"][0]["windows"][1].update(layout=leaf(0), panes=[])), "archive.layout")

# Cells and argv.
corrupt("cols-65536", mutate(lambda a: first_pane(a).update(cols=65536)), "archive.cells")
corrupt("rows-negative", mutate(lambda a: first_pane(a).update(rows=-1)), "archive.cells")
corrupt("command-empty", mutate(lambda a: first_pane(a).update(command=[])), "archive.argv")
corrupt("command-257", mutate(lambda a: a["sessions"][0].update(command=["x"] * 257)), "archive.argv")
corrupt("command-not-strings", mutate(lambda a: first_pane(a).update(command=["sh", 1])), "archive.shape")

# First failure wins in the spec's order, whatever the member order.
corrupt("order-shape-after-record", mutate(lambda a: (
    first_pane(a)["agent_session"].update(native_id="-x"), a["sessions"][1].update(windows={}))), "archive.shape")
corrupt("order-record-before-duplicate", mutate(lambda a: (
    a["sessions"][1].update(name="ops"), a["sessions"][0]["windows"][0]["panes"][2].update(
        agent_session=record(native="\n")))), "archive.record")
corrupt("order-layout-before-cells", mutate(lambda a: (
    first_pane(a).update(cols=70000), a["sessions"][0]["windows"][1].update(layout=leaf(5)))), "archive.layout")


# Standalone records (the agent-session/v1 value on every write path).
record_cases = []


def rec_case(name, data, result, rule=None):
    if isinstance(data, dict):
        data = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if isinstance(data, str):
        data = data.encode("utf-8")
    record_cases.append(({"case": name, "kind": "record", "file": f"records/{name}.json",
                          "result": result, "rule": rule}, data))


rec_case("valid", record(), VALID)
rec_case("valid-spaced-any-order", '{ "native_id" : "n" , "integration_id":"i", "plugin_id":"p" }', VALID)
rec_case("valid-hostile-but-inert", record(native="team session; printf x"), VALID)
rec_case("with-argv", dict(record(), argv=["sh"]), RECORD, "record.shape")
rec_case("with-env", dict(record(), env={"A": "1"}), RECORD, "record.shape")
rec_case("missing-plugin-id", {"integration_id": "i", "native_id": "n"}, RECORD, "record.shape")
rec_case("array", '["p","i","n"]', RECORD, "record.shape")
rec_case("duplicate-key", '{"plugin_id":"p","plugin_id":"q","integration_id":"i","native_id":"n"}', RECORD, "record.json")
rec_case("lone-surrogate", '{"plugin_id":"p","integration_id":"i","native_id":"\\udc00"}', RECORD, "record.json")
rec_case("empty", "", RECORD, "record.size")
rec_case("4097-bytes", json.dumps(record()) + " " * (4097 - len(json.dumps(record()))), RECORD, "record.size")
rec_case("4096-bytes", json.dumps(record()) + " " * (4096 - len(json.dumps(record()))), VALID)
rec_case("plugin-id-121-bytes", record(plugin="p" * 121), RECORD, "record.owner_length")
rec_case("plugin-id-padded", record(plugin="p "), RECORD, "record.owner_padded")
rec_case("integration-id-c1", record(integration="i\u0080"), RECORD, "record.owner_control")
rec_case("native-id-1025-bytes", record(native="n" * 1025), RECORD, "native.length")
rec_case("native-id-padded", record(native="n\u2003"), RECORD, "native.padded")
rec_case("native-id-option-shaped", record(native="--dangerously-bypass-approvals-and-sandbox"), RECORD, "native.option_shaped")
rec_case("native-id-newline", record(native="a\nb"), RECORD, "native.control")


for path in HERE.glob("*.json"):
    path.unlink()
shutil.rmtree(HERE / "records", ignore_errors=True)
(HERE / "records").mkdir()
with open(HERE / "expected.jsonl", "w", encoding="utf-8") as out:
    for row, data in cases + record_cases:
        (HERE / row["file"]).write_bytes(data)
        out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
print(f"{len(cases)} archive cases, {len(record_cases)} record cases")
