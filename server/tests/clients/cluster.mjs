// ioredis's Cluster following a failover of `idforge serve` on etcd (run by
// server/tests/harness/server-clients.sh: 3 servers, ports in IDFORGE_CLUSTER_PORTS, pids in IDFORGE_CLUSTER_PIDS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';

const ports = process.env.IDFORGE_CLUSTER_PORTS.split(',').map(Number);
const pids = new Map(ports.map((p, i) => [p, Number(process.env.IDFORGE_CLUSTER_PIDS.split(',')[i])]));

async function leaderPort() {
  for (const port of ports) {
    const r = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await r.connect();
      if ((await r.info('replication')).includes('role:master')) return port;
    } catch {
      // a dead server
    } finally {
      r.disconnect();
    }
  }
  throw new Error('no leader');
}

async function incrRetrying(cluster, key, deadline) {
  for (;;) {
    try {
      return await cluster.incr(key);
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

test('ioredis Cluster follows the leader through a kill -9', async () => {
  const leader = await leaderPort();
  const cluster = new Redis.Cluster(
    ports.filter((p) => p !== leader).map((port) => ({ host: '127.0.0.1', port })),
    { clusterRetryStrategy: () => 50, retryDelayOnClusterDown: 50, retryDelayOnFailover: 50 },
  );
  try {
    const before = [];
    for (let i = 0; i < 100; i++) before.push(await cluster.incr('js-cluster'));
    for (let i = 1; i < before.length; i++) assert.ok(before[i] > before[i - 1]);

    process.kill(pids.get(leader), 'SIGKILL');
    const deadline = Date.now() + 15000;
    const after = [];
    for (let i = 0; i < 100; i++) after.push(await incrRetrying(cluster, 'js-cluster', deadline));
    assert.ok(after[0] > before.at(-1), `${after[0]} after ${before.at(-1)}`);
    for (let i = 1; i < after.length; i++) assert.ok(after[i] > after[i - 1]);
    assert.notEqual(await leaderPort(), leader);
  } finally {
    cluster.disconnect();
  }
});
