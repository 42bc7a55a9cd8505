"""Worker-id leases under churn (run by server/tests/harness/server-clients.sh against three servers on etcd; their
ports in IDFORGE_CLUSTER_PORTS).

50 processes each acquire a worker id of one service (IDF.WORKER ACQUIRE, TTL 400 ms, ids below
64), hold it for a while renewing it, then either crash (SIGKILL to themselves, no release) or
release it, and acquire again; three rounds each. Halfway, the leading server is killed with
SIGKILL. Every holder logs, before it uses the id, the window in which it holds it: from the
acquire reply to the lease's end as the holder computes it (the send time of the last successful
renewal plus the TTL), or to the moment it sends its release. No two windows of the same id may overlap: two live
processes never share an id.
"""

import multiprocessing
import os
import random
import signal
import socket
import sys
import time

PORTS = [int(p) for p in os.environ["IDFORGE_CLUSTER_PORTS"].split(",")]
PIDS = dict(zip(PORTS, (int(p) for p in os.environ["IDFORGE_CLUSTER_PIDS"].split(","))))
SERVICE = f"leases-{os.getpid()}"
TTL_MS = 400
PROCESSES = 50
ROUNDS = 3


class Conn:
    def __init__(self):
        self.port = random.choice(PORTS)
        self.sock = None

    def call(self, *args, deadline):
        """Sends a command to the leader (following MOVED, waiting out CLUSTERDOWN)."""
        req = f"*{len(args)}\r\n" + "".join(f"${len(str(a))}\r\n{a}\r\n" for a in args)
        while time.monotonic() < deadline:
            try:
                if self.sock is None:
                    self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=1)
                    self.file = self.sock.makefile("rb")
                self.sock.sendall(req.encode())
                reply = self.read()
            except OSError:
                self.sock = None
                self.port = PORTS[(PORTS.index(self.port) + 1) % len(PORTS)]
                time.sleep(0.02)
                continue
            if isinstance(reply, str) and reply.startswith("-MOVED"):
                self.sock = None
                self.port = int(reply.rsplit(":", 1)[1])
                continue
            if isinstance(reply, str) and (reply.startswith("-CLUSTERDOWN")
                                           or "store unavailable" in reply
                                           or "concurrent lease" in reply
                                           or "no free worker id" in reply):
                time.sleep(0.02)
                continue
            return reply
        return "-TIMEOUT"

    def read(self):
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise OSError("closed")
        kind, rest = line[:1], line[1:-2].decode()
        if kind == b":":
            return int(rest)
        if kind in (b"-", b"+"):
            return kind.decode() + rest
        if kind == b"$":
            data = self.file.read(int(rest) + 2)
            return data[:-2].decode()
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        raise OSError(f"unexpected {line!r}")


def holder(index, log_path):
    rng = random.Random(index)
    conn = Conn()
    with open(log_path, "a", buffering=1) as log:
        for cycle in range(ROUNDS):
            sent = time.time()
            reply = conn.call("IDF.WORKER", "ACQUIRE", SERVICE, TTL_MS, "MAX", 64,
                              deadline=time.monotonic() + 20)
            if not isinstance(reply, list):
                log.write(f"error {index} {reply}\n")
                continue
            wid, token, ttl = reply
            start = time.time()
            end = sent + ttl / 1000
            # Logged before the id is used, and again at each renewal.
            log.write(f"hold {index} {cycle} {wid} {start:.6f} {end:.6f}\n")
            hold_until = time.time() + rng.uniform(0.2, 1.2)
            while time.time() < hold_until:
                time.sleep(TTL_MS / 3000)
                sent = time.time()
                if sent >= end:
                    break  # the lease ran out locally: stop using the id
                r = conn.call("IDF.WORKER", "RENEW", SERVICE, wid, token, "TIME",
                              int(sent * 1000), deadline=time.monotonic() + (end - sent))
                if not isinstance(r, int):
                    break
                end = sent + ttl / 1000
                log.write(f"hold {index} {cycle} {wid} {start:.6f} {end:.6f}\n")
            if rng.random() < 0.5:
                log.flush()
                if cycle == ROUNDS - 1:
                    os.kill(os.getpid(), signal.SIGKILL)  # a real crash
                conn = Conn()  # as if restarted: the old lease is left to expire
                continue
            now = time.time()
            # A holder stops using the id before it asks to release it, whatever the answer:
            # the answer can be lost (a leader killed after it committed the release, so the
            # retry on the next leader finds the lease gone), and the id may then be leased
            # again before the window this holder logged last would have ended.
            log.write(f"hold {index} {cycle} {wid} {start:.6f} {min(end, now):.6f}\n")
            conn.call("IDF.WORKER", "RELEASE", SERVICE, wid, token, "TIME",
                      int(now * 1000), deadline=time.monotonic() + 5)


def leader():
    for port in PORTS:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=0.5)
            s.sendall(b"*2\r\n$4\r\nINFO\r\n$11\r\nreplication\r\n")
            data = s.recv(4096).decode(errors="replace")
            s.close()
            if "role:master" in data:
                return port
        except OSError:
            pass
    return None


def test_no_two_live_holders_share_a_worker_id(tmp_path):
    log_path = str(tmp_path / "holds.log")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=holder, args=(i, log_path)) for i in range(PROCESSES)]
    for p in procs:
        p.start()
    time.sleep(1.5)
    lead = leader()
    assert lead is not None
    os.kill(PIDS[lead], signal.SIGKILL)
    for p in procs:
        p.join(timeout=60)
        assert not p.is_alive()

    windows = {}
    errors = []
    with open(log_path) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "error":
                errors.append(line)
                continue
            _, index, cycle, wid, start, end = parts
            windows[(index, cycle)] = (int(wid), float(start), float(end))
    assert not errors, errors[:5]
    by_id = {}
    for wid, start, end in windows.values():
        by_id.setdefault(wid, []).append((start, end))
    overlaps = []
    for wid, spans in by_id.items():
        spans.sort()
        for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
            if b0 < a1:
                overlaps.append((wid, (a0, a1), (b0, b1)))
    print(f"{len(windows)} leases of {len(by_id)} ids by {PROCESSES} processes, "
          f"{len(overlaps)} overlaps", file=sys.stderr)
    assert len(windows) >= PROCESSES * 2, "most acquisitions succeed"
    assert not overlaps, overlaps[:5]
