#!/usr/bin/python3
"""admin_watch.py URL [SECONDS]: a client of a broker's admin API as an
operator's dashboard is one: it follows the WebSocket stream at URL/v1/stream
and reads URL/metrics every second, until SIGTERM or SECONDS (default: for
ever). Used by ci/bench to measure what serving it costs the broker. Prints
one JSON line at the end: stream messages and bytes received, /metrics reads
and bytes, errors.

Standard library only: a minimal WebSocket client (text frames, the server's
frames are not masked; pings are answered with nothing, libsoup does not
require a pong)."""
import base64
import json
import os
import selectors
import signal
import socket
import struct
import sys
import time
import urllib.request


def open_stream(base):
    host, port = base.replace("http://", "").rstrip("/").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(("GET /v1/stream HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\n"
                  "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                  "Sec-WebSocket-Version: 13\r\n\r\n" % (host, key)).encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            raise OSError("the stream closed during the handshake")
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    status = int(head.split(b" ")[1])
    if status != 101:
        raise OSError("GET /v1/stream: HTTP %d" % status)
    sock.setblocking(False)
    return sock, rest


def frames(buf):
    """Complete frames at the front of buf: [(opcode, payload)], rest."""
    out = []
    while len(buf) >= 2:
        op = buf[0] & 0x0F
        n = buf[1] & 0x7F
        at = 2
        if n == 126:
            if len(buf) < 4:
                break
            n = struct.unpack(">H", buf[2:4])[0]
            at = 4
        elif n == 127:
            if len(buf) < 10:
                break
            n = struct.unpack(">Q", buf[2:10])[0]
            at = 10
        if len(buf) < at + n:
            break
        out.append((op, buf[at:at + n]))
        buf = buf[at + n:]
    return out, buf


def main():
    base = sys.argv[1].rstrip("/")
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    stats = {"stream_messages": 0, "stream_bytes": 0, "metrics_reads": 0,
             "metrics_bytes": 0, "errors": 0}
    sock, buf = open_stream(base)
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    end = time.monotonic() + seconds if seconds > 0 else None
    next_metrics = time.monotonic()
    while not stop and (end is None or time.monotonic() < end):
        now = time.monotonic()
        if now >= next_metrics:
            next_metrics = now + 1.0
            try:
                with urllib.request.urlopen(base + "/metrics", timeout=5) as r:
                    stats["metrics_bytes"] += len(r.read())
                    stats["metrics_reads"] += 1
            except OSError:
                stats["errors"] += 1
        for _key, _ev in sel.select(max(0.0, next_metrics - time.monotonic())):
            try:
                chunk = sock.recv(1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                stop.append(1)
                stats["errors"] += 1
                break
            got, buf = frames(buf + chunk)
            for op, payload in got:
                if op == 1:
                    stats["stream_messages"] += 1
                    stats["stream_bytes"] += len(payload)
                    json.loads(payload)  # a dashboard parses what it gets
    sock.close()
    print(json.dumps(stats), flush=True)


if __name__ == "__main__":
    main()
