#!/usr/bin/env python3
"""A single-writer broker written from the agent-sessions seed alone ("Session
handling — the rock-solid contract"). A TEST SUBJECT for the kit (peers/README.md),
not a broker to use.

  broker.py serve (--unix SOCK | --tcp HOST:PORT) --state DIR --locks DIR --engines FILE

HTTP and WebSocket on a Unix socket or a loopback TCP port: GET /ws/term/ENGINE:ID (the seed's terminal
route, the key as one segment), GET /api/sessions, POST /api/sessions/KEY/archive.
Each session's agent runs under master.py (create-only), which inherits the
session's flock and keeps it for its life. PEER_VIOLATION=<name> plants one seed violation (violations.toml).
"""
import asyncio
import base64
import fcntl
import hashlib
import json
import os
import re
import signal
import socket
import stat
import struct
import sys
import time
import urllib.parse

VIOLATION = os.environ.get("PEER_VIOLATION", "")
HERE = os.path.dirname(os.path.abspath(__file__))
# Our choices where the seed leaves them open (declared in profile.toml's pins).
CLOSE_BUSY = 4409  # the seed's
CLOSE_REFUSED = 4400
CLOSE_LAUNCH_FAILED = 4503  # also: the master is not (or no longer) there; retry
CLOSE_EXITED = 4000
LEASE_S = 5.0
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
SES = re.compile(r"ses_[A-Za-z0-9]{1,80}")
HEX = re.compile(r"[0-9a-fA-F]+")
NO_FAULTS = ("LD_PRELOAD", "VXFAULT_PLAN", "VXFAULT_TRACE")
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def broken(name):
    return VIOLATION == name


def physical(engine, native):
    return f"{engine}.{native}"


def key_of(phys):
    engine, _, native = phys.partition(".")
    return f"{engine}:{native}"


class Refusal(Exception):
    def __init__(self, close, text):
        super().__init__(text)
        self.close = close


# ------------------------------------------------------------ WebSocket framing


async def ws_read(reader):
    """One whole message: (opcode, payload); continuation frames are joined."""
    op, data = None, b""
    while True:
        b0, b1 = await reader.readexactly(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", await reader.readexactly(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", await reader.readexactly(8))[0]
        if n > 1 << 20:
            raise ConnectionError("a frame over 1 MiB")
        mask = await reader.readexactly(4) if b1 & 0x80 else b"\0\0\0\0"
        raw = await reader.readexactly(n)
        payload = bytes(c ^ mask[i % 4] for i, c in enumerate(raw))
        if b0 & 0x0F in (8, 9, 10):
            return b0 & 0x0F, payload
        op = op if b0 & 0x0F == 0 else b0 & 0x0F
        data += payload
        if b0 & 0x80:
            return op, data


def ws_frame(op, data):
    n = len(data)
    if n < 126:
        head = struct.pack(">BB", 0x80 | op, n)
    elif n < 1 << 16:
        head = struct.pack(">BBH", 0x80 | op, 126, n)
    else:
        head = struct.pack(">BBQ", 0x80 | op, 127, n)
    return head + data


class Viewer:
    """One WebSocket viewer of a session."""

    def __init__(self, writer, fp_tab):
        self.writer, self.fp_tab = writer, fp_tab
        self.gated, self.closed = False, False

    def text(self, obj):
        self.raw(1, json.dumps(obj).encode())

    def raw(self, op, data):
        if not self.closed:
            self.writer.write(ws_frame(op, data))

    def close(self, code, why=""):
        if not self.closed:
            self.raw(8, struct.pack(">H", code) + why.encode()[:100])
            self.closed = True
            self.writer.close()


# ------------------------------------------------------------ the broker


class Broker:
    def __init__(self, state, locks, engines_file):
        self.masters = os.path.join(state, "masters")
        self.locks = locks
        os.makedirs(self.masters, mode=0o700, exist_ok=True)
        with open(engines_file) as f:
            self.engines = json.load(f)["engines"]  # setup_engines.py's format
        self.alias_file = os.path.join(self.masters, "alias-map.json")
        self.viewers = {}  # physical -> set of Viewer
        self.claims = {}  # physical -> {"who": (fp, tab), "seen": t, "viewer": Viewer|None}
        self.launching = set()

    # -- aliases: {"kind": "peer-alias-map", "entries": [{"placeholder", "real"}]}
    def aliases(self):
        try:
            with open(self.alias_file) as f:
                doc = json.load(f)
            return {e["placeholder"]: e["real"] for e in doc["entries"]}
        except FileNotFoundError:
            return {}

    def add_alias(self, placeholder, real):
        entries = self.aliases()
        entries[placeholder] = real
        doc = {"kind": "peer-alias-map", "entries": [
            {"placeholder": p, "real": r} for p, r in sorted(entries.items())]}
        tmp = self.alias_file + ".part"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, self.alias_file)

    def resolve(self, phys):
        """A real id with a placeholder alias lives under the placeholder."""
        for placeholder, real in self.aliases().items():
            if real == phys:
                return placeholder
        return phys

    def index_ids(self, engine, cwd=None):
        spec = self.engines[engine]
        path = spec.get("index")
        if not path or "{" in path:
            return []
        try:
            with open(path) as f:
                lines = f.read(1 << 20).splitlines()
        except OSError:
            return []
        ids = []
        for line in lines:
            native, _, where = line.partition("\t")
            if SES.fullmatch(native) and (cwd is None or not where or where == cwd):
                ids.append(native)
        return ids

    # -- the request's parameters
    def parse(self, engine, native, q):
        spec = self.engines.get(engine)
        if spec is None:
            raise Refusal(CLOSE_REFUSED, "no such engine")
        new = q.get("new") == "1"
        placeholder = native.startswith("new-") and UUID.fullmatch(native[4:])
        if placeholder:
            if spec["mints"] != "engine" or not new:
                raise Refusal(CLOSE_REFUSED, "a placeholder id is only for a new session")
        elif not (UUID if spec["ids"] == "uuid" else SES).fullmatch(native):
            raise Refusal(CLOSE_REFUSED, "that id is not one this engine gives")
        have = q.get("have", "0")
        if not re.fullmatch(r"0|[1-9][0-9]{0,15}", have):
            raise Refusal(CLOSE_REFUSED, "have must be a whole number")
        fp, tab = q.get("fp"), q.get("tab")
        if (fp is None) != (tab is None):
            raise Refusal(CLOSE_REFUSED, "fp and tab go together")
        if fp is not None and not (HEX.fullmatch(fp) and len(fp) == 32
                                   and HEX.fullmatch(tab) and len(tab) == 16):
            raise Refusal(CLOSE_REFUSED, "fp is 128-bit hex, tab 64-bit hex")
        cwd = q.get("cwd")
        if cwd is not None and not cwd.startswith("/"):
            raise Refusal(CLOSE_REFUSED, "cwd must be absolute")
        who = (fp.lower(), tab.lower()) if fp else None
        return new, int(have), who, q.get("force") == "1", cwd

    # -- liveness and the lock
    def probe(self, sock):
        try:
            st = os.lstat(sock)
        except FileNotFoundError:
            return "none"
        if not stat.S_ISSOCK(st.st_mode):
            return "not-socket"
        if broken("attach-on-file"):
            return "live"
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(sock)
            return "live"
        except BlockingIOError:
            return "live"
        except OSError:
            return "stale"
        finally:
            s.close()

    def lock(self, phys, steal=True):
        """The held descriptor, or a Refusal (BUSY when another holds it)."""
        path = os.path.join(self.locks, phys + ".lock")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        except OSError as e:
            raise Refusal(CLOSE_REFUSED, f"the lock file cannot be opened: {e.strerror}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if broken("launch-when-busy"):
                return fd
            os.close(fd)
            if broken("steal-held-lock") and steal:
                os.unlink(path)  # "stale": a new lock file, while its owner lives
                return self.lock(phys, steal=False)
            raise Refusal(CLOSE_BUSY, "busy: another writer holds this session; retry")
        except OSError as e:
            os.close(fd)
            if broken("eacces-busy") and isinstance(e, PermissionError):
                raise Refusal(CLOSE_BUSY, "busy: another writer holds this session; retry")
            raise Refusal(CLOSE_REFUSED, f"the lock cannot be taken: {e.strerror}")

    def release(self, fd):
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def open_action(self, phys):
        """The seed's decision, synchronous: ("attach", None) or ("launch", fd)."""
        sock = os.path.join(self.masters, phys + ".sock")
        state = self.probe(sock)
        if state == "live":
            return "attach", None
        if state == "not-socket":
            raise Refusal(CLOSE_REFUSED, "something other than a socket is at the session's path")
        if state == "stale" and broken("reap-without-lock"):
            try:
                os.unlink(sock)
            except OSError:
                pass
        fd = self.lock(phys)
        if not broken("no-recheck"):
            state = self.probe(sock)
            if state == "live":
                self.release(fd)
                return "attach", None
        if state == "stale":
            try:
                os.unlink(sock)
            except OSError as e:
                self.release(fd)
                raise Refusal(CLOSE_LAUNCH_FAILED, f"a dead master's socket cannot be removed: {e.strerror}")
        return "launch", fd

    async def launch(self, phys, fd, argv, cwd):
        sock = os.path.join(self.masters, phys + ".sock")
        env = {k: v for k, v in os.environ.items() if k not in NO_FAULTS}
        self.launching.add(phys)
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, os.path.join(HERE, "master.py"), "--create", sock,
                "--lock-fd", str(fd), "--cwd", cwd, "--", *argv,
                pass_fds=(fd,), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True, env=env)
            line = await asyncio.wait_for(proc.stdout.readline(), 10)
        except (OSError, asyncio.TimeoutError):
            line = b""
        finally:
            self.launching.discard(phys)
        if line.strip() != b"ready":
            if broken("lock-kept-on-fail"):
                raise Refusal(CLOSE_LAUNCH_FAILED, "the launch failed")
            self.release(fd)
            raise Refusal(CLOSE_LAUNCH_FAILED, "the launch failed before the master served")
        if broken("unlock-after-spawn"):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)  # the hand-off: never LOCK_UN, the master's copy keeps it

    # -- claims (the seed's per-tab ownership, in memory)
    def claim(self, phys, viewer, force):
        now = time.monotonic()
        c = self.claims.get(phys)
        if c and c["viewer"] is not None and not c["viewer"].closed:
            c["seen"] = now
        fresh_other = c and c["who"] != viewer.fp_tab and now - c["seen"] <= LEASE_S
        if fresh_other and not force and not broken("takeover-without-force"):
            return "secondary"
        if c and c["viewer"] not in (None, viewer) and not c["viewer"].closed:
            old = c["viewer"]
            old.gated = True
            old.text({"t": "role", "role": "secondary"})
        self.claims[phys] = {"who": viewer.fp_tab, "seen": now, "viewer": viewer}
        return "owner"

    def unclaim(self, phys, viewer):
        c = self.claims.get(phys)
        if c and c["viewer"] is viewer:
            c["viewer"], c["seen"] = None, time.monotonic()

    # -- routes
    async def terminal(self, reader, writer, engine, native, q):
        viewer = Viewer(writer, None)
        try:
            new, have, who, force, cwd = self.parse(engine, native, q)
            viewer.fp_tab = who
            phys = self.resolve(physical(engine, native))
            spec = self.engines[engine]
            snapshot = None
            if new and native.startswith("new-"):
                snapshot = set(self.index_ids(engine, cwd))
            action, fd = self.open_action(phys)
            if action == "launch":
                template = spec["start"] if new else spec["continue"]
                run_in = cwd or os.getcwd()
                argv = [w.replace("{id}", native).replace("{cwd}", run_in) for w in template]
                await self.launch(phys, fd, argv, run_in)
                if snapshot is not None:
                    asyncio.ensure_future(self.reconcile(engine, phys, snapshot, cwd, viewer))
        except Refusal as r:
            viewer.close(r.close, str(r))
            return
        try:
            mr, mw = await asyncio.open_unix_connection(os.path.join(self.masters, phys + ".sock"))
        except OSError:
            viewer.close(CLOSE_LAUNCH_FAILED, "the master is gone; retry")
            return
        mw.write(json.dumps({"hello": {"have": have}}).encode() + b"\n")
        if who is not None:
            role = self.claim(phys, viewer, force)
            viewer.gated = role == "secondary"
            viewer.text({"t": "role", "role": role})
        self.viewers.setdefault(phys, set()).add(viewer)
        try:
            await self.bridge(reader, viewer, mr, mw, phys)
        finally:
            self.viewers[phys].discard(viewer)
            self.unclaim(phys, viewer)
            mw.close()

    async def bridge(self, reader, viewer, mr, mw, phys):
        async def from_master():
            while line := await mr.readline():
                msg = json.loads(line)
                if "out" in msg:
                    viewer.raw(2, base64.b64decode(msg["out"]))
                elif "seq" in msg:
                    viewer.text({"t": "seq", "n": msg["seq"]})
                elif "exit" in msg:
                    return viewer.close(CLOSE_EXITED, "the agent exited")
            viewer.close(CLOSE_LAUNCH_FAILED, "the master is gone; retry")

        async def from_viewer():
            while True:
                op, data = await ws_read(reader)
                if op == 8:
                    if broken("kill-on-detach") and self.viewers[phys] == {viewer}:
                        await self.stop(phys)  # the last viewer left: detach as kill
                    return viewer.close(1000)
                if op == 9:
                    viewer.raw(10, data)
                    continue
                if op == 2:
                    msg = {"in": base64.b64encode(data).decode()}
                else:
                    # Its own viewer frames (the seed names "i" and "r" frames, not
                    # their members): {"type":"input","text":…} and
                    # {"type":"resize","size":[cols,rows]}; its profile declares them.
                    try:
                        frame = json.loads(data)
                        kind = frame["type"]
                    except (ValueError, KeyError, TypeError):
                        continue
                    size = frame.get("size")
                    if kind == "input" and isinstance(frame.get("text"), str):
                        msg = {"in": base64.b64encode(frame["text"].encode()).decode()}
                    elif (kind == "resize" and isinstance(size, list) and len(size) == 2
                          and all(isinstance(n, int) and 0 < n < 65536 for n in size)):
                        msg = {"size": size}
                    else:
                        continue
                if viewer.gated and not (broken("no-gate") and "in" in msg):
                    continue
                mw.write(json.dumps(msg).encode() + b"\n")

        tasks = [asyncio.ensure_future(from_master()), asyncio.ensure_future(from_viewer())]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in tasks:
                t.cancel()

    async def reconcile(self, engine, phys, snapshot, cwd, viewer):
        """Placeholder -> real id: exactly one new id in the engine's index."""
        for _ in range(600):
            await asyncio.sleep(0.1)
            fresh = sorted(set(self.index_ids(engine, cwd)) - snapshot)
            if len(fresh) > 1 and not broken("alias-guess"):
                return  # ambiguous: never guess
            if fresh:
                self.add_alias(phys, physical(engine, fresh[0]))
                viewer.text({"t": "id", "sid": f"{engine}:{fresh[0]}"})
                return

    async def stop(self, phys):
        sock = os.path.join(self.masters, phys + ".sock")
        try:
            _, mw = await asyncio.open_unix_connection(sock)
            mw.write(b'{"stop": 1}\n')
            await mw.drain()
            mw.close()
        except OSError:
            pass
        for _ in range(100):
            if self.probe(sock) != "live":
                break
            await asyncio.sleep(0.05)
        self.claims.pop(phys, None)
        if self.probe(sock) == "stale":
            try:
                fd = self.lock(phys)
            except Refusal:
                return
            os.unlink(sock)
            self.release(fd)

    def rows(self):
        aliases = {} if broken("ghost-row") else self.aliases()
        rows, listed = [], set()
        for name in sorted(os.listdir(self.masters)):
            if not name.endswith(".sock"):
                continue
            phys = name[: -len(".sock")]
            alive = self.probe(os.path.join(self.masters, name)) == "live"
            n = len(self.viewers.get(phys, ()))
            row = {"session": key_of(aliases.get(phys, phys)), "name": phys, "running": alive,
                   "viewers": n, "status": ("viewed" if n else "idle") if alive else "gone"}
            if phys in aliases:
                row["placeholder"] = key_of(phys)
            rows.append(row)
            listed.add(aliases.get(phys, phys))
        for phys in sorted(self.launching - listed):
            rows.append({"session": key_of(phys), "name": phys, "running": False,
                         "viewers": 0, "status": "starting"})
        real_to_placeholder = {r: p for p, r in self.aliases().items()}
        for engine in sorted(self.engines):
            for native in self.index_ids(engine):
                real = physical(engine, native)
                if real in listed:
                    continue
                listed.add(real)
                row = {"session": key_of(real), "name": real_to_placeholder.get(real, real),
                       "running": False, "viewers": 0, "status": "stored"}
                if real in real_to_placeholder:
                    row["placeholder"] = key_of(real_to_placeholder[real])
                rows.append(row)
        return rows

    async def handle(self, reader, writer):
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        lines = head.split("\r\n")
        method, target = (lines[0].split(" ") + ["", ""])[:2]
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:] if ":" in line)}
        path, _, query = target.partition("?")
        q = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
        parts = [urllib.parse.unquote(p) for p in path.split("/")]
        try:
            # Any one segment is a terminal request: a key without its engine (a bare
            # id) is refused after the upgrade, as every malformed key is.
            if method == "GET" and parts[1:3] == ["ws", "term"] and len(parts) == 4:
                accept = base64.b64encode(hashlib.sha1(
                    (headers.get("sec-websocket-key", "") + WS_GUID).encode()).digest()).decode()
                writer.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                              f"Connection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n").encode())
                engine, _, native = parts[3].partition(":")
                if not _ and broken("bare-key"):
                    # A bare id taken for the first engine's session.
                    engine, native = next(iter(self.engines)), parts[3]
                await self.terminal(reader, writer, engine, native, q)
            elif method == "GET" and path == "/api/sessions":
                self.reply(writer, 200, {"rows": self.rows()})
            elif method == "POST" and len(parts) == 5 and parts[1:3] == ["api", "sessions"] \
                    and parts[4] == "archive" and ":" in parts[3]:
                engine, _, native = parts[3].partition(":")
                phys = self.resolve(physical(engine, native))
                await self.stop(phys)
                self.reply(writer, 200, {"retired": parts[3]})
            else:
                self.reply(writer, 404, {"problem": f"nothing at {method} {path}"})
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def reply(self, writer, status, body):
        data = json.dumps(body).encode()
        writer.write(f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode() + data)


async def serve(listen, state, locks, engines):
    broker = Broker(state, locks, engines)
    kind, where = listen
    if kind == "--tcp":
        host, _, port = where.rpartition(":")
        if host not in ("127.0.0.1", "::1", "[::1]", "localhost"):
            sys.exit(f"broker.py: --tcp {where}: loopback only")
        server = await asyncio.start_server(broker.handle, host=host.strip("[]"), port=int(port))
    else:
        if os.path.lexists(where) and broker.probe(where) == "stale":
            os.unlink(where)
        server = await asyncio.start_unix_server(broker.handle, path=where)
    done = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, done.set)
    async with server:
        await done.wait()


def main(args):
    usage = "usage: broker.py serve (--unix SOCK | --tcp HOST:PORT) --state DIR --locks DIR --engines FILE"
    if args[:1] != ["serve"] or len(args) != 9:
        sys.exit(usage)
    flags = dict(zip(args[1::2], args[2::2]))
    listen = [f for f in ("--unix", "--tcp") if f in flags]
    if len(listen) != 1 or set(flags) != {listen[0], "--state", "--locks", "--engines"}:
        sys.exit(f"broker.py: unknown arguments {sorted(flags)}; {usage}")
    os.umask(0o077)
    asyncio.run(serve((listen[0], flags[listen[0]]), flags["--state"], flags["--locks"],
                      flags["--engines"]))


if __name__ == "__main__":
    main(sys.argv[1:])
