#!/usr/bin/env python3
"""The status page of `idforge serve --http-port` in a real browser: headless Chromium (Debian's
`chromium`) loads it, and the DOM it dumps (`--dump-dom`) must show this server's role, one row
per tag with its chart, and the tag's own page; a screenshot goes to
$CARGO_TARGET_DIR/http-status/status.png (not committed). With --metrics-token set, the page loaded
without it (or with a wrong one) shows nothing of the server.

First, without a browser: one tag driven by each path (RESP INCR, RESP INCRBY n, Leaf's HTTP,
tinyid's HTTP batch), and each tag's "ids in the last minute" equals what it handed out, their
sum the server's "ids handed out" (the chart's total).

Usage: python3 server/tests/harness/http_status.py PATH/TO/idforge
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import socket

from cluster import free_ports, read_reply, resp, serve_on_port_file

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "status-token"


def chromium(base, *args):
    """Runs headless Chromium with a fresh profile; its stdout."""
    profile = tempfile.mkdtemp(dir=base)
    try:
        return subprocess.run(["chromium", *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=120).stdout
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def tag_figures(page):
    """{tag: ids in the last minute} of the status page's tag table, and its "ids handed out"."""
    rows = re.findall(r'<tr class="tag"><td><a href="/status/tag/[^"]+">([^<]+)</a></td>'
                      r'(?:<td[^>]*>[^<]*</td>){3}<td class="n">(\d+)</td>', page)
    total = re.search(r"ids handed out</t[hd]><td[^>]*>(\d+)<", page)
    return {tag: int(n) for tag, n in rows}, int(total.group(1)) if total else None


def rates_count_every_path(binary, base):
    """Each path's ids count in its tag's figure (issue: only INCR's did)."""
    http_port, = free_ports(1)
    proc, port = serve_on_port_file(binary, os.path.join(base, "rates"), [
        "--http-port", str(http_port), "--metrics-tags", "--log", "warn"])
    try:
        url = f"http://127.0.0.1:{http_port}"
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            f = s.makefile("rb")
            for _ in range(30):
                s.sendall(resp("INCR", "users"))
                assert read_reply(f) > 0
            s.sendall(resp("INCRBY", "payments", 1000))
            assert read_reply(f) == 1000
        for _ in range(50):
            urllib.request.urlopen(f"{url}/api/segment/get/orders").read()
        batch = urllib.request.urlopen(
            f"{url}/tinyid/id/nextIdSimple?bizType=tiny&batchSize=200").read().decode()
        assert len(batch.split(",")) == 200, batch[:200]
        want = {"users": 30, "payments": 1000, "orders": 50, "tiny": 200}
        # The sampler reads the tags once a second: wait (bounded) for a sample after the traffic.
        deadline, seen = time.monotonic() + 30, None
        while time.monotonic() < deadline:
            page = urllib.request.urlopen(f"{url}/status").read().decode()
            seen = tag_figures(page)
            if seen[0] == want:
                break
            time.sleep(0.2)
        figures, total = seen
        assert all(abs(figures.get(t, -9) - n) <= 1 for t, n in want.items()), \
            f"tag figures {figures}, handed out {want}"
        assert total == sum(want.values()) == sum(figures.values()), (total, figures)
        print(f"    status page rates: {figures}, sum {total} = ids handed out")
    finally:
        proc.kill()
        proc.wait()


def main():
    binary = sys.argv[1]
    shots = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser(
        "~/.cache/idforge/target")), "http-status")
    os.makedirs(shots, exist_ok=True)
    with tempfile.TemporaryDirectory() as base:
        os.makedirs(os.path.join(base, "rates"))
        rates_count_every_path(binary, base)
        http_port, = free_ports(1)
        proc, _ = serve_on_port_file(binary, base, [
            "--http-port", str(http_port), "--metrics-token", TOKEN, "--metrics-tags",
            "--log", "warn"])
        try:
            url = f"http://127.0.0.1:{http_port}"
            # Two seconds of traffic on two tags, so the rates and the chart have samples.
            end = time.monotonic() + 2.5
            while time.monotonic() < end:
                for tag in ("orders", "users"):
                    urllib.request.urlopen(f"{url}/api/segment/get/{tag}").read()
            dom = chromium(base, "--dump-dom", f"http://prom:{TOKEN}@127.0.0.1:{http_port}/status")
            role = re.search(r'<span id="role">([^<]*)</span>', dom)
            assert role and role.group(1) == "leader (alone)", dom[:2000]
            rows = re.findall(r'<tr class="tag"><td><a href="/status/tag/([^"]+)">', dom)
            assert rows == ["orders", "users"], rows
            assert re.search(r'<polyline [^>]*points="[0-9., ]+"', dom), "the rate chart has points"
            assert 'id="limits"' in dom and "http-rate-limit" in dom
            detail = chromium(base, "--dump-dom",
                              f"http://prom:{TOKEN}@127.0.0.1:{http_port}/status/tag/orders")
            assert '<span id="tag">orders</span>' in detail and "<svg" in detail, detail[:2000]
            chromium(base, f"--screenshot={shots}/status.png", "--window-size=1000,1400",
                     f"http://prom:{TOKEN}@127.0.0.1:{http_port}/status")
            assert os.path.getsize(f"{shots}/status.png") > 10_000
            for who in ("", "prom:wrong@"):
                refused = chromium(base, "--dump-dom", f"http://{who}127.0.0.1:{http_port}/status")
                assert 'id="role"' not in refused and "orders" not in refused, refused[:2000]
            print(f"    status page in Chromium: role, tag rows, chart; refused without the token; "
                  f"screenshot {shots}/status.png")
        finally:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
