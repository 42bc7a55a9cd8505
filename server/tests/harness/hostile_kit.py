"""What the hostile-client suites share: the server's limits as the suites start it, checks, raw
RESP and HTTP sockets, the peak-RSS sampler, the latency client and its judge (`run_case`), and
servers of a case's own (`side_server`). Python 3 standard library only."""

import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

from cluster import resp, serve_on_port_file


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


def in_threads(target, arg_tuples):
    """Runs target(*args) for each args on a thread of its own, all at once; returns when every
    one has ended."""
    threads = [threading.Thread(target=target, args=args) for args in arg_tuples]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


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
end = time.time() + float(sys.argv[5]) if len(sys.argv) > 5 else float("inf")
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
while time.time() < end:
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


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))] if values else float("nan")


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


def select_cases(cases, names):
    """The cases `names` names (without `case_`), or all of them; None, after saying which there
    are, when a name is unknown."""
    by_name = {c.__name__.removeprefix("case_"): c for c in cases}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        print(f"unknown cases {unknown}; cases: {' '.join(by_name)}", file=sys.stderr)
        return None
    return [by_name[n] for n in names] or cases


def raise_open_files():
    """Raises this process's open-file limit, which the servers it starts inherit, to 32768 (or
    the hard limit); returns the new one."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 32768) if hard != resource.RLIM_INFINITY else 32768
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return want


def run_suite(server, cases, make_ctx, latency_client, lat_file, what, width, p99_limit_ms=lambda case: None):
    """Runs `cases` one at a time against `server` (a Popen) beside a latency client (the
    `python -c` arguments `latency_client`, writing to `lat_file`), each judged by run_case with
    `p99_limit_ms(case)`; stops at the first case the server does not survive. Kills the latency
    client and the server at the end. Returns the names of the cases that failed."""
    client = None
    failed = []
    try:
        ctx = make_ctx()
        client = subprocess.Popen([sys.executable, "-c", *latency_client])
        time.sleep(0.5)
        print(f"idforge serve pid {server.pid}; RSS at start {rss_mb(server.pid):.0f} MB")
        header = (f"{'case':<{width}} {'result':<6} {'peak RSS':>9} {what + 's':>6} {'p99 ms':>7} {'max ms':>7} "
                  f"{'errs':>4}  note")
        print(header)
        print("-" * len(header))
        for case in cases:
            if run_case(case, ctx, server, lat_file, what, width, p99_limit_ms(case)) != "ok":
                failed.append(case.__name__)
            if server.poll() is not None:
                break
    finally:
        if client is not None:
            client.kill()
            client.wait()
        if server.poll() is None:
            os.kill(server.pid, signal.SIGKILL)
        server.wait()
    if failed:
        print("FAILED: " + ", ".join(failed))
    return failed
