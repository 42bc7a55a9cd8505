"""What the harnesses share: a 3-member etcd cluster, `idforge serve` processes, RESP framing,
and the recording client that sends INCR/INCRBY through whichever server serves.

Every process is started with its PID kept and stopped by that PID. Addresses are (host, port)
pairs, so the same code runs on loopback ports (server/tests/harness/failover_harness.py) and on one port
per network namespace (server/tests/harness/chaos.py, whose processes start through `ip netns exec`).
"""

import contextlib
import os
import random
import signal
import socket
import subprocess
import threading
import time

TAGS = ["orders", "users", "invoices"]


def free_ports(n):
    """n distinct free loopback ports (all bound at once, so none is handed out twice)."""
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def wait_port(host, port, timeout=30, proc=None):
    """Waits until something accepts connections on host:port; fails early when `proc` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the process for {host}:{port} exited ({proc.returncode})")
        try:
            socket.create_connection((host, port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"nothing listens on {host}:{port}")


def resp(*args):
    """One RESP request (an array of bulk strings) from str, int or bytes arguments."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def read_reply(f):
    """One RESP reply from the buffered reader `f`: an int, a str (simple or bulk), None (a null
    bulk), a list, or a RuntimeError carrying an error reply. ConnectionError when closed."""
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("closed")
    kind, rest = line[:1], line[1:-2]
    if kind == b":":
        return int(rest)
    if kind == b"-":
        return RuntimeError(rest.decode(errors="replace"))
    if kind == b"+":
        return rest.decode(errors="replace")
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2].decode(errors="replace")
    if kind == b"*":
        return [read_reply(f) for _ in range(int(rest))]
    raise ConnectionError(f"unexpected reply {line!r}")


def ask(addr, *args, timeout=0.5):
    """One request on a connection of its own; the reply, or None when there was none in time."""
    try:
        with socket.create_connection(addr, timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(resp(*args))
            return read_reply(s.makefile("rb"))
    except (OSError, ValueError):
        return None


class Etcd:
    """A 3-member etcd cluster: member i listens on hosts[i] at clients[i] and peers[i]. `wrap(i)`
    is the command prefix member i starts under (`ip netns exec NS` for chaos)."""

    def __init__(self, work, hosts, clients, peers, wrap=lambda i: []):
        self.work, self.hosts, self.clients, self.peers, self.wrap = work, hosts, clients, peers, wrap
        self.procs = [None] * len(hosts)
        self.cluster = ",".join(f"m{i}=http://{h}:{p}" for i, (h, p) in enumerate(zip(hosts, peers)))

    def start(self, i):
        host, client, peer = self.hosts[i], self.clients[i], self.peers[i]
        log = open(os.path.join(self.work, f"etcd{i}.log"), "ab")
        # Short heartbeat and election timeout: etcd then grants the servers' 1 s leases.
        self.procs[i] = subprocess.Popen(
            [*self.wrap(i), "etcd", "--name", f"m{i}",
             "--data-dir", os.path.join(self.work, f"etcd{i}"),
             "--listen-client-urls", f"http://{host}:{client}",
             "--advertise-client-urls", f"http://{host}:{client}",
             "--listen-peer-urls", f"http://{host}:{peer}",
             "--initial-advertise-peer-urls", f"http://{host}:{peer}",
             "--initial-cluster", self.cluster, "--initial-cluster-state", "new",
             "--heartbeat-interval", "50", "--election-timeout", "500"],
            stdout=log, stderr=log)

    def start_all(self):
        for i in range(len(self.procs)):
            self.start(i)

    def endpoints(self):
        return ",".join(f"{h}:{c}" for h, c in zip(self.hosts, self.clients))

    def wait_healthy(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ok = subprocess.run(["etcdctl", "--endpoints", self.endpoints(), "endpoint", "health"],
                                env=dict(os.environ, ETCDCTL_API="3"),
                                capture_output=True).returncode == 0
            if ok:
                return
            time.sleep(0.2)
        raise RuntimeError("etcd did not become healthy")

    def url(self, prefix):
        """The servers' --store: every member, and the key prefix."""
        return f"etcd://{self.endpoints()}/{prefix}"

    def kill(self, i):
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait()

    def stop_all(self):
        for p in self.procs:
            if p and p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait()


class Serve:
    """One `idforge serve` on host:port with `args` after `--port`; its stderr goes to `log`
    (inherited when None). `wrap` is the command prefix it starts under."""

    def __init__(self, binary, host, port, args, log=None, wrap=()):
        self.binary, self.host, self.port, self.args = binary, host, port, args
        self.log, self.wrap = log, list(wrap)
        self.proc = None

    @property
    def addr(self):
        return (self.host, self.port)

    def start(self, env=None):
        """Starts it and waits for its port."""
        stderr = open(self.log, "ab") if self.log else None
        self.proc = subprocess.Popen(
            [*self.wrap, self.binary, "serve", "--port", str(self.port), *self.args],
            stdout=subprocess.DEVNULL, stderr=stderr, env=env)
        wait_port(self.host, self.port, proc=self.proc)

    def signal(self, sig):
        self.proc.send_signal(sig)
        if sig == signal.SIGKILL:
            self.proc.wait()

    def kill(self):
        if self.alive():
            self.signal(signal.SIGKILL)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None


def leader_of(servers, timeout=0.5):
    """The server that says it is the leader (INFO replication), or None."""
    for s in servers:
        if s.alive():
            info = ask(s.addr, "INFO", "replication", timeout=timeout)
            if isinstance(info, str) and "role:master" in info:
                return s
    return None


def wait_leader(servers, timeout=15, poll=0.5):
    """The leader among `servers`, waiting for one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = leader_of(servers, poll)
        if s:
            return s
        time.sleep(0.02)
    raise RuntimeError("no leader")


class Client(threading.Thread):
    """Sends INCR/INCRBY one at a time through whichever of `addrs` serves, following -MOVED,
    and records each id range with its send and receive times. A prober (`only`, one address)
    sends INCR probe to that server alone. `clusterdown_moves_on`: on -CLUSTERDOWN, try the next
    server instead of asking the same one again."""

    def __init__(self, index, addrs, stop, timeout, only=None, clusterdown_moves_on=False):
        super().__init__(daemon=True)
        self.index, self.addrs, self.stop, self.timeout = index, addrs, stop, timeout
        self.only, self.clusterdown_moves_on = only, clusterdown_moves_on
        self.rng = random.Random(index)
        self.replies = []  # (tag, first, last, sent, received, addr)
        self.errors = []
        self.conn = None
        self.addr = only or addrs[index % len(addrs)]

    def close(self):
        if self.conn:
            try:
                self.conn.close()
            except OSError:
                pass
        self.conn = None

    def move_on(self):
        """Gives up on this server for now: the next one (a prober waits and stays)."""
        self.close()
        if not self.only:
            self.addr = self.addrs[(self.addrs.index(self.addr) + 1) % len(self.addrs)]
        time.sleep(0.02 if self.only else 0.01)

    def call(self, *args):
        """One request: (reply, sent, received, addr), following MOVED and retrying elsewhere
        until served; None when stopped or on another error (recorded)."""
        while not self.stop.is_set():
            try:
                if self.conn is None:
                    self.conn = socket.create_connection(self.addr, timeout=self.timeout)
                    self.conn.settimeout(self.timeout)
                    self.file = self.conn.makefile("rb")
                sent = time.monotonic()
                self.conn.sendall(resp(*args))
                reply = read_reply(self.file)
            except (OSError, ValueError):
                self.move_on()  # dead or stalled
                continue
            if isinstance(reply, int):
                return reply, sent, time.monotonic(), self.addr
            msg = str(reply)
            if msg.startswith("MOVED"):
                host, port = msg.rsplit(" ", 1)[1].rsplit(":", 1)
                target = (host, int(port))
                if self.only:
                    time.sleep(0.02)
                elif target != self.addr:
                    self.close()
                    self.addr = target
                continue
            if msg.startswith(("CLUSTERDOWN", "TRYAGAIN")) or "store unavailable" in msg:
                if self.clusterdown_moves_on:
                    self.move_on()
                else:
                    time.sleep(0.01)
                continue
            self.errors.append(msg)
            return None
        return None

    def run(self):
        while not self.stop.is_set():
            if self.only:
                tag, n = "probe", 1
            else:
                tag = self.rng.choice(TAGS)
                n = self.rng.choice([1, 1, 1, 7, 100])
            got = self.call("INCR", tag) if n == 1 else self.call("INCRBY", tag, n)
            if got is None:
                continue
            last, sent, received, addr = got
            self.replies.append((tag, last - n + 1, last, sent, received, addr))
            if self.only:
                time.sleep(0.02)


def first_reply_after(clients, t, exclude):
    """The earliest time after `t` at which a client got an id from a server other than
    `exclude` (an address), or None."""
    best = None
    for c in clients:
        for (_, _, _, _, received, addr) in reversed(c.replies):
            if received <= t:
                break
            if addr != exclude and (best is None or received < best):
                best = received
    return best


def check_history(clients):
    """The checks of every harness's history: each client's ids strictly increasing per tag in
    the order it got them, and no id handed out twice. (failures, duplicates, ids)."""
    failures, ranges = [], {}
    for c in clients:
        last_seen = {}
        for tag, first, last, *_ in c.replies:
            ranges.setdefault(tag, []).append((first, last))
            if tag in last_seen and first <= last_seen[tag]:
                failures.append(f"client {c.index}: {tag} went from {last_seen[tag]} to {first}")
            last_seen[tag] = last
    duplicates = 0
    for rs in ranges.values():
        rs.sort()
        duplicates += sum(1 for (_, a1), (b0, _) in zip(rs, rs[1:]) if b0 <= a1)
    if duplicates:
        failures.append(f"{duplicates} overlapping ranges (duplicate ids)")
    ids = sum(last - first + 1 for rs in ranges.values() for first, last in rs)
    return failures, duplicates, ids


def serve_on_port_file(binary, base, args, name="the server", timeout=30):
    """Starts `idforge serve` on a port it picks (--port 0, told through base/port), with its data
    in base/data and its log in base/server.log; waits for the port. (process, port); the caller
    stops the process by PID. RuntimeError when it exits or does not start within `timeout`."""
    os.makedirs(base, exist_ok=True)
    port_file = os.path.join(base, "port")
    log = os.path.join(base, "server.log")
    proc = subprocess.Popen(
        [binary, "serve", "--port", "0", "--port-file", port_file,
         "--data-dir", os.path.join(base, "data"), *args],
        stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    deadline = time.monotonic() + timeout
    while not (os.path.exists(port_file) and open(port_file).read().strip()):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise RuntimeError(f"{name} did not start (see {log})")
        time.sleep(0.05)
    return proc, int(open(port_file).read())


@contextlib.contextmanager
def served(binary, base, args, name="the server", timeout=30):
    """serve_on_port_file for a `with` block: gives (process, port), and stops the process by PID
    when the block ends, however it ends."""
    proc, port = serve_on_port_file(binary, base, args, name, timeout)
    try:
        yield proc, port
    finally:
        proc.kill()
        proc.wait()
