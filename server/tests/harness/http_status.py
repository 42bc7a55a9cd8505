#!/usr/bin/env python3
"""The status page of `idforge serve --http-port` in a real browser: headless Chromium (Debian's
`chromium`) loads it, and the DOM it dumps (`--dump-dom`) must show this server's role, one row
per tag with its chart, and the tag's own page; a screenshot goes to
$CARGO_TARGET_DIR/http-status/status.png (not committed). With --metrics-token set, the page loaded
without it (or with a wrong one) shows nothing of the server.

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

from cluster import free_ports, serve_on_port_file

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


def main():
    binary = sys.argv[1]
    shots = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.expanduser(
        "~/.cache/idforge/target")), "http-status")
    os.makedirs(shots, exist_ok=True)
    with tempfile.TemporaryDirectory() as base:
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
