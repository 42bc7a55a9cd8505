#!/usr/bin/env python3
"""Adversarial suite for `idforge serve`: hostile clients must not sink the server.

Usage: python3 ci/harness/hostile.py PATH/TO/idforge [CASE ...]   (default: every case, in order)

Starts its own server (port 0, a temporary data dir), runs one case per finding, and for each
measures the server's peak RSS (/proc/PID/status) and the INCR latency of another, well-behaved
client running throughout (a child process, so this script's own work does not skew it). Prints
a table; exits non-zero when a case fails. The server is killed by PID at the end, also on
failure. Python 3 standard library only.

Adding a case: write `def case_NAME(ctx): ...` that attacks, asserts with `check(...)` and
returns a short note, and append it to CASES (cases run in order; those that need auth come
after `create_user`).
"""

import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from cluster import free_ports, resp, serve_on_port_file

RSS_LIMIT_MB = 300
MAXCLIENTS = 5100
AUTH_TIMEOUT_MS = 3000
REQUEST_TIMEOUT_MS = 3000
WRITE_TIMEOUT_MS = 2000
METRICS_TOKEN = "hostile-token"
USER, PASSWORD = "alice", "correct horse"


class CaseFailed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise CaseFailed(what)


def connect(port, source="127.0.0.1", timeout=10.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if source != "127.0.0.1":
        s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_line(s):
    data = b""
    while not data.endswith(b"\r\n"):
        chunk = s.recv(1)
        if not chunk:
            break
        data += chunk
    return data


def closed_within(s, seconds):
    """Reads (and discards) until the server closes `s`; the seconds it took, or None."""
    start = time.monotonic()
    s.settimeout(0.2)
    while time.monotonic() - start < seconds:
        try:
            if not s.recv(65536):
                return time.monotonic() - start
        except socket.timeout:
            continue
        except OSError:
            return time.monotonic() - start
    return None


def server_closed(s):
    """Whether the server has closed `s` (without blocking)."""
    s.setblocking(False)
    try:
        return s.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def close_all(socks):
    for s in socks:
        try:
            s.close()
        except OSError:
            pass


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class RssSampler:
    """Samples the server's RSS every 20 ms while a case runs."""

    def __init__(self, pid):
        self.pid, self.peak, self.running = pid, 0.0, True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while self.running:
            try:
                self.peak = max(self.peak, rss_mb(self.pid))
            except OSError:
                return
            time.sleep(0.02)

    def stop(self):
        self.running = False
        self.thread.join()
        return max(self.peak, rss_mb(self.pid))


LATENCY_CLIENT = r"""
import socket, sys, time
port, out, user, pw = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def req(*a):
    return ("*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in a)).encode()
def line(s):
    d = b""
    while not d.endswith(b"\r\n"):
        c = s.recv(1)
        if not c:
            raise OSError("closed")
        d += c
    return d
f = open(out, "w", buffering=1)
s = None
while True:
    try:
        if s is None:
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(req("AUTH", user, pw))
            line(s)  # +OK, or "no password configured" before the user exists
        t = time.time()
        s.sendall(req("INCR", "latency"))
        r = line(s)
        f.write("%f %f %s\n" % (time.time(), (time.time() - t) * 1000, "ok" if r[:1] == b":" else "err"))
    except OSError:
        f.write("%f 0 err\n" % time.time())
        s = None
        time.sleep(0.05)
    time.sleep(0.002)
"""


class Ctx:
    """What a case gets: the server's ports and pid, and room to leave things for later cases."""

    def __init__(self, port, metrics_port, pid):
        self.port, self.metrics_port, self.pid = port, metrics_port, pid

    def admin(self):
        s = connect(self.port)
        s.sendall(resp("AUTH", USER, PASSWORD))
        read_line(s)
        return s

    def alive(self):
        s = self.admin()
        s.sendall(resp("PING"))
        ok = read_line(s) == b"+PONG\r\n"
        s.close()
        return ok


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


def http_get(port, path, headers="", timeout=10.0):
    s = connect(port, timeout=timeout)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0].decode(), body.decode()


def case_metrics_token(ctx):
    status, _ = http_get(ctx.metrics_port, "/metrics")
    check(status == "HTTP/1.1 401 Unauthorized", f"/metrics without the token: {status}")
    status, body = http_get(
        ctx.metrics_port, "/metrics", f"Authorization: Bearer {METRICS_TOKEN}\r\n"
    )
    check(status == "HTTP/1.1 200 OK", f"/metrics with the token: {status}")
    check('tag="' not in body, "no per-tag series without --metrics-tags")
    return "no token: 401; token: 200, no tag names"


def case_create_user(ctx):
    s = connect(ctx.port)
    s.sendall(resp("IDF.USER", "SET", USER, PASSWORD, "admin"))
    line = read_line(s)
    s.close()
    check(line == b"+OK\r\n", f"IDF.USER SET: {line!r}")
    return "argon2 user created: auth required from now on"


def case_auth_flood(ctx):
    """128 concurrent wrong AUTHs, from 128 addresses (so the per-address limit does not help)."""
    socks = [connect(ctx.port, source=f"127.0.1.{i + 1}", timeout=120) for i in range(128)]
    for s in socks:
        s.sendall(resp("AUTH", USER, "wrong"))
    replies = [read_line(s) for s in socks]
    close_all(socks)
    wrong = sum(r.startswith(b"-WRONGPASS") for r in replies)
    check(wrong == 128, f"128 wrong AUTHs refused ({wrong})")
    return "128 concurrent wrong AUTHs: all WRONGPASS"


def timed_auth(ctx, source, user):
    s = connect(ctx.port, source=source, timeout=60)
    start = time.monotonic()
    s.sendall(resp("AUTH", user, "wrong"))
    line = read_line(s)
    took = time.monotonic() - start
    s.close()
    check(line.startswith(b"-WRONGPASS"), f"AUTH {user}: {line!r}")
    return took


def case_user_oracle(ctx):
    known, unknown = [], []
    for i in range(4):
        known.append(timed_auth(ctx, f"127.0.2.{i + 1}", USER))
        unknown.append(timed_auth(ctx, f"127.0.3.{i + 1}", "nobody"))
    k, u = sorted(known)[1], sorted(unknown)[1]
    check(0.5 < u / k < 2, f"unknown and known users take about the same time ({u:.3f} vs {k:.3f})")
    return f"AUTH known {k * 1000:.0f} ms, unknown {u * 1000:.0f} ms (lower medians)"


def case_failed_auth_limit(ctx):
    """15 concurrent wrong AUTHs from one address: its allowance (10) passes, the rest are refused
    at once, without a password check."""
    socks = [connect(ctx.port, source="127.0.4.1", timeout=60) for _ in range(15)]
    for s in socks:
        s.sendall(resp("AUTH", USER, "wrong"))
    replies = [read_line(s) for s in socks]
    close_all(socks)
    wrong = sum(r.startswith(b"-WRONGPASS") for r in replies)
    throttled = sum(r.startswith(b"-ERR too many failed AUTH") for r in replies)
    check(wrong + throttled == 15 and 10 <= wrong <= 11, f"{wrong} WRONGPASS, {throttled} refused")
    return f"15 wrong AUTHs from one address: {wrong} checked, {throttled} refused (too many failed)"


def case_auth_timeout(ctx):
    socks = [connect(ctx.port) for _ in range(20)]
    opened = time.monotonic()
    took = [closed_within(s, AUTH_TIMEOUT_MS / 1000 + 3) for s in socks]
    close_all(socks)
    check(all(t is not None for t in took), "connections that never authenticate are closed")
    return f"20 unauthenticated: all closed {time.monotonic() - opened:.1f} s after connecting"


# --- Starvation and probing, second round: TLS records, SCAN cursors, snowflake names, an AUTH
# flood from many addresses, and an idle flood of the metrics port. ---


def wait_closed(socks, seconds):
    """Waits until the server closed each of `socks` (EOF or an error), for at most `seconds`;
    returns how many it closed. Whatever arrives before the close is read and dropped."""
    import selectors

    sel = selectors.DefaultSelector()
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
    closed, deadline = 0, time.monotonic() + seconds
    while closed < len(socks) and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.2):
            try:
                data = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(key.fileobj)
                closed += 1
    sel.close()
    return closed


def side_server(ctx, name, extra, request_timeout_ms=REQUEST_TIMEOUT_MS):
    """Starts another server of the binary under test (its own data dir); returns (process,
    port). The caller kills it by PID."""
    try:
        return serve_on_port_file(
            ctx.binary, os.path.join(ctx.tmp, name),
            ["--log", "warn", "--request-timeout-ms", str(request_timeout_ms)] + extra,
            name=f"the {name} server")
    except RuntimeError as e:
        raise CaseFailed(str(e)) from None


def stop_side_server(proc):
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def tls_handshake(port, context):
    """A TLS handshake driven over a plain socket (so the raw socket stays ours afterwards);
    returns (socket, ssl object)."""
    import ssl

    s = connect(port)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            pending = outgoing.read()
            if pending:
                s.sendall(pending)
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("closed during the TLS handshake")
            incoming.write(chunk)
    pending = outgoing.read()  # the client's Finished
    if pending:
        s.sendall(pending)
    return s, tls, outgoing


def tls_incr_probe(port, context, stop, took):
    """INCR over TLS, one at a time, until `stop` is set; appends each latency (ms) to `took`
    (None for a failure)."""
    try:
        s = context.wrap_socket(connect(port), server_hostname="localhost")
        while not stop.is_set():
            start = time.monotonic()
            s.sendall(resp("INCR", "latency"))
            line = read_line(s)
            took.append((time.monotonic() - start) * 1000 if line.startswith(b":") else None)
            time.sleep(0.002)
        s.close()
    except OSError:
        took.append(None)


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")


def make_cert(ctx):
    """A self-signed certificate for localhost and 127.0.0.1: (cert, key) paths."""
    cert, key = os.path.join(ctx.tmp, "tls.pem"), os.path.join(ctx.tmp, "tls.key")
    if os.path.exists(cert):
        return cert, key
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    check(made.returncode == 0, f"openssl could not make a test certificate: {made.stderr!r}")
    return cert, key


def case_tls_partial_record(ctx):
    """TLS: 500 clients finish the handshake, then send 12 KB of a 16 KB TLS record and stop.
    Each is closed once request-timeout-ms has passed (a record must be complete within it).
    Runs on a second server, with TLS on; its own RSS and INCR-over-TLS p99 are in the note."""
    import ssl

    cert, key = make_cert(ctx)
    proc, port = side_server(ctx, "tls", ["--tls-cert", cert, "--tls-key", key])
    stop, took, socks = threading.Event(), [], []
    sampler = RssSampler(proc.pid)
    try:
        context = ssl.create_default_context(cafile=cert)
        probe = threading.Thread(target=tls_incr_probe, args=(port, context, stop, took))
        probe.start()
        for _ in range(500):
            s, tls, outgoing = tls_handshake(port, context)
            tls.write(b"x" * 16000)
            record = outgoing.read()
            s.sendall(record[:12000])
            socks.append(s)
        sent = time.monotonic()
        closed = wait_closed(socks, REQUEST_TIMEOUT_MS / 1000 + 6)
        after = time.monotonic() - sent
        stop.set()
        probe.join()
        peak = sampler.stop()
        check(proc.poll() is None, "the TLS server died")
    finally:
        stop.set()
        sampler.running = False
        close_all(socks)
        stop_side_server(proc)
    ok = [t for t in took if t is not None]
    check(closed == 500, f"clients holding half a TLS record are closed ({closed}/500)")
    check(ok and len(ok) == len(took), f"the TLS INCR client was served ({len(ok)} ok of {len(took)})")
    check(peak < RSS_LIMIT_MB, f"TLS server peak RSS {peak:.0f} MB")
    return (f"500 x 12 KB of a TLS record: all closed {after:.1f} s after; TLS server peak "
            f"{peak:.0f} MB, TLS INCR p99 {percentile(ok, 0.99):.2f} ms ({len(ok)} INCRs)")


TLS_PARTIAL = 10_000
TLS_PARTIAL_TIMEOUT_MS = 300_000


def case_tls_partial_records_many(ctx):
    """TLS: 10,000 clients finish the handshake, send 12 KB of a 16 KB TLS record each and stop,
    all held at once (a request timeout longer than the case): the incomplete records stay
    within --tls-max-incomplete-bytes (64 MB; reads past it close their connection), so the
    server stays under the RSS bound."""
    import ssl

    cert, key = make_cert(ctx)
    proc, port = side_server(ctx, "tls-many", [
        "--tls-cert", cert, "--tls-key", key, "--maxclients", str(TLS_PARTIAL + 100)],
        request_timeout_ms=TLS_PARTIAL_TIMEOUT_MS)
    socks = []
    sampler = RssSampler(proc.pid)
    try:
        context = ssl.create_default_context(cafile=cert)
        started = time.monotonic()
        for _ in range(TLS_PARTIAL):
            s, tls, outgoing = tls_handshake(port, context)
            tls.write(b"x" * 16000)
            s.sendall(outgoing.read()[:12000])
            socks.append(s)
        took = time.monotonic() - started
        closed = wait_closed(socks, 2)
        peak = sampler.stop()
        check(proc.poll() is None, "the TLS server died")
        alive = tls_pong(port, context)
    finally:
        sampler.running = False
        close_all(socks)
        stop_side_server(proc)
    check(peak < RSS_LIMIT_MB, f"TLS server peak RSS {peak:.0f} MB with {TLS_PARTIAL} incomplete records")
    check(closed > 0, "no connection was closed for the incomplete-record budget")
    check(alive, "a new TLS client was served")
    return (f"{TLS_PARTIAL:,} x 12 KB of a TLS record held at once ({took:.0f} s): peak {peak:.0f} MB, "
            f"{closed:,} closed for the budget, the rest kept until the request timeout")


def tls_pong(port, context):
    """Whether a new TLS client gets PONG."""
    with context.wrap_socket(connect(port), server_hostname="localhost") as s:
        s.sendall(b"*1\r\n$4\r\nPING\r\n")
        return s.recv(64).startswith(b"+PONG")


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


def auth_attack(port, sources, per_source, stop, counts):
    """Wrong-password AUTHs for alice from every address of `sources`, `per_source` connections
    each, each sending the next as soon as the last is answered; reconnects when closed."""
    import selectors

    sel = selectors.DefaultSelector()
    req = resp("AUTH", USER, "not the password")

    def open_one(src):
        try:
            s = connect(port, source=src, timeout=5)
            s.sendall(req)
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, src)
        except OSError:
            counts["connect errors"] = counts.get("connect errors", 0) + 1

    for src in sources:
        for _ in range(per_source):
            open_one(src)
    while not stop.is_set():
        for key, _ in sel.select(timeout=0.1):
            s, src = key.fileobj, key.data
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(s)
                s.close()
                open_one(src)
                continue
            for line in data.split(b"\r\n")[:-1]:
                kind = "throttled" if b"too many" in line else line.split(b" ")[0].decode()
                counts[kind] = counts.get(kind, 0) + 1
                try:
                    s.sendall(req)
                except OSError:
                    pass
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    sel.close()


def case_auth_flood_real_user(ctx):
    """600 connections from 200 addresses send wrong passwords for alice without pause; alice
    (who authenticated before) and carol (a new user, first AUTH) authenticate from another
    address meanwhile: every AUTH answered within 500 ms."""
    admin = ctx.admin()
    admin.sendall(resp("IDF.USER", "SET", "carol", "carol pw", "read:*"))
    check(read_line(admin) == b"+OK\r\n", "IDF.USER SET carol")
    admin.close()
    stop, counts = threading.Event(), {}
    sources = [f"127.0.5.{i + 1}" for i in range(200)]
    attacker = threading.Thread(target=auth_attack, args=(ctx.port, sources, 3, stop, counts))
    attacker.start()
    took = {"alice": [], "carol": []}
    try:
        time.sleep(2)  # the flood fills the queue of checks
        for i in range(24):
            user, pw = (USER, PASSWORD) if i % 3 else ("carol", "carol pw")
            s = connect(ctx.port, timeout=30)
            start = time.monotonic()
            s.sendall(resp("AUTH", user, pw))
            line = read_line(s)
            took[user].append((time.monotonic() - start) * 1000)
            s.close()
            check(line == b"+OK\r\n", f"AUTH {user} during the flood: {line!r}")
            time.sleep(0.15)
    finally:
        stop.set()
        attacker.join()
    everyone = took["alice"] + took["carol"]
    worst = max(everyone)
    checked = counts.get("-WRONGPASS", 0)
    check(checked > 0, f"the flood was answered ({counts})")
    check(worst < 500, f"every real AUTH within 500 ms (alice {sorted(took['alice'])[-3:]}, "
          f"carol {sorted(took['carol'])[-3:]} ms)")
    return (f"600 wrong-AUTH connections from 200 addresses ({checked} checked, "
            f"{counts.get('throttled', 0)} throttled): alice p99 {percentile(took['alice'], 0.99):.0f} ms, "
            f"carol (first AUTH) max {max(took['carol']):.0f} ms")


def read_reply(f):
    """One RESP reply from the buffered reader `f`: an int, bytes, a list, or an error string
    (prefixed "-")."""
    line = f.readline()
    if not line:
        raise OSError("closed")
    kind, rest = line[:1], line[1:-2]
    if kind == b"*":
        return [read_reply(f) for _ in range(int(rest))]
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2]
    if kind == b":":
        return int(rest)
    return line[:-2].decode()


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
        threads = [threading.Thread(target=flood, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        flood_end = time.time()
        s = connect(port)
        f = s.makefile("rb")
        s.sendall(resp("IDF.WORKER", "LIST", "flood"))
        unpaged = read_reply(f)
        s.close()
        walked = []
        walkers = [threading.Thread(target=walk, args=(walked,)) for _ in range(4)]
        for t in walkers:
            t.start()
        for t in walkers:
            t.join()
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


def latency(path, start, end):
    lat, errors = [], 0
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 3 or not start <= float(parts[0]) <= end:
                continue
            if parts[2] == "ok":
                lat.append(float(parts[1]))
            else:
                errors += 1
    lat.sort()
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else float("nan")
    return len(lat), p99, (lat[-1] if lat else float("nan")), errors


def run_case(case, ctx, server, lat_file, what, width, p99_limit_ms=None):
    """Runs one case while sampling the server's RSS, then judges it on the latency client's
    lines of that time (`what` it sends; a p99 past `p99_limit_ms` fails it when given) and
    prints its row of the table (`width`: the case column's). "ok" or "FAIL"."""
    sampler = RssSampler(server.pid)
    start = time.time()
    try:
        note = case(ctx)
        result = "ok"
    except (CaseFailed, OSError) as e:
        note, result = f"{type(e).__name__}: {e}", "FAIL"
    peak = sampler.stop()
    time.sleep(0.3)  # let the latency client's last lines land
    n, p99, worst, errors = latency(lat_file, start, time.time() - 0.3)
    if result == "ok" and peak > RSS_LIMIT_MB:
        note, result = f"peak RSS {peak:.0f} MB > {RSS_LIMIT_MB} MB; {note}", "FAIL"
    if result == "ok" and (n == 0 or errors):
        note, result = f"the {what} client stalled ({n} ok, {errors} errors); {note}", "FAIL"
    if result == "ok" and p99_limit_ms is not None and p99 > p99_limit_ms:
        note, result = f"the {what} client's p99 {p99:.1f} ms > {p99_limit_ms} ms; {note}", "FAIL"
    if server.poll() is not None:
        note, result = f"the server died; {note}", "FAIL"
    name = case.__name__.removeprefix("case_")
    print(f"{name:<{width}} {result:<6} {peak:>6.0f} MB {n:>6} {p99:>7.2f} {worst:>7.1f} {errors:>4}  {note}",
          flush=True)
    return result


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    names = {c.__name__.removeprefix("case_"): c for c in CASES}
    unknown = [n for n in sys.argv[2:] if n not in names]
    if unknown:
        print(f"unknown cases {unknown}; cases: {' '.join(names)}", file=sys.stderr)
        return 2
    cases = [names[n] for n in sys.argv[2:]] or CASES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 32768) if hard != resource.RLIM_INFINITY else 32768
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))  # inherited by the server
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
    latency_client = None
    failed = []
    suite_start = time.monotonic()
    try:
        ctx = Ctx(port, metrics_port, server.pid)
        ctx.binary, ctx.tmp = binary, tmp  # for cases that start a server of their own
        lat_file = os.path.join(tmp, "latency")
        latency_client = subprocess.Popen(
            [sys.executable, "-c", LATENCY_CLIENT, str(port), lat_file, USER, PASSWORD]
        )
        time.sleep(0.5)
        print(f"idforge serve pid {server.pid}, port {port}; RSS at start {rss_mb(server.pid):.0f} MB")
        header = f"{'case':<22} {'result':<6} {'peak RSS':>9} {'INCRs':>6} {'p99 ms':>7} {'max ms':>7} {'errs':>4}  note"
        print(header)
        print("-" * len(header))
        for case in cases:
            if run_case(case, ctx, server, lat_file, "INCR", 22) != "ok":
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
    print(f"suite took {time.monotonic() - suite_start:.0f} s; server log: {tmp}/server.log")
    if failed:
        print("FAILED: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
