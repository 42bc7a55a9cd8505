"""redis-py against `idforge serve` (started by server/tests/harness/server-clients.sh; its port in IDFORGE_PORT)."""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis

PORT = int(os.environ["IDFORGE_PORT"])


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def r(request):
    client = redis.Redis(port=PORT, protocol=request.param)
    yield client
    client.close()


def test_incr_incrby_get(r):
    tag = f"py-{r.connection_pool.connection_kwargs['protocol']}"
    assert r.ping() is True
    assert r.incr(tag) == 1
    assert r.incr(tag) == 2
    assert r.incrby(tag, 1000) == 1002
    assert r.get(tag) == b"1002"
    assert r.get("py-never-used") is None


def test_pipeline_is_strictly_increasing(r):
    pipe = r.pipeline(transaction=False)
    for _ in range(500):
        pipe.incr("py-pipe")
    ids = pipe.execute()
    assert ids == sorted(set(ids)) and len(ids) == 500


def test_errors_are_response_errors(r):
    tag = f"py-err-{r.connection_pool.connection_kwargs['protocol']}"
    with pytest.raises(redis.ResponseError, match="positive"):
        r.incrby(tag, -1)
    with pytest.raises(redis.ResponseError, match="overflow"):
        r.incrby(tag, 2**63 - 1)
    with pytest.raises(redis.ResponseError, match="unknown command"):
        r.decr(tag)
    assert r.incr(tag) == 1, "failed requests took no id"


def test_idf_commands(r):
    r.execute_command("IDF.TAG", "CREATE", f"py-made-{id(r)}", "STEP", "5", "START", "100")
    assert r.incr(f"py-made-{id(r)}") == 100
    ids = r.execute_command("IDF.SNOWFLAKE", "py", "COUNT", "100")
    assert len(ids) == 100 and ids == sorted(set(ids))
    fields = r.execute_command("IDF.DECODE", str(ids[0]))
    if isinstance(fields, list):
        fields = dict(zip(fields[::2], fields[1::2]))
    assert fields[b"type"] == b"snowflake"


def test_threads_never_share_an_id():
    def work(_):
        client = redis.Redis(port=PORT)
        try:
            mine = [client.incr("py-threads") for _ in range(300)]
        finally:
            client.close()
        assert mine == sorted(mine)
        return mine

    # map: a failed assert in a thread fails the test (a bare Thread would only print it).
    with ThreadPoolExecutor(8) as pool:
        seen = [i for mine in pool.map(work, range(8)) for i in mine]
    assert len(seen) == 2400 and len(set(seen)) == 2400
