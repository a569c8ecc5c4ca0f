#!/usr/bin/env python3
"""Generates the session-blob corpus and expected.jsonl (docs/spec/persist-blob.md).

Independent of the Rust writer: every header block comes from Python's `tarfile`
(TarInfo.tobuf), and the archive is assembled here by hand so that each case can
break exactly one rule. Run from anywhere: python3 corpus/persist/blobs/generate.py
"""
import json
import os
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = ".session-header.json"
BLOCK = 512
MIB = 1024 * 1024


def header_body(backend, sid):
    return json.dumps({"backend": backend, "session_id": sid}, separators=(",", ":")).encode()


def block(name, size, typ=tarfile.REGTYPE, mode=0o600, fmt=tarfile.USTAR_FORMAT, linkname=""):
    ti = tarfile.TarInfo(name)
    ti.size, ti.type, ti.mode, ti.mtime = size, typ, mode, 0
    ti.uid = ti.gid = 0
    ti.uname = ti.gname = ""
    ti.linkname = linkname
    if typ in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        ti.devmajor, ti.devminor = 1, 3
    return ti.tobuf(format=fmt, encoding="utf-8", errors="strict")


def pad(data):
    return data + b"\0" * (-len(data) % BLOCK)


def member(name, body=b"", **kw):
    return block(name, len(body), **kw) + pad(body)


def pax_records(**records):
    out = b""
    for key, value in records.items():
        value = value if isinstance(value, bytes) else str(value).encode()
        rest = len(b" ") + len(key) + 1 + len(value) + 1
        n = rest + 1
        while len(str(n)) + rest != n:
            n = len(str(n)) + rest
        out += str(n).encode() + b" " + key.encode() + b"=" + value + b"\n"
    return out


def pax_member(name, records, fmt=tarfile.USTAR_FORMAT):
    return member(name, records, typ=tarfile.XHDTYPE, fmt=fmt)


def archive(*members):
    return b"".join(members) + b"\0" * (2 * BLOCK)


def hdr(backend="claude_code", sid="s1"):
    return member(HEADER, header_body(backend, sid))


CLAUDE_KEY = "projects/-home-u-p/s1.jsonl"
KEY = member(CLAUDE_KEY, b'{"type":"user"}\n')

CASES = {}
EXPECT = {}


def case(name, data, result="valid", rule=None, expect=None):
    CASES[name] = data
    EXPECT[name] = (result, rule, expect)


CORRUPT, SIZE = "conflict.blob_corrupt", "unsupported.blob_size"

# Valid, one per backend.
case("valid-claude_code", archive(hdr(), KEY,
     member("projects/-home-u-p/s1/subagents/agent-1.jsonl", b"{}\n")), expect=("claude_code", "s1"))
case("valid-codex", archive(hdr("codex", "0193-ab"),
     member("sessions/2025/05/07/rollout-2025-05-07T17-24-21-0193-ab.jsonl", b"{}\n")), expect=("codex", "0193-ab"))
case("valid-pi", archive(hdr("pi", "p1"), member("sessions/--home-u--/1700000000_p1.jsonl", b"{}\n")),
     expect=("pi", "p1"))
case("valid-64-members", archive(hdr(), KEY, *[member(f"projects/-home-u-p/s1/f{i:02}") for i in range(63)]))
# What Go's archive/tar writes for the peer: a path over 100 bytes that splits at a
# slash goes into the ustar prefix field; one that cannot gets a PAX `path` record
# under a PaxHeaders.0/ name, the ustar name truncated.
split_path = "projects/" + "d" * 95 + "/s1/" + "n" * 60
pax_path = "projects/-home-u-p/s1/" + "x" * 200 + "/" + "y" * 150
case("valid-go-writer-long-paths", archive(
    hdr(), KEY, member(split_path, b"split"),
    pax_member("PaxHeaders.0/" + "x" * 80, pax_records(path=pax_path)),
    member(pax_path[:100], b"pax")))
case("header-mismatched", archive(hdr(), KEY), CORRUPT, "blob.header", expect=("claude_code", "s2"))
case("header-other-backend", archive(hdr(), KEY), CORRUPT, "blob.header", expect=("codex", "s1"))

# blob.path
case("path-dotdot", archive(hdr(), KEY, member("../x")), CORRUPT, "blob.path")
case("path-absolute", archive(hdr(), KEY, member("/etc/x")), CORRUPT, "blob.path")
case("path-empty-component", archive(hdr(), KEY, member("projects//s1.jsonl")), CORRUPT, "blob.path")
case("path-dot-component", archive(hdr(), KEY, member("projects/./p/s1.jsonl")), CORRUPT, "blob.path")
case("path-component-256", archive(hdr(), KEY, pax_member("././@PaxHeader",
     pax_records(path="projects/-home-u-p/s1/" + "c" * 256)), member("projects/-home-u-p/s1/c")),
     CORRUPT, "blob.path")
case("path-backslash", archive(hdr(), KEY, member("projects\\p\\s1.jsonl")), CORRUPT, "blob.path")
case("path-depth-17", archive(hdr(), KEY, member("projects/-home-u-p/s1/" + "/".join("d" * 14))),
     CORRUPT, "blob.path")
nul_path = b"projects/-home-u-p/s1/" + b"y" * 90 + b"\0z"
case("path-nul-in-pax", archive(hdr(), KEY, pax_member("././@PaxHeader", pax_records(path=nul_path)),
     member("projects/-home-u-p/s1/y")), CORRUPT, "blob.path")
case("path-not-utf8", archive(hdr(), KEY, pax_member("././@PaxHeader",
     pax_records(path=b"projects/-home-u-p/s1/" + b"\xff" * 90)), member("projects/-home-u-p/s1/y")),
     CORRUPT, "blob.path")

# blob.type
case("type-symlink", archive(hdr(), KEY, member("projects/-home-u-p/s1/l", typ=tarfile.SYMTYPE,
     linkname="/etc/passwd")), CORRUPT, "blob.type")
case("type-hardlink", archive(hdr(), KEY, member("projects/-home-u-p/s1/h", typ=tarfile.LNKTYPE,
     linkname=CLAUDE_KEY)), CORRUPT, "blob.type")
case("type-fifo", archive(hdr(), KEY, member("projects/-home-u-p/s1/f", typ=tarfile.FIFOTYPE)),
     CORRUPT, "blob.type")
case("type-device", archive(hdr(), KEY, member("projects/-home-u-p/s1/d", typ=tarfile.CHRTYPE)),
     CORRUPT, "blob.type")
case("type-directory", archive(hdr(), member("projects/-home-u-p/s1/", typ=tarfile.DIRTYPE), KEY),
     CORRUPT, "blob.type")
case("type-pax-global", archive(hdr(), member("pax_global_header", pax_records(comment="x"),
     typ=tarfile.XGLTYPE), KEY), CORRUPT, "blob.type")
case("type-gnu-longname-ustar-magic", archive(hdr(), member("././@LongLink", b"projects/x\0",
     typ=tarfile.GNUTYPE_LONGNAME), KEY), CORRUPT, "blob.type")
case("type-gnu-sparse", archive(hdr(), member("projects/-home-u-p/s1/sp", typ=tarfile.GNUTYPE_SPARSE), KEY),
     CORRUPT, "blob.type")

# blob.not_session_file
case("auth-json", archive(hdr(), KEY, member("projects/-home-u-p/s1/auth.json", b"{}")),
     CORRUPT, "blob.not_session_file")
case("auth-credentials", archive(hdr(), KEY, member(".credentials.json", b"{}")), CORRUPT,
     "blob.not_session_file")
case("auth-claude-json", archive(hdr(), KEY, member(".claude.json", b"{}")), CORRUPT, "blob.not_session_file")
case("not-whitelisted", archive(hdr(), KEY, member("projects/-home-u-p/other.jsonl")), CORRUPT,
     "blob.not_session_file")
case("other-backend-layout", archive(hdr(), KEY, member("sessions/2025/05/07/rollout-x-s1.jsonl")),
     CORRUPT, "blob.not_session_file")

# blob.header
case("duplicate-member", archive(hdr(), KEY, KEY), CORRUPT, "blob.header")
case("header-second", archive(KEY, hdr()), CORRUPT, "blob.header")
case("header-twice", archive(hdr(), hdr(), KEY), CORRUPT, "blob.header")
case("header-missing", archive(KEY), CORRUPT, "blob.header")
case("header-extra-key", archive(member(HEADER, b'{"backend":"claude_code","session_id":"s1","x":1}'), KEY),
     CORRUPT, "blob.header")
case("header-duplicate-key", archive(member(HEADER,
     b'{"backend":"claude_code","session_id":"s1","session_id":"s1"}'), KEY), CORRUPT, "blob.header")
case("header-over-4kib", archive(member(HEADER, header_body("claude_code", "s1") + b" " * 4096), KEY),
     CORRUPT, "blob.header")
case("header-kimi", archive(hdr("kimi", "s1"), KEY), CORRUPT, "blob.header")
case("no-key-file", archive(hdr(), member("projects/-home-u-p/s1/x")), CORRUPT, "blob.header")
case("file-and-directory", archive(hdr(), KEY, member("projects/-home-u-p/s1/a"),
     member("projects/-home-u-p/s1/a/b")), CORRUPT, "blob.header")

# blob.caps
case("members-65", archive(hdr(), KEY, *[member(f"projects/-home-u-p/s1/f{i:02}") for i in range(64)]),
     SIZE, "blob.caps")
case("member-16mib-plus-1", archive(hdr(), KEY, member("projects/-home-u-p/s1/big", b"\0" * (16 * MIB + 1))),
     SIZE, "blob.caps")
big = block("projects/-home-u-p/s1/big", 1 << 20)
case("size-past-end", hdr() + KEY + big + b"\0" * 2048, SIZE, "blob.caps")

# blob.mode
case("setuid", archive(hdr(), KEY, member("projects/-home-u-p/s1/x", mode=0o4755)), CORRUPT, "blob.mode")
case("setgid", archive(hdr(), member(CLAUDE_KEY, b"{}", mode=0o2600)), CORRUPT, "blob.mode")

# blob.framing
good = archive(hdr(), KEY)
case("trailing-garbage", good + b"garbage", CORRUPT, "blob.framing")
case("trailing-zero-block", good + b"\0" * BLOCK, CORRUPT, "blob.framing")
case("one-end-block", good[:-BLOCK], CORRUPT, "blob.framing")
case("no-end-blocks", good[:-2 * BLOCK], CORRUPT, "blob.framing")
case("empty-file", b"", CORRUPT, "blob.framing")
bad_sum = bytearray(good)
bad_sum[2 * BLOCK + 0] ^= 0x01
case("bad-checksum", bytes(bad_sum), CORRUPT, "blob.framing")
case("gnu-magic-longname", archive(member(HEADER, header_body("claude_code", "s1"), fmt=tarfile.GNU_FORMAT),
     member("projects/-home-u-p/s1/" + "g" * 120, fmt=tarfile.GNU_FORMAT), KEY), CORRUPT, "blob.framing")
case("pax-size-lie", archive(hdr(), KEY, pax_member("././@PaxHeader",
     pax_records(path="projects/-home-u-p/s1/" + "p" * 100, size=0)),
     member("projects/-home-u-p/s1/" + "p" * 78, b"lie")), CORRUPT, "blob.framing")
case("pax-unknown-key", archive(hdr(), KEY, pax_member("././@PaxHeader",
     pax_records(path="projects/-home-u-p/s1/" + "q" * 100, uid=0)), member("projects/-home-u-p/s1/q")),
     CORRUPT, "blob.framing")
case("pax-short-path", archive(hdr(), pax_member("././@PaxHeader", pax_records(path=CLAUDE_KEY)), KEY),
     CORRUPT, "blob.framing")
case("pax-at-end", hdr() + KEY + pax_member("././@PaxHeader", pax_records(path="p" * 120)) + b"\0" * 1024,
     CORRUPT, "blob.framing")
# Python's own tarfile pads the archive to a 10240-byte record: not exactly two blocks.
case("tarfile-record-padding", good + b"\0" * (10240 - len(good) % 10240), CORRUPT, "blob.framing")


def main():
    for old in os.listdir(HERE):
        if old.endswith(".tar"):
            os.remove(os.path.join(HERE, old))
    lines = []
    for name in sorted(CASES):
        with open(os.path.join(HERE, name + ".tar"), "wb") as f:
            f.write(CASES[name])
        result, rule, expect = EXPECT[name]
        line = {"file": name + ".tar", "result": result, "rule": rule}
        if expect:
            line["backend"], line["session_id"] = expect
        lines.append(json.dumps(line, separators=(",", ":")))
    with open(os.path.join(HERE, "expected.jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
