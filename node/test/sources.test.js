'use strict'
// Segment sources against real servers on 127.0.0.1 (ci/services.sh starts them and exports
// IDFORGE_TEST_{IDFORGE,REDIS,POSTGRES,MYSQL}_URL; with IDFORGE_REQUIRE_SERVICES set a missing
// one fails instead of skipping), SQLite in a temp dir, and the typed failures.
const test = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { randomBytes } = require('node:crypto')

const { Segments } = require('idforge')
const { rejectsCode } = require('./helpers')

const SERVICES = {
  idforge: 'IDFORGE_TEST_IDFORGE_URL',
  redis: 'IDFORGE_TEST_REDIS_URL',
  postgres: 'IDFORGE_TEST_POSTGRES_URL',
  mysql: 'IDFORGE_TEST_MYSQL_URL',
}

/** The service's URL, or undefined (the test skips) when it is not running and not required. */
function service(t, name) {
  const url = process.env[SERVICES[name]]
  if (url) return url
  assert.ok(!process.env.IDFORGE_REQUIRE_SERVICES, `${SERVICES[name]} is not set but IDFORGE_REQUIRE_SERVICES is`)
  t.skip(`${SERVICES[name]} is not set (ci/services.sh sets it)`)
  return undefined
}

/** A tag of its own per test: the servers outlive the tests. */
const freshTag = (name) => `js-${name}-${randomBytes(6).toString('hex')}`

const dir = mkdtempSync(join(tmpdir(), 'idforge-node-src-'))
test.after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 40, retryDelay: 50 }))

for (const name of ['idforge', 'redis', 'postgres', 'mysql', 'sqlite']) {
  test(`${name}: connect, then synchronous ids while buffered, async past them`, async (t) => {
    const url = name === 'sqlite' ? `sqlite://${dir}/leaf.db` : service(t, name)
    if (!url) return
    const s = await Segments.connect(url, freshTag('basic'), { step: 200, dynamicStep: false })
    const ids = []
    for (let i = 0; i < 3000; i++) {
      try {
        ids.push(s.next())
      } catch (e) {
        assert.equal(e.code, 'IDFORGE_TIMEOUT') // nothing buffered this instant
        ids.push(await s.nextAsync())
      }
    }
    assert.deepEqual(ids, Array.from({ length: 3000 }, (_, i) => BigInt(i + 1)))
    const more = await s.nextManyAsync(1000)
    assert.equal(more[0], 3001n)
    assert.equal(more[999], 4000n)
    const stats = s.stats()
    assert.ok(stats.rangesFetched >= 20, JSON.stringify(stats))
  })
}

for (const name of ['idforge', 'redis']) {
  test(`${name}: a thousand tags share one refill thread and one connection`, async (t) => {
    const base = service(t, name)
    if (!base) return
    // Each pipelined request gets 20 s, not the default 5: under qemu beside other lanes a batch
    // of new tags can take longer, and a timed-out request is retried as a new range (a gap,
    // first id 11), which this test would read as a wrong answer.
    const url = `${base}${base.includes('?') ? '&' : '?'}timeout_ms=20000`
    const run = randomBytes(6).toString('hex')
    const options = { step: 10, dynamicStep: false, timeoutMs: 20000 }
    const gens = []
    for (let i = 0; i < 1000; i++) gens.push(new Segments(url, `js-many-${run}-${i}`, options))
    const firsts = await Promise.all(gens.map((g) => g.nextAsync()))
    assert.deepEqual(firsts, Array(1000).fill(1n))
    const { engine } = gens[0].stats()
    assert.ok(engine.generators >= 1000, JSON.stringify(engine))
    assert.equal(engine.threads, 1, JSON.stringify(engine))
    assert.equal(engine.connections, 1, JSON.stringify(engine))
    assert.ok(engine.batchedRefills > 0, JSON.stringify(engine))
    assert.ok(engine.roundTrips < engine.refills, JSON.stringify(engine))
  })
}

function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer()
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
  })
}

test('failures reject with typed codes', async (t) => {
  // Transient failures are retried until the timeout: a short one keeps this quick.
  const quick = { timeoutMs: 500 }
  await rejectsCode(Segments.connect(`idforge://127.0.0.1:${await freePort()}`, 't', quick), 'SOURCE_UNAVAILABLE')
  // A peer that accepts and never answers.
  const silent = net.createServer(() => {})
  await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const port = silent.address().port
  await rejectsCode(Segments.connect(`idforge://127.0.0.1:${port}?timeout_ms=200`, 't', quick), 'TIMEOUT')
  silent.close()
  // A Leaf table used as it is: a tag without a row is refused.
  await Segments.connect(`sqlite://${dir}/leaf.db`, 'made')
  await rejectsCode(Segments.connect(`sqlite://${dir}/leaf.db?auto_create=false`, 'no-such-tag'), 'INVALID_ARGUMENT')
  for (const bad of ['redis://h/x', 'idforge://h:0', 'sqlite:///x?table=a;b']) {
    assert.throws(() => new Segments(bad, 't'), (e) => e.code === 'IDFORGE_INVALID_URL')
  }
  const url = service(t, 'idforge')
  if (!url) return
  const wrong = 'idforge://default:wrong@' + url.split('@')[1]
  await rejectsCode(Segments.connect(wrong, 't'), 'SOURCE_UNAVAILABLE')
})

test('a MOVED loop rejects with SOURCE_UNAVAILABLE', async () => {
  // A peer that answers every request with a redirect to itself. Its port is read once: the
  // client may still write on a connection after close(), when address() is null (seen under
  // qemu, where the test ends before the client's last request).
  let port = 0
  const peer = net.createServer((socket) => {
    socket.on('data', () => socket.write(`-MOVED 0 127.0.0.1:${port}\r\n`))
    socket.on('error', () => {})
  })
  await new Promise((resolve) => peer.listen(0, '127.0.0.1', resolve))
  port = peer.address().port
  try {
    await rejectsCode(Segments.connect(`idforge://127.0.0.1:${port}`, 't', { timeoutMs: 500 }), 'SOURCE_UNAVAILABLE')
  } finally {
    peer.close()
  }
})

test('two generators on the idforge server never share an id', async (t) => {
  const url = service(t, 'idforge')
  if (!url) return
  const tag = freshTag('shared')
  const a = await Segments.connect(url, tag, { step: 100, dynamicStep: false })
  const b = await Segments.connect(url, tag, { step: 100, dynamicStep: false })
  const seen = new Set()
  for (let i = 0; i < 2000; i++) {
    for (const s of [a, b]) {
      const id = await s.nextAsync()
      assert.ok(!seen.has(id), `repeated ${id}`)
      seen.add(id)
    }
  }
})
