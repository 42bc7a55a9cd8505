"""The dashboard and the alert rules against a real Prometheus scraping a real server under load
(ci/ops/ops-test.sh runs this):

  python3 ci/ops/prometheus_check.py IMAGE DASHBOARD RULES WORK

Runs the server image (host network, 127.0.0.1), loads it (INCR and INCRBY on a few tags, HTTP
ids, worker leases, some refused commands), starts Prometheus (Debian's) scraping it every second
as job `idforge` with RULES loaded, then checks that every query of DASHBOARD's panels and
template variables returns series, and that every rule evaluates without error. Everything it
started is stopped by PID or container name at exit.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "server", "tests", "harness"))
from cluster import free_ports, read_reply, resp, wait_port  # noqa: E402
from containers import PREFIX, Container, cleanup, podman  # noqa: E402

# The dashboard's variables, as Grafana fills them in for "All".
VARIABLES = {"$__rate_interval": "15s", "$job": "idforge", "$instance": ".*"}


def load(port, http, stop):
    """Requests until `stop`: ids from a few tags (persists keep happening), HTTP ids, leases and
    a refused command, so every series the dashboard reads moves."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    f = conn.makefile("rb")

    def call(*args):
        conn.sendall(resp(*args))
        return read_reply(f)

    call("IDF.WORKER", "ACQUIRE", "dash-svc")
    n = 0
    while not stop.is_set():
        n += 1
        call("INCRBY", f"dash-{n % 4}", 500)
        call("INCR", "dash-one")
        if n % 50 == 0:
            call("NOSUCHCOMMAND")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{http}/api/segment/get/dash-http",
                                       timeout=5).read()
            except OSError:
                pass
        time.sleep(0.002)
    conn.close()


def query(prom, expr):
    url = f"http://127.0.0.1:{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=10) as r:
        answer = json.load(r)
    if answer.get("status") != "success":
        raise RuntimeError(f"{expr}: {answer}")
    return answer["data"]["result"]


def dashboard_queries(path):
    """(panel title, query) of every panel target and query variable, variables filled in."""
    dash = json.load(open(path))
    out = []
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            out.append((panel["title"], target["expr"]))
    for var in dash["templating"]["list"]:
        if var["type"] == "query":
            # label_values(METRIC_SELECTOR, label): the selector must return series with it.
            text = var["query"]["query"]
            inner = text[len("label_values("):-1]
            selector, label = inner.rsplit(",", 1)
            out.append((f"variable {var['name']} ({label.strip()})", selector.strip()))
    filled = []
    for title, expr in out:
        for k, v in VARIABLES.items():
            expr = expr.replace(k, v)
        filled.append((title, expr))
    return filled


def main():
    image, dashboard, rules, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    port, http, metrics, prom = free_ports(4)
    failures = []
    stop = threading.Event()
    prometheus = None
    server = Container(image, f"{PREFIX}-prom", port, f"{PREFIX}-prom",
                       ["--http-port", str(http), "--metrics-port", str(metrics)])
    try:
        podman("volume", "create", server.volume)
        server.start()
        loader = threading.Thread(target=load, args=(port, http, stop), daemon=True)
        loader.start()
        shutil.copy(rules, os.path.join(work, "idforge-alerts.yml"))
        with open(os.path.join(work, "prometheus.yml"), "w") as f:
            f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [idforge-alerts.yml]
scrape_configs:
  - job_name: idforge
    static_configs:
      - targets: ["127.0.0.1:{metrics}"]
""")
        log = open(os.path.join(work, "prometheus.log"), "w")
        prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={work}/prometheus.yml",
             f"--storage.tsdb.path={work}/tsdb", f"--web.listen-address=127.0.0.1:{prom}",
             "--log.level=warn"], stdout=log, stderr=log)
        wait_port("127.0.0.1", prom, proc=prometheus)
        queries = dashboard_queries(dashboard)
        empty = queries
        deadline = time.monotonic() + 60
        while empty and time.monotonic() < deadline:
            time.sleep(2)
            empty = [(t, q) for t, q in empty if not query(prom, q)]
        for title, q in empty:
            failures.append(f"no series for panel {title!r}: {q}")
        print(f"dashboard: {len(queries) - len(empty)} of {len(queries)} queries return series",
              flush=True)
        with urllib.request.urlopen(f"http://127.0.0.1:{prom}/api/v1/rules", timeout=10) as r:
            groups = json.load(r)["data"]["groups"]
        evaluated = [rule for g in groups for rule in g["rules"]]
        bad = [(r["name"], r.get("lastError")) for r in evaluated if r.get("health") != "ok"]
        failures += [f"rule {name}: {error}" for name, error in bad]
        firing = [r["name"] for r in evaluated if r.get("state") == "firing"]
        if firing:
            failures.append(f"alerts firing on a healthy server: {firing}")
        if len(evaluated) < 10:
            failures.append(f"only {len(evaluated)} rules loaded")
        print(f"rules: {len(evaluated)} evaluated by Prometheus, {len(bad)} with errors, "
              f"firing: {firing or 'none'}", flush=True)
        if query(prom, 'idforge_serving{job="idforge"} == 1') == []:
            failures.append("idforge_serving is not 1 on a lone server")
    except Exception as e:
        failures.append(f"{type(e).__name__}: {e}")
    finally:
        stop.set()
        if prometheus:
            prometheus.terminate()
            try:
                prometheus.wait(timeout=20)
            except subprocess.TimeoutExpired:
                prometheus.kill()
                prometheus.wait()
        if failures and server.created:
            print(server.logs(), file=sys.stderr)
        cleanup()
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
