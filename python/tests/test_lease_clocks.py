"""A leased Snowflake whose host clock is far from the lease server's is refused with
``ClockBehindError`` (the runtime's check, through the binding), and ``?max_skew_ms=`` on the lease
URL allows more. Against a fake ``IDF.WORKER`` server on loopback (a thread here), whose clock is
set apart from this host's: no real server needed."""

import time

import pytest
from conftest import serve_loopback

import idforge


def _fake_lease_server(clock_off_ms):
    """A server granting node 0 with its clock `clock_off_ms` from ours; returns (socket, port)."""
    def handle(conn):
        f = conn.makefile("rb")
        while True:
            head = f.readline()
            if not head:
                return
            args = []
            for _ in range(int(head[1:])):
                n = int(f.readline()[1:])
                args.append(f.read(n + 2)[:-2].decode())
            now = int(time.time() * 1000) + clock_off_ms
            if args[1] == "ACQUIRE" and args[-1] == "CLOCK":
                reply = f"*5\r\n:0\r\n$4\r\ntokn\r\n:{args[3]}\r\n:0\r\n:{now}\r\n"
            elif args[1] == "ACQUIRE":
                reply = f"*3\r\n:0\r\n$4\r\ntokn\r\n:{args[3]}\r\n"
            elif args[1] == "RENEW" and args[-1] == "CLOCK":
                reply = f"*3\r\n:{now + 10000}\r\n:0\r\n:{now}\r\n"
            elif args[1] == "RENEW":
                reply = f":{now + 10000}\r\n"
            else:
                reply = "+OK\r\n"
            conn.sendall(reply.encode())

    return serve_loopback(handle)


# 5 s behind: past the default 1 s, and under 90% of the default 10 s TTL (the most a host may be
# behind whatever the skew allowed), so max_skew_ms lets it through.
@pytest.mark.parametrize("off_ms, words", [(5_000, "behind"), (-2_000, "ahead")])
def test_a_host_clock_too_far_from_the_servers_is_refused(off_ms, words):
    listener, port = _fake_lease_server(off_ms)
    try:
        url = f"idforge://127.0.0.1:{port}?timeout_ms=2000"
        with pytest.raises(idforge.ClockBehindError, match=words):
            idforge.Snowflake("twitter", lease=url, service="svc")
        g = idforge.Snowflake("twitter", lease=url + "&max_skew_ms=60000", service="svc")
        assert g.node_id == 0
    finally:
        listener.close()
