"""Failover harness for `idforge serve` on etcd (run by server/tests/harness/failover-harness.sh; bounded,
loopback only, everything it starts is stopped by PID).

A 3-member etcd cluster and 3 idforge servers sharing it run on 127.0.0.1. CLIENTS client
threads call INCR and INCRBY on a few tags through any server, follow `-MOVED` to the leader,
wait out `-CLUSTERDOWN`, move on from a dead or stalled server, and record every reply. Then
ROUNDS times the current leader is killed with SIGKILL (every fourth round an etcd member is
killed too, and started again after the round), and the time from the kill to the first id
served by another server is measured. One extra round pauses the leader with SIGSTOP until
another server has taken over (its lease ran out) and resumes it with SIGCONT: it must not hand
out an id after it resumed.

At the end:
- no id was handed out twice (all acknowledged ranges of a tag are disjoint);
- each client saw every tag strictly increasing, in reply order;
- the kill-to-next-id times are reported (p50, max) against the targets (<= 1 s, <= 2 s).
"""

import argparse
import json
import os
import random
import signal
import socket
import statistics
import sys
import threading
import time

from cluster import (Client, Etcd, Serve, check_history, first_reply_after, free_ports,  # noqa: I001
                     leader_of, resp, wait_leader)


class Server(Serve):
    """A loopback server on the harness's store; its guard lives in its data dir, so every
    takeover also checks the store against it."""

    def __init__(self, binary, work, i, port, store, probe):
        super().__init__(binary, "127.0.0.1", port,
                         ["--store", store, "--data-dir", os.path.join(work, f"idforge{i}"),
                          "--default-step", "50", "--lease-ttl", "1",
                          "--log", os.environ.get("HARNESS_LOG", "warn"), "--takeover-probe", probe],
                         log=os.path.join(work, f"idforge{i}.log"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("work")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--json", help="write the measurements here")
    ap.add_argument("--probe", choices=["true", "false"], default="true",
                    help="the servers' --takeover-probe (false: takeover by lease expiry only)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)

    ports = free_ports(9)
    etcd = Etcd(args.work, ["127.0.0.1"] * 3, ports[0:3], ports[3:6])
    servers = []
    stop = threading.Event()
    clients = []
    failures = []
    handovers = []
    try:
        etcd.start_all()
        etcd.wait_healthy()
        store = etcd.url(f"harness-{os.getpid()}")
        servers = [Server(args.binary, args.work, i, ports[6 + i], store, args.probe)
                   for i in range(3)]
        for s in servers:
            s.start()
        wait_leader(servers)
        # The client timeout is shorter than a pause past the lease: a client stuck on a paused
        # leader gives up on it before it resumes.
        clients = [Client(i, [s.addr for s in servers], stop, timeout=0.6)
                   for i in range(args.clients)]
        for c in clients:
            c.start()
        time.sleep(1.0)

        takeovers = []
        for r in range(args.rounds):
            leader = wait_leader(servers)
            killed_member = None
            if r % 4 == 3:
                killed_member = random.randrange(3)
                etcd.kill(killed_member)
            time.sleep(0.3 + random.random() * 0.5)
            t_kill = time.monotonic()
            leader.signal(signal.SIGKILL)
            deadline = t_kill + 10
            took = None
            while time.monotonic() < deadline:
                at = first_reply_after(clients, t_kill, leader.addr)
                if at is not None:
                    took = at - t_kill
                    break
                time.sleep(0.005)
            if took is None:
                failures.append(f"round {r}: no id served within 10 s of the kill")
                took = 10.0
            takeovers.append(took)
            print(f"round {r + 1:2d}: killed the leader :{leader.port}"
                  + (f" and etcd member {killed_member}" if killed_member is not None else "")
                  + f"; next id after {took * 1000:.0f} ms", flush=True)
            leader.start()
            if killed_member is not None:
                etcd.start(killed_member)
            time.sleep(0.5)

        # The paused leader: SIGSTOP until another server has served (its 1 s lease ran out at
        # etcd and a standby won), then SIGCONT.
        leader = wait_leader(servers)
        leader.signal(signal.SIGSTOP)
        t_stop = time.monotonic()
        paused_takeover = None
        while paused_takeover is None and time.monotonic() < t_stop + 15:
            time.sleep(0.05)
            paused_takeover = first_reply_after(clients, t_stop, leader.addr)
        time.sleep(0.3)
        leader.signal(signal.SIGCONT)
        t_cont = time.monotonic()
        time.sleep(1.0)
        late = [rep for c in clients for rep in c.replies
                if rep[5] == leader.addr and rep[4] > t_cont]
        if late:
            failures.append(f"the paused leader handed out {len(late)} ids after it resumed")
        if paused_takeover is None:
            failures.append("no server took over from the paused leader within 15 s")
        else:
            print(f"pause: SIGSTOP of the leader :{leader.port}; another served after "
                  f"{(paused_takeover - t_stop) * 1000:.0f} ms; SIGCONT; ids from the old "
                  f"leader after it resumed: {len(late)}", flush=True)
        # A direct request to the resumed server is sent on.
        c = socket.create_connection(("127.0.0.1", leader.port), timeout=2)
        c.sendall(resp("INCR", "orders"))
        answer = c.recv(200).decode(errors="replace")
        c.close()
        if not (answer.startswith("-MOVED") or answer.startswith("-CLUSTERDOWN")
                or leader_of(servers) is leader):
            failures.append(f"the resumed leader answered {answer!r}")
        # A graceful handover: IDF.FAILOVER on the leader, timed to the next id any client gets
        # from another server.
        time.sleep(0.5)
        handovers = []
        for _ in range(5):
            leader = wait_leader(servers)
            c = socket.create_connection(("127.0.0.1", leader.port), timeout=5)
            t0 = time.monotonic()
            c.sendall(resp("IDF.FAILOVER"))
            answer = c.recv(200).decode(errors="replace")
            c.close()
            if not answer.startswith("+OK"):
                failures.append(f"IDF.FAILOVER answered {answer!r}")
                break
            deadline = t0 + 5
            served = None
            while served is None and time.monotonic() < deadline:
                time.sleep(0.002)
                served = first_reply_after(clients, t0, leader.addr)
            if served is None:
                failures.append("no server served within 5 s of IDF.FAILOVER")
                break
            handovers.append(served - t0)
            time.sleep(0.3)
        if handovers:
            print("handover: IDF.FAILOVER to the next id from the new leader: "
                  + ", ".join(f"{h * 1000:.0f} ms" for h in handovers), flush=True)
    finally:
        stop.set()
        for c in clients:
            c.join(timeout=5)
        for s in servers:
            if s.alive():
                s.signal(signal.SIGKILL)
        etcd.stop_all()

    # Uniqueness and order.
    problems, duplicates, total = check_history(clients)
    failures.extend(problems)
    for c in clients:
        failures.extend(f"client {c.index}: {e}" for e in c.errors)
    # The store never went back here: a server whose guard says so is a false alarm.
    for srv in servers:
        with open(srv.log, errors="replace") as f:
            if "went back" in f.read():
                failures.append(f"{srv.log}: the guard refused a store that did not go back")

    p50 = statistics.median(takeovers)
    worst = max(takeovers)
    replies = sum(len(c.replies) for c in clients)
    print(f"{len(takeovers)} kills, {replies} replies, {total} ids, {duplicates} duplicates; "
          f"kill to next id: p50 {p50 * 1000:.0f} ms, max {worst * 1000:.0f} ms "
          f"(targets 1000 / 2000 ms)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"takeovers_ms": [round(t * 1000) for t in takeovers],
                       "handovers_ms": [round(h * 1000) for h in handovers],
                       "p50_ms": round(p50 * 1000), "max_ms": round(worst * 1000),
                       "replies": replies, "ids": total, "duplicates": duplicates}, f)
    for msg in failures[:20]:
        print("FAIL:", msg, file=sys.stderr)
    print(f"failover: {0 if failures else 1} passed, {len(failures) and 1} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
