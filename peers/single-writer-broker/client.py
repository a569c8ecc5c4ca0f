#!/usr/bin/env python3
"""The viewer of the single-writer broker peer (broker.py) as a command: the seed's
browser client, written from the seed alone. A TEST SUBJECT (peers/README.md).

  client.py --at HOST:PORT --key ENGINE:ID --fp FP --tab TAB [--take-over] [--reconnects N]

It writes the session's output to stdout and tracks the offset it consumed (`have`:
a `seq` frame's `n`, plus the bytes after it). A drop is transient: it reconnects
after 100 ms with `have`, and never with force=1 (the seed's one literal MUST on the
client); --take-over (the user's click) sends force=1 once, on the first connect.
Exit 0 when the agent exited (close 4000, the broker peer's), 2 on a refused
upgrade, 1 after N reconnects (default 100).
"""
import base64
import json
import os
import socket
import struct
import sys
import time

VIOLATION = os.environ.get("PEER_VIOLATION", "")


def frames(sock):
    """The server's frames (unmasked): (opcode, payload), until the connection ends."""
    buf = b""

    def need(n):
        nonlocal buf
        while len(buf) < n:
            data = sock.recv(65536)
            if not data:
                raise EOFError
            buf += data
        out, buf = buf[:n], buf[n:]
        return out

    while True:
        b0, b1 = need(2)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack(">H", need(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", need(8))[0]
        yield b0 & 0x0F, need(n)


def connect(host, port, path):
    sock = socket.create_connection((host, int(port)), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        data = sock.recv(1)
        if not data:
            raise EOFError
        head += data
    return sock, head.split(b" ", 2)[1] == b"101"


def main(args):
    flags, take_over = {}, "--take-over" in args
    rest = [a for a in args if a != "--take-over"]
    flags = dict(zip(rest[::2], rest[1::2]))
    if len(rest) % 2 or not {"--at", "--key", "--fp", "--tab"} <= set(flags) \
            or set(flags) - {"--at", "--key", "--fp", "--tab", "--reconnects"}:
        sys.exit("usage: client.py --at HOST:PORT --key ENGINE:ID --fp FP --tab TAB "
                 "[--take-over] [--reconnects N]")
    host, _, port = flags["--at"].rpartition(":")
    have, force, reconnects = 0, take_over, 0
    while True:
        query = f"have={have}&fp={flags['--fp']}&tab={flags['--tab']}"
        if force or VIOLATION == "client-forces":
            query += "&force=1"
        force = False  # a take-over is asked once; a reconnect never forces
        try:
            sock, upgraded = connect(host, port, f"/ws/term/{flags['--key']}?{query}")
            if not upgraded:
                sys.exit(f"client: the broker refused to open {flags['--key']}")
            for op, data in frames(sock):
                if op == 2:
                    sys.stdout.buffer.write(data)
                    sys.stdout.flush()
                    have += len(data)
                elif op == 1:
                    msg = json.loads(data)
                    if msg.get("t") == "seq":
                        have = msg["n"]
                elif op == 8:
                    code = struct.unpack(">H", data[:2])[0] if len(data) >= 2 else 1005
                    if code == 4000:
                        return 0
                    break
        except (OSError, EOFError, ValueError):
            pass
        reconnects += 1
        if reconnects > int(flags.get("--reconnects", "100")):
            sys.exit("client: gave up after its reconnects")
        time.sleep(0.1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
