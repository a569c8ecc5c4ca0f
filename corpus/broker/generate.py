#!/usr/bin/env python3
"""Builds the single-writer corpus (session keys, resume plans, alias sidecars, owner
files and client control frames) and its expected verdicts.

Independent of the Rust code on purpose: every case states its verdict by hand, from
docs/spec/single-writer.md, and files are built with Python's json module or as raw
bytes. Run from anywhere:
    python3 corpus/broker/generate.py
It rewrites keys/, resume/, sidecar/, frames/ and expected.jsonl; commit the result.
The fuzz targets broker_key, broker_resume_plan, broker_alias_sidecar,
broker_owner_file and broker_frames are seeded from these files (fuzz/run-brief.sh).
"""
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
U = "6a73c0de-1234-4abc-8def-0123456789ab"
U2 = "0b1c2d3e-4f50-4a6b-9c7d-8e9fa0b1c2d3"
KEY = "invalid_params.key"
ENGINE = "not_found.engine"
CORRUPT = "conflict.sidecar_corrupt"
VERSION = "unsupported.sidecar_version"
SIZE = "unsupported.sidecar_size"
FILE_KIND = "invalid_params.file"
CAP = 64 * 1024

cases = []


def dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# ---- session keys -------------------------------------------------------------

def key(name, text, result, rule=None, physical=None, new=False):
    cases.append(("keys", f"{name}.key", text.encode("utf-8"),
                  {"case": name, "kind": "key", "file": f"keys/{name}.key", "new": new,
                   "result": result, "rule": rule, **({"physical_key": physical} if physical else {})}))


def valid_key(name, text, new=False):
    engine, native = text.split(":", 1)
    key(name, text, "valid", physical=f"{engine}@{native}", new=new)


valid_key("claude-uuid", f"claude:{U}")
valid_key("gemini-uuid", f"gemini:{U2}")
valid_key("opencode-ses", "opencode:ses_Ab1")
valid_key("opencode-ses-64", "opencode:ses_" + "Z9" * 32)
valid_key("opencode-placeholder-new", f"opencode:new-{U}", new=True)
valid_key("opencode-ses-with-new", "opencode:ses_Ab1", new=True)
key("opencode-placeholder-not-new", f"opencode:new-{U}", KEY, "key.placeholder_not_new")
key("claude-placeholder-pinned", f"claude:new-{U}", KEY, "key.placeholder_pinned", new=True)
key("claude-placeholder-pinned-not-new", f"claude:new-{U}", KEY, "key.placeholder_pinned")
key("no-separator", "claude", KEY, "key.no_separator")
key("empty", "", KEY, "key.no_separator")
key("engine-uppercase", f"Claude:{U}", KEY, "key.engine_syntax")
key("engine-empty", ":ses_a", KEY, "key.engine_syntax")
key("engine-digit-first", "1x:ses_a", KEY, "key.engine_syntax")
key("engine-33-bytes", "a" * 33 + ":ses_a", KEY, "key.engine_syntax")
key("engine-dot", "open.code:ses_a", KEY, "key.engine_syntax")
key("engine-unknown", f"codex:{U}", ENGINE, "key.engine_unknown")
# The peer squashes [^A-Za-z0-9_.-] to '_', so these two share one lock there.
key("peer-collision-a_b-c", "a_b:c", ENGINE, "key.engine_unknown")
key("peer-collision-a-b_c", "a:b_c", ENGINE, "key.engine_unknown")
key("traversal", "claude:6a73-bad/../x", KEY, "key.id_syntax")
key("dotdot", "opencode:..", KEY, "key.id_syntax")
key("uuid-uppercase", f"claude:{U.upper()}", KEY, "key.id_syntax")
key("uuid-no-dashes", "claude:" + U.replace("-", ""), KEY, "key.id_syntax")
key("uuid-braced", "claude:{" + U + "}", KEY, "key.id_syntax")
key("ses-empty-tail", "opencode:ses_", KEY, "key.id_syntax")
key("ses-65", "opencode:ses_" + "a" * 65, KEY, "key.id_syntax")
key("ses-dash", "opencode:ses_a-b", KEY, "key.id_syntax")
key("uuid-for-ses-engine", f"opencode:{U}", KEY, "key.id_syntax")
key("ses-for-uuid-engine", "claude:ses_a", KEY, "key.id_syntax")
key("at-sign", "opencode:ses_a@b", KEY, "key.id_syntax")
key("second-colon", f"claude:{U}:x", KEY, "key.id_syntax")
key("non-ascii", "claude:é", KEY, "key.id_syntax")
key("placeholder-uppercase", f"opencode:new-{U.upper()}", KEY, "key.id_syntax", new=True)
key("too-long-97", "opencode:ses_" + "a" * 84, KEY, "key.too_long")
key("too-long-before-separator", "x" * 97, KEY, "key.too_long")

# ---- resume plans ---------------------------------------------------------------

def resume(name, words, plan=None, frm=None, result=None, rule=None):
    exp = {"case": name, "kind": "resume", "file": f"resume/{name}.txt"}
    if plan:
        exp["plan"] = plan
        if frm is not None:
            exp["from"] = frm
    else:
        exp["result"], exp["rule"] = result, rule
    cases.append(("resume", f"{name}.txt", (words + "\n").encode(), exp))


# words: have gen total ring_len master_gen ("-" = absent)
resume("delta", "100 1 150 80 1", "delta", 100)
resume("delta-empty", "150 1 150 80 1", "delta", 150)
resume("delta-absent-gen", "100 - 150 80 1", "delta", 100)
resume("delta-ring-edge", "70 1 150 80 1", "delta", 70)
resume("delta-whole-ring", "1 0 262144 262144 0", "delta", 1)
resume("delta-max-safe", "9007199254740991 - 9007199254740991 262144 0", "delta", 9007199254740991)
resume("fell-behind", "69 1 150 80 1", "fell_behind")
resume("fell-behind-empty-ring", "1 - 10 0 0", "fell_behind")
resume("delta-empty-ring-at-total", "10 - 10 0 0", "delta", 10)
resume("fresh-absent", "- 1 150 80 1", "fresh")
resume("fresh-zero", "0 1 150 80 1", "fresh")
resume("fresh-zero-gen-mismatch", "0 2 150 80 1", "fresh")
resume("fresh-empty-master", "0 - 0 0 0", "fresh")
resume("full-gen-mismatch", "100 2 150 80 1", "full")
resume("full-gen-mismatch-at-total", "150 0 150 80 1", "full")
resume("full-have-beyond-total", "151 1 150 80 1", "full")
resume("full-have-beyond-empty", "5 - 0 0 0", "full")
resume("have-negative", "-1 - 150 80 1", result="invalid_params.have", rule="counter.syntax")
resume("have-fraction", "1.5 - 150 80 1", result="invalid_params.have", rule="counter.syntax")
resume("have-leading-zero", "01 - 150 80 1", result="invalid_params.have", rule="counter.syntax")
resume("gen-unsafe", "1 9007199254740992 150 80 1", result="invalid_params.gen", rule="counter.range")
resume("total-hex", "1 - 0x10 8 1", result="invalid_params.total", rule="counter.syntax")
resume("ring-exceeds-total", "1 - 10 11 0", result="invalid_params.ring_len", rule="resume.ring_exceeds_total")

# ---- alias sidecars ---------------------------------------------------------------

P1, P2 = f"opencode@new-{U}", f"opencode@new-{U2}"


def sidecar(name, fname, data, result, rule=None):
    if isinstance(data, (dict, list)):
        data = (dumps(data) + "\n").encode("utf-8")
    elif isinstance(data, str):
        data = data.encode("utf-8")
    cases.append(("sidecar", f"{name}/{fname}", data,
                  {"case": name, "kind": "sidecar", "file": f"sidecar/{name}/{fname}",
                   "result": result, "rule": rule}))


def alias(name, data, result="valid", rule=None):
    sidecar("alias-" + name, "aliases.json", data, result, rule)


def aliases(m, version=1):
    return {"version": version, "aliases": m}


alias("empty", aliases({}))
alias("one", aliases({P1: "opencode@ses_Ab1"}))
alias("two", aliases({P1: "opencode@ses_Ab1", P2: "opencode@ses_Cd2"}))
alias("members-reversed", {"aliases": {P1: "opencode@ses_Ab1"}, "version": 1})
alias("escaped-at", '{"version":1,"aliases":{"opencode\\u0040new-%s":"opencode@ses_Ab1"}}' % U)
alias("pretty", json.dumps(aliases({P1: "opencode@ses_Ab1"}), indent=2) + "\n")
alias("bom", b"\xef\xbb\xbf" + dumps(aliases({})).encode(), CORRUPT, "json.bom")
alias("not-utf8", b'{"version":1,"aliases":{"\xff":"x"}}', CORRUPT, "json.utf8")
alias("lone-surrogate", '{"version":1,"aliases":{"\\ud800":"x"}}', CORRUPT, "json.lone_surrogate")
alias("control-in-string", '{"version":1,"aliases":{"a\tb":"x"}}', CORRUPT, "json.control_in_string")
alias("trailing-data", dumps(aliases({})) + "\n{}", CORRUPT, "json.trailing_data")
alias("duplicate-version", '{"version":1,"version":1,"aliases":{}}', CORRUPT, "json.duplicate_key")
alias("duplicate-by-escape",
      '{"version":1,"aliases":{"%s":"opencode@ses_a","opencode@new-%s":"opencode@ses_b"}}'
      % (P1, U.replace("a", "\\u0061", 1)), CORRUPT, "json.duplicate_key")
alias("unsafe-integer", '{"version":9007199254740992,"aliases":{}}', CORRUPT, "json.unsafe_integer")
alias("empty-file", b"", CORRUPT, "json.syntax")
# The top-level object is depth 1, so 32 nested arrays reach depth 33.
alias("depth-33", '{"version":1,"aliases":{},"x":' + "[" * 32 + "]" * 32 + "}", SIZE, "json.depth")
alias("depth-32-is-schema", '{"version":1,"aliases":{},"x":' + "[" * 31 + "]" * 31 + "}",
      CORRUPT, "schema.unknown_field")
body = dumps(aliases({P1: "opencode@ses_Ab1"}))
alias("exactly-64-kib", body + " " * (CAP - len(body)))
alias("over-64-kib", body + " " * (CAP + 1 - len(body)), SIZE, "file.too_large")
alias("array", [], CORRUPT, "schema.not_object")
alias("missing-version", {"aliases": {}}, CORRUPT, "schema.missing_field")
alias("version-string", {"version": "1", "aliases": {}}, CORRUPT, "schema.type")
alias("version-fraction", '{"version":1.0,"aliases":{}}', CORRUPT, "schema.type")
alias("version-2", aliases({}, 2), VERSION, "alias.version_unsupported")
alias("version-0", aliases({}, 0), VERSION, "alias.version_unsupported")
alias("version-2-other-shape", {"version": 2, "aliases": [1, 2], "extra": True}, VERSION,
      "alias.version_unsupported")
alias("unknown-member", {"version": 1, "aliases": {}, "note": "x"}, CORRUPT, "schema.unknown_field")
alias("missing-aliases", {"version": 1}, CORRUPT, "schema.missing_field")
alias("aliases-array", {"version": 1, "aliases": []}, CORRUPT, "schema.type")
alias("target-number", aliases({P1: 1}), CORRUPT, "schema.type")
alias("key-not-placeholder", aliases({"opencode@ses_a": "opencode@ses_b"}), CORRUPT, "alias.placeholder_syntax")
alias("key-colon-form", aliases({f"opencode:new-{U}": "opencode@ses_b"}), CORRUPT, "alias.placeholder_syntax")
alias("key-traversal", aliases({"../x": "opencode@ses_b"}), CORRUPT, "alias.placeholder_syntax")
alias("target-placeholder", aliases({P1: P2}), CORRUPT, "alias.target_syntax")
alias("target-slash", aliases({P1: "opencode@ses_a/b"}), CORRUPT, "alias.target_syntax")
alias("target-colon-form", aliases({P1: "opencode:ses_a"}), CORRUPT, "alias.target_syntax")
alias("engine-mismatch", aliases({P1: "claude@ses_a"}), CORRUPT, "alias.engine_mismatch")
alias("target-duplicate", aliases({P1: "opencode@ses_a", P2: "opencode@ses_a"}), CORRUPT,
      "alias.target_duplicate")

# ---- owner files --------------------------------------------------------------------

FP = "0123456789abcdef0123456789abcdef"
TAB = "fedcba9876543210"
OWNER_NAME = "opencode@ses_Ab1.owner"


def owner_rec(**over):
    rec = {"fp": FP, "tab": TAB, "label": "desk", "since": 1764547200000, "heartbeat": 1764547201000}
    rec.update(over)
    return {k: v for k, v in rec.items() if v is not None}


def owner(name, data, result="valid", rule=None, fname=OWNER_NAME):
    sidecar("owner-" + name, fname, data, result, rule)


owner("valid", owner_rec())
owner("valid-placeholder-name", owner_rec(), fname=f"opencode@new-{U}.owner")
owner("valid-uuid-name", owner_rec(), fname=f"claude@{U}.owner")
owner("empty-label", owner_rec(label=""))
owner("label-128-bytes", owner_rec(label="é" * 64))
owner("label-escaped-quote", owner_rec(label='a "b" \\ c'))
owner("since-equals-heartbeat", owner_rec(since=5, heartbeat=5))
owner("zero-times", owner_rec(since=0, heartbeat=0))
owner("members-reordered", '{"heartbeat":2,"since":1,"label":"","tab":"%s","fp":"%s"}' % (TAB, FP))
owner("label-129-bytes", owner_rec(label="é" * 64 + "x"), CORRUPT, "owner.label_syntax")
owner("label-bell", owner_rec(label="a\u0007"), CORRUPT, "owner.label_syntax")
owner("label-del", owner_rec(label="a\u007f"), CORRUPT, "owner.label_syntax")
owner("label-c1", owner_rec(label="a\u0085"), CORRUPT, "owner.label_syntax")
owner("fp-uppercase", owner_rec(fp=FP.upper()), CORRUPT, "owner.fp_syntax")
owner("fp-31", owner_rec(fp=FP[1:]), CORRUPT, "owner.fp_syntax")
owner("tab-17", owner_rec(tab=TAB + "0"), CORRUPT, "owner.tab_syntax")
owner("tab-non-hex", owner_rec(tab="g" * 16), CORRUPT, "owner.tab_syntax")
owner("since-negative", owner_rec(since=-1), CORRUPT, "owner.time_range")
owner("since-fraction", owner_rec(since=1.5), CORRUPT, "owner.time_range")
owner("heartbeat-exponent",
      '{"fp":"%s","tab":"%s","label":"","since":1,"heartbeat":1e3}' % (FP, TAB), CORRUPT, "owner.time_range")
owner("heartbeat-before-since", owner_rec(since=10, heartbeat=9), CORRUPT, "owner.heartbeat_before_since")
owner("since-string", owner_rec(since="1"), CORRUPT, "schema.type")
owner("fp-number", owner_rec(fp=1), CORRUPT, "schema.type")
owner("label-null", owner_rec() | {"label": None}, CORRUPT, "schema.type")
owner("missing-heartbeat", {k: v for k, v in owner_rec().items() if k != "heartbeat"}, CORRUPT,
      "schema.missing_field")
owner("peer-shape", {"instance": "default", "conn_id": "c" * 32, "fp": FP, "tab_id": TAB, "label": "",
                     "since": 1764547200.5, "last_seen": 1764547201.25}, CORRUPT, "schema.unknown_field")
owner("array", [FP, TAB], CORRUPT, "schema.not_object")
owner("duplicate-fp", '{"fp":"%s","fp":"%s","tab":"%s","label":"","since":1,"heartbeat":2}' % (FP, FP, TAB),
      CORRUPT, "json.duplicate_key")
sidecar("owner-name-colon", "opencode:ses_Ab1.owner", dumps(owner_rec()), FILE_KIND, "sidecar.kind_unknown")
sidecar("owner-name-bad-id", "opencode@ses_.owner", dumps(owner_rec()), FILE_KIND, "sidecar.kind_unknown")
sidecar("not-a-sidecar", "notes.json", dumps(aliases({})), FILE_KIND, "sidecar.kind_unknown")


# ---- client control frames ------------------------------------------------------

MALFORMED = "invalid_request.malformed"


def frame(name, text, result="valid", rule=None):
    data = text.encode("utf-8") if isinstance(text, str) else text
    cases.append(("frames", f"{name}.json", data,
                  {"case": name, "kind": "frame", "file": f"frames/{name}.json",
                   "result": result, "rule": rule}))


frame("input", dumps({"t": "i", "d": "ls -la\r"}))
frame("input-empty", dumps({"t": "i", "d": ""}))
frame("input-escapes", '{"t":"i","d":"\\u001b[A\\n\\u00e9"}')
frame("input-d-first", '{"d":"x","t":"i"}')
frame("resize", dumps({"t": "r", "cols": 80, "rows": 24}))
frame("resize-max", dumps({"t": "r", "cols": 65535, "rows": 1}))
frame("ping", dumps({"t": "ping"}))
frame("ping-spaced", ' { "t" : "ping" } \n')
frame("not-json", "{", MALFORMED, "json.syntax")
frame("array", "[]", MALFORMED, "schema.not_object")
frame("no-type", dumps({"d": "x"}), MALFORMED, "schema.missing_field")
frame("type-number", dumps({"t": 1}), MALFORMED, "schema.type")
frame("server-type", dumps({"t": "seq", "n": 1}), MALFORMED, "frame.unknown_type")
frame("role-from-client", dumps({"t": "role", "role": "owner"}), MALFORMED, "frame.unknown_type")
frame("ping-extra", dumps({"t": "ping", "x": 1}), MALFORMED, "schema.unknown_field")
frame("input-missing-d", dumps({"t": "i"}), MALFORMED, "schema.missing_field")
frame("input-d-array", dumps({"t": "i", "d": []}), MALFORMED, "schema.type")
frame("input-with-cols", dumps({"t": "i", "d": "", "cols": 1}), MALFORMED, "schema.unknown_field")
frame("resize-zero", dumps({"t": "r", "cols": 0, "rows": 24}), MALFORMED, "frame.size_range")
frame("resize-65536", dumps({"t": "r", "cols": 80, "rows": 65536}), MALFORMED, "frame.size_range")
frame("resize-negative", dumps({"t": "r", "cols": -80, "rows": 24}), MALFORMED, "frame.size_range")
frame("resize-fraction", '{"t":"r","cols":80.5,"rows":24}', MALFORMED, "frame.size_range")
frame("resize-string", dumps({"t": "r", "cols": "80", "rows": 24}), MALFORMED, "schema.type")
frame("resize-missing-rows", dumps({"t": "r", "cols": 80}), MALFORMED, "schema.missing_field")
frame("duplicate-type", '{"t":"i","t":"i","d":""}', MALFORMED, "json.duplicate_key")
frame("lone-surrogate", '{"t":"i","d":"\\ud800"}', MALFORMED, "json.lone_surrogate")
frame("trailing", dumps({"t": "ping"}) + "{}", MALFORMED, "json.trailing_data")
frame("too-large", dumps({"t": "i", "d": "a" * (64 * 1024)}), "invalid_request.frame_size", "frame.too_large")


def main():
    for sub in ("keys", "resume", "sidecar", "frames"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    names = set()
    with open(HERE / "expected.jsonl", "w", encoding="utf-8") as out:
        for sub, rel, data, exp in cases:
            assert exp["case"] not in names, exp["case"]
            names.add(exp["case"])
            path = HERE / sub / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            out.write(json.dumps(exp, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{len(cases)} cases")


if __name__ == "__main__":
    main()
