"""Crash harness for `idforge serve` (run by server/tests/harness/crash-harness.sh; bounded, loopback only).

8 clients call INCR and INCRBY on a few tags and record every reply they receive, while the
server is stopped CYCLES times at random moments (SIGKILL or SIGTERM) and started again on the
same data. At the end:

- no id was handed out twice (every acknowledged range of a tag is disjoint from every other);
- each client saw every tag strictly increasing, in the order it sent its requests;
- with SIGTERM only: nothing acknowledged was lost either way: the acknowledged ranges of each
  tag cover 1..max with no gap (a clean stop gives back its cached ids and answers every
  request it read).
"""

import argparse
import random
import signal
import sys
import threading
import time

import redis
from cluster import TAGS, Serve, free_ports


class Server(Serve):
    """The server on its data dir, restarted on the same port; its log goes to stderr."""

    def __init__(self, binary, data_dir, port):
        super().__init__(binary, "127.0.0.1", port,
                         ["--data-dir", data_dir, "--default-step", "50", "--log", "warn"])

    def stop(self, sig):
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=30)
        if sig == signal.SIGTERM and code != 0:
            raise RuntimeError(f"SIGTERM exit status {code}")


def client(port, stop, seed, out):
    rng = random.Random(seed)
    r = None
    while not stop.is_set():
        try:
            if r is None:
                r = redis.Redis(port=port, socket_timeout=10, retry_on_timeout=False)
            tag = rng.choice(TAGS)
            if rng.random() < 0.5:
                last = r.incr(tag)
                out.append((tag, last, last))
            else:
                n = rng.randint(1, 200)
                last = r.incrby(tag, n)
                out.append((tag, last - n + 1, last))
        except (redis.ConnectionError, redis.TimeoutError, ConnectionResetError, OSError):
            # The reply never arrived: the request may or may not have taken ids. Either way
            # it is not recorded, so it cannot hide a duplicate.
            if r is not None:
                r.close()
            r = None
            time.sleep(0.01)
    if r is not None:
        r.close()


def check(records, sigterm_only):
    problems = []
    for i, rec in enumerate(records):
        last = {}
        for tag, first, end in rec:
            if first <= last.get(tag, 0):
                problems.append(f"client {i}: {tag} went from {last[tag]} to {first}")
            last[tag] = end
    for tag in TAGS:
        ranges = sorted((f, e) for rec in records for t, f, e in rec if t == tag)
        for (f1, e1), (f2, e2) in zip(ranges, ranges[1:]):
            if f2 <= e1:
                problems.append(f"{tag}: ranges {f1}-{e1} and {f2}-{e2} overlap (duplicate ids)")
        if sigterm_only and ranges:
            expect = 1
            for f, e in ranges:
                if f != expect:
                    problems.append(f"{tag}: gap {expect}..{f - 1} after a clean stop")
                expect = e + 1
    return problems


def self_test():
    """The checks catch what they look for (a harness that cannot fail proves nothing)."""
    assert check([[("orders", 1, 5)], [("orders", 6, 9)]], True) == []
    assert check([[("orders", 1, 5)], [("orders", 5, 9)]], False), "overlap"
    assert check([[("orders", 1, 5), ("orders", 3, 3)]], False), "order"
    assert check([[("orders", 1, 5)], [("orders", 7, 9)]], True), "gap"
    assert not check([[("orders", 1, 5)], [("orders", 7, 9)]], False), "gaps allowed"


def main():
    self_test()
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("data_dir")
    ap.add_argument("--cycles", type=int, default=50)
    ap.add_argument("--signal", choices=["KILL", "TERM"], default="KILL")
    ap.add_argument("--clients", type=int, default=8)
    # After the cycles, the clients go on (the server up) until this many replies are in, for at
    # most 10 minutes: a count that does not depend on how fast the server is.
    ap.add_argument("--min-replies", type=int, default=0)
    # How the server is stopped at the end: TERM checks a clean exit too. Under Wine a Linux
    # signal is no console event: a Windows program only ever dies of it (KILL).
    ap.add_argument("--final-signal", choices=["KILL", "TERM"], default="TERM")
    args = ap.parse_args()
    sig = signal.SIGKILL if args.signal == "KILL" else signal.SIGTERM
    server = Server(args.binary, args.data_dir, free_ports(1)[0])
    server.start()
    stop = threading.Event()
    records = [[] for _ in range(args.clients)]
    threads = [
        threading.Thread(target=client, args=(server.port, stop, i, records[i]))
        for i in range(args.clients)
    ]
    for t in threads:
        t.start()
    rng = random.Random(42)
    try:
        for _ in range(args.cycles):
            time.sleep(rng.uniform(0.02, 0.3))
            server.stop(sig)
            server.start()
        time.sleep(0.2)
        deadline = time.monotonic() + 600
        while sum(len(r) for r in records) < args.min_replies and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
        server.stop(signal.SIGTERM if args.final_signal == "TERM" else signal.SIGKILL)
    total = sum(len(r) for r in records)
    ids = sum(e - f + 1 for rec in records for _, f, e in rec)
    problems = check(records, args.signal == "TERM")
    print(f"    SIG{args.signal}: {args.cycles} cycles, {args.clients} clients, "
          f"{total} acknowledged replies, {ids} ids, {len(problems)} problems")
    for p in problems[:20]:
        print("    " + p)
    if total < max(args.cycles * 10, args.min_replies):
        print("    too few replies: the clients did not keep up")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
