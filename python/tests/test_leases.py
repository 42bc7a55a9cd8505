"""Snowflakes whose node id is leased from the segment server (``lease=``, ``service=``), against
the real ``idforge serve`` of ci/services.sh (IDFORGE_TEST_IDFORGE_URL)."""

import gc
import multiprocessing
import time

import pytest

import idforge
from test_sources import fresh_tag, service


def leased(url, svc, **kw):
    return idforge.Snowflake("twitter", lease=url, service=svc, **kw)


def test_live_generators_hold_distinct_ids_and_give_them_back():
    url, svc = service("idforge"), fresh_tag("lease")
    a = leased(url, svc, lease_ttl=2.0)
    b = leased(url, svc)
    assert (a.node_id, b.node_id) == (0, 1)
    assert b.decode(b.next()).node == 1
    ids = a.next_many(10_000)
    assert all(x < y for x, y in zip(ids, ids[1:]))
    del a
    gc.collect()  # the lease goes back with the generator
    time.sleep(0.02)
    c = leased(url, svc)
    assert c.node_id == 0
    assert c.next() > ids[-1]


def test_a_named_instance_gets_its_node_id_back():
    url, svc = service("idforge"), fresh_tag("sticky")
    sep = "&" if "?" in url else "?"

    def named(name):
        return leased(f"{url}{sep}holder={name}", svc)

    a, b = named("web-0"), named("web-1")
    assert (a.node_id, b.node_id) == (0, 1)
    last = a.next_many(1_000)[-1]
    del a
    gc.collect()  # the instance stops: its lease goes back, its id stays reserved for it
    stranger = leased(url, svc)
    assert stranger.node_id == 2, "a reserved id is no one else's"
    a = named("web-0")
    assert a.node_id == 0
    assert a.next() > last
    with pytest.raises(idforge.InvalidUrlError):
        named("bad name")


def test_a_lease_kept_in_a_file_comes_back_with_its_id(tmp_path):
    url, svc = service("idforge"), fresh_tag("file")
    sep = "&" if "?" in url else "?"
    lease = f"{url}{sep}holder=web-f&lease_file={tmp_path / 'web-f.lease'}"
    g = leased(lease, svc)
    node, last = g.node_id, g.next_many(1_000)[-1]
    with pytest.raises(idforge.IdforgeIOError):
        leased(lease, svc)  # one generator per file
    del g
    gc.collect()  # the lease is left to end by itself, the file ready for the next start
    assert (tmp_path / "web-f.lease").read_text().startswith("idforge-lease v1\n")
    g = leased(lease, svc)
    assert g.node_id == node
    assert g.next() > last
    with pytest.raises(idforge.InvalidArgumentError):
        leased(f"{url}{sep}lease_file={tmp_path / 'x'}", svc)  # a file needs a holder name


def _next_in_child(g, q):
    try:
        g.next()
        q.put("issued")
    except idforge.ForkedError:
        q.put("forked")


def test_a_forked_child_does_not_issue_under_the_parents_lease():
    g = leased(service("idforge"), fresh_tag("fork"))
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_next_in_child, args=(g, q))
    p.start()
    p.join(30)
    assert q.get(timeout=5) == "forked"
    g.next()  # the parent's lease is untouched


def test_lease_settings_are_checked():
    url = service("idforge")
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.Snowflake(lease=url)  # no service
    with pytest.raises(idforge.InvalidArgumentError):
        idforge.Snowflake(lease_ttl=5.0)
    with pytest.raises(idforge.InvalidArgumentError):
        leased(url, "bad name")
    with pytest.raises(idforge.InvalidArgumentError):
        leased(url, "svc", lease_ttl=-1.0)
    with pytest.raises(idforge.InvalidUrlError):
        leased("redis://127.0.0.1:1", "svc")
    with pytest.raises(idforge.SourceUnavailableError):
        leased("idforge://127.0.0.1:1?timeout_ms=300", "svc")


def test_lease_lost_is_a_runtime_error():
    assert issubclass(idforge.LeaseLostError, RuntimeError)
    assert idforge.LeaseLostError.code == 21


def test_a_generator_whose_server_is_gone_raises_lease_lost(tmp_path):
    import os
    import subprocess

    binary = os.environ.get("IDFORGE_BIN")
    if not binary:
        if os.environ.get("IDFORGE_REQUIRE_SERVICES"):
            pytest.fail("IDFORGE_BIN is not set but IDFORGE_REQUIRE_SERVICES is")
        pytest.skip("IDFORGE_BIN is not set (ci/test.sh sets it)")
    port_file = tmp_path / "port"
    server = subprocess.Popen(
        [binary, "serve", "--port", "0", "--port-file", str(port_file),
         "--data-dir", str(tmp_path / "data")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        url = f"idforge://127.0.0.1:{port_file.read_text().strip()}"
        g = idforge.Snowflake("twitter", lease=url, service="svc", lease_ttl=0.4)
        g.next()
        server.kill()
        server.wait()
        deadline = time.monotonic() + 5
        with pytest.raises(idforge.LeaseLostError) as info:
            while time.monotonic() < deadline:
                g.next_many(1)
                time.sleep(0.01)
        assert "lease" in str(info.value)
    finally:
        server.kill()
        server.wait()
