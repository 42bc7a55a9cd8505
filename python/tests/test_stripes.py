"""``Segments`` over striped servers (``idforge://a,b?mode=any``), against ``idforge serve
--stripe K/N`` servers of the test's own (IDFORGE_BIN): ids from both, none twice, calls that go
on when one server is killed, and servers whose ids could meet refused."""

import subprocess
import threading
import time

import pytest
from conftest import required_env

import idforge

BLOCK = 1000


def _binary():
    return required_env("IDFORGE_BIN", "ci/test.sh")


@pytest.fixture
def serve(tmp_path):
    """Starts ``idforge serve`` with extra arguments; returns (process, port). Killed at the end."""
    binary = _binary()
    started = []

    def start(name, *args):
        port_file = tmp_path / f"{name}.port"
        p = subprocess.Popen(
            [binary, "serve", "--port", "0", "--port-file", str(port_file),
             "--data-dir", str(tmp_path / name), *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(p)
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.02)
        return p, int(port_file.read_text())

    yield start
    for p in started:
        p.kill()
        p.wait()


def test_ids_come_from_every_live_stripe_and_never_twice(serve):
    servers = [serve(f"s{k}", "--stripe", f"{k}/2", "--stripe-block", str(BLOCK)) for k in (0, 1)]
    url = "idforge://" + ",".join(f"127.0.0.1:{port}" for _, port in servers) + "?mode=any"
    seg = idforge.Segments(url, "py-stripes", step=100, max_step=100, timeout=2.0)
    ids, errors = [], []

    def draw(n):
        for _ in range(n):
            try:
                ids.append(seg.next())
            except idforge.IdforgeError as e:
                errors.append(e)

    threads = [threading.Thread(target=draw, args=(3000,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # One server gone: the calls go on through the other.
    servers[0][0].kill()
    servers[0][0].wait()
    draw(2000)
    assert not errors, errors[:3]
    assert len(set(ids)) == len(ids) == 8000
    stripes = {(i - 1) // BLOCK % 2 for i in ids}
    assert stripes == {0, 1}
    assert seg.stats()["engine"]["connections"] >= 1


def test_servers_whose_ids_could_meet_are_refused(serve):
    a = serve("a", "--stripe", "0/2")
    b = serve("b", "--stripe", "0/2")
    url = f"idforge://127.0.0.1:{a[1]},127.0.0.1:{b[1]}?mode=any"
    seg = idforge.Segments(url, "py-clash", step=10, max_step=10, timeout=2.0)
    with pytest.raises(idforge.SourceUnavailableError, match="could meet"):
        for _ in range(1000):
            seg.next()
