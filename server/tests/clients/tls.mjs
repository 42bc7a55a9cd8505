// ioredis over TLS against `idforge serve` (started by server/tests/harness/server-clients.sh): IDFORGE_TLS_PORT
// serves TLS, IDFORGE_MTLS_PORT mutual TLS; certificates from ci/install/tls-certs.sh in IDFORGE_TLS_DIR.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';

const tlsPort = Number(process.env.IDFORGE_TLS_PORT);
const mtlsPort = Number(process.env.IDFORGE_MTLS_PORT);
const dir = process.env.IDFORGE_TLS_DIR;
const pem = (name) => readFileSync(join(dir, name));

// One try, no reconnects: a refused handshake must show as an error, not a retry loop.
const once = { maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: true };

test('tls: incr, incrby and a pipeline', async () => {
  const r = new Redis({ port: tlsPort, tls: { ca: pem('ca.pem'), servername: 'localhost' } });
  try {
    assert.equal(await r.ping(), 'PONG');
    assert.equal(await r.incr('js-tls'), 1);
    assert.equal(await r.incrby('js-tls', 1000), 1001);
    const p = r.pipeline();
    for (let i = 0; i < 300; i++) p.incr('js-tls');
    const ids = (await p.exec()).map(([err, v]) => { assert.equal(err, null); return v; });
    assert.deepEqual(ids, Array.from({ length: 300 }, (_, i) => 1002 + i));
  } finally {
    r.disconnect();
  }
});

test('tls: a server signed by an unknown CA is refused', async () => {
  const r = new Redis({ port: tlsPort, tls: { ca: pem('other-ca.pem'), servername: 'localhost' }, ...once });
  r.on('error', () => {});
  try {
    await assert.rejects(r.incr('js-tls-refused'));
  } finally {
    r.disconnect();
  }
});

test('mutual tls: a client certificate of the CA is let in', async () => {
  const r = new Redis({
    port: mtlsPort,
    tls: { ca: pem('ca.pem'), cert: pem('client.pem'), key: pem('client.key'), servername: 'localhost' },
  });
  try {
    assert.equal(await r.incr('js-mtls'), 1);
    assert.equal(await r.incr('js-mtls'), 2);
  } finally {
    r.disconnect();
  }
});

for (const client of [null, 'stranger']) {
  test(`mutual tls: ${client ?? 'no'} client certificate is refused`, async () => {
    const tls = { ca: pem('ca.pem'), servername: 'localhost' };
    if (client) Object.assign(tls, { cert: pem(`${client}.pem`), key: pem(`${client}.key`) });
    const r = new Redis({ port: mtlsPort, tls, ...once });
    r.on('error', () => {});
    try {
      await assert.rejects(r.incr('js-mtls-refused'));
    } finally {
      r.disconnect();
    }
  });
}
