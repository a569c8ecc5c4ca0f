#!/usr/bin/env python3
"""The master of the single-writer broker peer (broker.py): the dtach-like owner of
one agent on a PTY, written from the agent-sessions seed alone. A TEST SUBJECT for
the kit (peers/README.md), not a program to use.

  master.py --create SOCK [--lock-fd N] [--cwd DIR] -- ARGV...   create-only
  master.py --attach SOCK                                        attach-only

Create-only binds SOCK and refuses any path that exists (reaping an orphan is the
broker's job, under the lock), then daemonizes as `dtach -n` does: the foreground
process exits 0 (printing "ready") once the daemon serves, or 1 with the reason on
stderr. The daemon keeps the inherited lock descriptor for its life (the agent never
gets it), so the kernel frees the lock when the master exits.
Attach-only connects, fails loud when nobody accepts, and creates nothing.

Its private protocol on SOCK is one JSON object per line: the viewer sends
{"hello": {"have": N}}, {"in": b64}, {"size": [cols, rows]}, {"stop": 1}; the master
answers {"out": b64}, {"seq": total}, {"exit": code}.
"""
import base64
import fcntl
import json
import os
import pty
import selectors
import signal
import socket
import struct
import sys
import termios

VIOLATION = os.environ.get("PEER_VIOLATION", "")
RING = 256 * 1024
ALT_ON = (b"\x1b[?1049h", b"\x1b[?1047h", b"\x1b[?47h")
ALT_OFF = (b"\x1b[?1049l", b"\x1b[?1047l", b"\x1b[?47l")
NO_FAULTS = ("LD_PRELOAD", "VXFAULT_PLAN", "VXFAULT_TRACE")


def broken(name):
    return VIOLATION == name


def master_create(path, argv, lock_fd, cwd):
    """Create-only: refuses any path that exists; serves one agent on a PTY."""
    if lock_fd is not None:
        os.set_inheritable(lock_fd, False)  # the agent never holds the lock
    if os.path.lexists(path) and broken("lenient-create"):
        os.unlink(path)
    if os.path.lexists(path):
        sys.exit(f"master: {path} is already taken; a create-only master never replaces it")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(path)
    except OSError as e:
        sys.exit(f"master: cannot bind {path}: {e.strerror}")
    ready_r, ready_w = os.pipe()
    if os.fork():
        # The foreground part (as `dtach -n`): says whether the daemon serves, then
        # leaves it running in its own session.
        os.close(ready_w)
        word = os.read(ready_r, 4096).decode(errors="replace")
        if word == "ready":
            print("ready", flush=True)
            os._exit(0)
        sys.stderr.write(word or "master: the daemon died before it served\n")
        os._exit(1)
    os.close(ready_r)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for n in (0, 1, 2):
        os.dup2(devnull, n)
    errs_r, errs_w = os.pipe()
    env = {k: v for k, v in os.environ.items() if k not in NO_FAULTS}
    pid, fd = pty.fork()
    if pid == 0:
        try:
            if cwd:
                os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        except OSError as e:
            os.write(errs_w, f"{argv[0]}: {e.strerror}".encode())
        os._exit(127)
    os.close(errs_w)
    err = os.read(errs_r, 4096)
    if err:
        os.waitpid(pid, 0)
        os.unlink(path)
        os.write(ready_w, f"master: the agent did not start: {err.decode(errors='replace')}\n".encode())
        os._exit(1)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    srv.listen(64)
    os.write(ready_w, b"ready")
    os.close(ready_w)
    Master(srv, path, pid, fd).run()


class Master:
    def __init__(self, srv, path, pid, fd):
        self.srv, self.path, self.pid, self.fd = srv, path, pid, fd
        self.ring, self.total, self.alt = bytearray(), 0, False
        self.viewers = {}  # socket -> [pending input bytes, said hello]
        self.sel = selectors.DefaultSelector()

    def send(self, v, msg):
        try:
            v.sendall(json.dumps(msg).encode() + b"\n")
        except OSError:
            self.drop(v)

    def drop(self, v):
        if v in self.viewers:
            del self.viewers[v]
            self.sel.unregister(v)
            v.close()

    def hello(self, v, have):
        start = self.total - len(self.ring)
        if isinstance(have, int) and 0 < have <= self.total and have >= start:
            if have < self.total:
                self.send(v, {"out": base64.b64encode(self.ring[have - start:]).decode()})
            if broken("replay-twice"):
                self.send(v, {"out": base64.b64encode(self.ring).decode()})
                self.send(v, {"seq": self.total})
        elif self.alt:
            os.killpg(self.pid, signal.SIGWINCH)  # the redraw nudge
            self.send(v, {"seq": self.total})
        else:
            if self.ring:
                self.send(v, {"out": base64.b64encode(self.ring).decode()})
            self.send(v, {"seq": self.total})
        if v in self.viewers:
            self.viewers[v][1] = True

    def request(self, v, msg):
        if "hello" in msg:
            self.hello(v, msg["hello"].get("have"))
        elif "in" in msg:
            os.write(self.fd, base64.b64decode(msg["in"]))
        elif "size" in msg:
            cols, rows = msg["size"]
            fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        elif "stop" in msg:
            os.killpg(self.pid, signal.SIGHUP)

    def output(self, data):
        self.total += len(data)
        self.ring += data
        del self.ring[: max(0, len(self.ring) - RING)]
        on = max(data.rfind(s) for s in ALT_ON)
        off = max(data.rfind(s) for s in ALT_OFF)
        if on != off:
            self.alt = on > off
        msg = {"out": base64.b64encode(data).decode()}
        for v, (_, said) in list(self.viewers.items()):
            if said:
                self.send(v, msg)

    def run(self):
        self.sel.register(self.srv, selectors.EVENT_READ)
        self.sel.register(self.fd, selectors.EVENT_READ)
        while True:
            for sk, _ in self.sel.select():
                if sk.fileobj is self.srv:
                    v, _ = self.srv.accept()
                    v.settimeout(2.0)
                    self.viewers[v] = [b"", False]
                    self.sel.register(v, selectors.EVENT_READ)
                elif sk.fileobj == self.fd:
                    try:
                        data = os.read(self.fd, 65536)
                    except OSError:
                        data = b""
                    if not data:
                        return self.exit()
                    self.output(data)
                else:
                    self.readable(sk.fileobj)

    def readable(self, v):
        try:
            data = v.recv(65536)
        except OSError:
            data = b""
        if not data:
            return self.drop(v)
        self.viewers[v][0] += data
        *lines, self.viewers[v][0] = self.viewers[v][0].split(b"\n")
        for line in lines:
            try:
                self.request(v, json.loads(line))
            except (ValueError, KeyError, TypeError, OSError):
                pass

    def exit(self):
        _, status = os.waitpid(self.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if not broken("exit-keeps-socket"):
            try:
                os.unlink(self.path)
            except OSError:
                pass
        for v in list(self.viewers):
            self.send(v, {"exit": code})
        sys.exit(0)


def master_attach(path):
    """Attach-only: fails loud when no master accepts; creates nothing."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError as e:
        sys.exit(f"master: no master accepts on {path} ({e.strerror}); attach-only creates nothing")
    s.sendall(b'{"hello": {}}\n')
    buf = b""
    while True:
        data = s.recv(65536)
        if not data:
            sys.exit("master: the master went away without an exit")
        buf += data
        *lines, buf = buf.split(b"\n")
        for line in lines:
            msg = json.loads(line)
            if "out" in msg:
                sys.stdout.buffer.write(base64.b64decode(msg["out"]))
                sys.stdout.flush()
            if "exit" in msg:
                sys.exit(msg["exit"])


def main(args):
    if args[:1] == ["--attach"] and len(args) == 2:
        return master_attach(args[1])
    if args[:1] != ["--create"] or "--" not in args or len(args) < 4:
        sys.exit("usage: master.py --create SOCK [--lock-fd N] [--cwd DIR] -- ARGV... | --attach SOCK")
    cut = args.index("--")
    opts, argv = args[2:cut], args[cut + 1 :]
    flags = dict(zip(opts[::2], opts[1::2]))
    if not argv or len(opts) % 2 or set(flags) - {"--lock-fd", "--cwd"}:
        sys.exit(f"master.py: bad arguments {opts!r}")
    lock_fd = int(flags["--lock-fd"]) if "--lock-fd" in flags else None
    master_create(args[1], argv, lock_fd, flags.get("--cwd"))


if __name__ == "__main__":
    main(sys.argv[1:])
