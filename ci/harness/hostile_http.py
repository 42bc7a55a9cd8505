#!/usr/bin/env python3
"""Hostile clients against the HTTP port of `idforge serve` (--http-port), measured as
ci/harness/hostile.py measures the client port: for each case the server's peak RSS (under
300 MB) and the latency of another, well-behaved HTTP client (a child process taking ids over a
keep-alive connection throughout: p99 under 50 ms, no errors).

Usage: python3 ci/harness/hostile_http.py PATH/TO/idforge [CASE ...]   (default: every case)

Cases: 10,000 idle connections; 1 MB request heads; slow bodies and slow heads (slow loris);
10,000 requests with wrong tokens. Python 3 standard library only.
"""

import hashlib
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from cluster import free_ports, serve_on_port_file
from hostile import check, close_all, rss_mb, run_case

P99_LIMIT_MS = 50
IDLE = 10_000
TOKEN = "good-token"
REQUEST_TIMEOUT_MS = 3000

LATENCY_CLIENT = r"""
import http.client, sys, time
port, out, token = int(sys.argv[1]), sys.argv[2], sys.argv[3]
f = open(out, "w", buffering=1)
conn = None
while True:
    try:
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        t = time.time()
        conn.request("GET", "/api/segment/get/latency", headers={"Authorization": "Bearer " + token})
        r = conn.getresponse()
        body = r.read()
        f.write("%f %f %s\n" % (time.time(), (time.time() - t) * 1000, "ok" if r.status == 200 else "err"))
    except (OSError, http.client.HTTPException):
        f.write("%f 0 err\n" % time.time())
        conn = None
        time.sleep(0.05)
    time.sleep(0.002)
"""


def connect(port):
    s = socket.socket()
    s.settimeout(10)
    s.connect(("127.0.0.1", port))
    return s


def closed_or_answered(s, seconds):
    """The status line the server sent before closing, b'' when it closed without one, None when
    it did neither within `seconds`."""
    s.settimeout(seconds)
    data = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                return data.split(b"\r\n", 1)[0]
            data += chunk
            if b"\r\n\r\n" in data:
                return data.split(b"\r\n", 1)[0]
    except socket.timeout:
        return None
    except OSError:
        return data.split(b"\r\n", 1)[0]


def case_idle_connections(ctx):
    socks = [connect(ctx.port) for _ in range(IDLE)]
    time.sleep(2)
    ok = ctx.get_ok()
    close_all(socks)
    check(ok, f"a request is answered with {IDLE} idle connections open")
    return f"{IDLE} idle connections held 2 s"


def case_huge_heads(ctx):
    """200 connections each push a 1 MB header: each refused (431) at http-max-header-bytes."""
    big = b"GET /api/segment/get/x HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1024 * 1024) + b"\r\n\r\n"
    answers = []

    def push():
        s = connect(ctx.port)
        try:
            s.sendall(big)
        except OSError:
            pass  # closed while we pushed: refused early
        answers.append(closed_or_answered(s, 5))
        s.close()

    threads = [threading.Thread(target=push) for _ in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stuck = sum(1 for a in answers if a is None)
    check(stuck == 0, f"{stuck} connections with a 1 MB head left open")
    n431 = sum(1 for a in answers if a and b" 431 " in a)
    return f"200 x 1 MB heads: {n431} answered 431, the rest closed"


def case_slow_bodies(ctx):
    """500 POSTs announce a 4000-byte form and send a byte a second: closed at the request
    timeout (408), and as many slow heads (slow loris) closed too."""
    socks = []
    for i in range(500):
        s = connect(ctx.port)
        s.sendall(b"POST /tinyid/id/nextId HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 4000\r\n\r\nb")
        socks.append(s)
    for i in range(500):
        s = connect(ctx.port)
        s.sendall(b"GET /api/segment/get/x HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        socks.append(s)
    start = time.monotonic()
    deadline = start + REQUEST_TIMEOUT_MS / 1000 + 3
    for _ in range(3):
        time.sleep(1)
        for s in socks:
            try:
                s.send(b"a")
            except OSError:
                pass
    open_after = [s for s in socks if closed_or_answered(s, max(0.01, deadline - time.monotonic())) is None]
    took = time.monotonic() - start
    close_all(socks)
    check(not open_after, f"{len(open_after)} slow connections still open after {took:.1f} s")
    return f"500 slow bodies + 500 slow heads closed within {took:.1f} s"


def case_bad_tokens(ctx):
    """10,000 requests with wrong tokens over 20 keep-alive connections: each refused."""
    counts = {"refused": 0, "other": 0}
    lock = threading.Lock()

    def flood(k):
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", ctx.port, timeout=10)
        for i in range(500):
            path = f"/tinyid/id/nextId?bizType=latency&token=bad-{k}-{i}"
            if i % 2:
                conn.request("GET", "/api/segment/get/latency", headers={"Authorization": f"Bearer bad-{k}-{i}"})
            else:
                conn.request("GET", path)
            r = conn.getresponse()
            body = r.read()
            refused = r.status == 401 or (r.status == 200 and b'"code":5' in body)
            with lock:
                counts["refused" if refused else "other"] += 1
        conn.close()

    threads = [threading.Thread(target=flood, args=(k,)) for k in range(20)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - start
    check(counts["other"] == 0, f"{counts['other']} wrong tokens were not refused")
    return f"10,000 wrong tokens refused in {took:.1f} s"


CASES = [case_idle_connections, case_huge_heads, case_slow_bodies, case_bad_tokens]


class Ctx:
    def __init__(self, port, pid):
        self.port, self.pid = port, pid

    def get_ok(self):
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", "/api/segment/get/alive", headers={"Authorization": f"Bearer {TOKEN}"})
        ok = conn.getresponse().status == 200
        conn.close()
        return ok


def main():
    binary = sys.argv[1]
    names = {c.__name__.removeprefix("case_"): c for c in CASES}
    cases = [names[n] for n in sys.argv[2:]] or CASES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 32768) if hard != resource.RLIM_INFINITY else 32768
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))  # inherited by the server
    check(want >= IDLE + 1000, f"RLIMIT_NOFILE {want} too low for {IDLE} connections")
    tmp = tempfile.mkdtemp(prefix="idforge-hostile-http-")
    tokens = os.path.join(tmp, "tokens")
    with open(tokens, "w") as f:
        f.write(f"{hashlib.sha256(TOKEN.encode()).hexdigest()} default\n")
    http_port, = free_ports(1)
    server, _ = serve_on_port_file(binary, tmp, [
        "--log", "warn", "--http-port", str(http_port), "--http-tokens", tokens,
        "--requirepass", "pw", "--http-maxclients", str(IDLE + 500),
        "--request-timeout-ms", str(REQUEST_TIMEOUT_MS), "--http-rate-limit", "0"])
    latency_client = None
    failed = []
    try:
        ctx = Ctx(http_port, server.pid)
        lat_file = os.path.join(tmp, "latency")
        latency_client = subprocess.Popen([sys.executable, "-c", LATENCY_CLIENT, str(http_port), lat_file, TOKEN])
        time.sleep(0.5)
        print(f"idforge serve pid {server.pid}, HTTP port {http_port}; RSS at start {rss_mb(server.pid):.0f} MB")
        header = f"{'case':<18} {'result':<6} {'peak RSS':>9} {'GETs':>6} {'p99 ms':>7} {'max ms':>7} {'errs':>4}  note"
        print(header)
        print("-" * len(header))
        for case in cases:
            if run_case(case, ctx, server, lat_file, "GET", 18, P99_LIMIT_MS) != "ok":
                failed.append(case.__name__)
            if server.poll() is not None:
                break
    finally:
        if latency_client is not None:
            latency_client.kill()
            latency_client.wait()
        if server.poll() is None:
            os.kill(server.pid, signal.SIGKILL)
        server.wait()
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
