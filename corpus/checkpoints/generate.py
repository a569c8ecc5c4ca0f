#!/usr/bin/env python3
"""Builds the checkpoint corpus and its expected verdicts.

Independent of the Rust writer on purpose: envelopes are made with the RFC's own
Python recipe (json.dumps, ensure_ascii=False, compact separators), mutations are
made on Python dicts or on raw text. Run from anywhere:
    python3 corpus/checkpoints/generate.py
It rewrites every case directory and expected.jsonl; commit the result.
"""
import copy
import hashlib
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
RFC = HERE / "rfc"
CID = "c01234567-89ab-4cde-8fab-0123456789ab"
CORRUPT = "conflict.checkpoint_corrupt"
FORMAT = "unsupported.checkpoint_format"
SIZE = "unsupported.checkpoint_size"
VALID = "valid"


def rfc_payload(n):
    return (RFC / f"payload-format{n}.json").read_text(encoding="utf-8").rstrip("\n")


def dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def envelope(fmt, payload_text):
    """The RFC's script, byte for byte."""
    env = {"format": fmt, "payload": payload_text,
           "sha256": hashlib.sha256(payload_text.encode("utf-8")).hexdigest()}
    return (json.dumps(env, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def raw_envelope(fmt_text, payload_text, sha=None):
    """An envelope assembled as text, for cases json.dumps cannot express."""
    sha = sha or hashlib.sha256(payload_text.encode("utf-8")).hexdigest()
    return ('{"format":%s,"payload":%s,"sha256":"%s"}\n'
            % (fmt_text, json.dumps(payload_text, ensure_ascii=False), sha)).encode("utf-8")


P1, P2, P3 = (json.loads(rfc_payload(n)) for n in (1, 2, 3))


def base(n=3):
    return copy.deepcopy({1: P1, 2: P2, 3: P3}[n])


cases = []


def case(name, data, result, rule=None, file=None, **context):
    """data: bytes (whole file) or (format, payload dict or text)."""
    if isinstance(data, tuple):
        fmt, payload = data
        data = envelope(fmt, payload if isinstance(payload, str) else dumps(payload))
    cases.append((name, file or f"{CID}.json", data, result, rule, context))


def mutate(n, fn, fmt=None):
    p = base(n)
    fn(p)
    return (fmt or n, p)


def plain_text(rows, history=()):
    return {"availability": "plain", "saved_at": "2026-11-09T11:00:00.000Z",
            "expires_at": "2026-11-10T11:00:00.000Z",
            "screen": ["" for _ in range(rows)], "history": list(history)}


# --- valid files of every format -------------------------------------------------
for n in (1, 2, 3):
    case(f"rfc-format{n}", envelope(n, rfc_payload(n)), VALID)
case("rfc-format1-read-as-2", envelope(2, rfc_payload(1)), VALID)
case("rfc-format1-read-as-3", envelope(3, rfc_payload(1)), VALID)
case("rfc-format2-read-as-3", envelope(3, rfc_payload(2)), VALID)


def v_plain(p):
    p["panes"][0]["text"] = plain_text(2, ["earlier", "é — ✓ 漢字 🙂"])
    p["panes"][0]["rows"] = 2
    p["panes"][0]["text"]["screen"] = ["$ ls", "  indented  "]
    p["panes"][1]["text"] = {"availability": "expired"}


case("valid-plain-text", mutate(3, v_plain), VALID)


def v_empty(p):
    p["sessions"], p["windows"], p["panes"] = [], [], []


case("valid-empty", mutate(1, v_empty), VALID)


def v_empty_containers(p):
    p["sessions"].append({"session": "s1", "name": "empty session"})
    p["windows"].append({"window": "w1", "session": "s0", "name": "empty window",
                         "revision": 1, "nodes": []})


case("valid-empty-containers", mutate(1, v_empty_containers), VALID)


def v_clean(p):
    p["shutdown"] = "clean"
    for pane in p["panes"]:
        pane["state"] = "exited"
    p["panes"][0]["signal"] = "SIGKILL"
    p["panes"][2]["previous_state"] = "interrupted"
    p["panes"][3]["previous_state"] = "exited"
    p["panes"][3]["exit_code"] = 255


case("valid-clean-exits", mutate(2, v_clean), VALID)


def v_ids(p):
    p["sessions"] = [{"session": "s2", "name": "two"}, {"session": "s10", "name": "ten"},
                     {"session": "s9007199254740991", "name": "max"}]
    p["windows"][0]["session"] = "s10"
    for pane in p["panes"]:
        pane["session"] = "s10"
    p["generation"] = 9007199254740991
    p["uid"] = 0


case("valid-numeric-order-and-max-ids", mutate(3, v_ids), VALID)


def v_ratio_5000(p):
    p["windows"][0]["nodes"][2]["ratio"] = 5000
    p["windows"][0]["nodes"][0]["ratio"] = 1


case("valid-ratio-bounds", mutate(3, v_ratio_5000), VALID)


def v_float_full(p):
    p["panes"][3]["float"] = {"preset": "a.b", "width": "65535", "height": "100%",
                              "anchor": "center", "x": -4096, "y": 4096, "min_cols": 1,
                              "min_rows": 65535, "border": "heavy", "title": "x" * 128,
                              "z": 9007199254740991}
    p["panes"][3]["tags"] = [{"key": "a" + "b" * 63, "value": "v" * 256}] + \
        [{"key": f"k{i:02}", "value": "v"} for i in range(15)]


case("valid-float-and-tag-bounds", mutate(2, v_float_full), VALID)
case("valid-escaped-strings",
     raw_envelope("1", rfc_payload(1).replace('"name":"work"', '"name":"w\\u00f6rk \\"q\\" \\\\ \\/"')),
     VALID)
case("valid-whitespace",
     raw_envelope(" 1 ", rfc_payload(1).replace(",", " ,\n\t").replace('":', '" : ')), VALID)

# --- file and JSON layer ---------------------------------------------------------
case("too-large", envelope(1, rfc_payload(1)), SIZE, "file.too_large", max_bytes=65536 // 128)
case("bom", b"\xef\xbb\xbf" + envelope(1, rfc_payload(1)), CORRUPT, "json.bom")
case("invalid-utf8", envelope(1, rfc_payload(1)).replace(b"work", b"w\xffrk"), CORRUPT, "json.utf8")
case("overlong-utf8", envelope(1, rfc_payload(1)).replace(b"work", b"w\xc0\xafrk"), CORRUPT, "json.utf8")
case("lone-surrogate-envelope", raw_envelope("1", rfc_payload(1)).replace(b"work", b"w\\ud800rk"),
     CORRUPT, "json.lone_surrogate")
# A high surrogate followed by `\\u` and no four hex digits: the second escape is no
# escape at all, so json.syntax (found by fuzz target json_differential, serde_json).
case("surrogate-then-bad-escape",
     raw_envelope("1", rfc_payload(1)).replace(b"work", b"w\\ud83d\\udk00rk"), CORRUPT, "json.syntax")
case("lone-low-surrogate-payload",
     raw_envelope("1", rfc_payload(1).replace('"work"', '"w\\udc00rk"')), CORRUPT, "json.lone_surrogate")
case("truncated", envelope(1, rfc_payload(1))[:200], CORRUPT, "json.syntax")
case("empty-file", b"", CORRUPT, "json.syntax")
case("not-json", b"format=1\n", CORRUPT, "json.syntax")
case("control-in-string", raw_envelope("1", rfc_payload(1)).replace(b"work", b"wo\trk"),
     CORRUPT, "json.control_in_string")
case("duplicate-key-envelope",
     envelope(1, rfc_payload(1)).replace(b'{"format":1,', b'{"format":1,"format":1,'),
     CORRUPT, "json.duplicate_key")
case("duplicate-key-payload-nested",
     (1, rfc_payload(1).replace('"cols":80', '"cols":80,"cols":80')), CORRUPT, "json.duplicate_key")
case("duplicate-key-by-escape",
     (1, rfc_payload(1).replace('"name":"work"', '"name":"work","n\\u0061me":"x"')),
     CORRUPT, "json.duplicate_key")
case("duplicate-key-in-unknown-object",
     (1, rfc_payload(1).replace('"shutdown":"open"', '"shutdown":"open","x":{"a":1,"a":2}')),
     CORRUPT, "json.duplicate_key")
case("unsafe-integer", (1, rfc_payload(1).replace('"generation":1', '"generation":9007199254740992')),
     CORRUPT, "json.unsafe_integer")
case("unsafe-negative-integer", (1, rfc_payload(1).replace('"uid":1000', '"uid":-9007199254740992')),
     CORRUPT, "json.unsafe_integer")
case("trailing-data-envelope", envelope(1, rfc_payload(1)) + b"{}", CORRUPT, "json.trailing_data")
case("trailing-data-payload", (1, rfc_payload(1) + " x"), CORRUPT, "json.trailing_data")
case("trailing-newline-payload-ok", (1, rfc_payload(1) + "\n"), VALID)
case("leading-zero-number", (1, rfc_payload(1).replace('"uid":1000', '"uid":01000')),
     CORRUPT, "json.syntax")
case("depth-33-payload",
     (1, rfc_payload(1).replace('"shutdown":"open"', '"shutdown":"open","x":' + "[" * 32 + "]" * 32)),
     SIZE, "json.depth")
case("depth-32-payload-is-schema-error",
     (1, rfc_payload(1).replace('"shutdown":"open"', '"shutdown":"open","x":' + "[" * 31 + "]" * 31)),
     CORRUPT, "schema.unknown_field")
case("depth-33-envelope",
     b'{"format":1,"x":' + b"[" * 32 + b"]" * 32 + b"}\n", SIZE, "json.depth")

# --- envelope --------------------------------------------------------------------
case("envelope-array", b"[1]\n", CORRUPT, "envelope.not_object")
case("envelope-format-missing", b'{"payload":"{}","sha256":"%s"}\n' % hashlib.sha256(b"{}").hexdigest().encode(),
     CORRUPT, "envelope.format_missing")
case("envelope-format-string", raw_envelope('"1"', rfc_payload(1)), CORRUPT, "envelope.format_type")
case("envelope-format-fraction", raw_envelope("1.0", rfc_payload(1)), CORRUPT, "envelope.format_type")
case("envelope-format-exponent", raw_envelope("1e0", rfc_payload(1)), CORRUPT, "envelope.format_type")
for n in (0, 4, -1, 99):
    case(f"envelope-format-{n}", raw_envelope(str(n), rfc_payload(1)), FORMAT, "envelope.format_unsupported")
case("envelope-format-4-garbage-payload", b'{"format":4,"payload":7}\n', FORMAT, "envelope.format_unsupported")
case("envelope-extra-key", envelope(1, rfc_payload(1)).replace(b'{"format":1,', b'{"format":1,"note":"x",'),
     CORRUPT, "envelope.keys")
case("envelope-missing-sha256", b'{"format":1,"payload":"{}"}\n', CORRUPT, "envelope.keys")
case("envelope-payload-object", b'{"format":1,"payload":{},"sha256":"%s"}\n' % (b"0" * 64),
     CORRUPT, "envelope.payload_type")
case("envelope-sha256-uppercase",
     raw_envelope("1", rfc_payload(1), hashlib.sha256(rfc_payload(1).encode()).hexdigest().upper()),
     CORRUPT, "envelope.sha256_syntax")
_sha = hashlib.sha256(rfc_payload(1).encode()).hexdigest()
# JSON strings are compared after unescaping: an escaped hex digit is still hex.
case("envelope-escaped-sha256",
     raw_envelope("1", rfc_payload(1)).replace(('"sha256":"' + _sha[0]).encode(),
                                               ('"sha256":"\\u%04x' % ord(_sha[0])).encode(), 1),
     VALID)
case("envelope-bad-checksum", raw_envelope("1", rfc_payload(1), "0" * 64), CORRUPT, "envelope.checksum")
case("envelope-checksum-of-newline-payload",
     raw_envelope("1", rfc_payload(1), hashlib.sha256((rfc_payload(1) + "\n").encode()).hexdigest()),
     CORRUPT, "envelope.checksum")

# --- format strictness -----------------------------------------------------------
case("rfc-format2-read-as-1", envelope(1, rfc_payload(2)), CORRUPT, "schema.unknown_field")
case("rfc-format3-read-as-2", envelope(2, rfc_payload(3)), CORRUPT, "schema.unknown_field")
case("rfc-format3-read-as-1", envelope(1, rfc_payload(3)), CORRUPT, "schema.unknown_field")
case("format1-layer", mutate(1, lambda p: p["panes"][0].update(layer="float", float={"z": 1})),
     CORRUPT, "schema.unknown_field")
case("format1-tags", mutate(1, lambda p: p["panes"][0].update(tags=[{"key": "owner", "value": "x"}])),
     CORRUPT, "schema.unknown_field")
case("ratio-on-pane-node", mutate(3, lambda p: p["windows"][0]["nodes"][1].update(ratio=5000)),
     CORRUPT, "schema.unknown_field")
case("unknown-top-field", mutate(1, lambda p: p.update(extra=1)), CORRUPT, "schema.unknown_field")
case("unknown-session-field", mutate(1, lambda p: p["sessions"][0].update(pid=1)), CORRUPT, "schema.unknown_field")
case("unknown-window-field", mutate(1, lambda p: p["windows"][0].update(cwd="/")), CORRUPT, "schema.unknown_field")
case("unknown-pane-field", mutate(1, lambda p: p["panes"][0].update(argv=["sh"])), CORRUPT, "schema.unknown_field")
case("unknown-text-field", mutate(1, lambda p: p["panes"][0]["text"].update(screen=[])),
     CORRUPT, "schema.unknown_field")
case("unknown-float-field", mutate(2, lambda p: p["panes"][2]["float"].update(w=1)), CORRUPT, "schema.unknown_field")
case("unknown-tag-field", mutate(2, lambda p: p["panes"][0]["tags"][0].update(hidden=True)),
     CORRUPT, "schema.unknown_field")
case("payload-not-object", (1, "[]"), CORRUPT, "schema.type")
case("cols-string", mutate(1, lambda p: p["panes"][0].update(cols="80")), CORRUPT, "schema.type")
case("uid-fraction", (1, rfc_payload(1).replace('"uid":1000', '"uid":1000.0')), CORRUPT, "schema.type")
case("uid-exponent", (1, rfc_payload(1).replace('"uid":1000', '"uid":1e3')), CORRUPT, "schema.type")
case("missing-text", mutate(1, lambda p: p["panes"][0].pop("text")), CORRUPT, "schema.missing_field")
case("missing-sessions", mutate(1, lambda p: p.pop("sessions")), CORRUPT, "schema.missing_field")
case("missing-float-z", mutate(2, lambda p: p["panes"][2]["float"].pop("z")), CORRUPT, "schema.missing_field")
case("missing-plain-history", mutate(3, lambda p: (v_plain(p), p["panes"][0]["text"].pop("history"))),
     CORRUPT, "schema.missing_field")
for name, fn in [("state", lambda p: p["panes"][0].update(state="stopped")),
                 ("shutdown", lambda p: p.update(shutdown="dirty")),
                 ("axis", lambda p: p["windows"][0]["nodes"][0].update(axis="diag")),
                 ("availability", lambda p: p["panes"][0]["text"].update(availability="partial")),
                 ("kind", lambda p: p["windows"][0]["nodes"][1].update(kind="leaf")),
                 ("previous-state", lambda p: p["panes"][1].update(previous_state="running"))]:
    case(f"enum-{name}", mutate(3, fn), CORRUPT, "schema.enum")
for name, fn in [("cols-0", lambda p: p["panes"][0].update(cols=0)),
                 ("rows-65536", lambda p: p["panes"][0].update(rows=65536)),
                 ("generation-0", lambda p: p.update(generation=0)),
                 ("revision-0", lambda p: p["windows"][0].update(revision=0)),
                 ("exit-code-256", lambda p: p["panes"][1].update(exit_code=256)),
                 ("exit-code-negative", lambda p: p["panes"][1].update(exit_code=-1)),
                 ("uid-negative", lambda p: p.update(uid=-1))]:
    case(f"range-{name}", mutate(3, fn), CORRUPT, "schema.range")

# --- identity and context --------------------------------------------------------
case("checkpoint-id-uppercase", mutate(1, lambda p: p.update(checkpoint=CID.upper().replace("C", "c", 1))),
     CORRUPT, "checkpoint.id_syntax", file=CID.upper().replace("C", "c", 1) + ".json")
case("checkpoint-id-not-v4", mutate(1, lambda p: p.update(checkpoint=CID.replace("-4cde", "-1cde"))),
     CORRUPT, "checkpoint.id_syntax", file=CID.replace("-4cde", "-1cde") + ".json")
case("file-name-mismatch", envelope(1, rfc_payload(1)), CORRUPT, "checkpoint.file_name",
     file="c11111111-1111-4111-8111-111111111111.json")
case("file-name-without-json", envelope(1, rfc_payload(1)), CORRUPT, "checkpoint.file_name", file=CID)
case("socket-relative", mutate(1, lambda p: p.update(socket="run/venomx.sock")), CORRUPT, "checkpoint.socket_syntax")
case("socket-nul", mutate(1, lambda p: p.update(socket="/run/\u0000x")), CORRUPT, "checkpoint.socket_syntax")
case("socket-too-long", mutate(1, lambda p: p.update(socket="/" * 4097)), CORRUPT, "checkpoint.socket_syntax")
case("socket-mismatch", envelope(1, rfc_payload(1)), CORRUPT, "checkpoint.socket_mismatch",
     socket="/run/user/1000/other.sock")
case("socket-match", envelope(1, rfc_payload(1)), VALID, socket="/run/user/1000/venomx.sock", uid=1000)
case("uid-mismatch", envelope(1, rfc_payload(1)), CORRUPT, "checkpoint.uid_mismatch", uid=0)
for name, value in [("no-millis", "2026-11-06T22:00:00Z"), ("feb-30", "2026-02-30T22:00:00.000Z"),
                    ("leap-second", "2026-12-31T23:59:60.000Z"), ("offset", "2026-11-06T22:00:00.000+00:00")]:
    case(f"timestamp-{name}", mutate(1, lambda p, v=value: p.update(captured_at=v)), CORRUPT, "timestamp.syntax")
case("clean-with-running", mutate(1, lambda p: p.update(shutdown="clean")), CORRUPT, "checkpoint.clean_with_running")

# --- IDs, names, order, references ------------------------------------------------
for name, fn in [("leading-zero", lambda p: p["sessions"][0].update(session="s01")),
                 ("negative", lambda p: p["panes"][0].update(pane="p-1")),
                 ("wrong-prefix", lambda p: p["windows"][0].update(window="s0")),
                 ("too-large", lambda p: p["sessions"][0].update(session="s9007199254740992"))]:
    case(f"id-{name}", mutate(1, fn), CORRUPT, "id.syntax")
for name, value in [("empty", ""), ("tab", "a\tb"), ("del", "a\u007fb"), ("c1", "a\u0085b"),
                    ("256-bytes", "é" * 128)]:
    case(f"name-{name}", mutate(1, lambda p, v=value: p["sessions"][0].update(name=v)), CORRUPT, "name.syntax")
case("name-255-bytes", mutate(1, lambda p: p["windows"][0].update(name="é" * 127 + "x")), VALID)


def unsorted_sessions(p):
    p["sessions"] = [{"session": "s10", "name": "a"}, {"session": "s2", "name": "b"}]
    p["windows"][0]["session"] = "s2"
    p["panes"][0]["session"] = "s2"


case("sessions-unsorted", mutate(1, unsorted_sessions), CORRUPT, "order.unsorted")


def duplicate_panes(p):
    p["panes"].append(copy.deepcopy(p["panes"][0]))


case("panes-duplicate-id", mutate(1, duplicate_panes), CORRUPT, "order.unsorted")
case("windows-duplicate-id", mutate(1, lambda p: p["windows"].append(dict(p["windows"][0], nodes=[]))),
     CORRUPT, "order.unsorted")
case("window-session-missing", mutate(1, lambda p: p["windows"][0].update(session="s5")),
     CORRUPT, "ref.session_missing")
case("pane-window-missing", mutate(1, lambda p: p["panes"][0].update(window="w5")), CORRUPT, "ref.window_missing")


def session_mismatch(p):
    p["sessions"].append({"session": "s1", "name": "other"})
    p["panes"][0]["session"] = "s1"


case("pane-session-mismatch", mutate(1, session_mismatch), CORRUPT, "ref.session_mismatch")


def many_sessions(p):
    p["sessions"] = [{"session": f"s{i}", "name": "n"} for i in range(100_000)]


case("count-over-100000", mutate(1, many_sessions), SIZE, "count.topology")

# --- split trees -----------------------------------------------------------------
nodes = lambda p: p["windows"][0]["nodes"]
case("tree-index-out-of-range", mutate(3, lambda p: nodes(p)[2].update(second=9)), CORRUPT, "tree.index")
case("tree-index-negative", mutate(3, lambda p: nodes(p)[0].update(first=-1)), CORRUPT, "tree.index")
case("tree-cycle-first-self", mutate(3, lambda p: nodes(p)[0].update(first=0)), CORRUPT, "tree.preorder")
case("tree-second-wrong", mutate(3, lambda p: nodes(p)[0].update(second=3)), CORRUPT, "tree.preorder")
case("tree-cycle-back-to-root", mutate(3, lambda p: nodes(p)[2].update(second=0)), CORRUPT, "tree.preorder")
case("tree-leftover-node", mutate(2, lambda p: nodes(p).append({"kind": "pane", "pane": "p1"})),
     CORRUPT, "tree.leftover")
case("tree-leaf-unknown-pane", mutate(1, lambda p: nodes(p)[0].update(pane="p9")), CORRUPT, "tree.leaf_unknown_pane")


def leaf_other_window(p):
    p["windows"].append({"window": "w1", "session": "s0", "name": "b", "revision": 1,
                         "nodes": [{"kind": "pane", "pane": "p0"}]})
    p["windows"][0]["nodes"] = []


case("tree-leaf-other-window", mutate(1, leaf_other_window), CORRUPT, "tree.leaf_other_window")
case("tree-leaf-float", mutate(2, lambda p: nodes(p)[2].update(pane="p2")), CORRUPT, "tree.leaf_float")
case("tree-leaf-duplicate", mutate(2, lambda p: nodes(p)[2].update(pane="p0")), CORRUPT, "tree.leaf_duplicate")
case("tree-pane-missing", mutate(1, lambda p: p["windows"][0].update(nodes=[])), CORRUPT, "tree.pane_missing")
for name, value in [("0", "0"), ("10000", "10000"), ("negative", "-1"), ("fraction", "62.5"), ("string", '"6250"')]:
    case(f"ratio-{name}", (3, rfc_payload(3).replace('"ratio":6250', '"ratio":' + value)), CORRUPT, "split.ratio")

# --- lifecycle -------------------------------------------------------------------
case("exit-code-on-running", mutate(1, lambda p: p["panes"][0].update(exit_code=0)), CORRUPT, "pane.exit_not_exited")
case("signal-on-running", mutate(1, lambda p: p["panes"][0].update(signal="SIGTERM")), CORRUPT, "pane.exit_not_exited")
case("exit-code-and-signal", mutate(2, lambda p: p["panes"][1].update(signal="SIGTERM")),
     CORRUPT, "pane.exit_and_signal")
case("previous-state-on-running", mutate(1, lambda p: p["panes"][0].update(previous_state="exited")),
     CORRUPT, "pane.previous_state")
for name, value in [("lowercase", "SIGterm"), ("no-prefix", "TERM"), ("bare", "SIG")]:
    case(f"signal-{name}", mutate(2, lambda p, v=value: (p["panes"][1].pop("exit_code"), p["panes"][1].update(signal=v))),
         CORRUPT, "pane.signal_syntax")

# --- text ------------------------------------------------------------------------
case("text-rows-mismatch", mutate(1, lambda p: p["panes"][0].update(text=plain_text(1))), CORRUPT, "text.rows")
for name, value in [("escape", "\u001b[31mred"), ("del", "a\u007f"), ("c1", "a\u009b"), ("newline", "a\nb")]:
    def text_control(p, v=value):
        p["panes"][0]["text"] = plain_text(24, ["ok", v])
    case(f"text-control-{name}", mutate(1, text_control), CORRUPT, "text.control")


def text_times(saved, expires):
    def fn(p):
        t = plain_text(24)
        t["saved_at"], t["expires_at"] = saved, expires
        p["panes"][0]["text"] = t
    return fn


case("text-expires-before-saved", mutate(1, text_times("2026-11-09T11:00:00.000Z", "2026-11-09T10:59:59.999Z")),
     CORRUPT, "text.times")
case("text-expires-after-30-days", mutate(1, text_times("2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.001Z")),
     CORRUPT, "text.times")
case("text-expires-at-30-days", mutate(1, text_times("2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z")), VALID)

# --- tags ------------------------------------------------------------------------
tags = lambda p: p["panes"][0]["tags"]
case("tags-empty", mutate(2, lambda p: p["panes"][0].update(tags=[])), CORRUPT, "tags.empty")
case("tags-17", mutate(2, lambda p: p["panes"][0].update(tags=[{"key": f"k{i:02}", "value": "v"} for i in range(17)])),
     SIZE, "tags.count")
for name, key in [("uppercase", "Group"), ("digit-first", "1group"), ("65-bytes", "a" * 65), ("space", "a b")]:
    case(f"tag-key-{name}", mutate(2, lambda p, k=key: tags(p)[0].update(key=k)), CORRUPT, "tags.key_syntax")
for name, value in [("empty", ""), ("257-bytes", "v" * 257), ("control", "a\u0007")]:
    case(f"tag-value-{name}", mutate(2, lambda p, v=value: tags(p)[0].update(value=v)), CORRUPT, "tags.value_syntax")
case("tags-unsorted", mutate(2, lambda p: tags(p).reverse()), CORRUPT, "tags.unsorted")
case("tags-duplicate-key", mutate(2, lambda p: tags(p).insert(1, dict(tags(p)[0]))), CORRUPT, "tags.unsorted")

# --- floats ----------------------------------------------------------------------
fl = lambda p: p["panes"][3]["float"]
for name, fn in [("tile", lambda p: p["panes"][0].update(layer="tile")),
                 ("popup", lambda p: p["panes"][2].update(layer="popup")),
                 ("without-float", lambda p: p["panes"][2].pop("float")),
                 ("float-without-layer", lambda p: p["panes"][2].pop("layer"))]:
    case(f"layer-{name}", mutate(2, fn), CORRUPT, "float.layer")
for name, value in [("0", 0), ("negative", -3), ("string", "5")]:
    case(f"float-z-{name}", mutate(2, lambda p, v=value: fl(p).update(z=v)), CORRUPT, "float.z")
for name, value in [("no-namespace", "settings"), ("uppercase", "Venom.settings"), ("three-parts", "a.b.c"),
                    ("empty-name", "venom.")]:
    case(f"float-preset-{name}", mutate(2, lambda p, v=value: p["panes"][2]["float"].update(preset=v)),
         CORRUPT, "float.preset")
for name, value in [("0", "0"), ("101-percent", "101%"), ("65536", "65536"), ("leading-zero", "012"),
                    ("space", "60 %"), ("number", 12), ("0-percent", "0%")]:
    case(f"float-size-{name}", mutate(2, lambda p, v=value: fl(p).update(width=v)), CORRUPT, "float.size")
case("float-anchor-middle", mutate(2, lambda p: fl(p).update(anchor="middle")), CORRUPT, "float.anchor")
case("float-anchor-zon-dot", mutate(2, lambda p: fl(p).update(anchor=".top")), CORRUPT, "float.anchor")
case("float-border-dotted", mutate(2, lambda p: fl(p).update(border="dotted")), CORRUPT, "float.border")
case("float-x-4097", mutate(2, lambda p: fl(p).update(x=4097)), CORRUPT, "float.offset")
case("float-y-minus-4097", mutate(2, lambda p: fl(p).update(y=-4097)), CORRUPT, "float.offset")
case("float-min-cols-0", mutate(2, lambda p: fl(p).update(min_cols=0)), CORRUPT, "float.min")
case("float-min-rows-65536", mutate(2, lambda p: fl(p).update(min_rows=65536)), CORRUPT, "float.min")
for name, value in [("empty", ""), ("129-bytes", "t" * 129), ("control", "a\u001bb")]:
    case(f"float-title-{name}", mutate(2, lambda p, v=value: fl(p).update(title=v)), CORRUPT, "float.title")


def main():
    for entry in HERE.iterdir():
        if entry.is_dir() and entry.name != "rfc":
            shutil.rmtree(entry)
    seen = set()
    lines = []
    for name, file, data, result, rule, context in cases:
        assert name not in seen, name
        seen.add(name)
        assert (result == VALID) == (rule is None), name
        (HERE / name).mkdir()
        (HERE / name / file).write_bytes(data)
        row = {"case": name, "file": f"{name}/{file}", "result": result, "rule": rule}
        row.update(context)
        lines.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")))
    (HERE / "expected.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} cases")


main()
