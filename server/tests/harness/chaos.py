"""The partition harness (run by server/tests/harness/chaos.sh inside the clients' network namespace, idf-c).

3 etcd members (namespaces idf-e1..3, 10.77.0.11-13) and 3 `idforge serve` on one etcd store
(idf-s1..3, 10.77.0.21-23), lease TTL 1 s. CLIENTS client threads call INCR and INCRBY on a few
tags through any server (following -MOVED, moving on from -CLUSTERDOWN and from a server that does
not answer within 0.5 s) and record every reply with its send and receive times. One prober per
server sends INCR to that server alone every 20 ms, so a server that should have stopped serving
is caught if it answers.

Each nemesis is started, held HOLD seconds, healed, and the run waits until a client gets an id
again; every nemesis runs RUNS times, interleaved. Partitions are iptables DROP rules in the
hosts' namespaces (silent loss, as a cut cable), never closed sockets:

- leader-vs-etcd: the leader cut off from the three etcd members, still reachable by clients;
- leader-vs-clients: the leader cut off from the clients only (it keeps its lease);
- etcd-member: one etcd member cut off from everything;
- minority: the leader and one etcd member against the two other members and servers;
- slow-lossy-leader: the leader's link shaped to 16 kbit/s each way (a 200-600-byte packet
  waits 100-300 ms, more behind others: this kernel has no netem) and 10% of its packets dropped
  each way (iptables statistic);
- clock-skew: a standby restarted with its wall clock 3 hours ahead (libfaketime) and made leader
  (the third server stopped meanwhile, so IDF.FAILOVER can only hand over to it); healed by a
  kill -9 and a restart on the real clock.

Checked over the whole history (clients and probers): no id handed out twice; each client's ids
strictly increasing per tag in the order it sent them; no id from a leader cut off from etcd for
a request sent later than the cut plus the lease TTL (it stopped serving within its lease); and
no id from a cut-off leader (from etcd, or in the minority) for a request sent after another
server had served one (never two leaders at once). Reported per nemesis: the outage (longest time without any client id,
from the start of the nemesis until ids flow after healing), and how long the cut-off leader went
on serving.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402  (the etcd cluster, servers, RESP and client of every harness)

ETCD = ["10.77.0.11", "10.77.0.12", "10.77.0.13"]
SERVERS = ["10.77.0.21", "10.77.0.22", "10.77.0.23"]
CLIENT = "10.77.0.31"
SUBNET = "10.77.0.0/24"
PORT = 7379
TTL = 1.0
FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"
NEMESES = ["leader-vs-etcd", "leader-vs-clients", "etcd-member", "minority",
           "slow-lossy-leader", "clock-skew"]


def ns_of(ip):
    if ip in ETCD:
        return f"idf-e{ETCD.index(ip) + 1}"
    if ip in SERVERS:
        return f"idf-s{SERVERS.index(ip) + 1}"
    return "idf-c"


def in_ns(ns, *cmd, check=True):
    return subprocess.run(["ip", "netns", "exec", ns, *cmd], check=check, capture_output=True)


def drop(ip, peers):
    """Silently drops every packet between `ip` and each of `peers` (None: every host)."""
    ns = ns_of(ip)
    for peer in peers if peers is not None else [SUBNET]:
        in_ns(ns, "iptables", "-A", "CHAOSIN", "-i", "eth0", "-s", peer, "-j", "DROP")
        in_ns(ns, "iptables", "-A", "CHAOSOUT", "-o", "eth0", "-d", peer, "-j", "DROP")


def heal_all():
    for ip in ETCD + SERVERS:
        ns = ns_of(ip)
        in_ns(ns, "iptables", "-F", "CHAOSIN")
        in_ns(ns, "iptables", "-F", "CHAOSOUT")
        in_ns(ns, "tc", "qdisc", "del", "dev", "eth0", "root", check=False)
        in_ns("idf-sw", "tc", "qdisc", "del", "dev", f"v-{ns[4:]}", "root", check=False)


def etcd_cluster(work):
    """The three members, each in its own namespace on the standard ports."""
    return cluster.Etcd(work, ETCD, [2379] * 3, [2380] * 3,
                        wrap=lambda i: ["ip", "netns", "exec", ns_of(ETCD[i])])


class Server(cluster.Serve):
    """A server in its own namespace, on the etcd store; it can be started with its wall clock
    moved (libfaketime)."""

    def __init__(self, binary, work, i, store):
        ip = SERVERS[i]
        super().__init__(binary, ip, PORT,
                         # No password on these hosts of the harness's own: open to them.
                         ["--bind", ip, "--advertise", f"{ip}:{PORT}", "--store", store,
                          "--insecure-open",
                          "--data-dir", os.path.join(work, f"idforge{i + 1}"),
                          "--default-step", "50", "--lease-ttl", "1",
                          "--log", os.environ.get("CHAOS_LOG", "info")],
                         log=os.path.join(work, f"idforge{i + 1}.log"),
                         wrap=["ip", "netns", "exec", ns_of(ip)])
        self.ip = ip
        self.skewed = False

    def start(self, skew=None):
        env = dict(os.environ)
        if skew:
            # Only the wall clock: the lease runs on the monotonic clock, as it must.
            env.update(LD_PRELOAD=FAKETIME, FAKETIME=skew, FAKETIME_DONT_FAKE_MONOTONIC="1",
                       FAKETIME_NO_CACHE="1")
        self.skewed = bool(skew)
        super().start(env)


def ask(ip, *args, timeout=0.5):
    """One request to the server on `ip`: its reply, or None when it did not answer."""
    return cluster.ask((ip, PORT), *args, timeout=timeout)


def wait_leader(servers, timeout=20):
    return cluster.wait_leader(servers, timeout, poll=0.3)


def recording_client(index, stop, only=None):
    """A recording client through any server (or, as a prober, to the one on `only`); it moves
    on from a server that is down or has no store."""
    return cluster.Client(index, [(ip, PORT) for ip in SERVERS], stop, timeout=0.5,
                          only=(only, PORT) if only else None, clusterdown_moves_on=True)


def served_since(clients, t):
    """Whether any client got an id after `t` (each client's replies are in time order)."""
    return any(c.replies and c.replies[-1][4] > t for c in clients)


class Harness:
    def __init__(self, args):
        self.args = args
        self.etcd = etcd_cluster(args.work)
        self.servers = []
        self.stop = threading.Event()
        self.clients, self.probers = [], []
        self.runs = []  # one dict per nemesis run
        self.failures = []
        self.skewed_leader = None

    def ensure(self):
        """Every process up and a leader serving ids before a nemesis starts."""
        for s in self.servers:
            if not s.alive() or s.skewed:
                s.kill()
                s.start()
        leader = wait_leader(self.servers)
        t = time.monotonic()
        deadline = t + 15
        while not served_since(self.clients, t):
            if time.monotonic() > deadline:
                raise RuntimeError("no client id before the nemesis")
            time.sleep(0.02)
        return leader

    def nemesis(self, kind, leader):
        """Starts `kind`; returns a note on what it did."""
        if kind == "leader-vs-etcd":
            drop(leader.ip, ETCD)
            return f"cut {leader.ip} from etcd"
        if kind == "leader-vs-clients":
            drop(leader.ip, [CLIENT])
            return f"cut {leader.ip} from the clients"
        if kind == "etcd-member":
            member = random.choice(ETCD)
            drop(member, None)
            return f"cut etcd {member} from everything"
        if kind == "minority":
            member = random.choice(ETCD)
            minority = [leader.ip, member]
            majority = [ip for ip in ETCD + SERVERS if ip not in minority]
            for ip in minority:
                drop(ip, majority)
            return f"minority {leader.ip} + {member}"
        if kind == "slow-lossy-leader":
            ns = ns_of(leader.ip)
            shape = ["root", "tbf", "rate", "16kbit", "burst", "1600", "latency", "2s"]
            in_ns(ns, "tc", "qdisc", "add", "dev", "eth0", *shape)
            in_ns("idf-sw", "tc", "qdisc", "add", "dev", f"v-{ns[4:]}", *shape)
            for chain, way in (("CHAOSIN", "-i"), ("CHAOSOUT", "-o")):
                in_ns(ns, "iptables", "-A", chain, way, "eth0", "-m", "statistic",
                      "--mode", "random", "--probability", "0.1", "-j", "DROP")
            return f"16 kbit/s and 10% loss on {leader.ip}"
        if kind == "clock-skew":
            # A standby restarted 3 h ahead, then made leader: with the third server stopped for
            # the moment, it is the only one a handover can go to.
            skewed = random.choice([s for s in self.servers if s is not leader])
            third = next(s for s in self.servers if s is not leader and s is not skewed)
            skewed.kill()
            skewed.start(skew="+3h")
            third.kill()
            current = leader
            for _ in range(5):
                ask(current.ip, "IDF.FAILOVER", timeout=2)
                current = wait_leader(self.servers)
                if current is skewed:
                    break
            third.start()
            name = f"skew-{time.monotonic_ns()}"
            sid = None
            skew_ok = False
            if current is skewed:
                # Its clock is 3 h ahead: IDF.SNOWFLAKE's time says so (a clock of its own name).
                sid = ask(skewed.ip, "IDF.SNOWFLAKE", name, timeout=2)
                if isinstance(sid, int):
                    ms = (sid >> 22) + 1288834974657
                    skew_ok = ms / 1000 - time.time() > 2.5 * 3600
            if current is not skewed:
                self.failures.append(f"clock-skew: {skewed.ip} (3 h ahead) did not become leader")
            elif not skew_ok:
                self.failures.append(f"clock-skew: {skewed.ip} leads but its clock is not "
                                     f"ahead (IDF.SNOWFLAKE: {sid!r})")
            self.skewed_leader = skewed
            state = "leading" if current is skewed else "not leading"
            return f"{skewed.ip} on a wall clock 3 h ahead, {state}"
        raise ValueError(kind)

    def run_one(self, kind, index):
        self.ensure()
        time.sleep(0.3)
        # The leader as it is now, just before the nemesis (not as `ensure` found it).
        leader = wait_leader(self.servers)
        t_start = time.monotonic()
        note = self.nemesis(kind, leader)
        t_cut = time.monotonic()
        time.sleep(self.args.hold)
        heal_all()
        if kind == "clock-skew":
            for s in self.servers:
                if s.skewed:
                    s.kill()
                    s.start()
        t_heal = time.monotonic()
        deadline = t_heal + 20
        while not served_since(self.clients, t_heal):
            if time.monotonic() > deadline:
                self.failures.append(f"{kind} #{index + 1}: no id within 20 s of healing")
                break
            time.sleep(0.01)
        time.sleep(0.5)
        t_end = time.monotonic()
        # Outage: the longest time without any client id from the nemesis to the end of the run.
        times = sorted([t_start] + [r[4] for c in self.clients for r in c.replies
                                    if t_start < r[4] <= t_end] + [t_end])
        outage = max(b - a for a, b in zip(times, times[1:]))
        run = {"nemesis": kind, "run": index + 1, "note": note, "outage_ms": round(outage * 1000),
               "ids": sum(r[2] - r[1] + 1 for c in self.clients for r in c.replies
                          if t_start < r[4] <= t_end)}
        if kind in ("leader-vs-etcd", "minority"):
            # The cut-off leader, seen by its prober and the clients: what it served after the cut. It must not
            # serve a request sent after another server served one (two leaders at once), and,
            # cut from every etcd member, none sent after its lease can have ended (the cut plus
            # the TTL). In the minority it may keep its lease a little longer: an etcd leader in
            # the minority renews leases until it notices it lost its quorum, and the majority's
            # new etcd leader extends every lease by a TTL when it takes over.
            mine = sorted((r for c in self.clients + self.probers for r in c.replies
                           if r[5] == leader.addr and t_cut < r[3] <= t_heal), key=lambda r: r[3])
            first_other = min((r[4] for c in self.clients + self.probers for r in c.replies
                               if r[5] != leader.addr and t_cut < r[4] <= t_heal),
                              default=float("inf"))
            run["served_after_cut_ms"] = round(max([r[4] for r in mine], default=t_cut)
                                               * 1000 - t_cut * 1000)
            both = [r for r in mine if r[3] > first_other]
            if both:
                self.failures.append(f"{kind} #{index + 1}: {leader.ip} served {len(both)} "
                                     "ids after another server had served")
            late = [r for r in mine if r[3] > t_cut + TTL]
            if kind == "leader-vs-etcd" and late:
                self.failures.append(f"{kind} #{index + 1}: {leader.ip} served {len(late)} ids "
                                     f"past its lease (last sent {late[-1][3] - t_cut:.3f} s "
                                     "after the cut)")
        if kind == "clock-skew":
            # It served the clients while skewed (INCR does not read the wall clock).
            ip, addr = self.skewed_leader.ip, self.skewed_leader.addr
            run["skewed_leader_ids"] = sum(r[2] - r[1] + 1 for c in self.clients
                                           for r in c.replies
                                           if r[5] == addr and t_cut < r[4] <= t_heal)
            if not run["skewed_leader_ids"]:
                self.failures.append(f"clock-skew #{index + 1}: {ip} served no client")
        self.runs.append(run)
        extra = (f", cut-off leader served {run['served_after_cut_ms']} ms after the cut"
                 if "served_after_cut_ms" in run else "")
        print(f"{time.strftime('%H:%M:%S')} {kind:18s} #{index + 1}: {note}; outage {run['outage_ms']} ms{extra}", flush=True)

    def main(self):
        self.etcd.start_all()
        self.servers = [Server(self.args.binary, self.args.work, i, self.etcd.url("chaos"))
                        for i in range(3)]
        # etcd elects its leader first; a server started before that retries for 5 s.
        time.sleep(2)
        for s in self.servers:
            s.start()
        wait_leader(self.servers)
        self.clients = [recording_client(i, self.stop) for i in range(self.args.clients)]
        self.probers = [recording_client(100 + i, self.stop, only=ip) for i, ip in enumerate(SERVERS)]
        for c in self.clients + self.probers:
            c.start()
        kinds = self.args.only.split(",") if self.args.only else NEMESES
        for index in range(self.args.runs):
            for kind in kinds:
                self.run_one(kind, index)

    def check(self):
        everyone = self.clients + self.probers
        failures, duplicates, ids = cluster.check_history(everyone)
        self.failures.extend(failures)
        for c in everyone:
            self.failures.extend(f"client {c.index}: {e}" for e in c.errors[:5])
        return duplicates, ids


def summary(runs):
    out = []
    for kind in NEMESES:
        mine = [r for r in runs if r["nemesis"] == kind]
        if not mine:
            continue
        outages = [r["outage_ms"] for r in mine]
        row = {"nemesis": kind, "runs": len(mine), "ids": sum(r["ids"] for r in mine),
               "outage_p50_ms": round(statistics.median(outages)),
               "outage_max_ms": max(outages)}
        served = [r["served_after_cut_ms"] for r in mine if "served_after_cut_ms" in r]
        if served:
            row["cut_off_leader_served_max_ms"] = max(served)
        out.append(row)
    return out


def markdown(rows, ids, duplicates, failures, args):
    """The results as the BENCHMARKS.md section."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    out = [f"Generated by `bash server/tests/harness/chaos.sh --benchmarks BENCHMARKS.md` on "
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, at commit {commit}: "
           f"{args.runs} runs of each nemesis held {args.hold:g} s, {args.clients} clients and a "
           f"prober per server; {ids:,} ids, {duplicates} duplicates, {len(failures)} failures.",
           "",
           "| nemesis | runs | ids | outage p50 | outage max | cut-off leader served for (max) |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        served = r.get("cut_off_leader_served_max_ms")
        out.append(f"| {r['nemesis']} | {r['runs']} | {r['ids']:,} | {r['outage_p50_ms']} ms | "
                   f"{r['outage_max_ms']} ms | "
                   f"{'' if served is None else f'{served} ms'} |")
    return "\n".join(out)


def write_section(path, text):
    begin, end = "<!-- chaosbench:begin -->", "<!-- chaosbench:end -->"
    with open(path) as f:
        md = f.read()
    block = f"{begin}\n{text}\n{end}"
    if begin in md:
        md = md[:md.index(begin)] + block + md[md.index(end) + len(end):]
    else:
        md = md.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(md)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("work")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hold", type=float, default=3.0, help="seconds each nemesis is held")
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--only", help="these nemeses (comma-separated) instead of all")
    ap.add_argument("--benchmarks", help="rewrite the chaosbench section of this file")
    args = ap.parse_args()
    if args.only and set(args.only.split(",")) - set(NEMESES):
        ap.error(f"--only takes {','.join(NEMESES)}")
    h = Harness(args)
    try:
        h.main()
    except RuntimeError as e:
        h.failures.append(str(e))
    finally:
        h.stop.set()
        for c in h.clients + h.probers:
            c.join(timeout=5)
        heal_all()
        for s in h.servers:
            s.kill()
        h.etcd.stop_all()
    duplicates, ids = h.check()
    rows = summary(h.runs)
    print(f"{len(h.runs)} nemesis runs, {ids} ids, {duplicates} duplicates, "
          f"{len(h.failures)} failures")
    for row in rows:
        print("  " + ", ".join(f"{k} {v}" for k, v in row.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": h.runs, "summary": rows, "ids": ids, "duplicates": duplicates,
                       "failures": h.failures, "hold_s": args.hold}, f, indent=1)
    if args.benchmarks:
        write_section(args.benchmarks, markdown(rows, ids, duplicates, h.failures, args))
    for msg in h.failures[:20]:
        print("FAIL:", msg, file=sys.stderr)
    print(f"chaos: {0 if h.failures else 1} passed, {len(h.failures) and 1} failed")
    return 1 if h.failures else 0


if __name__ == "__main__":
    sys.exit(main())
