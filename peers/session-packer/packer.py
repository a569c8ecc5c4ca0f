#!/usr/bin/env python3
"""A small session packer written from ADR-089's "Security (v4)" and "Packer
interface" paragraphs alone, as a foreign test subject for vxcert's session-persist
suite. Not an implementation to use: see README.md.

    packer.py pack   --kind BACKEND --home ROOT --sid ID --out FILE
    packer.py unpack --kind BACKEND --home ROOT --sid ID --in FILE
    packer.py probe  --kind BACKEND --home ROOT --sid ID     (prints yes-or-no as true/false)

$PEER_VIOLATION names one planted violation (violations.toml); unset: honest.
"""

import argparse
import json
import os
import re
import secrets
import stat
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
HEADER = ".peer-header.json"
MAX_FILES = 64
MAX_FILE = 16 * 1024 * 1024
MAX_TOTAL = 32 * 1024 * 1024
BLOCK = 512
VIOLATION = os.environ.get("PEER_VIOLATION", "")
REFUSED = 3


class Refusal(Exception):
    pass


def on(name):
    return VIOLATION == name


# ---- layouts -------------------------------------------------------------------

PLACE = {
    "{id}": None,
    "{dir}": "[^/]+",
    "{any}": "[^/]+",
    "{ts}": "[0-9A-Za-z-]{1,64}",
    "{yyyy}": "[0-9]{4}",
    "{mm}": "[0-9]{2}",
    "{dd}": "[0-9]{2}",
}


def pattern_regex(pattern, sid):
    parts = []
    for comp in pattern.split("/"):
        if comp == "**":
            parts.append("[^/]+(?:/[^/]+)*")
            continue
        out = ""
        for piece in re.split(r"(\{[a-z]+\})", comp):
            if piece in PLACE:
                out += re.escape(sid) if piece == "{id}" else PLACE[piece]
            else:
                out += re.escape(piece)
        parts.append(out)
    return re.compile("^" + "/".join(parts) + "$")


class Layout:
    def __init__(self, kind, sid):
        with open(os.path.join(HERE, "layouts.toml"), "rb") as f:
            doc = tomllib.load(f)
        b = doc.get("backend", {}).get(kind)
        if not b or not b.get("capability"):
            raise Refusal(f"backend {kind!r} cannot persist sessions")
        self.never = set(doc.get("auth", {}).get("never", []))
        self.key = pattern_regex(b["key"], sid)
        self.files = [pattern_regex(p, sid) for p in b["files"]]

    def is_credential(self, rel):
        return any(c in self.never for c in rel.split("/"))

    def listed(self, rel):
        return any(r.match(rel) for r in self.files)


# ---- pack ----------------------------------------------------------------------


def octal(n, width):
    return ("%0*o" % (width - 1, n)).encode() + b"\0"


def ustar_header(path, size, mtime=0):
    raw = path.encode()
    prefix, name = b"", raw
    if len(raw) > 100:
        cut = raw.rfind(b"/", 0, 156)
        if cut <= 0 or len(raw) - cut - 1 > 100:
            raise Refusal(f"path too long for ustar: {path}")
        prefix, name = raw[:cut], raw[cut + 1:]
    h = bytearray(BLOCK)
    h[0:len(name)] = name
    h[100:108] = octal(0o600, 8)
    h[108:116] = octal(0, 8)
    h[116:124] = octal(0, 8)
    h[124:136] = octal(size, 12)
    h[136:148] = octal(mtime, 12)
    h[148:156] = b" " * 8
    h[156:157] = b"0"
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[345:345 + len(prefix)] = prefix
    h[148:156] = ("%06o" % sum(h)).encode() + b"\0 "
    return bytes(h)


def read_session_file(path):
    """A session file's bytes: a plain file with one link, never followed."""
    st = os.stat(path) if on("pack-follows-symlink") else os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise Refusal(f"not a plain file: {path}")
    if st.st_nlink != 1 and not on("pack-hardlink"):
        raise Refusal(f"a file with {st.st_nlink} links: {path}")
    follow = 0 if on("pack-follows-symlink") else os.O_NOFOLLOW
    fd = os.open(path, os.O_RDONLY | follow | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if os.fstat(f.fileno()).st_ino != st.st_ino:
            raise Refusal(f"changed while read: {path}")
        return f.read()


def pack(a):
    lay = Layout(a.kind, a.sid)
    root = a.home
    if os.path.islink(root) and not on("pack-follows-symlink"):
        raise Refusal(f"the root is a symlink: {root}")
    found = []
    for dirpath, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, n)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if lay.is_credential(rel):
                if on("pack-auth"):
                    found.append(rel)
                continue
            if lay.listed(rel):
                found.append(rel)
    keys = [r for r in found if lay.key.match(r)]
    if len(keys) != 1:
        raise Refusal(f"{len(keys)} key files of session {a.sid} under {root}, not one")
    if not on("no-caps") and len(found) > MAX_FILES:
        raise Refusal(f"{len(found)} files, at most {MAX_FILES}")
    bodies, total = {}, 0
    for rel in found:
        body = read_session_file(os.path.join(root, rel))
        total += len(body)
        if not on("no-caps") and (len(body) > MAX_FILE or total > MAX_TOTAL):
            raise Refusal(f"over the size caps at {rel}")
        bodies[rel] = body
    # Our order: the header, the key file, then the rest by path.
    order = keys[:1] + sorted(r for r in bodies if r != keys[0])
    mtime = 0
    head = json.dumps({"session_id": a.sid, "backend": a.kind}, separators=(",", ":")).encode()
    out = [ustar_header(HEADER, len(head), mtime), pad(head)]
    for rel in order:
        out += [ustar_header(rel, len(bodies[rel]), mtime), pad(bodies[rel])]
    out.append(b"\0" * (2 * BLOCK))
    tmp = f"{a.out}.partial-{secrets.token_hex(4)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(b"".join(out))
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, a.out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def pad(b):
    return b + b"\0" * (-len(b) % BLOCK)


# ---- unpack --------------------------------------------------------------------


def field_octal(raw, what):
    text = raw.split(b"\0", 1)[0].strip(b" ")
    if not re.fullmatch(rb"[0-7]+", text):
        raise Refusal(f"bad {what} field")
    return int(text, 8)


def members_of(blob):
    """(path, mode, typeflag, linkname, body) of every member; strict framing."""
    at, out = 0, []
    while True:
        if at + BLOCK > len(blob):
            raise Refusal("the archive ends without its end blocks")
        h = blob[at:at + BLOCK]
        if h == b"\0" * BLOCK:
            if blob[at:].strip(b"\0"):
                raise Refusal("data after the end blocks")
            if len(blob) - at < 2 * BLOCK:
                raise Refusal("one end block, not two")
            return out
        want = field_octal(h[148:156], "checksum")
        if sum(h[:148]) + 8 * 32 + sum(h[156:]) != want:
            raise Refusal("a header checksum does not match")
        if h[257:263] != b"ustar\0" or h[263:265] != b"00":
            raise Refusal("not a POSIX ustar member")
        name = h[0:100].split(b"\0", 1)[0]
        prefix = h[345:500].split(b"\0", 1)[0]
        raw = prefix + b"/" + name if prefix else name
        try:
            path = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Refusal("a member path is not UTF-8")
        typ = chr(h[156]) if h[156] else "0"
        mode = field_octal(h[100:108], "mode")
        size = field_octal(h[124:136], "size")
        link = h[157:257].split(b"\0", 1)[0].decode("utf-8", "replace")
        start = at + BLOCK
        end = start + size
        if end > len(blob):
            raise Refusal(f"member {path} runs past the end of the archive")
        out.append((path, mode, typ, link, blob[start:end]))
        at = start + size + (-size % BLOCK)


def safe_path(path):
    if on("unpack-dotdot") and path.startswith("../"):
        return
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        raise Refusal(f"unsafe member path {path!r}")
    for c in path.split("/"):
        if c in ("", ".", ".."):
            raise Refusal(f"unsafe member path {path!r}")


def strict_json(body):
    def no_dupes(pairs):
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise Refusal("a duplicate key in the header")
        return dict(pairs)

    try:
        return json.loads(body.decode("utf-8"), object_pairs_hook=no_dupes)
    except (ValueError, UnicodeDecodeError):
        raise Refusal("the header is not JSON")


def unpack(a):
    lay = Layout(a.kind, a.sid)
    with open(a.input, "rb") as f:
        blob = f.read(MAX_TOTAL + (MAX_FILES + 2) * 2 * BLOCK + 1)
    members = members_of(blob)
    heads = [i for i, m in enumerate(members) if m[0] == HEADER]
    if len(heads) != 1 or heads[0] != 0:
        raise Refusal("the header must be the first member, once")
    head = strict_json(members[heads[0]][4])
    want = {"backend": a.kind, "session_id": a.sid}
    if on("header-id-unchecked"):
        want["session_id"] = head.get("session_id")
    if head != want:
        raise Refusal("the header names another session")
    files = [m for i, m in enumerate(members) if i != heads[0]]
    if len(files) > MAX_FILES:
        raise Refusal(f"{len(files)} files, at most {MAX_FILES}")
    seen, total, plan, setid = set(), 0, [], []
    for path, mode, typ, link, body in files:
        safe_path(path)
        if typ == "2" and on("unpack-symlink-member"):
            plan.append((path, None, link))
            continue
        if typ != "0":
            raise Refusal(f"member {path} is not a plain file (type {typ})")
        if mode & 0o7000:
            if not on("unpack-keeps-setuid"):
                raise Refusal(f"member {path} has setuid, setgid or sticky bits")
            setid.append((path, mode & 0o7777))
        credential = lay.is_credential(path)
        if credential and not on("unpack-auth"):
            raise Refusal(f"member {path} is a credential file")
        if not credential and not path.startswith("../") and not lay.listed(path):
            if not on("unpack-unlisted"):
                raise Refusal(f"member {path} is not a file of this session")
        parts = path.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in seen:
                raise Refusal(f"{path} lies below a file")
        if path in seen or any(s.startswith(path + "/") for s in seen):
            raise Refusal(f"member {path} collides with another")
        seen.add(path)
        total += len(body)
        if len(body) > MAX_FILE or total > MAX_TOTAL:
            raise Refusal("over the size caps")
        plan.append((path, body, None))
    if not any(lay.key.match(p) for p, _, _ in plan):
        raise Refusal("the archive holds no key file of the session")
    mine = {p for p, _, _ in plan}
    if any(k not in mine for k in key_files(a.home, lay)):
        raise Refusal("the root already holds another key file of this session")
    check_destination(a.home, [p for p, _, _ in plan])
    publish(a.home, lay, plan)
    for path, mode in setid:  # the violation: the member's mode kept, as `tar -p` does
        os.chmod(os.path.join(a.home, path), mode)


def check_destination(root, paths):
    """The root and every directory on the way are real directories (never a
    symlink), and whatever a file will replace is a plain file."""
    if on("unpack-dotdot"):
        return
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode):
        raise Refusal("the root is not a directory")
    for path in paths:
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            full = os.path.join(root, *parts[:i])
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                break
            ok = stat.S_ISREG(st.st_mode) if i == len(parts) else stat.S_ISDIR(st.st_mode)
            if not ok:
                raise Refusal(f"{'/'.join(parts[:i])} in the root is not what it should be")


def make_dirs(root, rel_dir):
    """Creates the directories of rel_dir below root, one at a time, never through a
    symlink."""
    at = root
    for c in [c for c in rel_dir.split("/") if c]:
        at = os.path.join(at, c)
        try:
            os.mkdir(at, 0o700)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(at).st_mode):
                raise Refusal(f"{at} is not a directory")


def publish(root, lay, plan):
    """Extracts into a private directory of the root, then renames each file into
    place, the key file last: until that rename, HasSession is false."""
    plan = sorted(plan, key=lambda p: bool(lay.key.match(p[0])))
    if on("direct-unpack"):
        for path, body, link in plan:
            dest = os.path.join(root, path)
            os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
            with open(dest, "wb") as f:
                f.write(body)
        return
    stage = os.path.join(root, ".incoming-" + secrets.token_hex(6))
    os.mkdir(stage, 0o700)
    try:
        staged = []
        for n, (path, body, link) in enumerate(plan):
            tmp = os.path.join(stage, str(n))
            if link is not None:
                os.symlink(link, tmp)
            else:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(body)
                    f.flush()
                    os.fsync(f.fileno())
            staged.append((tmp, path))
        # An earlier copy of the session stops being one before anything of the new
        # one lands: its key file goes first, so a failure part-way leaves no
        # session rather than the old transcript beside new files.
        for _, path in staged[-1:]:
            old_key = os.path.join(root, path)
            if lay.key.match(path) and os.path.lexists(old_key):
                os.unlink(old_key)
        for tmp, path in staged:
            dest = os.path.normpath(os.path.join(root, path))
            if path.startswith("../"):
                os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
            else:
                make_dirs(root, os.path.dirname(path))
            os.rename(tmp, dest)
    finally:
        for n in os.listdir(stage):
            os.unlink(os.path.join(stage, n))
        os.rmdir(stage)


# ---- probe ---------------------------------------------------------------------


def key_files(root, lay):
    """Every path under root that the layout's key pattern names, of any type."""
    out = []
    for dirpath, dirs, names in os.walk(root):
        for n in names + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            rel = os.path.relpath(os.path.join(dirpath, n), root).replace(os.sep, "/")
            if lay.key.match(rel):
                out.append(rel)
    return out


def probe(a):
    """True only for exactly one key file, a plain file with one link."""
    try:
        lay = Layout(a.kind, a.sid)
    except Refusal:
        return False
    if os.path.islink(a.home):
        return False
    keys = key_files(a.home, lay)
    if len(keys) != 1:
        return False
    st = os.lstat(os.path.join(a.home, keys[0]))
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


def main():
    ap = argparse.ArgumentParser(prog="packer.py")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for cmd in ("pack", "unpack", "probe"):
        p = sub.add_parser(cmd)
        p.add_argument("--kind", required=True)
        p.add_argument("--home", required=True)
        p.add_argument("--sid", required=True)
        if cmd == "pack":
            p.add_argument("--out", required=True)
        if cmd == "unpack":
            p.add_argument("--in", dest="input", required=True)
    a = ap.parse_args()
    try:
        if a.cmd == "probe":
            print("true" if probe(a) else "false")
        elif a.cmd == "pack":
            pack(a)
        else:
            unpack(a)
    except Refusal as e:
        print(f"packer: refused: {e}", file=sys.stderr)
        return REFUSED
    except OSError as e:
        print(f"packer: {e}", file=sys.stderr)
        return REFUSED
    return 0


if __name__ == "__main__":
    sys.exit(main())
