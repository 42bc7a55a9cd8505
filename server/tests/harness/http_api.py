#!/usr/bin/env python3
"""The HTTP API of `idforge serve` (--http-port) against Leaf's and tinyid's formats.

Usage: python3 server/tests/harness/http_api.py PATH/TO/idforge

Starts its own servers (free ports, temporary data dirs; stopped by PID) and checks, with Python
`requests` and `curl`, every Leaf and tinyid endpoint's answer for success and each error against
server/tests/http/fixtures.json (the peers' formats, read from their sources); then tokens (users
and their tag rights), the status page's access rules, and the bounds (header, query, body,
parameters, method, batch size, rate limit), striped servers (ids within each one's blocks, a
segment cut to one block), HTTPS with the client port's certificate, and SIGTERM with keep-alive
connections open. Ids taken over HTTP and RESP `INCR` on the same tag never repeat. Needs
`requests` (the server step's venv), curl and openssl.
"""

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

import requests

from cluster import free_ports, read_reply, resp, serve_on_port_file, served

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")
FIXTURES = json.load(open(os.path.join(ROOT, "server", "tests", "http", "fixtures.json")))


def matches(want, got, ctx, where="body"):
    """Whether `got` has the fixture's shape; raises AssertionError saying where it differs."""
    if isinstance(want, str) and want.startswith("<") and want.endswith(">"):
        kind = want[1:-1]
        if kind == "int":
            assert isinstance(got, int) and not isinstance(got, bool), f"{where}: {got!r} is no integer"
        elif kind == "ids":
            assert isinstance(got, list) and got and all(isinstance(i, int) for i in got), \
                f"{where}: {got!r} is no list of ids"
        elif kind == "any":
            assert isinstance(got, str), f"{where}: {got!r} is no string"
        else:
            assert got == ctx[kind], f"{where}: {got!r} != {ctx[kind]!r}"
        return
    if isinstance(want, str) and "<" in want:
        for k, v in ctx.items():
            want = want.replace(f"<{k}>", str(v))
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: {got!r} is no object"
        assert list(want) == list(got), f"{where}: keys {list(got)} != {list(want)}"
        for k in want:
            matches(want[k], got[k], ctx, f"{where}.{k}")
        return
    assert want == got, f"{where}: {got!r} != {want!r}"


def check(r, peer, case, **ctx):
    """Checks a `requests` response against fixture peer/case."""
    f = FIXTURES[peer][case]
    ctx.setdefault("path", r.request.path_url.split("?")[0])
    what = f"{peer}/{case} {r.request.method} {r.request.path_url}"
    assert r.status_code == f["status"], f"{what}: status {r.status_code}: {r.text}"
    assert r.headers["content-type"] == f["content_type"], f"{what}: {r.headers['content-type']}"
    if "json" in f:
        matches(f["json"], r.json(), ctx, what)
    else:
        assert re.fullmatch(f["text"], r.text), f"{what}: {r.text!r}"
    return r


def curl(*args):
    """curl's (status, content type, body)."""
    out = subprocess.run(
        ["curl", "-sS", "-o", "-", "-w", "\n%{http_code} %{content_type}", *args],
        capture_output=True, text=True, timeout=20, check=True).stdout
    body, _, tail = out.rpartition("\n")
    status, _, kind = tail.partition(" ")
    return int(status), kind, body


def redis(port, *args, auth=None):
    """One RESP command (after AUTH user password when given); the reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        f = s.makefile("rb")
        if auth:
            s.sendall(resp("AUTH", *auth))
            assert read_reply(f) == "OK"
        s.sendall(resp(*args))
        reply = read_reply(f)
    if isinstance(reply, RuntimeError):
        raise reply
    return reply


def open_server(binary, base):
    """No users, no tokens: every request has every right (as RESP there)."""
    http_port, metrics_port = free_ports(2)
    with served(binary, os.path.join(base, "open"), [
        "--http-port", str(http_port), "--http-max-batch", "50", "--log", "warn",
        "--metrics-port", str(metrics_port),
        # No one to count requests against on an open server: the many below all pass.
        "--http-rate-limit", "5"]) as (proc, port):
        url = f"http://127.0.0.1:{http_port}"
        s = requests.Session()
        # Leaf: ids of a tag, strictly increasing, mixed with RESP INCR on the same tag.
        seen = []
        for i in range(30):
            if i % 3 == 0:
                seen.append(redis(port, "INCR", "mixed"))
            else:
                seen.append(int(check(s.get(f"{url}/api/segment/get/mixed"), "leaf", "ok").text))
        assert seen == sorted(set(seen)), seen
        st, kind, body = curl(f"{url}/api/segment/get/mixed")
        assert (st, kind) == (200, "text/plain;charset=UTF-8") and int(body) > seen[-1], body
        check(s.get(f"{url}/api/snowflake/get/mixed"), "leaf", "ok")
        check(s.get(f"{url}/api/segment/get/"), "leaf", "no_key")
        check(s.get(f"{url}/api/segment/get/.bad"), "leaf", "key_not_exists")
        # A tag at the top of the 64-bit range: Leaf's 'two segments null' (no id to give).
        redis(port, "IDF.TAG", "CREATE", "top", "START", str(2**63 - 2))
        check(s.get(f"{url}/api/segment/get/top"), "leaf", "ok")
        check(s.get(f"{url}/api/segment/get/top"), "leaf", "two_segments_null")
        # tinyid: the four calls, with and without the /tinyid context path, GET and POST.
        q = "bizType=t1&token=anything"
        ids = check(s.get(f"{url}/tinyid/id/nextId?{q}&batchSize=3"), "tinyid", "nextId").json()["data"]
        assert ids == list(range(ids[0], ids[0] + 3)), ids
        simple = check(s.post(f"{url}/id/nextIdSimple?{q}&batchSize=4"), "tinyid", "nextIdSimple").text
        assert [int(i) for i in simple.split(",")] == list(range(ids[-1] + 1, ids[-1] + 5)), simple
        one = check(s.get(f"{url}/tinyid/id/nextIdSimple?{q}"), "tinyid", "nextIdSimple").text
        assert int(one) == ids[-1] + 5
        capped = check(s.get(f"{url}/tinyid/id/nextId?{q}&batchSize=100000"), "tinyid", "nextId")
        assert len(capped.json()["data"]) == 50, "cut to --http-max-batch"
        check(s.get(f"{url}/tinyid/id/nextId?{q}&batchSize=0"), "tinyid", "empty_batch")
        check(s.get(f"{url}/tinyid/id/nextIdSimple?{q}&batchSize=-1"), "tinyid", "simple_error")
        check(s.get(f"{url}/tinyid/id/nextId?{q}&batchSize=abc"), "tinyid", "batch_size_not_a_number")
        check(s.get(f"{url}/tinyid/id/nextId?token=x"), "tinyid", "token_error")
        # A segment as tinyid-client reads it: (currentId, maxId], loading at 20 %.
        seg = check(s.get(f"{url}/tinyid/id/nextSegmentId?{q}"), "tinyid", "nextSegmentId").json()["data"]
        size = seg["maxId"] - seg["currentId"]
        assert size == 50 and seg["loadingId"] == seg["currentId"] + size * 20 // 100, seg
        # The client's own URL and method: POST, an empty form body.
        r = s.post(f"{url}/tinyid/id/nextSegmentIdSimple?token=t&bizType=t1", data=b"",
                   headers={"Content-Type": "application/x-www-form-urlencoded"})
        cur, load, top, delta, rem = map(int, check(r, "tinyid", "nextSegmentIdSimple").text.split(","))
        assert cur >= seg["maxId"] and top - cur == 50 and (delta, rem) == (1, 0)
        # Parameters in a form body, as Spring binds them.
        r = s.post(f"{url}/tinyid/id/nextId", data={"bizType": "t1", "token": "x", "batchSize": "2"})
        assert check(r, "tinyid", "nextId").json()["data"][0] > top
        check(s.get(f"{url}/tinyid/id/nextId?bizType=top&token=x"), "tinyid", "sys_error")
        st, kind, body = curl(f"{url}/tinyid/id/nextId?bizType=t1&token=x&batchSize=2")
        assert st == 200 and kind == "application/json;charset=UTF-8", (st, kind)
        matches(FIXTURES["tinyid"]["nextId"]["json"], json.loads(body), {}, "curl nextId")
        # Bounds: each answered, and the server still serves after them.
        assert s.get(f"{url}/api/segment/get/mixed", headers={"X-Big": "x" * 20000}).status_code == 431
        assert s.get(f"{url}/tinyid/id/nextId?bizType=t1&pad={'x' * 3000}").status_code == 414
        assert s.post(f"{url}/tinyid/id/nextId", data="x" * 5000).status_code == 413
        many = "&".join(f"p{i}=1" for i in range(40))
        assert s.get(f"{url}/tinyid/id/nextId?{many}").status_code == 400
        assert s.put(f"{url}/api/segment/get/mixed").status_code == 405
        # HEAD on an id URL hands out nothing (a monitoring probe would burn a batch each time):
        # 405 with Allow, and the next GET follows the last id handed out.
        before = int(check(s.get(f"{url}/api/segment/get/mixed"), "leaf", "ok").text)
        tq = "bizType=mixed&token=x&batchSize=50"
        for u in (f"{url}/api/segment/get/mixed", f"{url}/api/snowflake/get/mixed",
                  *(f"{url}{root}/{op}?{tq}" for root in ("/tinyid/id", "/id") for op in (
                      "nextId", "nextIdSimple", "nextSegmentId", "nextSegmentIdSimple"))):
            h = s.head(u)
            assert h.status_code == 405 and h.headers.get("Allow") == "GET, POST", \
                (u, h.status_code, dict(h.headers))
        after = int(check(s.get(f"{url}/api/segment/get/mixed"), "leaf", "ok").text)
        assert after == before + 1, f"HEAD handed out ids: {before} then {after}"
        open_page = s.get(f"{url}/status")
        assert open_page.status_code == 200, "open without a metrics token"
        # Open to anyone, so no paths and no addresses: not the guard file, not this server's.
        assert "idforge.guard" not in open_page.text and f":{port}" not in open_page.text, open_page.text
        assert "shown with the metrics token or an admin token" in open_page.text
        check(s.get(f"{url}/api/segment/get/mixed"), "leaf", "ok")
        metrics = requests.get(f"http://127.0.0.1:{metrics_port}/metrics").text
        counts = dict(re.findall(r'^idforge_http_requests_total\{api="(\w+)"\} (\d+)$', metrics, re.M))
        assert int(counts["leaf"]) > 20 and int(counts["tinyid"]) > 10 and int(counts["status"]) == 1, counts
        print("    open server: Leaf and tinyid formats, HTTP and RESP ids, bounds, metrics: ok")


def token_server(binary, base):
    """Users with tag rights; tokens mapped to them; a metrics token."""
    http_port, = free_ports(1)
    tokens = os.path.join(base, "tokens")
    with open(tokens, "w") as f:
        f.write("# sha256(token) user\n")
        for token, user in [("tok-root", "root"), ("tok-alice", "alice"), ("tok-gone", "nobody")]:
            f.write(f"{hashlib.sha256(token.encode()).hexdigest()} {user}\n")
    with served(binary, os.path.join(base, "tokens-server"), [
        "--http-port", str(http_port), "--http-tokens", tokens, "--auto-create", "false",
        "--metrics-token", "m-tok", "--http-rate-limit", "20", "--log", "warn"]) as (proc, port):
        url = f"http://127.0.0.1:{http_port}"
        root = ("root", "root-pw")
        redis(port, "IDF.USER", "SET", "root", "root-pw", "admin")
        redis(port, "IDF.USER", "SET", "alice", "alice-pw", "alloc:orders*", auth=root)
        for tag in ["orders", "secret"]:
            redis(port, "IDF.TAG", "CREATE", tag, auth=root)
        s = requests.Session()
        alice = {"Authorization": "Bearer tok-alice"}
        # Leaf: a token in the Authorization header (Leaf has none); rights as over RESP.
        r = s.get(f"{url}/api/segment/get/orders")
        assert r.status_code == 401 and r.json()["status"] == 401, r.text
        assert s.get(f"{url}/api/segment/get/orders", headers={"Authorization": "Bearer nope"}).status_code == 401
        check(s.get(f"{url}/api/segment/get/orders", headers=alice), "leaf", "ok")
        check(s.get(f"{url}/api/segment/get/orders?token=tok-alice"), "leaf", "ok")
        assert s.get(f"{url}/api/segment/get/secret", headers=alice).status_code == 403
        check(s.get(f"{url}/api/segment/get/orders-new", headers=alice), "leaf", "key_not_exists")
        # tinyid: the token parameter.
        check(s.get(f"{url}/tinyid/id/nextId?bizType=orders&token=tok-alice"), "tinyid", "nextId")
        for q in ["bizType=orders&token=nope", "bizType=secret&token=tok-alice", "token=tok-alice",
                  "bizType=orders", "bizType=orders&token=tok-gone"]:
            check(s.get(f"{url}/tinyid/id/nextId?{q}"), "tinyid", "token_error")
            check(s.get(f"{url}/tinyid/id/nextSegmentId?{q}"), "tinyid", "token_error")
            check(s.get(f"{url}/tinyid/id/nextIdSimple?{q}"), "tinyid", "simple_error")
            check(s.get(f"{url}/tinyid/id/nextSegmentIdSimple?{q}"), "tinyid", "simple_error")
        check(s.get(f"{url}/tinyid/id/nextId?bizType=orders-new&token=tok-alice"), "tinyid",
              "biz_not_found", biz="orders-new")
        check(s.get(f"{url}/tinyid/id/nextSegmentId?bizType=orders-new&token=tok-root"), "tinyid",
              "biz_not_found", biz="orders-new")
        for call in ["nextIdSimple", "nextSegmentIdSimple"]:
            check(s.get(f"{url}/tinyid/id/{call}?bizType=orders-new&token=tok-root"), "tinyid",
                  "simple_error")
        # The status page: the metrics token or an admin token; tag names to an admin only
        # (no --metrics-tags).
        st, _, _ = curl(f"{url}/status")
        assert st == 401
        assert s.get(f"{url}/status", headers=alice).status_code == 401, "alice is no admin"
        page = s.get(f"{url}/status", auth=("prom", "m-tok"))
        assert page.status_code == 200 and 'id="role"' in page.text
        assert f":{port}" in page.text, "the metrics token sees this server's address"
        assert "orders" not in page.text, "no tag names without --metrics-tags"
        page = s.get(f"{url}/status", headers={"Authorization": "Bearer tok-root"})
        assert page.status_code == 200 and '<tr class="tag">' in page.text and ">orders<" in page.text
        detail = s.get(f"{url}/status/tag/orders", headers={"Authorization": "Bearer tok-root"})
        assert detail.status_code == 200 and "<svg" in detail.text
        assert s.get(f"{url}/status/tag/orders", auth=("p", "m-tok")).status_code == 404
        # The rate limit per token: 20 a second, in bursts of 20.
        codes = [s.get(f"{url}/api/segment/get/orders", headers=alice).status_code for _ in range(40)]
        # (alice used part of her allowance above.)
        assert codes[0] == 200 and codes.count(429) >= 15, codes
        r = s.get(f"{url}/tinyid/id/nextId?bizType=orders&token=tok-alice")
        assert r.status_code == 429 and r.json()["code"] == 6, r.text
        root_ok = s.get(f"{url}/api/segment/get/orders", headers={"Authorization": "Bearer tok-root"})
        assert root_ok.status_code == 200, "another token has its own allowance"
        print("    tokens: users and rights, status page access, rate limit: ok")


def anonymous_user(binary, base):
    """--http-anonymous-user: a Leaf client that sends no token gets that user's rights."""
    http_port, = free_ports(1)
    with served(binary, os.path.join(base, "anonymous"), [
        "--http-port", str(http_port), "--requirepass", "pw", "--http-anonymous-user", "leafy",
        "--log", "warn"]) as (proc, port):
        url = f"http://127.0.0.1:{http_port}"
        s = requests.Session()
        assert s.get(f"{url}/api/segment/get/leaf-orders").status_code == 401, "no such user yet"
        redis(port, "IDF.USER", "SET", "leafy", "leafy-pw", "alloc:leaf-*", auth=("default", "pw"))
        check(s.get(f"{url}/api/segment/get/leaf-orders"), "leaf", "ok")
        assert s.get(f"{url}/api/segment/get/orders").status_code == 403
        check(s.get(f"{url}/tinyid/id/nextId?bizType=orders"), "tinyid", "token_error")
        print("    anonymous user: its rights without a token: ok")


def eviction(binary, base):
    """Past --http-maxclients, a new connection closes the oldest idle one: 100 idle connections
    against a cap of 50 keep no client out."""
    http_port, = free_ports(1)
    with served(binary, os.path.join(base, "eviction"), [
        "--http-port", str(http_port), "--http-maxclients", "50", "--request-timeout-ms", "2000",
        "--log", "warn"]) as (proc, _):
        idle = [socket.create_connection(("127.0.0.1", http_port)) for _ in range(100)]
        check(requests.get(f"http://127.0.0.1:{http_port}/api/segment/get/evict", timeout=5), "leaf", "ok")
        closed = 0
        for sock in idle:
            sock.settimeout(0.1)
            try:
                closed += sock.recv(1) == b""
            except OSError:
                pass
            sock.close()
        assert closed >= 50, f"{closed} of 100 idle connections closed"
        # A keep-alive connection idle for --request-timeout-ms (2 s here) is closed, with a
        # reset (a timeout's close drops what the client did not take; docs/server.md).
        with socket.create_connection(("127.0.0.1", http_port)) as kept:
            kept.sendall(b"GET /api/segment/get/evict HTTP/1.1\r\nHost: x\r\n\r\n")
            assert kept.recv(4096).startswith(b"HTTP/1.1 200")
            kept.settimeout(6)
            started = time.monotonic()
            try:
                end = kept.recv(1)
            except ConnectionResetError:
                end = b""
            assert end == b"" and time.monotonic() - started < 5, "idle keep-alive closed"
        print(f"    eviction: past --http-maxclients the oldest idle connections close ({closed}); "
              "an idle keep-alive connection closes at the request timeout: ok")


def stripes(binary, base):
    """Two striped servers (--stripe 0/2, 1/2, blocks of 1000): HTTP ids stay in each server's
    blocks, and a segment is cut to one block, as RESP's INCRBY is."""
    urls, procs = [], []
    try:
        for k in range(2):
            http_port, = free_ports(1)
            proc, _ = serve_on_port_file(binary, os.path.join(base, f"stripe{k}"), [
                "--http-port", str(http_port), "--stripe", f"{k}/2", "--stripe-block", "1000",
                "--log", "warn"])
            procs.append(proc)
            urls.append(f"http://127.0.0.1:{http_port}")
        s = requests.Session()
        assert check(s.get(f"{urls[0]}/api/segment/get/st"), "leaf", "ok").text == "1"
        assert check(s.get(f"{urls[1]}/api/segment/get/st"), "leaf", "ok").text == "1001"
        ids = check(s.get(f"{urls[0]}/tinyid/id/nextIdSimple?bizType=st&token=t&batchSize=5"),
                    "tinyid", "nextIdSimple").text
        assert ids == "2,3,4,5,6", ids
        # 1002-2000 cannot hold a segment of 1000: it comes from stripe 1's next block.
        seg = check(s.get(f"{urls[1]}/tinyid/id/nextSegmentIdSimple?bizType=st&token=t"),
                    "tinyid", "nextSegmentIdSimple").text
        assert seg == "3000,3200,4000,1,0", seg
        r = s.get(f"{urls[0]}/tinyid/id/nextId?bizType=st&token=t&batchSize=5000")
        assert len(check(r, "tinyid", "nextId").json()["data"]) == 1000, "cut to the stripe block"
        print("    stripes: HTTP ids and segments within each server's blocks: ok")
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def tls_and_shutdown(binary, base):
    """HTTPS with the client port's certificate; SIGTERM ends the server with keep-alive
    connections open (idle ones closed at once)."""
    certs = os.path.join(base, "certs")
    subprocess.run(["bash", os.path.join(ROOT, "ci", "install", "tls-certs.sh"), certs],
                   check=True, capture_output=True)
    http_port, = free_ports(1)
    proc, port = serve_on_port_file(binary, os.path.join(base, "tls"), [
        "--http-port", str(http_port), "--tls-cert", os.path.join(certs, "server.pem"),
        "--tls-key", os.path.join(certs, "server.key"), "--log", "warn"])
    try:
        s = requests.Session()
        ca = os.path.join(certs, "ca.pem")  # per request: REQUESTS_CA_BUNDLE beats Session.verify
        check(s.get(f"https://localhost:{http_port}/api/segment/get/tls", verify=ca), "leaf", "ok")
        st, _, body = curl("--cacert", os.path.join(certs, "ca.pem"),
                           f"https://localhost:{http_port}/tinyid/id/nextIdSimple?bizType=tls&token=t")
        assert st == 200 and int(body) == 2, (st, body)
        try:
            requests.get(f"http://127.0.0.1:{http_port}/api/segment/get/tls", timeout=5)
            raise AssertionError("plain HTTP answered on a TLS port")
        except requests.exceptions.ConnectionError:
            pass
        # Keep-alive connections open (one idle, one just answered), then SIGTERM.
        idle = socket.create_connection(("127.0.0.1", http_port))
        check(s.get(f"https://localhost:{http_port}/api/segment/get/tls", verify=ca), "leaf", "ok")
        proc.send_signal(15)
        assert proc.wait(timeout=5) == 0, "SIGTERM: a clean exit within 5 s"
        idle.close()
        print("    TLS on the HTTP port; SIGTERM with keep-alive connections open: ok")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as base:
        open_server(binary, base)
        token_server(binary, base)
        anonymous_user(binary, base)
        eviction(binary, base)
        stripes(binary, base)
        tls_and_shutdown(binary, base)
    print("http api ok")


if __name__ == "__main__":
    main()
