'use strict'
// The generators through the Node API: ids increase and never repeat, whether served from a
// run or made directly, and nothing blocks the event loop.
const test = require('node:test')
const assert = require('node:assert/strict')
const { mkdtempSync, rmSync } = require('node:fs')
const { tmpdir } = require('node:os')
const { dirname, join } = require('node:path')
const { Snowflake, ObjectId, Flake128, Flake128Generator, Segments } = require('idforge')
const { holdLock, lockSkip } = require('./lock.js')
const { slowdown } = require('./helpers.js')

function assertIncreasing(ids) {
  for (let i = 1; i < ids.length; i++) {
    assert.ok(ids[i - 1] < ids[i], `id ${i} (${ids[i]}) is not after ${ids[i - 1]}`)
  }
}

test('next() ids increase across runs and every other way of making ids', () => {
  const g = new Snowflake({ nodeId: 3 })
  const ids = []
  // Mixed calls: each direct call drops the unserved rest of the run, so order holds.
  for (let round = 0; round < 2000; round++) {
    for (let i = 0; i < 7; i++) ids.push(g.next())
    ids.push(BigInt(g.nextString()))
    if (round % 3 === 0) ids.push(...g.nextMany(5))
  }
  assertIncreasing(ids)
  for (const id of ids) assert.equal(g.decode(id).node, 3)
})

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
// The cells the package reads the millisecond from: [0] the native clock's ms (low 32 bits),
// [1] 1 while a native thread keeps [0] current.
// The package exports no subpath, so native.js is loaded from the package's own directory.
const native = require(join(dirname(require.resolve('idforge')), 'native.js'))
const cells = new Uint32Array(native.millisCells())

async function until(what, check) {
  const deadline = Date.now() + 5000 * slowdown()
  while (!check()) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`)
    await sleep(5)
  }
}

test('a run is not served past its millisecond, with or without the millisecond thread', async () => {
  const g = new Snowflake()
  for (const thread of [true, false]) {
    if (thread) {
      // Each run filled starts the thread if it is not running: ask until it runs (a start
      // can be missed, under emulation most, and the next run's retries it; ids meanwhile
      // take Date.now(), which this test's second half checks).
      await until('the millisecond thread', () => {
        g.next()
        return cells[1] === 1
      })
    } else {
      await until('the idle thread to stop', () => cells[1] === 0)
    }
    g.next()
    const last = g.next() // a run of two or more is now buffered, of this id's millisecond
    // Longer than the thread's wake-up on a loaded machine (under emulation too): the cells
    // have moved on by then.
    await sleep(60)
    const runs = g.decode(last).timeMs
    // The thread moved the cells on (a wait only on a machine slower than that).
    if (thread) await until('the cells to pass the run', () => cells[1] === 0 || cells[0] !== Number(runs) >>> 0)
    const id = g.next()
    // The id was made after the pause, not taken from the earlier run.
    const made = g.decode(id).timeMs
    assert.ok(made > runs, `${made} is the run's millisecond ${runs} (thread: ${thread})`)
  }
})

test('the millisecond cells follow the native clock while runs are filled', async () => {
  const g = new Snowflake()
  await until('the millisecond thread', () => {
    g.next()
    return cells[1] === 1
  })
  for (let i = 0; i < 20; i++) {
    // Read before the id is made: the clock may tick between the two (often under emulation).
    const shown = cells[0]
    const made = Number(g.decode(g.nextMany(1)[0]).timeMs) >>> 0
    // Never ahead of the clock; behind it by a wake-up at most (a loaded machine: 50 ms, more
    // as slow as it runs).
    const behind = (made - shown) >>> 0
    assert.ok(behind <= 50 * slowdown(), `cells show ${shown}, an id made just after has ${made}`)
    g.next() // a run filled keeps the thread going
    await sleep(2)
  }
})

test('an ObjectId is not served past its second, with or without the millisecond thread', async () => {
  const g = new Snowflake()
  for (const thread of [true, false]) {
    new ObjectId() // a pool of ids of this second is now buffered
    const second = Math.floor(Date.now() / 1000)
    // A little past the next second (the native seconds move within a wake-up of it), with
    // runs filled meanwhile to keep the thread going, or none, so that it stops.
    const end = (second + 1) * 1000 + 50
    while (Date.now() < end) {
      if (thread) g.next()
      await sleep(10)
    }
    assert.equal(cells[1], thread ? 1 : 0)
    const o = new ObjectId()
    assert.ok(o.timestamp >= second + 1, `${o.timestamp} is from the second before ${second + 1}`)
  }
})

test('decode agrees with compose, and a Date is accepted for times', () => {
  const g = new Snowflake({ layout: 'discord', nodeId: 9 })
  const when = new Date('2024-05-01T12:00:00.123Z')
  const id = g.compose(when, 9, 42)
  const p = g.decode(id)
  assert.deepEqual([p.time.getTime(), p.node, p.seq], [when.getTime(), 9, 42])
  const { min, max } = g.boundsAt(when)
  assert.ok(min <= id && id <= max)
  assert.equal(g.layout.order, 'time_node_seq')
})

test('nextNumber only for layouts that fit a number', () => {
  const safe = new Snowflake({ layout: 'js_safe' })
  const a = safe.nextNumber()
  const b = safe.nextNumber()
  assert.ok(Number.isSafeInteger(a) && a < b)
})

test('nextMany fills a BigUint64Array of increasing ids', () => {
  const g = new Snowflake()
  const ids = g.nextMany(10_000)
  assert.ok(ids instanceof BigUint64Array)
  assert.equal(ids.length, 10_000)
  assertIncreasing(ids)
})

test('the wait policy waits in nextAsync, off the event loop', async () => {
  // One id a millisecond: 50 ids need about 50 ms of waiting for the clock.
  const layout = { epochMs: 1_577_836_800_000, tickMs: 1, timeBits: 41, nodeBits: 0, seqBits: 0 }
  const g = new Snowflake({ layout, policy: 'wait', maxWaitMs: 1000 })
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  const ids = await g.nextManyAsync(50)
  const one = await g.nextAsync()
  clearInterval(timer)
  assertIncreasing([...ids, one])
  // A call that waited on the event loop would resolve before any timer could fire (an awaited
  // settled promise goes on in a microtask): one tick proves the loop ran during the wait. Not
  // more: under qemu beside other builds the loop got one tick in 400 ms.
  assert.ok(ticks >= 1, `the event loop ran no timer callback while the ids were made`)
})

test('a timer keeps firing while a slow source refills', { skip: lockSkip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'idforge-node-'))
  // The source's tag file is locked (as by a stuck process) for 400 ms.
  const lock = await holdLock(join(dir, 'orders'), 400)
  let s
  t.after(async () => {
    lock.release()
    // A prefetch blocked on the lock goes on once it is released: the folder goes after it is
    // done, or it would make the counter file again (and, finding it back at 1, keep retrying).
    for (let i = 0; i < 500 && s; i++) {
      const st = s.stats()
      if (st.engine.queued === 0 && st.rangesFetched + st.fetchErrors >= st.engine.refills) break
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 40, retryDelay: 50 })
    } catch (e) {
      // A refill still writing on a loaded machine: the scratch folder stays, the test stands.
      if (e.code !== 'ENOTEMPTY') throw e
    }
  })
  s = new Segments(`file://${dir}`, 'orders', { step: 100, timeoutMs: 5000 })
  let ticks = 0
  const timer = setInterval(() => ticks++, 10)
  const started = Date.now()
  const first = await s.nextAsync()
  const waited = Date.now() - started
  clearInterval(timer)
  assert.equal(first, 1n)
  assert.ok(waited >= 200, `the refill took only ${waited} ms`)
  // As above: a refill that blocked the loop would let no timer fire before nextAsync resolved.
  assert.ok(ticks >= 1, `no timer callback in ${waited} ms`)
  // Buffered ids are then served synchronously.
  assert.equal(s.next(), 2n)
})

test('segments: unique across generators of one source, increasing within one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'idforge-node-'))
  // A refill still in flight when the test ends may create the tag's counter file again after
  // the removal listed the folder; rmSync's own retries then retry only the rmdir, for ever
  // (that failed CI once after 41 s). So the whole removal is retried: once the folder is gone,
  // a refill cannot make it again (the source creates the folder only when it is built).
  t.after(async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        return rmSync(dir, { recursive: true, force: true })
      } catch (e) {
        if (e.code !== 'ENOTEMPTY' || attempt === 100) throw e
        await sleep(100)
      }
    }
  })
  const url = `file://${dir}`
  const a = new Segments(url, 'users', { step: 50, dynamicStep: false })
  const b = new Segments(url, 'users', { step: 50, dynamicStep: false })
  await Promise.all([a.ready(), b.ready()])
  const seen = new Set()
  for (const s of [a, b]) {
    const ids = await s.nextManyAsync(1000)
    assertIncreasing(ids)
    for (const id of ids) {
      assert.ok(!seen.has(id), `duplicate ${id}`)
      seen.add(id)
    }
  }
  assert.equal(seen.size, 2000)
  assert.equal(a.tag, 'users')
  assert.ok(a.stats().rangesFetched >= 20)
})

test('ObjectIds: unique, increasing counters, hex and bytes round trips', () => {
  const seen = new Set()
  for (let i = 0; i < 20_000; i++) {
    const o = new ObjectId()
    const hex = o.toHexString()
    assert.ok(!seen.has(hex), `duplicate ${hex}`)
    seen.add(hex)
  }
  const o = ObjectId.generate()
  assert.ok(ObjectId.fromHex(o.toHexString()).equals(o))
  assert.ok(ObjectId.fromBytes(o.toBytes()).equals(o))
  assert.ok(o.equals(o.toHexString()) && !o.equals('nonsense') && !o.equals(new ObjectId()))
  assert.equal(JSON.stringify({ o }), `{"o":"${o.toHexString()}"}`)
  assert.ok(Math.abs(o.getTimestamp().getTime() - Date.now()) < 5000)
  assert.ok(ObjectId.isValid(o.toHexString()) && !ObjectId.isValid('xyz') && !ObjectId.isValid(undefined))
  // The bytes of an id do not change when the caller changes its copy.
  const bytes = o.toBytes()
  bytes[0] ^= 0xff
  assert.ok(o.equals(ObjectId.fromHex(o.toHexString())) && !o.equals(bytes))
})

test('Flake128: fresh ids increase per generator; every form round-trips', () => {
  const g = new Flake128Generator(12345)
  assert.equal(g.worker, 12345)
  const ids = Array.from({ length: 5000 }, () => g.next())
  for (let i = 1; i < ids.length; i++) assert.equal(ids[i - 1].compare(ids[i]), -1)
  const f = new Flake128()
  for (const form of [f.toBase62(), f.toHex(), f.toBytes(), f.toBigInt()]) {
    assert.ok(new Flake128(form).equals(f))
  }
  assert.match(f.toUUID(), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  assert.ok(Math.abs(f.time.getTime() - Date.now()) < 5000)
})
