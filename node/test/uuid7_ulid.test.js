'use strict'
// UUIDv7 and ULID: the shared vectors, order, worker threads, the state file, typed errors, and
// snowflakes whose tick starts at a random sequence.
const test = require('node:test')
const assert = require('node:assert/strict')
const { mkdtempSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const {
  Snowflake,
  Ulids,
  Uuid7s,
  parseUlid,
  parseUuid7,
  stringifyUuid7,
  ulid,
  ulidFields,
  ulidFromFields,
  ulidToUuid,
  uuid7,
  uuid7Bytes,
  uuid7Fields,
  uuid7FromFields,
  uuidToUlid,
} = require('idforge')
const { load, throwsCode } = require('./helpers.js')

const UUID7 = load('uuid7.json')
const ULID = load('ulid.json')
const TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

test('uuid7 vectors: fields, bytes, ULID text', () => {
  for (const r of UUID7.fields) {
    const text = uuid7FromFields(r.time_ms, r.rand_a, BigInt(r.rand_b))
    assert.equal(text, r.text)
    assert.equal(parseUuid7(text).toString('hex'), r.bytes)
    assert.equal(stringifyUuid7(Buffer.from(r.bytes, 'hex')), r.text)
    assert.equal(uuidToUlid(text), r.ulid)
    assert.equal(ulidToUuid(r.ulid), r.text)
    const parts = uuid7Fields(r.text)
    assert.deepEqual([parts.timeMs, parts.randA, parts.randB], [r.time_ms, r.rand_a, BigInt(r.rand_b)])
    assert.deepEqual(uuid7Fields(Buffer.from(r.bytes, 'hex')).randB, BigInt(r.rand_b))
  }
})

test('uuid7 vectors: the generator layout composed from (time, counter, random)', () => {
  // counter >> 6 is rand_a, counter & 63 the top 6 bits of rand_b, then 56 random bits.
  for (const r of UUID7.stamp) {
    const randB = (BigInt(r.counter & 63) << 56n) | (BigInt(r.random) & ((1n << 56n) - 1n))
    assert.equal(uuid7FromFields(r.time_ms, r.counter >> 6, randB), r.text)
  }
})

test('uuid7 vectors: parse and refuse', () => {
  for (const r of UUID7.parse) assert.equal(stringifyUuid7(parseUuid7(r.input)), r.text)
  for (const r of UUID7.refuse) throwsCode(() => parseUuid7(r.input), r.error)
})

test('ulid vectors', () => {
  for (const r of ULID.fields) {
    const text = ulidFromFields(r.time_ms, BigInt(r.random))
    assert.equal(text, r.text)
    assert.equal(ulidToUuid(text).replace(/-/g, ''), r.bytes)
    const parts = ulidFields(text)
    assert.deepEqual([parts.timeMs, parts.random], [r.time_ms, BigInt(r.random)])
  }
  for (const r of ULID.stamp) {
    const random = (BigInt(r.counter) << 62n) | (BigInt(r.random) & ((1n << 62n) - 1n))
    assert.equal(ulidFromFields(r.time_ms, random), r.text)
  }
  for (const r of ULID.parse) assert.equal(parseUlid(r.input), r.text)
  for (const r of ULID.refuse) throwsCode(() => parseUlid(r.input), r.error)
})

test('bad input throws typed errors', () => {
  throwsCode(() => parseUuid7(42), 'INVALID_ARGUMENT')
  throwsCode(() => stringifyUuid7(new Uint8Array(15)), 'INVALID_LENGTH')
  throwsCode(() => stringifyUuid7(Buffer.from('00000000000140018000000000000001', 'hex')), 'INVALID_UUID')
  throwsCode(() => uuid7FromFields(2 ** 48, 0, 0), 'TIME_OUT_OF_RANGE')
  throwsCode(() => uuid7FromFields(0, 4096, 0), 'INVALID_ARGUMENT')
  throwsCode(() => uuid7FromFields(0, 70000, 0), 'INVALID_ARGUMENT')
  throwsCode(() => uuid7FromFields(0, 0, 2n ** 62n), 'INVALID_ARGUMENT')
  throwsCode(() => uuid7FromFields(-1, 0, 0), 'INVALID_ARGUMENT')
  throwsCode(() => ulidFromFields(0, 2n ** 80n), 'INVALID_ARGUMENT')
  throwsCode(() => ulidFromFields(0, -1n), 'INVALID_ARGUMENT')
  throwsCode(() => uuidToUlid('nope'), 'INVALID_UUID')
  throwsCode(() => uuid7Bytes(new Uint8Array(16), 1), 'INVALID_ARGUMENT')
  throwsCode(() => new Uuid7s().nextMany(-1), 'INVALID_ARGUMENT')
  throwsCode(() => new Ulids().nextMany(1.5), 'INVALID_ARGUMENT')
  throwsCode(() => new Uuid7s({ stateFile: '/nonexistent-dir/x/uuid7.state' }), 'IO')
})

test('ids are uuid text of now, strictly increasing as text and bytes', () => {
  const before = Date.now()
  const u = uuid7()
  assert.match(u, TEXT)
  const t = uuid7Fields(u).timeMs
  assert.ok(t >= before - 20 && t <= Date.now(), `${t} not near ${before}`)
  for (const ids of [Array.from({ length: 20000 }, uuid7), new Uuid7s().nextMany(20000)]) {
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1] < ids[i], `${ids[i - 1]} !< ${ids[i]}`)
  }
  const g = new Uuid7s()
  const bytes = Array.from({ length: 1000 }, () => g.nextBytes())
  for (let i = 1; i < bytes.length; i++) assert.equal(Buffer.compare(bytes[i - 1], bytes[i]), -1)
  const into = g.nextBytes(new Uint8Array(40), 20)
  assert.equal(stringifyUuid7(into.subarray(20, 36)) > stringifyUuid7(bytes[999]), true)
  assert.ok(into.subarray(0, 20).every((b) => b === 0) && into.subarray(36).every((b) => b === 0))
  assert.match(stringifyUuid7(uuid7Bytes()), TEXT)
  const u2 = new Ulids()
  const texts = [...Array.from({ length: 5000 }, () => u2.next()), ...u2.nextMany(5000)]
  for (let i = 1; i < texts.length; i++) assert.ok(texts[i - 1] < texts[i])
  assert.equal(new Set(Array.from({ length: 5000 }, ulid)).size, 5000)
})

test('worker threads share the process-wide generator without repeats', async () => {
  const { Worker } = require('node:worker_threads')
  const source = `
    const { parentPort } = require('node:worker_threads')
    const { uuid7 } = require(${JSON.stringify(require.resolve('idforge'))})
    parentPort.postMessage(Array.from({ length: 20000 }, uuid7))`
  const runs = await Promise.all(
    [0, 1, 2, 3].map(
      () =>
        new Promise((resolve, reject) => {
          const w = new Worker(source, { eval: true })
          w.once('message', resolve)
          w.once('error', reject)
        }),
    ),
  )
  const all = new Set(runs.flat().concat(Array.from({ length: 20000 }, uuid7)))
  assert.equal(all.size, 100000)
  for (const ids of runs) for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1] < ids[i])
})

test('a state file keeps ids increasing across generators', () => {
  const dir = mkdtempSync(join(tmpdir(), 'idforge-uuid7-'))
  const path = join(dir, 'uuid7.state')
  const first = new Uuid7s({ stateFile: path })
  const last = first.nextMany(1000)[999]
  assert.ok(first.persistedMs >= uuid7Fields(last).timeMs)
  assert.equal(new Uuid7s().persistedMs, null)
  const ulids = new Ulids({ stateFile: join(dir, 'ulid.state') })
  assert.ok(ulids.next() < ulids.next() && ulids.persistedMs > 0)
})

test('randomStart spreads snowflakes over shards', async () => {
  const plain = new Snowflake({ nodeId: 1 })
  const spread = new Snowflake({ nodeId: 1, randomStart: true })
  assert.equal(plain.randomStart, false)
  assert.equal(spread.randomStart, true)
  const seqs = new Map([
    [plain, []],
    [spread, []],
  ])
  for (let i = 0; i < 150; i++) {
    for (const [g, out] of seqs) out.push(g.decode(g.nextMany(1)[0]).seq)
    // Past the coarse clock's next tick (up to 4 ms), so most ids start a tick.
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const zeros = (s) => s.filter((x) => x === 0).length
  assert.ok(zeros(seqs.get(plain)) > 75, 'by default a tick starts at 0')
  assert.ok(zeros(seqs.get(spread)) < 15)
  assert.ok(new Set(seqs.get(spread).map((s) => s % 16)).size >= 12)
  assert.ok(Math.max(...seqs.get(spread)) < 4096)
})
