'use strict'
// Every row of errors.json: the package knows its code, the addon reports the same list, and
// each code an API call can produce is thrown (or rejected) with that `error.code` and the
// row's number as `error.status` (helpers.js checks both).
const test = require('node:test')
const assert = require('node:assert/strict')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { join } = require('node:path')
const idforge = require('idforge')
const { load, throwsCode, rejectsCode } = require('./helpers.js')
const { holdLock, lockSkip } = require('./lock.js')

const ROWS = load('errors.json').errors
const { Layout, Snowflake, ObjectId, Flake128, Segments } = idforge

test('ErrorCode and errorTable hold every row of errors.json', () => {
  assert.deepEqual(
    Object.entries(idforge.ErrorCode),
    ROWS.map((r) => [r.name, r.js]),
  )
  assert.deepEqual(
    idforge.errorTable.map((r) => [r.status, r.code, r.description]),
    ROWS.map((r) => [r.code, r.js, r.description]),
  )
  for (const r of ROWS) assert.equal(r.js, `IDFORGE_${r.name}`)
})

test('the addon reports the same codes', () => {
  assert.deepEqual(
    idforge.errorCodes(),
    ROWS.map((r) => ({ code: r.code, name: r.js })),
  )
})

const wide = (extra) => ({ epochMs: 0, tickMs: 1, timeBits: 41, nodeBits: 10, seqBits: 12, ...extra })

// How each code is produced through the Node API.
const TRIGGERS = {
  INVALID_LAYOUT: () => new Layout(wide({ tickMs: 0 })),
  NODE_OUT_OF_RANGE: () => new Snowflake({ layout: 'twitter', nodeId: 1024 }),
  EPOCH_IN_FUTURE: () => new Snowflake({ layout: wide({ epochMs: Date.now() + 86_400_000 }) }),
  TIME_OUT_OF_RANGE: () => Layout.preset('twitter').boundsAt(0),
  SEQUENCE_OUT_OF_RANGE: () => Layout.preset('twitter').composeTick(0, 0, 4096),
  INVALID_HEX: () => ObjectId.fromHex('not hex'),
  INVALID_BASE62: () => Flake128.fromBase62('!'),
  INVALID_DECIMAL: () => new Snowflake().decode('12x'),
  INVALID_LENGTH: () => ObjectId.fromBytes(Buffer.alloc(5)),
  INVALID_ARGUMENT: () => new Snowflake({ policy: 'sometimes' }),
  CLOCK_BEHIND: () => {
    // Two ids a millisecond and a policy that never runs ahead: a synchronous call refuses to
    // wait on the event loop.
    const g = new Snowflake({ layout: wide({ epochMs: 1_577_836_800_000, seqBits: 1 }), policy: 'wait' })
    for (let i = 0; i < 1_000_000; i++) g.nextMany(1)
  },
  IO: () => new Snowflake({ stateFile: '/nonexistent-idforge-dir/node-1.hw' }),
  INVALID_URL: () => new Segments('bogus://x', 't'),
}

// Codes no Node call can produce, and why; a new code must be added to one of the two lists.
const UNREACHABLE = {
  INVALID_BASE32: 'no base32 API in the Node package',
  INVALID_SEGMENT: 'segments come from the runtime sources, never from callers',
  BUFFER_FULL: 'internal to the segment double buffer',
  OVERFLOW: 'a counter reaching 2^64 (not reachable in a test)',
  FORKED: 'Node does not fork a running process',
  NULL_ARGUMENT: 'C API only',
  PANIC: 'C API only',
  BUFFER_TOO_SMALL: 'C API only',
}

// Codes with a test of their own (they need a slow or absent source): TIMEOUT below,
// SOURCE_UNAVAILABLE in sources.test.js, LEASE_LOST in leases.test.js.
const TESTED_BELOW = ['TIMEOUT', 'SOURCE_UNAVAILABLE', 'LEASE_LOST']

// A code new in errors.json needs no edit here to pass (its JSON row and core variant are the
// whole change); it is reported until a trigger or a reason is added, as the C suite does.
test('every code is triggered, explained, or reported', (t) => {
  const names = new Set(ROWS.map((r) => r.name))
  const listed = [...Object.keys(TRIGGERS), ...Object.keys(UNREACHABLE), ...TESTED_BELOW]
  for (const name of listed) assert.ok(names.has(name), `${name} is not a code of errors.json`)
  assert.equal(new Set(listed).size, listed.length, 'a code is listed twice')
  for (const name of names) {
    if (!listed.includes(name)) t.diagnostic(`${name}: not triggered through the Node API yet`)
  }
})

for (const [name, trigger] of Object.entries(TRIGGERS)) {
  test(`throws IDFORGE_${name}`, () => throwsCode(trigger, name))
}

test('TIMEOUT: sync next() with nothing buffered, and nextAsync past its timeout', { skip: lockSkip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'idforge-node-'))
  const lock = await holdLock(join(dir, 'orders'), 2000)
  t.after(() => {
    lock.release()
    rmSync(dir, { recursive: true, force: true, maxRetries: 40, retryDelay: 50 })
  })
  const s = new Segments(`file://${dir}`, 'orders', { timeoutMs: 200 })
  throwsCode(() => s.next(), 'TIMEOUT', 'timed out|wait')
  await rejectsCode(s.nextAsync(), 'TIMEOUT')
})

test('batch sizes are checked', () => {
  const g = new Snowflake()
  const s = new Segments('memory:', 'n')
  for (const n of [-1, 1.5, 2 ** 27 + 1, Number.NaN]) {
    throwsCode(() => g.nextMany(n), 'INVALID_ARGUMENT')
    throwsCode(() => g.nextManyAsync(n), 'INVALID_ARGUMENT')
    throwsCode(() => s.nextMany(n), 'INVALID_ARGUMENT')
    throwsCode(() => s.nextManyAsync(n), 'INVALID_ARGUMENT')
  }
  assert.equal(g.nextMany(0).length, 0)
})

test('errors made by the package\'s JavaScript carry code and status as the addon\'s do', () => {
  throwsCode(() => ObjectId.fromHex(42), 'INVALID_HEX')
  throwsCode(() => ObjectId.fromBytes('twelve bytes'), 'INVALID_LENGTH')
  throwsCode(() => new Flake128(-1n), 'INVALID_ARGUMENT')
})

test('README\'s contract: the name and number of errors.json, as in Python, C and Kotlin', () => {
  const row = ROWS.find((r) => r.name === 'INVALID_HEX')
  try {
    ObjectId.fromHex('nope')
    assert.fail('no error')
  } catch (e) {
    assert.equal(e.code, idforge.ErrorCode.INVALID_HEX)
    assert.equal(e.code, `IDFORGE_${row.name}`)
    assert.equal(e.status, row.code)
    assert.equal(e.status, 6) // the C IDFORGE_STATUS_INVALID_HEX, Python's InvalidHexError.code
  }
})

test('errors thrown in a worker thread carry code and status', async () => {
  const { Worker } = require('node:worker_threads')
  const source = `
    const { parentPort } = require('node:worker_threads')
    const { ObjectId, Layout } = require(${JSON.stringify(require.resolve('idforge'))})
    const seen = []
    const bad = { epochMs: 0, tickMs: 0, timeBits: 41, nodeBits: 10, seqBits: 12 }
    for (const f of [() => ObjectId.fromHex('nope'), () => new Layout(bad)]) {
      try { f() } catch (e) { seen.push([e.code, e.status]) }
    }
    parentPort.postMessage(seen)`
  for (let round = 0; round < 2; round++) {
    // Two workers one after the other: the first one's end must not disturb the next, nor
    // this thread.
    const worker = new Worker(source, { eval: true })
    const [seen] = await Promise.all([
      new Promise((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
      }),
      new Promise((resolve) => worker.once('exit', resolve)),
    ])
    assert.deepEqual(seen, [
      ['IDFORGE_INVALID_HEX', 6],
      ['IDFORGE_INVALID_LAYOUT', 1],
    ])
  }
  throwsCode(() => ObjectId.fromHex('nope'), 'INVALID_HEX')
})

test('rejections carry the code too', async () => {
  const g = new Snowflake({ layout: wide({ epochMs: 1_577_836_800_000, seqBits: 1 }), policy: 'wait', maxWaitMs: 0 })
  await rejectsCode(g.nextManyAsync(100), 'CLOCK_BEHIND')
})
