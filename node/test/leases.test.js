'use strict'
// Snowflakes whose node id is leased from the segment server (Snowflake.lease), against the
// `idforge serve` of ci/services.sh (IDFORGE_TEST_IDFORGE_URL), and against a server of the test's
// own (IDFORGE_BIN) that it kills to make the lease run out.
const test = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const { mkdtempSync, rmSync, readFileSync, existsSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const { randomBytes } = require('node:crypto')

const { Snowflake } = require('idforge')
const { rejectsCode, throwsCode, needed } = require('./helpers')

const freshService = (name) => `js-${name}-${randomBytes(6).toString('hex')}`
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

test('live generators hold distinct node ids; ids carry them', async (t) => {
  const url = needed(t, 'IDFORGE_TEST_IDFORGE_URL')
  if (!url) return
  const service = freshService('lease')
  const a = await Snowflake.lease(url, service)
  const b = await Snowflake.lease(url, service, { layout: 'twitter', leaseTtlMs: 2000 })
  assert.deepEqual([a.nodeId, b.nodeId], [0, 1])
  assert.equal(b.decode(b.next()).node, 1)
  const ids = a.nextMany(1000)
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1])
})

test('a holder named on the lease URL keeps its node id apart; a bad name is INVALID_URL', async (t) => {
  const url = needed(t, 'IDFORGE_TEST_IDFORGE_URL')
  if (!url) return
  const service = freshService('sticky')
  const sep = url.includes('?') ? '&' : '?'
  const a = await Snowflake.lease(`${url}${sep}holder=web-0`, service)
  const b = await Snowflake.lease(`${url}${sep}holder=web-1`, service)
  const anonymous = await Snowflake.lease(url, service)
  assert.deepEqual([a.nodeId, b.nodeId, anonymous.nodeId], [0, 1, 2])
  // A second live process giving web-0's name never shares its id.
  const twin = await Snowflake.lease(`${url}${sep}holder=web-0`, service)
  assert.equal(twin.nodeId, 3)
  await rejectsCode(Snowflake.lease(`${url}${sep}holder=bad%20name`, service), 'INVALID_URL')
})

test('bad lease settings reject with typed codes', async (t) => {
  const url = needed(t, 'IDFORGE_TEST_IDFORGE_URL')
  if (!url) return
  await rejectsCode(Snowflake.lease('redis://127.0.0.1:1', 'svc'), 'INVALID_URL')
  await rejectsCode(Snowflake.lease(url, 'bad name'), 'INVALID_ARGUMENT')
  await rejectsCode(Snowflake.lease(url, 'svc', { leaseTtlMs: 5 }), 'INVALID_ARGUMENT')
  await rejectsCode(Snowflake.lease('idforge://127.0.0.1:1?timeout_ms=300', 'svc'), 'SOURCE_UNAVAILABLE')
  throwsCode(() => Snowflake.lease(url, 'svc', { policy: 'sometimes' }), 'INVALID_ARGUMENT')
})

test('LEASE_LOST: a generator whose server is gone stops within its lease', async (t) => {
  const bin = needed(t, 'IDFORGE_BIN')
  if (!bin) return
  const dir = mkdtempSync(join(tmpdir(), 'idforge-node-lease-'))
  const portFile = join(dir, 'port')
  const server = spawn(bin, ['serve', '--port', '0', '--port-file', portFile, '--data-dir', join(dir, 'data')], {
    stdio: 'ignore',
  })
  t.after(() => {
    server.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true, maxRetries: 40, retryDelay: 50 })
  })
  for (let i = 0; i < 300 && !existsSync(portFile); i++) await sleep(20)
  const port = Number(readFileSync(portFile, 'utf8').trim())
  const g = await Snowflake.lease(`idforge://127.0.0.1:${port}`, 'svc', { leaseTtlMs: 400 })
  g.next()
  server.kill('SIGKILL')
  const deadline = Date.now() + 5000
  for (;;) {
    try {
      g.nextMany(1)
    } catch (e) {
      assert.equal(e.code, 'IDFORGE_LEASE_LOST', e.message)
      break
    }
    assert.ok(Date.now() < deadline, 'still issuing ids with no lease')
    await sleep(10)
  }
  await rejectsCode(g.nextManyAsync(2), 'LEASE_LOST')
})
