#!/usr/bin/env python3
"""Hostile clients against the HTTP port of `idforge serve` (--http-port), measured as
server/tests/harness/hostile.py measures the client port: for each case the server's peak RSS (under
300 MB) and the latency of another, well-behaved HTTP client (a child process taking ids over a
keep-alive connection throughout: p99 under 50 ms, no errors).

Usage: python3 server/tests/harness/hostile_http.py PATH/TO/idforge [CASE ...]   (default: every case)

Cases: 10,000 idle connections; 1 MB request heads; slow bodies and slow heads (slow loris);
10,000 requests with wrong tokens; the status page with 100,000 tags loaded while two clients
loop on it (another client's RESP INCR p99 under 20 ms); 450 clients that never read a
`batchSize=100000` answer (the kernel's TCP memory and orphans back to their start within the
write timeout); 10,000 keep-alive connections after a 15,000-byte head. Python 3 standard
library only.
"""

import hashlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from cluster import free_ports, serve_on_port_file
from hostile_kit import (
    LATENCY_CLIENT as RESP_CLIENT,
    CaseFailed,
    check,
    close_all,
    in_threads,
    latency,
    raise_open_files,
    rss_mb,
    run_suite,
    select_cases,
)

P99_LIMIT_MS = 50
IDLE = 10_000
TOKEN = "good-token"
PASSWORD = "pw"
REQUEST_TIMEOUT_MS = 3000
WRITE_TIMEOUT_MS = 3000
TAGS = 100_000
STATUS_P99_LIMIT_MS = 20
UNREAD = 450

STATUS_LOOP = r"""
import http.client, sys, time
port, seconds, token = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
headers = {"Authorization": "Bearer " + token} if token else {}
codes = {}
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
end = time.time() + seconds
while time.time() < end:
    conn.request("GET", "/status", headers=headers)
    r = conn.getresponse()
    r.read()
    codes[r.status] = codes.get(r.status, 0) + 1
print(" ".join("%d:%d" % kv for kv in sorted(codes.items())))
"""

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

    in_threads(push, [()] * 200)
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

    start = time.monotonic()
    in_threads(flood, [(k,) for k in range(20)])
    took = time.monotonic() - start
    check(counts["other"] == 0, f"{counts['other']} wrong tokens were not refused")
    return f"10,000 wrong tokens refused in {took:.1f} s"


def resp_incr_many(port, names):
    """Loads `names` into the server's memory: AUTH, then INCR each (GET reads the store
    without loading), pipelined 1,000 at a time."""
    s = connect(port)
    # Loading is not what is measured: a loaded machine may take minutes.
    s.settimeout(600)
    f = s.makefile("rb")
    s.sendall(b"*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n" % (len(PASSWORD), PASSWORD.encode()))
    check(f.readline().startswith(b"+OK"), "AUTH")
    for i in range(0, len(names), 1000):
        chunk = names[i:i + 1000]
        s.sendall(b"".join(b"*2\r\n$4\r\nINCR\r\n$%d\r\n%s\r\n" % (len(n), n.encode()) for n in chunk))
        for _ in chunk:
            answer = f.readline()
            check(answer[:1] == b":", f"INCR answered {answer!r}")
    s.close()


def case_status_many_tags(ctx):
    """100,000 tags loaded; two clients loop on /status (one without a token, one with an admin
    token): another client's RESP INCR keeps a p99 under 20 ms."""
    names = [f"bulk-{i:06d}" for i in range(TAGS)]
    loading = time.monotonic()
    # Each tag's first INCR waits for a persist, and a connection runs its pipeline in order:
    # 200 connections let the persister write 200 tags a transaction.
    in_threads(resp_incr_many, [(ctx.resp_port, names[k::200]) for k in range(200)])
    loading = time.monotonic() - loading
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", ctx.port, timeout=10)
    conn.request("GET", "/status", headers={"Authorization": f"Bearer {TOKEN}"})
    page = conn.getresponse().read().decode()
    import re
    count = re.search(r'<p id="tag-count">(\d+) loaded</p>', page)
    check(count and int(count.group(1)) >= TAGS, f"the page counts every tag: {count and count.group(0)}")
    check(page.count('<tr class="tag">') == 1000, "the first 1,000 rows")
    seconds = 8
    out = os.path.join(ctx.tmp, "incr-latency")
    # The client of hostile.py, for `seconds`, as the requirepass user.
    incr = subprocess.Popen([sys.executable, "-c", RESP_CLIENT, str(ctx.resp_port), out, "default", PASSWORD,
                             str(seconds)])
    loops = [subprocess.Popen([sys.executable, "-c", STATUS_LOOP, str(ctx.port), str(seconds), token],
                              stdout=subprocess.PIPE, text=True) for token in ("", TOKEN)]
    counts = [p.communicate(timeout=seconds + 30)[0].strip() for p in loops]
    incr.wait(timeout=30)
    n, p99, worst, errors = latency(out, 0, time.time())
    check(n > 100 and errors == 0, f"INCR client: {n} ok, {errors} errors")
    check(p99 < STATUS_P99_LIMIT_MS, f"INCR p99 {p99:.1f} ms with /status looped (limit {STATUS_P99_LIMIT_MS} ms)")
    return (f"{TAGS:,} tags (loaded in {loading:.0f} s); /status looped ({counts[0]} anonymous, {counts[1]} admin): "
            f"INCR p99 {p99:.1f} ms, max {worst:.1f} ms over {n}")


def sockstat():
    """(TCP orphans, TCP memory in pages) of the whole host."""
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith("TCP:"):
                words = line.split()
                values = dict(zip(words[1::2], words[2::2]))
                return int(values["orphan"]), int(values["mem"])
    raise CaseFailed("no TCP line in /proc/net/sockstat")


def case_unread_answers(ctx):
    """450 clients ask for batchSize=100000 (about 1.4 MB each) and never read: the server gives
    its answers up at the write timeout with a reset, so the kernel's TCP memory and orphans go
    back to where they were, while the clients are still connected."""
    orphans0, mem0 = sockstat()
    socks = []
    query = f"/tinyid/id/nextId?bizType=unread&batchSize=100000&token={TOKEN}"
    for _ in range(UNREAD):
        s = socket.socket()
        # A small receive buffer: the answer stays on the server's side, which is what is measured.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect(("127.0.0.1", ctx.port))
        s.sendall(f"GET {query} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        socks.append(s)
    # The answers must first be there (not measured: a loaded machine makes them slowly): at
    # least 40 MB of them in the kernel, or the case would pass without testing anything.
    rise = time.monotonic() + 30
    orphans1, mem1 = sockstat()
    while mem1 < mem0 + 10_000 and time.monotonic() < rise:
        time.sleep(0.25)
        orphans1, mem1 = sockstat()
    check(mem1 >= mem0 + 10_000, f"the unread answers never filled the kernel ({mem0} -> {mem1} pages)")
    # Answers still being made on a loaded machine start their write timeout late: the bound is
    # generous (before the reset, orphans kept their answers for minutes).
    deadline = time.monotonic() + (WRITE_TIMEOUT_MS + REQUEST_TIMEOUT_MS) / 1000 + 30
    while time.monotonic() < deadline:
        orphans, mem = sockstat()
        # The clients' own small buffers stay (450 x a few pages): allow 16 MB of slack.
        if orphans <= orphans0 + 5 and mem <= mem0 + 4096:
            break
        time.sleep(0.25)
    took = time.monotonic() - (deadline - (WRITE_TIMEOUT_MS + REQUEST_TIMEOUT_MS) / 1000 - 30)
    close_all(socks)
    check(orphans <= orphans0 + 5 and mem <= mem0 + 4096,
          f"kernel TCP memory {mem0} -> {mem1} -> {mem} pages, orphans {orphans0} -> {orphans}")
    return (f"{UNREAD} unread answers: TCP memory {mem0} -> {mem1} -> {mem} pages, "
            f"orphans {orphans0} -> {orphans1} -> {orphans}, back in {took:.1f} s")


def case_keepalive_heads(ctx):
    """10,000 keep-alive connections each send one request with a 15,000-byte head and read the
    answer: the server closes each right after it (a head over 4 KB), so no idle connection
    keeps the larger read buffer it needed (checked on every 100th at once, before the request
    timeout could close it); the server's RSS stays under the bound."""
    pad = "a" * 15_000
    head = (f"GET /api/segment/get/heads HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"X-Pad: {pad}\r\n\r\n").encode()
    socks, kept = [], []
    lock = threading.Lock()

    def run(k):
        mine, open_ones = [], 0
        for i in range(IDLE // 2):
            s = connect(ctx.port)
            s.sendall(head)
            status = closed_or_answered(s, 10)
            check(status is not None and b" 200 " in status, f"answer {status!r}")
            if i % 100 == 0:
                s.settimeout(1)
                try:
                    open_ones += s.recv(1) != b""
                except socket.timeout:
                    open_ones += 1
                except OSError:
                    pass
            mine.append(s)
        with lock:
            socks.extend(mine)
            kept.append(open_ones)

    # Two at a time: the well-behaved client's latency is judged beside them.
    in_threads(run, [(k,) for k in range(2)])
    rss = rss_mb(ctx.pid)
    close_all(socks)
    check(len(socks) == IDLE, f"{len(socks)} of {IDLE} answered")
    check(sum(kept) == 0, f"{sum(kept)} of {IDLE // 100} sampled connections kept open after a large head")
    return f"{IDLE} x 15,000-byte heads: answered, each closed after its answer; RSS {rss:.0f} MB"


CASES = [case_idle_connections, case_huge_heads, case_slow_bodies, case_bad_tokens,
         case_status_many_tags, case_unread_answers, case_keepalive_heads]


class Ctx:
    def __init__(self, port, pid, resp_port, tmp):
        self.port, self.pid, self.resp_port, self.tmp = port, pid, resp_port, tmp

    def get_ok(self):
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        conn.request("GET", "/api/segment/get/alive", headers={"Authorization": f"Bearer {TOKEN}"})
        ok = conn.getresponse().status == 200
        conn.close()
        return ok


def seed_tags(binary, tmp, args):
    """Writes TAGS tags into the server's SQLite store in one transaction (creating them one
    INCR at a time would take an fsync each): the server makes its store, stops (SIGTERM), the
    rows go in, and the harness's server starts on it."""
    import sqlite3
    server, _ = serve_on_port_file(binary, tmp, args)
    server.send_signal(signal.SIGTERM)
    check(server.wait(timeout=30) == 0, "the seeding server stopped cleanly")
    os.remove(os.path.join(tmp, "port"))  # the next start writes its own
    db = sqlite3.connect(os.path.join(tmp, "data", "idforge.db"))
    with db:
        db.executemany("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES (?, 1, 1000)",
                       ((f"bulk-{i:06d}",) for i in range(TAGS)))
    db.close()


def main():
    binary = sys.argv[1]
    cases = select_cases(CASES, sys.argv[2:])
    if cases is None:
        return 2
    want = raise_open_files()
    check(want >= IDLE + 1000, f"RLIMIT_NOFILE {want} too low for {IDLE} connections")
    tmp = tempfile.mkdtemp(prefix="idforge-hostile-http-")
    tokens = os.path.join(tmp, "tokens")
    with open(tokens, "w") as f:
        f.write(f"{hashlib.sha256(TOKEN.encode()).hexdigest()} default\n")
    http_port, = free_ports(1)
    args = ["--log", "warn", "--http-port", str(http_port), "--http-tokens", tokens,
            "--requirepass", PASSWORD, "--http-maxclients", str(IDLE + 500),
            "--request-timeout-ms", str(REQUEST_TIMEOUT_MS), "--write-timeout-ms", str(WRITE_TIMEOUT_MS),
            "--http-rate-limit", "0"]
    if any(c is case_status_many_tags for c in cases):
        seed_tags(binary, tmp, args)
    server, resp_port = serve_on_port_file(binary, tmp, args)
    lat_file = os.path.join(tmp, "latency")
    # The unread answers make a debug build generate 45 million ids: the GET client's latency
    # then measures that CPU work, not a bound (its errors still count).
    failed = run_suite(server, cases, lambda: Ctx(http_port, server.pid, resp_port, tmp),
                       [LATENCY_CLIENT, str(http_port), lat_file, TOKEN], lat_file, "GET", 18,
                       lambda case: None if case is case_unread_answers else P99_LIMIT_MS)
    return 1 if failed else 0

if __name__ == "__main__":
    sys.exit(main())
