"""The server image under podman, as an operator runs it (ci/ops/ops-test.sh runs this):

  python3 ci/ops/containers.py IMAGE WORK [--rounds N]
  python3 ci/ops/containers.py IMAGE WORK --smoke arm64     (another architecture, under qemu)

1. One server container (`--network host`, bound to 127.0.0.1, a named volume for /data): it
   answers redis-cli's INCR and the HTTP API, runs as user 65532 and not root, and its data
   survives `podman kill` + `podman rm`: a new container on the same volume hands out only ids
   above every id the first one handed out.
2. An HA group: three server containers on one etcd (run beside them on the host, 127.0.0.1)
   under recording clients, the leader killed with `podman kill` ROUNDS times (and started
   again): 0 duplicate ids, each client's ids increasing.

Every container and volume is named `idforge-ops-PID-…` and removed at exit, also on failure.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "server", "tests", "harness"))
from cluster import (Client, Etcd, check_history, first_reply_after, free_ports,  # noqa: E402
                     wait_leader, wait_port)

# Debian's podman here: runc (crun lacks the rights), limits it may set (docs/operations.md).
PODMAN_FLAGS = ["--network", "host", "--runtime", "runc",
                "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=1024:1024"]
PREFIX = f"idforge-ops-{os.getpid()}"


def podman(*args, check=True):
    """Runs podman; its stdout."""
    done = subprocess.run(["podman", *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise RuntimeError(f"podman {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


class Container:
    """One server container from IMAGE on 127.0.0.1:port (host network), with volume VOLUME at
    /data. The same interface as the harness's Serve: addr, start, kill, alive."""

    def __init__(self, image, name, port, volume, args):
        self.image, self.name, self.port, self.volume, self.args = image, name, port, volume, args
        self.host = "127.0.0.1"
        self.created = False

    @property
    def addr(self):
        return (self.host, self.port)

    def start(self):
        """Runs it (the first time) or starts it again (the same container, the same volume)."""
        if self.created:
            podman("start", self.name)
        else:
            podman("run", "--detach", *PODMAN_FLAGS, "--name", self.name, "--volume", f"{self.volume}:/data",
                   self.image, "serve", "--bind", self.host, "--port", str(self.port), *self.args)
            self.created = True
        wait_port(self.host, self.port)

    def kill(self):
        """SIGKILL, as a node dies."""
        podman("kill", "--signal", "KILL", self.name)
        podman("wait", self.name, check=False)

    def alive(self):
        return self.created and podman("inspect", "--format", "{{.State.Running}}",
                                       self.name, check=False) == "true"

    def pid(self):
        return int(podman("inspect", "--format", "{{.State.Pid}}", self.name))

    def logs(self):
        return subprocess.run(["podman", "logs", "--tail", "20", self.name],
                              capture_output=True, text=True).stderr


def http_get(url):
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.read().decode()


def redis_cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True,
                          check=True, timeout=10).stdout.strip()


def single(image, failures):
    """One server: redis-cli and the HTTP API, not root, data surviving a new container."""
    port, http, metrics = free_ports(3)
    volume = f"{PREFIX}-single"
    podman("volume", "create", volume)
    args = ["--http-port", str(http), "--metrics-port", str(metrics)]
    first = Container(image, f"{PREFIX}-single-1", port, volume, args)
    t0 = time.monotonic()
    first.start()
    ids = [int(redis_cli(port, "INCR", "orders"))]
    started = time.monotonic() - t0
    ids += [int(redis_cli(port, "INCRBY", "orders", "100"))]
    status, body = http_get(f"http://127.0.0.1:{http}/api/segment/get/orders")
    if status != 200:
        failures.append(f"HTTP API: {status} {body}")
    ids.append(int(body))
    status, body = http_get(f"http://127.0.0.1:{metrics}/healthz")
    if (status, body) != (200, "ok\n"):
        failures.append(f"/healthz: {status} {body!r}")
    uid = open(f"/proc/{first.pid()}/status").read().split("Uid:")[1].split()[0]
    if uid != "65532":
        failures.append(f"the server runs as uid {uid}, not 65532")
    config = json.loads(podman("image", "inspect", image))[0]["Config"]
    if config.get("User") != "65532:65532" or "/data" not in config.get("Volumes", {}):
        failures.append(f"image config: {config}")
    first.kill()
    podman("rm", first.name)
    second = Container(image, f"{PREFIX}-single-2", port, volume, args)
    second.start()
    after = int(redis_cli(port, "INCR", "orders"))
    if after <= max(ids):
        failures.append(f"a new container on the volume handed out {after}, not above {max(ids)}")
    second.kill()
    print(f"single: first answer {started * 1000:.0f} ms after `podman run`; ids {ids} then "
          f"{after} from a new container on the volume", flush=True)


def ha(image, work, rounds, failures):
    """Three containers on one etcd, the leader killed `rounds` times under recording clients."""
    ports = free_ports(8)
    etcd = Etcd(work, ["127.0.0.1"], ports[0:1], ports[1:2])
    stop = threading.Event()
    clients = []
    try:
        etcd.start_all()
        etcd.wait_healthy()
        store = etcd.url(f"ops-{os.getpid()}")
        servers = []
        for i, (port, metrics) in enumerate(zip(ports[2:5], ports[5:8])):
            podman("volume", "create", f"{PREFIX}-ha-{i}")
            # On the host's network each needs its own metrics port (the image's is 9379).
            servers.append(Container(image, f"{PREFIX}-ha-{i}", port, f"{PREFIX}-ha-{i}",
                                     ["--store", store, "--advertise", f"127.0.0.1:{port}",
                                      "--metrics-port", str(metrics),
                                      "--default-step", "50", "--lease-ttl", "1", "--log", "warn"]))
        for s in servers:
            s.start()
        wait_leader(servers)
        clients = [Client(i, [s.addr for s in servers], stop, timeout=0.6) for i in range(4)]
        for c in clients:
            c.start()
        time.sleep(1.0)
        for r in range(rounds):
            leader = wait_leader(servers)
            time.sleep(0.3)
            t_kill = time.monotonic()
            leader.kill()
            took = None
            while took is None and time.monotonic() < t_kill + 15:
                at = first_reply_after(clients, t_kill, leader.addr)
                took = None if at is None else at - t_kill
                time.sleep(0.01)
            if took is None:
                failures.append(f"round {r}: no id served within 15 s of `podman kill`")
            else:
                print(f"ha: round {r + 1}: podman kill of the leader :{leader.port}; "
                      f"next id after {took * 1000:.0f} ms", flush=True)
            leader.start()
            time.sleep(0.5)
        time.sleep(0.5)
    finally:
        stop.set()
        for c in clients:
            c.join(timeout=5)
        etcd.stop_all()
    problems, duplicates, ids = check_history(clients)
    failures += problems
    errors = [e for c in clients for e in c.errors]
    if errors:
        failures.append(f"client errors: {errors[:3]}")
    print(f"ha: {ids} ids over {rounds} leader kills, {duplicates} duplicates", flush=True)
    if ids == 0:
        failures.append("ha: no ids recorded")


def smoke(image, arch, failures):
    """The image of another architecture, run under qemu-user (binfmt): it is that
    architecture's, starts, and answers INCR and INCRBY."""
    got = json.loads(podman("image", "inspect", image))[0].get("Architecture")
    if got != arch:
        failures.append(f"{arch}: the image is {got}")
    version = subprocess.run(["podman", "run", "--rm", *PODMAN_FLAGS, image, "--version"],
                             capture_output=True, text=True, timeout=120).stdout.strip()
    port, metrics = free_ports(2)
    podman("volume", "create", f"{PREFIX}-{arch}")
    server = Container(image, f"{PREFIX}-{arch}", port, f"{PREFIX}-{arch}", ["--metrics-port", str(metrics)])
    server.start()
    ids = [int(redis_cli(port, "INCR", "t")), int(redis_cli(port, "INCRBY", "t", "10"))]
    if ids != [1, 11]:
        failures.append(f"{arch}: INCR, INCRBY 10 gave {ids}")
    server.kill()
    print(f"{arch}: `{version}` under qemu-user; INCR, INCRBY 10 gave {ids}", flush=True)


def cleanup():
    names = podman("ps", "--all", "--format", "{{.Names}}", check=False).split()
    mine = [n for n in names if n.startswith(PREFIX)]
    if mine:
        podman("rm", "--force", "--time", "0", *mine, check=False)
    volumes = podman("volume", "ls", "--format", "{{.Name}}", check=False).split()
    mine = [v for v in volumes if v.startswith(PREFIX)]
    if mine:
        podman("volume", "rm", "--force", *mine, check=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("image")
    ap.add_argument("work")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--smoke", metavar="ARCH", help="only start the image of ARCH (under qemu-user)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    failures = []
    try:
        if args.smoke:
            smoke(args.image, args.smoke, failures)
        else:
            single(args.image, failures)
            ha(args.image, args.work, args.rounds, failures)
    except Exception as e:
        failures.append(f"{type(e).__name__}: {e}")
    finally:
        for name in podman("ps", "--all", "--format", "{{.Names}}", check=False).split():
            if name.startswith(PREFIX) and failures:
                print(f"--- {name}\n{Container(None, name, 0, None, []).logs()}", file=sys.stderr)
        cleanup()
    left = [n for n in podman("ps", "--all", "--format", "{{.Names}}").split()
            if n.startswith(PREFIX)]
    if left:
        failures.append(f"containers left: {left}")
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
