"""redis-py's RedisCluster following a failover of `idforge serve` on etcd (run by
server/tests/harness/server-clients.sh: 3 servers, their ports in IDFORGE_CLUSTER_PORTS and their pids in
IDFORGE_CLUSTER_PIDS, both comma-separated in the same order)."""

import os
import signal
import time

import redis
from redis.cluster import ClusterNode, RedisCluster

PORTS = [int(p) for p in os.environ["IDFORGE_CLUSTER_PORTS"].split(",")]
PIDS = dict(zip(PORTS, (int(p) for p in os.environ["IDFORGE_CLUSTER_PIDS"].split(","))))


def leader_port():
    for port in PORTS:
        try:
            info = redis.Redis(port=port, socket_timeout=1).info("replication")
        except redis.ConnectionError:
            continue
        if info.get("role") == "master":
            return port
    raise AssertionError("no leader")


def incr_retrying(rc, key, deadline):
    while True:
        try:
            return rc.incr(key)
        except (redis.ConnectionError, redis.TimeoutError, redis.exceptions.ClusterError,
                redis.exceptions.ClusterDownError, redis.exceptions.RedisClusterException):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_redis_cluster_follows_the_leader_through_a_kill_9():
    # Start from a standby only: the client must learn the leader from CLUSTER SLOTS.
    leader = leader_port()
    standby = [p for p in PORTS if p != leader]
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in standby])
    before = [rc.incr("py-cluster") for _ in range(100)]
    assert before == sorted(set(before))
    assert rc.get("py-cluster") == str(before[-1]).encode()

    os.kill(PIDS[leader], signal.SIGKILL)
    deadline = time.monotonic() + 15
    after = [incr_retrying(rc, "py-cluster", deadline) for _ in range(100)]
    assert after == sorted(set(after))
    assert after[0] > before[-1], "no id repeated or reordered across the failover"
    assert leader_port() != leader
    rc.close()
