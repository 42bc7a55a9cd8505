"""redis-py over TLS against `idforge serve` (started by server/tests/harness/server-clients.sh): IDFORGE_TLS_PORT
serves TLS, IDFORGE_MTLS_PORT mutual TLS; certificates from ci/install/tls-certs.sh in IDFORGE_TLS_DIR."""

import os

import pytest
import redis

TLS_PORT = int(os.environ["IDFORGE_TLS_PORT"])
MTLS_PORT = int(os.environ["IDFORGE_MTLS_PORT"])
CERTS = os.environ["IDFORGE_TLS_DIR"]


def cert(name):
    return os.path.join(CERTS, name)


@pytest.mark.parametrize("protocol", [2, 3])
def test_tls_incr_and_pipeline(protocol):
    r = redis.Redis(port=TLS_PORT, ssl=True, ssl_ca_certs=cert("ca.pem"), protocol=protocol)
    try:
        tag = f"py-tls-{protocol}"
        assert r.ping() is True
        assert r.incr(tag) == 1
        assert r.incrby(tag, 1000) == 1001
        pipe = r.pipeline(transaction=False)
        for _ in range(300):
            pipe.incr(tag)
        ids = pipe.execute()
        assert ids == list(range(1002, 1302))
    finally:
        r.close()


def test_tls_refuses_a_server_it_cannot_verify():
    # The system's CAs do not know the test CA.
    r = redis.Redis(port=TLS_PORT, ssl=True, socket_timeout=5)
    with pytest.raises(redis.exceptions.ConnectionError):
        r.ping()
    r.close()


def test_mutual_tls_with_a_client_certificate():
    r = redis.Redis(
        port=MTLS_PORT,
        ssl=True,
        ssl_ca_certs=cert("ca.pem"),
        ssl_certfile=cert("client.pem"),
        ssl_keyfile=cert("client.key"),
    )
    try:
        assert r.incr("py-mtls") == 1
        assert r.incr("py-mtls") == 2
    finally:
        r.close()


@pytest.mark.parametrize("client", [None, "stranger"])
def test_mutual_tls_refuses_clients_without_a_certificate_of_the_ca(client):
    kwargs = {}
    if client:
        kwargs = {"ssl_certfile": cert(f"{client}.pem"), "ssl_keyfile": cert(f"{client}.key")}
    r = redis.Redis(
        port=MTLS_PORT, ssl=True, ssl_ca_certs=cert("ca.pem"), socket_timeout=5, **kwargs
    )
    with pytest.raises(redis.exceptions.ConnectionError):
        r.incr("py-mtls-refused")
    r.close()
