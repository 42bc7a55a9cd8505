"""redis-py against two striped servers (`--stripe 0/2` and `--stripe 1/2`, blocks of 1000 ids,
started by server/tests/harness/server-clients.sh; their ports in IDFORGE_STRIPE_PORTS): a plain client that goes
round-robin over them, as Flickr's ticket-server clients do, gets disjoint ids, each from its
server's stripe; and keeps going when one server is gone."""

import os

import pytest
import redis

PORTS = [int(p) for p in os.environ["IDFORGE_STRIPE_PORTS"].split(",")]
BLOCK = 1000


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def clients(request):
    made = [redis.Redis(port=p, protocol=request.param) for p in PORTS]
    yield made
    for c in made:
        c.close()


def stripe_of(id_):
    return (id_ - 1) // BLOCK % len(PORTS)


def test_each_server_hands_out_its_own_stripe(clients):
    tag = f"py-stripe-{clients[0].connection_pool.connection_kwargs['protocol']}"
    seen = set()
    for round_ in range(300):
        k = round_ % len(clients)
        id_ = clients[k].incrby(tag, 7)
        assert stripe_of(id_) == k and stripe_of(id_ - 6) == k, (k, id_)
        for i in range(id_ - 6, id_ + 1):
            assert i not in seen
            seen.add(i)
    for k, c in enumerate(clients):
        info = c.info("server")
        assert info["stripe"] == f"{k}/{len(PORTS)}"
        assert info["stripe_block"] == BLOCK


def test_a_range_never_crosses_a_block_and_too_large_ones_are_refused(clients):
    c = clients[1]
    tag = f"py-big-{c.connection_pool.connection_kwargs['protocol']}"
    for _ in range(5):
        last = c.incrby(tag, 600)
        assert (last - 600) // BLOCK == (last - 1) // BLOCK
        assert stripe_of(last) == 1
    with pytest.raises(redis.ResponseError, match="stripe block"):
        c.incrby(tag, BLOCK + 1)


def test_pipelines_and_get(clients):
    c = clients[0]
    pipe = c.pipeline(transaction=False)
    for _ in range(300):
        pipe.incr("py-stripe-pipe")
    ids = pipe.execute()
    assert ids == sorted(set(ids)) and all(stripe_of(i) == 0 for i in ids)
    assert int(c.get("py-stripe-pipe")) == ids[-1]
