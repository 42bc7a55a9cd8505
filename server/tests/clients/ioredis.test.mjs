// ioredis against `idforge serve` (started by server/tests/harness/server-clients.sh; its port in IDFORGE_PORT).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Redis from 'ioredis';

const port = Number(process.env.IDFORGE_PORT);

test('incr, incrby, get', async () => {
  const r = new Redis({ port });
  try {
    assert.equal(await r.ping(), 'PONG');
    assert.equal(await r.incr('js'), 1);
    assert.equal(await r.incrby('js', 1000), 1001);
    assert.equal(await r.get('js'), '1001');
    assert.equal(await r.get('js-never-used'), null);
  } finally {
    r.disconnect();
  }
});

test('a pipeline is strictly increasing', async () => {
  const r = new Redis({ port });
  try {
    const p = r.pipeline();
    for (let i = 0; i < 500; i++) p.incr('js-pipe');
    const ids = (await p.exec()).map(([err, v]) => { assert.equal(err, null); return v; });
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1]);
  } finally {
    r.disconnect();
  }
});

test('errors reject with a ReplyError', async () => {
  const r = new Redis({ port });
  try {
    await assert.rejects(r.incrby('js-err', -1), { name: 'ReplyError', message: /positive/ });
    await assert.rejects(r.call('IDF.SNOWFLAKE'), { name: 'ReplyError', message: /wrong number/ });
    assert.equal(await r.incr('js-err'), 1);
  } finally {
    r.disconnect();
  }
});

test('IDF commands through call()', async () => {
  const r = new Redis({ port });
  try {
    const ids = await r.call('IDF.SNOWFLAKE', 'js', 'COUNT', '50');
    assert.equal(ids.length, 50);
    const fields = await r.call('IDF.DECODE', String(ids[0]));
    assert.equal(fields[fields.indexOf('type') + 1], 'snowflake');
  } finally {
    r.disconnect();
  }
});

test('eight connections never share an id', async () => {
  const clients = Array.from({ length: 8 }, () => new Redis({ port }));
  try {
    const all = await Promise.all(clients.map(async (c) => {
      const mine = [];
      for (let i = 0; i < 300; i++) mine.push(await c.incr('js-conc'));
      return mine;
    }));
    const flat = all.flat();
    assert.equal(new Set(flat).size, 2400);
  } finally {
    clients.forEach((c) => c.disconnect());
  }
});
