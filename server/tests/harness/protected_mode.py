"""Protected mode across hosts (run by server/tests/harness/chaos.sh inside the clients' network
namespace, idf-c, before the partition harness).

A server in namespace idf-s1 (10.77.0.21) bound to every address, as the image's environment
binds it, with no password: a client on another host (this namespace) gets `-DENIED` with a
message saying how to open it, on the client port, the HTTP API (403) and /metrics (403), while
/healthz answers and a client on the server's own host (its loopback) is served. The same server
with --insecure-open, or with a password, serves the other host. Every server is stopped by PID.

Usage: python3 server/tests/harness/protected_mode.py PATH/TO/idforge WORK
"""

import os
import subprocess
import sys
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402

HOST, NS = "10.77.0.21", "idf-s1"
PORT, HTTP, METRICS = 7390, 7391, 7392


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def on_server_host(*args):
    """A RESP request from the server's own host (its loopback), through `ip netns exec`."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import cluster; "
            "print(cluster.ask(('127.0.0.1', int(sys.argv[2])), *sys.argv[3:], timeout=5))")
    out = subprocess.run(["ip", "netns", "exec", NS, sys.executable, "-c", code,
                          os.path.dirname(os.path.abspath(__file__)), str(PORT), *args],
                         capture_output=True, text=True, timeout=30, check=True)
    return out.stdout.strip()


def served(binary, work, name, extra):
    data = os.path.join(work, name)
    os.makedirs(data, exist_ok=True)
    return cluster.Serve(binary, HOST, PORT, [
        "--bind", "0.0.0.0", "--data-dir", data, "--http-port", str(HTTP),
        "--metrics-port", str(METRICS), "--log", "warn", *extra],
        log=os.path.join(work, f"{name}.log"), wrap=["ip", "netns", "exec", NS])


def main():
    binary, work = sys.argv[1], sys.argv[2]
    server = served(binary, work, "protected", [])
    server.start()
    try:
        denied = cluster.ask((HOST, PORT), "INCR", "x", timeout=5)
        assert isinstance(denied, RuntimeError) and str(denied).startswith("DENIED") \
            and "--insecure-open" in str(denied), denied
        assert on_server_host("INCR", "x") == "1", "the server's own host is served"
        status, body = http_status(f"http://{HOST}:{HTTP}/api/segment/get/x")
        assert status == 403 and "protected mode" in body, (status, body)
        status, body = http_status(f"http://{HOST}:{METRICS}/metrics")
        assert status == 403 and "protected mode" in body, (status, body)
        status, body = http_status(f"http://{HOST}:{METRICS}/healthz")
        assert status == 200, (status, body)
    finally:
        server.kill()
    with open(os.path.join(work, "protected.log"), encoding="utf-8") as log:
        assert "protected mode" in log.read(), "the start warns"

    server = served(binary, work, "open", ["--insecure-open"])
    server.start()
    try:
        assert cluster.ask((HOST, PORT), "INCR", "x", timeout=5) == 1
        status, body = http_status(f"http://{HOST}:{HTTP}/api/segment/get/x")
        assert status == 200 and int(body) > 1, (status, body)
        assert http_status(f"http://{HOST}:{METRICS}/metrics")[0] == 200
    finally:
        server.kill()

    server = served(binary, work, "password", ["--requirepass", "s3cret"])
    server.start()
    try:
        refused = cluster.ask((HOST, PORT), "INCR", "x", timeout=5)
        assert isinstance(refused, RuntimeError) and str(refused).startswith("NOAUTH"), refused
    finally:
        server.kill()
    print("protected mode: another host refused with a message (RESP, HTTP, /metrics), "
          "/healthz and loopback served; --insecure-open and a password open it")


if __name__ == "__main__":
    main()
