#!/usr/bin/env python3
"""Adversarial suite for `idforge serve`: hostile clients must not sink the server.

Usage: python3 server/tests/harness/hostile.py PATH/TO/idforge [CASE ...]   (default: every case, in order)

Starts its own server (port 0, a temporary data dir), runs one case per finding, and for each
measures the server's peak RSS (/proc/PID/status) and the INCR latency of another, well-behaved
client running throughout (a child process, so this script's own work does not skew it). Prints
a table; exits non-zero when a case fails. The server is killed by PID at the end, also on
failure. Python 3 standard library only.

Adding a case: write `def case_NAME(ctx): ...` that attacks, asserts with `check(...)` and
returns a short note, and append it to CASES (cases run in order; those that need auth come
after `create_user`). The AUTH cases are in hostile_auth.py, the TLS ones in hostile_tls.py, what
every suite shares (checks, sockets, the RSS sampler, the latency client and its judge) in
hostile_kit.py.
"""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from cluster import free_ports, resp, serve_on_port_file
from hostile_kit import (
    AUTH_TIMEOUT_MS,
    CaseFailed,
    Ctx,
    LATENCY_CLIENT,
    MAXCLIENTS,
    METRICS_TOKEN,
    PASSWORD,
    REQUEST_TIMEOUT_MS,
    RSS_LIMIT_MB,
    RssSampler,
    USER,
    WRITE_TIMEOUT_MS,
    check,
    close_all,
    closed_within,
    connect,
    http_get,
    in_threads,
    latency,
    percentile,
    read_line,
    read_reply,
    raise_open_files,
    run_suite,
    select_cases,
    server_closed,
)
from hostile_auth import (
    case_auth_flood,
    case_auth_flood_real_user,
    case_auth_timeout,
    case_create_user,
    case_failed_auth_limit,
    case_user_oracle,
)
from hostile_tls import case_tls_partial_record, case_tls_partial_records_many


def case_idle_connections(ctx):
    socks = [connect(ctx.port) for _ in range(5000)]
    time.sleep(1.5)
    alive = ctx.alive()
    close_all(socks)
    check(alive, "the server answers with 5000 idle connections open")
    return "5000 idle connections held 1.5 s"


def case_partial_requests(ctx):
    """400 connections each push 1 MB of one half-sent request: refused at max-request-bytes."""
    head = b"*20\r\n" + b"".join(b"$60000\r\n" + b"x" * 60000 + b"\r\n" for _ in range(1))
    payload = head + b"$60000\r\n" + b"y" * (1024 * 1024 - len(head))
    socks, refused = [], 0
    for i in range(400):
        s = connect(ctx.port)
        s.setblocking(False)
        try:
            s.send(payload)
        except OSError:
            pass
        socks.append(s)
    deadline = time.monotonic() + 10
    for s in socks:
        s.setblocking(True)
        s.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            if read_line(s).startswith(b"-ERR Protocol error"):
                refused += 1
        except OSError:
            pass
    close_all(socks)
    check(refused == 400, f"every 1 MB request refused with a protocol error ({refused}/400)")
    return "400 x 1 MB: all refused (-ERR Protocol error: request too big)"


def case_half_sent_timeout(ctx):
    """Slow loris: 400 connections each send 60 KB of a request (just under max-request-bytes)
    and stop; each is closed after request-timeout-ms."""
    socks = [connect(ctx.port) for _ in range(400)]
    for s in socks:
        s.sendall(b"*2\r\n$4\r\nECHO\r\n$60000\r\n" + b"z" * 59990)
    sent = time.monotonic()
    deadline = sent + REQUEST_TIMEOUT_MS / 1000 + 5
    took = [closed_within(s, max(0.5, deadline - time.monotonic())) for s in socks]
    close_all(socks)
    closed = [t for t in took if t is not None]
    check(len(closed) == 400, f"half-sent requests are closed by the server ({len(closed)}/400)")
    return f"400 x 60 KB half-sent: all closed {time.monotonic() - sent:.1f} s after"


def pipeline_without_reading(ctx, conns, request, seconds):
    """Sends `request` over and over on `conns` connections, never reading; (bytes sent, closed)."""
    socks = [connect(ctx.port) for _ in range(conns)]
    batch = request * max(1, 8192 // len(request))
    sent, closed = 0, set()
    for s in socks:
        s.setblocking(False)
    start = time.monotonic()
    while time.monotonic() - start < seconds and len(closed) < conns:
        progress = False
        for i, s in enumerate(socks):
            if i in closed:
                continue
            try:
                sent += s.send(batch)
                progress = True
            except BlockingIOError:
                pass
            except OSError:
                closed.add(i)
        if not progress:
            time.sleep(0.05)
            for i, s in enumerate(socks):
                if i not in closed and server_closed(s):
                    closed.add(i)
    close_all(socks)
    return sent, len(closed)


def case_pipeline_no_read(ctx):
    sent, closed = pipeline_without_reading(ctx, 10, resp("HELLO"), WRITE_TIMEOUT_MS / 1000 + 6)
    check(closed == 10, f"clients that do not read are closed after write-timeout ({closed}/10)")
    return f"10 x HELLO pipelined unread: {sent / 1e6:.1f} MB sent, all closed"


def case_snowflake_count(ctx):
    s = connect(ctx.port)
    s.sendall(resp("IDF.SNOWFLAKE", "x", "COUNT", "100000"))
    line = read_line(s)
    s.close()
    check(line.startswith(b"-ERR COUNT must be between"), f"COUNT 100000 refused: {line!r}")
    sent, closed = pipeline_without_reading(
        ctx, 1, resp("IDF.SNOWFLAKE", "x", "COUNT", "10000") * 150, WRITE_TIMEOUT_MS / 1000 + 6
    )
    check(closed == 1, "the client not taking 150 x 10000 snowflakes is closed")
    return "COUNT 100000 refused; 150 x COUNT 10000 unread: closed"


def case_maxclients(ctx):
    socks, error = [], None
    try:
        for _ in range(MAXCLIENTS + 5):
            socks.append(connect(ctx.port))
        time.sleep(0.3)
        extra = connect(ctx.port, timeout=5)
        error = read_line(extra)
        extra.close()
    finally:
        close_all(socks)
    check(error == b"-ERR max number of clients reached\r\n", f"past maxclients: {error!r}")
    time.sleep(1)
    check(ctx.alive(), "new clients are served again once the others left")
    return f"connection {MAXCLIENTS + 6}: -ERR max number of clients reached"


def case_metrics_token(ctx):
    status, _ = http_get(ctx.metrics_port, "/metrics")
    check(status == "HTTP/1.1 401 Unauthorized", f"/metrics without the token: {status}")
    status, body = http_get(
        ctx.metrics_port, "/metrics", f"Authorization: Bearer {METRICS_TOKEN}\r\n"
    )
    check(status == "HTTP/1.1 200 OK", f"/metrics with the token: {status}")
    check('tag="' not in body, "no per-tag series without --metrics-tags")
    return "no token: 401; token: 200, no tag names"


def case_metrics_idle_flood(ctx):
    """300 connections to the metrics port that never send a request, kept open (reopened when
    closed): /healthz and /metrics still answer, each probe within 100 ms."""
    target, socks, stop = 300, [], threading.Event()
    lock = threading.Lock()

    def keep_flooding():
        while not stop.is_set():
            with lock:
                alive = [s for s in socks if not server_closed(s)]
                for s in socks:
                    if s not in alive:
                        s.close()
                socks[:] = alive
                while len(socks) < target:
                    try:
                        socks.append(connect(ctx.metrics_port, timeout=2))
                    except OSError:
                        break
            stop.wait(0.1)

    flooder = threading.Thread(target=keep_flooding)
    flooder.start()
    took, bad = [], []
    try:
        time.sleep(0.5)
        for i in range(30):
            path = "/healthz" if i % 2 == 0 else "/metrics"
            start = time.monotonic()
            try:
                status, _ = http_get(ctx.metrics_port, path,
                                     f"Authorization: Bearer {METRICS_TOKEN}\r\n", timeout=5)
            except OSError as e:
                status = f"{type(e).__name__}"
            took.append((time.monotonic() - start) * 1000)
            if status != "HTTP/1.1 200 OK":
                bad.append(f"{path}: {status}")
            time.sleep(0.1)
    finally:
        stop.set()
        flooder.join()
        with lock:
            close_all(socks)
    check(not bad, f"probes answered 200 ({len(bad)} did not: {bad[:3]})")
    worst = max(took)
    check(worst < 100, f"every probe answered within 100 ms (slowest {worst:.0f} ms)")
    return (f"{target} idle metrics connections: 30 probes answered, p50 "
            f"{percentile(took, 0.5):.1f} ms, max {worst:.1f} ms")


def case_scan_cursor(ctx):
    """A user who may read only public-* walks IDF.TAG SCAN one name at a time: its cursors show
    no tag name it may not read; garbage and altered cursors get a clear error."""
    admin = ctx.admin()
    for t in ["public-a", "secret-customer-acme", "secret-customer-zeta", "public-z"]:
        admin.sendall(resp("INCR", t))
        check(read_line(admin).startswith(b":"), f"INCR {t}")
    admin.sendall(resp("IDF.USER", "SET", "reader", "reader pw", "read:public-*"))
    check(read_line(admin) == b"+OK\r\n", "IDF.USER SET reader")
    admin.close()
    s = connect(ctx.port)
    s.sendall(resp("AUTH", "reader", "reader pw"))
    check(read_line(s) == b"+OK\r\n", "AUTH reader")

    def scan(cursor):
        s.sendall(resp("IDF.TAG", "SCAN", cursor, "COUNT", "1"))
        head = read_line(s)
        if head.startswith(b"-"):
            return head, None
        check(head == b"*2\r\n", f"SCAN reply {head!r}")
        n = int(read_line(s)[1:])
        cur = s.recv(n + 2, socket.MSG_WAITALL)[:-2]
        count = int(read_line(s)[1:])
        names = []
        for _ in range(count):
            m = int(read_line(s)[1:])
            names.append(s.recv(m + 2, socket.MSG_WAITALL)[:-2].decode())
        return cur, names

    cursor, seen, cursors = b"0", [], []
    for _ in range(1000):
        cursor, names = scan(cursor)
        check(names is not None, f"SCAN refused a cursor it made: {cursor!r}")
        seen += names
        if cursor == b"0":
            break
        cursors.append(cursor)
    leaked = [c for c in cursors if b"secret" in c]
    check(not leaked, f"cursors name tags the user may not read: {leaked[:2]!r}")
    check("public-a" in seen and "public-z" in seen and not any("secret" in n for n in seen),
          f"the walk shows the readable tags only: {seen}")
    bad = []
    # An altered cursor: its last character changed (to another one: "00" once matched).
    altered = [cursors[0][:-1] + (b"1" if cursors[0].endswith(b"0") else b"0")] if cursors else []
    for garbage in [b"zzz", b".public-a", b"12345"] + altered:
        line, _ = scan(garbage)
        if not line.startswith(b"-ERR invalid cursor"):
            bad.append((garbage[:40], line))
    s.close()
    check(not bad, f"garbage cursors get -ERR invalid cursor: {bad}")
    return f"{len(cursors)} cursors, none names a tag; garbage and altered cursors refused"


SNOWFLAKE_NAMES_PER_USER = 1000


def case_snowflake_quota(ctx):
    """A user with alloc:sf-* asks for snowflakes of 1,200 new names: past its quota of names
    the rest are refused, and what was made stays served."""
    admin = ctx.admin()
    admin.sendall(resp("IDF.USER", "SET", "bob", "bob pw", "alloc:sf-*"))
    check(read_line(admin) == b"+OK\r\n", "IDF.USER SET bob")
    admin.close()
    s = connect(ctx.port, timeout=60)
    s.sendall(resp("AUTH", "bob", "bob pw"))
    check(read_line(s) == b"+OK\r\n", "AUTH bob")
    n = SNOWFLAKE_NAMES_PER_USER + 200
    s.sendall(b"".join(resp("IDF.SNOWFLAKE", f"sf-{i}") for i in range(n)))
    replies = [read_line(s) for _ in range(n)]
    made = sum(r.startswith(b":") for r in replies)
    refused = sum(b"quota" in r for r in replies)
    s.sendall(resp("IDF.SNOWFLAKE", "sf-0"))
    again = read_line(s)
    s.close()
    check(made == SNOWFLAKE_NAMES_PER_USER and refused == n - made,
          f"{made} names made, {refused} refused by the quota (want {SNOWFLAKE_NAMES_PER_USER})")
    check(again.startswith(b":"), f"a name within the quota goes on: {again!r}")
    return f"{n} new snowflake names: {made} made, {refused} refused (quota)"


def case_worker_lease_flood(ctx):
    """Worker-id leases on a server without auth: 8 connections pipeline IDF.WORKER ACQUIRE for
    10 s, two of them on one service (MAX 2^24), six on a new service each time. The caps
    refuse the rest (here 1,500 per service and 3,000 per server, below the defaults so that a
    debug build on a loaded CI machine reaches both in 10 s: it granted 8,048 there in one run,
    short of the 8,192 tried first); then 4 clients at once page through the big
    service's LIST (COUNT 1000) while the unpaged LIST is refused. Runs on a second server; its
    peak RSS and another client's INCR p99 there are in the note."""
    per_service, per_server = 1500, 3000
    base = tempfile.mkdtemp(prefix="idforge-hostile-leases-")
    try:
        proc, port = serve_on_port_file(
            sys.argv[1], base,
            ["--log", "warn", "--max-leases-per-service", str(per_service),
             "--max-leases", str(per_server)],
            name="the lease server")
    except RuntimeError as e:
        raise CaseFailed(str(e)) from None
    sampler = RssSampler(proc.pid)
    lat_file = os.path.join(base, "latency")
    probe = subprocess.Popen([sys.executable, "-c", LATENCY_CLIENT, str(port), lat_file, "x", "x"])
    counts, lock, started = {}, threading.Lock(), time.time()
    # The new services wait until 'flood' is at its cap, so both caps are reached whatever the
    # build's speed (racing, the new services could fill the server's first).
    flood_full = threading.Event()

    def flood(i):
        s = connect(port, timeout=30)
        f = s.makefile("rb")
        until, n = time.monotonic() + 10, 0
        if i >= 2:
            flood_full.wait(timeout=8)
        mine = {}
        while time.monotonic() < until:
            batch = []
            for _ in range(500):
                service = "flood" if i < 2 else f"f{i}-{n}"
                n += 1
                batch.append(resp("IDF.WORKER", "ACQUIRE", service, "600000", "MAX", 1 << 24))
            s.sendall(b"".join(batch))
            for _ in batch:
                r = read_reply(f)
                key = ("granted" if isinstance(r, list) else
                       "service cap" if "service 'flood' holds" in r else
                       "server cap" if "this server holds" in r else r)
                if key == "service cap":
                    flood_full.set()
                mine[key] = mine.get(key, 0) + 1
        s.close()
        with lock:
            for k, v in mine.items():
                counts[k] = counts.get(k, 0) + v

    def walk(pages):
        s = connect(port, timeout=30)
        f = s.makefile("rb")
        cursor, rows = 0, 0
        while True:
            s.sendall(resp("IDF.WORKER", "LIST", "flood", "CURSOR", cursor, "COUNT", 1000))
            r = read_reply(f)
            if not isinstance(r, list):
                rows = r  # an error: the walk reports it
                break
            rows += len(r[1])
            cursor = r[0]
            if cursor == 0:
                break
        s.close()
        with lock:
            pages.append(rows)

    try:
        in_threads(flood, [(i,) for i in range(8)])
        flood_end = time.time()
        s = connect(port)
        f = s.makefile("rb")
        s.sendall(resp("IDF.WORKER", "LIST", "flood"))
        unpaged = read_reply(f)
        s.close()
        walked = []
        in_threads(walk, [(walked,)] * 4)
        peak = sampler.stop()
        time.sleep(0.3)
        check(proc.poll() is None, "the lease server died")
    finally:
        sampler.running = False
        probe.kill()
        probe.wait()
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    granted = counts.get("granted", 0)
    n, p99, worst, errors = latency(lat_file, started, time.time() - 0.3)
    other = {k: v for k, v in counts.items() if k not in ("granted", "service cap", "server cap")}
    check(not other, f"only grants and cap refusals: {other}")
    check(counts.get("service cap", 0) > 0 and counts.get("server cap", 0) > 0,
          f"both caps refused some: {counts}")
    check(granted == per_server, f"the server holds at most {per_server} leases ({granted} granted)")
    check(isinstance(unpaged, str) and "more than 1000 leases" in unpaged,
          f"the unpaged LIST of {per_service} leases is refused ({str(unpaged)[:80]})")
    check(walked == [per_service] * 4, f"each paged walk sees {per_service} leases ({walked})")
    check(peak < RSS_LIMIT_MB, f"lease server peak RSS {peak:.0f} MB")
    check(n > 0 and errors == 0, f"the INCR client was served ({n} ok, {errors} errors)")
    total = sum(counts.values())
    return (f"{total} ACQUIREs in {flood_end - started:.0f} s: {granted} granted, "
            f"{counts['service cap']} refused at the service cap, {counts['server cap']} at the "
            f"server cap; 4 paged LISTs of {per_service}; lease server peak {peak:.0f} MB, INCR p99 "
            f"{p99:.2f} ms, max {worst:.1f} ms ({n} INCRs)")


CASES = [
    case_idle_connections,
    case_partial_requests,
    case_half_sent_timeout,
    case_pipeline_no_read,
    case_snowflake_count,
    case_maxclients,
    case_metrics_token,
    case_create_user,
    case_auth_flood,
    case_user_oracle,
    case_failed_auth_limit,
    case_auth_timeout,
    case_tls_partial_record,
    case_metrics_idle_flood,
    case_scan_cursor,
    case_snowflake_quota,
    case_auth_flood_real_user,
    case_worker_lease_flood,
    # Last: 10,000 TLS handshakes and closes load the machine for a while after.
    case_tls_partial_records_many,
]


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    cases = select_cases(CASES, sys.argv[2:])
    if cases is None:
        return 2
    want = raise_open_files()
    check(want >= 2 * MAXCLIENTS + 200, f"RLIMIT_NOFILE {want} too low for {MAXCLIENTS} clients")
    tmp = tempfile.mkdtemp(prefix="idforge-hostile-")
    metrics_port = free_ports(1)[0]
    server, port = serve_on_port_file(
        binary, tmp,
        ["--log", "warn", "--maxclients", str(MAXCLIENTS),
         "--auth-timeout-ms", str(AUTH_TIMEOUT_MS),
         "--request-timeout-ms", str(REQUEST_TIMEOUT_MS),
         "--write-timeout-ms", str(WRITE_TIMEOUT_MS),
         "--metrics-port", str(metrics_port), "--metrics-token", METRICS_TOKEN])
    suite_start = time.monotonic()

    def make_ctx():
        ctx = Ctx(port, metrics_port, server.pid)
        ctx.binary, ctx.tmp = binary, tmp  # for cases that start a server of their own
        return ctx

    lat_file = os.path.join(tmp, "latency")
    failed = run_suite(server, cases, make_ctx, [LATENCY_CLIENT, str(port), lat_file, USER, PASSWORD],
                       lat_file, "INCR", 22)
    print(f"suite took {time.monotonic() - suite_start:.0f} s; server log: {tmp}/server.log")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
