#!/usr/bin/env python3
"""HTTP ids mixed with RESP INCR on the same tags, across kill -9 and an HA failover: never a
duplicate (bounded, loopback only; everything it starts is stopped by PID).

Usage: python3 server/tests/harness/http_ids.py PATH/TO/idforge [--clients 8] [--requests 10000]
       [--only crash|failover]

Each of CLIENTS HTTP clients (keep-alive, Python's http.client) takes REQUESTS answers from the
HTTP port, each of one or more ids: Leaf's /api/segment/get/{tag}, tinyid's nextIdSimple (a
batch) and nextSegmentIdSimple (a whole segment, as tinyid-client takes it), on the tags of
cluster.py that two RESP clients (cluster.Client: INCR/INCRBY) use at the same time. Every
answer is recorded as a range; on a refused connection, a timeout or a 503 the client moves to
the next server.

- crash: one server on SQLite, killed with SIGKILL and started again every 2 s until the HTTP
  clients are done.
- failover: a 1-member etcd and 3 servers sharing it; a standby answers 503 (Leaf's body, and
  tinyid's code 6) and never an id, and its status page says `standby`; the leader is killed with
  SIGKILL (and started again) every 3 s until the HTTP clients are done.

At the end of each: no id handed out twice over HTTP and RESP together, each client's ids strictly
increasing per tag (cluster.check_history).
"""

import argparse
import http.client
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
import urllib.request

from cluster import TAGS, Client, Etcd, Serve, check_history, free_ports, leader_of, wait_leader


class HttpClient(threading.Thread):
    """Takes `count` answers from the HTTP ports `addrs`, recording (tag, first, last, sent,
    received, addr) as cluster.Client does."""

    def __init__(self, index, addrs, count, stop):
        super().__init__(daemon=True)
        self.index, self.addrs, self.count, self.stop = index, addrs, count, stop
        self.rng = random.Random(1000 + index)
        self.replies, self.errors = [], []
        self.addr = addrs[index % len(addrs)]
        self.conn = None

    def move_on(self):
        if self.conn:
            self.conn.close()
        self.conn = None
        self.addr = self.addrs[(self.addrs.index(self.addr) + 1) % len(self.addrs)]
        time.sleep(0.01)

    def get(self, path):
        """(status, body), or None on a connection failure."""
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection(*self.addr, timeout=5)
            self.conn.request("GET", path)
            r = self.conn.getresponse()
            return r.status, r.read().decode()
        except (OSError, http.client.HTTPException):
            return None

    def one(self):
        tag = self.rng.choice(TAGS)
        kind = self.rng.choice(["leaf", "leaf", "batch", "segment"])
        if kind == "leaf":
            path = f"/api/segment/get/{tag}"
        elif kind == "batch":
            path = f"/tinyid/id/nextIdSimple?bizType={tag}&token=t&batchSize={self.rng.choice([2, 7])}"
        else:
            path = f"/tinyid/id/nextSegmentIdSimple?bizType={tag}&token=t"
        while not self.stop.is_set():
            sent = time.monotonic()
            got = self.get(path)
            if got is None or got[0] == 503 or (got[0] == 200 and got[1] == ""):
                self.move_on()
                continue
            status, body = got
            if status != 200:
                self.errors.append(f"{path}: {status} {body}")
                return
            if kind == "leaf":
                first = last = int(body)
            elif kind == "batch":
                ids = [int(i) for i in body.split(",")]
                assert ids == list(range(ids[0], ids[0] + len(ids))), body
                first, last = ids[0], ids[-1]
            else:
                current, _, top, _, _ = map(int, body.split(","))
                first, last = current + 1, top
            self.replies.append((tag, first, last, sent, time.monotonic(), self.addr))
            return

    def run(self):
        for _ in range(self.count):
            if self.stop.is_set():
                return
            self.one()


def run_clients(http_addrs, resp_addrs, clients, requests, chaos):
    """Runs the HTTP and RESP clients while `chaos()` is called every loop; the history check."""
    stop = threading.Event()
    https = [HttpClient(i, http_addrs, requests, stop) for i in range(clients)]
    resps = [Client(i, resp_addrs, stop, 2.0, clusterdown_moves_on=True) for i in range(2)]
    for c in https + resps:
        c.start()
    started = time.monotonic()
    while any(c.is_alive() for c in https):
        if time.monotonic() - started > 900:
            stop.set()
            raise RuntimeError("the HTTP clients did not finish in 15 minutes")
        chaos()
        time.sleep(0.05)
    stop.set()
    for c in resps:
        c.join(10)
        c.close()
    failures, duplicates, ids = check_history(https + resps)
    for c in https:
        failures += [f"http client {c.index}: {e}" for e in c.errors[:3]]
    http_ids = sum(last - first + 1 for c in https for _, first, last, *_ in c.replies)
    answers = sum(len(c.replies) for c in https)
    return failures, duplicates, {"http_answers": answers, "http_ids": http_ids,
                                  "resp_ranges": sum(len(c.replies) for c in resps),
                                  "all_ids": ids, "seconds": round(time.monotonic() - started, 1)}


def crash(binary, work, clients, requests):
    port, http_port = free_ports(2)
    server = Serve(binary, "127.0.0.1", port,
                   ["--http-port", str(http_port), "--data-dir", os.path.join(work, "crash"),
                    "--default-step", "50", "--log", "warn"],
                   log=os.path.join(work, "crash.log"))
    server.start()
    kills = [0]
    last = [time.monotonic()]

    def chaos():
        if time.monotonic() - last[0] > 2:
            server.kill()
            kills[0] += 1
            server.start()
            last[0] = time.monotonic()

    try:
        failures, duplicates, numbers = run_clients(
            [("127.0.0.1", http_port)], [server.addr], clients, requests, chaos)
    finally:
        server.kill()
    numbers["kills"] = kills[0]
    return failures, duplicates, numbers


def get(addr, path):
    try:
        with urllib.request.urlopen(f"http://{addr[0]}:{addr[1]}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def failover(binary, work, clients, requests):
    ports = free_ports(8)
    etcd = Etcd(work, ["127.0.0.1"], ports[0:1], ports[1:2])
    etcd.start_all()
    servers, http_of = [], {}
    try:
        etcd.wait_healthy()
        store = etcd.url(f"http-{os.getpid()}")
        for i in range(3):
            port, http_port = ports[2 + 2 * i], ports[3 + 2 * i]
            s = Serve(binary, "127.0.0.1", port,
                      ["--store", store, "--data-dir", os.path.join(work, f"ha{i}"),
                       "--http-port", str(http_port), "--default-step", "50",
                       "--lease-ttl", "1", "--log", "warn"],
                      log=os.path.join(work, f"ha{i}.log"))
            s.start()
            servers.append(s)
            http_of[s.addr] = ("127.0.0.1", http_port)
        leader = wait_leader(servers)
        standby = next(s for s in servers if s is not leader)
        # A standby never answers with an id.
        status, body = get(http_of[standby.addr], "/api/segment/get/orders")
        assert status == 503 and json.loads(body)["status"] == 503, (status, body)
        status, body = get(http_of[standby.addr], "/tinyid/id/nextId?bizType=orders&token=t")
        assert status == 503 and json.loads(body)["code"] == 6 and json.loads(body)["data"] is None, body
        status, body = get(http_of[standby.addr], "/tinyid/id/nextSegmentIdSimple?bizType=orders&token=t")
        assert (status, body) == (503, ""), (status, body)
        status, page = get(http_of[standby.addr], "/status")
        assert '<span id="role">standby</span>' in page, page[:1500]
        status, lead_page = get(http_of[leader.addr], "/status")
        assert '<span id="role">leader</span>' in lead_page, lead_page[:1500]
        # Both name the same term (the leader key's create revision).
        terms = [re.search(r'<span id="term">(\d+)</span>', p) for p in (page, lead_page)]
        assert all(terms) and terms[0].group(1) == terms[1].group(1), (terms, page[:1500])
        kills = [0]
        last = [time.monotonic()]

        def chaos():
            if time.monotonic() - last[0] > 3:
                for s in servers:
                    if not s.alive():
                        s.start()
                current = leader_of(servers)
                if current:
                    current.kill()
                    kills[0] += 1
                last[0] = time.monotonic()

        failures, duplicates, numbers = run_clients(
            list(http_of.values()), [s.addr for s in servers], clients, requests, chaos)
        numbers["leader_kills"] = kills[0]
        return failures, duplicates, numbers
    finally:
        for s in servers:
            s.kill()
        etcd.stop_all()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--only", choices=["crash", "failover"])
    args = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as work:
        for name, run in [("crash", crash), ("failover", failover)]:
            if args.only and args.only != name:
                continue
            failures, duplicates, numbers = run(args.binary, work, args.clients, args.requests)
            print(f"    {name}: {duplicates} duplicates; {json.dumps(numbers)}")
            for f in failures[:10]:
                print(f"      FAIL {f}")
            ok = ok and not failures
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
